/**
 * Time-ordered UUIDs (RFC 9562, version 7): 48 bits of Unix time in milliseconds, then the version,
 * then 74 random bits (with the RFC's variant bits). For ids generated at the rate of relayed
 * requests that end up as keys of indexes: the usage events' ids (the event log's unique index on
 * event ids, the ledger's primary key) and the relay's request ids (the per-request tables'
 * request-id indexes). Ids made one after another sort next to each other, so each index grows
 * at its end; a random (version 4) id lands on a random page of the index instead, and at commit
 * every page an insert touched is written again: measured on SQLite, that was about half of the
 * log writer's CPU per event, growing with the size of the log (docs/history/benchmarks-2026-11-21.md).
 *
 * Still unique and unguessable for what they are used for (74 random bits within a millisecond),
 * still a UUID in form. Ordering is only as good as the clock, which is all an index needs.
 */
import { randomUUID } from 'node:crypto';

/** The time part of the ids of one millisecond ("tttttttt-tttt-7"), kept: under load many ids share it. */
let prefixMs = -1;
let prefix = '';

export function timeOrderedUuid(now = Date.now()): string {
  if (now !== prefixMs) {
    const time = now.toString(16).padStart(12, '0');
    prefix = `${time.slice(0, 8)}-${time.slice(8, 12)}-7`;
    prefixMs = now;
  }
  // A version 4 UUID's random bits, after its version digit, with their variant bits in place.
  return prefix + randomUUID().slice(15);
}
