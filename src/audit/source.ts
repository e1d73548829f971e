/**
 * How the audit reads the log: ONE async iterator of commits, `auditEventSource`. Everything the
 * audit replays goes through it, so a log kept partly elsewhere (usage events archived to files,
 * say) is plugged in here and nowhere else.
 *
 * Reads are sized by events, not commits: a usage commit may hold hundreds of events, and a read
 * of 500 such commits would hold a quarter of a million events (hundreds of MB) at once.
 */
import type { Commit, EventStore } from '../ports/event-store.js';

export interface AuditSourceRange {
  /** Exclusive: the commits after this position. */
  after: number;
  /** Inclusive: no commit past this position. */
  until: number;
  /** Only commits holding an event of these types (absent: every commit). */
  types?: ReadonlySet<string>;
}

/** Events per read of the log: bounds what one read holds in memory. */
export const EVENTS_PER_READ = 2000;
/**
 * Commits per read at most, whatever their size so far: after a run of one-event commits (credit
 * top-ups) the next read may meet usage commits of up to 500 events, so this bounds that read too.
 */
const MAX_COMMITS_PER_READ = 32;

/** The commits per read that keep it near EVENTS_PER_READ events, from the largest commit seen so far. */
export function commitsPerRead(largestCommit: number): number {
  return Math.max(1, Math.min(MAX_COMMITS_PER_READ, Math.floor(EVENTS_PER_READ / Math.max(1, largestCommit))));
}

/** The log's commits in (after, until], in order, read in bounded batches. */
export async function* auditEventSource(store: EventStore, range: AuditSourceRange): AsyncGenerator<Commit[], void, undefined> {
  let cursor = range.after;
  let largest = 0;
  while (cursor < range.until) {
    const batch = await store.readAll({ after: cursor, limit: commitsPerRead(largest) });
    if (batch.length === 0) return;
    const out: Commit[] = [];
    let done = false;
    for (const commit of batch) {
      if (commit.position > range.until) {
        done = true;
        break;
      }
      cursor = commit.position;
      largest = Math.max(largest, commit.events.length);
      if (!range.types || commit.events.some((e) => range.types!.has(e.type))) out.push(commit);
    }
    if (out.length > 0) yield out;
    if (done) return;
  }
}

/**
 * The log as a projection's replay must see it, for a ProjectionRunner: the commits of
 * `auditEventSource` (after `from`, up to `until`, only those with an event of `types`: the runner
 * then has no skipped positions to store). A read continuing where the last one ended resumes the
 * same iterator; any other read starts a new one.
 */
export function replayStore(store: EventStore, range: AuditSourceRange & { onCommits?: (commits: readonly Commit[]) => void }): EventStore {
  let open: { at: number; iterator: AsyncGenerator<Commit[], void, undefined> } | null = null;
  return {
    kind: store.kind,
    append: (...args) => store.append(...args),
    readStream: (...args) => store.readStream(...args),
    headPosition: async () => range.until,
    subscribe: () => {
      throw new Error('an audit replay does not tail the log');
    },
    ping: () => store.ping(),
    close: async () => {
      await open?.iterator.return();
    },
    async readAll({ after }) {
      const from = Math.max(after, range.after);
      if (!open || open.at !== from) {
        await open?.iterator.return();
        open = { at: from, iterator: auditEventSource(store, { ...range, after: from }) };
      }
      const next = await open.iterator.next();
      if (next.done) return [];
      open.at = next.value[next.value.length - 1]!.position;
      range.onCommits?.(next.value);
      return next.value;
    },
  };
}
