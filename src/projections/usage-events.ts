/**
 * A stored UsageRecorded event as the projections read it: its data parsed and its fingerprint
 * (src/billing/rating.ts) computed, each at most once per event object. In the projector thread
 * the usage, billing and key_usage projections are handed the very same event objects (the log
 * adapter shares one read of a commit among its subscribers, the runner one read among the
 * projections catching up), so each event is parsed and hashed once instead of once per
 * projection.
 */
import { UsageData } from '../commands/usage/events.js';
import { usageFingerprint } from '../billing/rating.js';
import type { StoredEvent } from '../ports/event-store.js';

export interface UsageEvent {
  readonly usage: UsageData;
  /** Computed on first use (key_usage, for one, never needs it). */
  readonly fingerprint: string;
}

class ParsedUsage implements UsageEvent {
  #fingerprint: string | undefined;
  constructor(readonly usage: UsageData) {}
  get fingerprint(): string {
    return (this.#fingerprint ??= usageFingerprint(this.usage));
  }
}

// null: the data is not a usage event this version can read (each projection decides what that means).
const parsed = new WeakMap<StoredEvent, UsageEvent | null>();

/** The event's usage and fingerprint, or null if its data does not parse as UsageData. */
export function usageEventOf(stored: StoredEvent): UsageEvent | null {
  let event = parsed.get(stored);
  if (event === undefined) {
    const result = UsageData.safeParse(stored.data);
    event = result.success ? new ParsedUsage(result.data) : null;
    parsed.set(stored, event);
  }
  return event;
}

/** Like usageEventOf, but a malformed event throws (zod's error, naming what is wrong). */
export function requireUsageEvent(stored: StoredEvent): UsageEvent {
  const event = usageEventOf(stored);
  if (event) return event;
  UsageData.parse(stored.data); // throws: the same data failed safeParse
  throw new Error('unreachable: UsageData.parse accepted what safeParse refused');
}
