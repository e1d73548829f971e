/**
 * Writing one commit to the embedded event log: the same code whether it runs on the caller's
 * thread (an in-memory log) or in the log's writer thread (a file; see sqlite-writer.ts). Besides
 * the append's result it hands back the rows it wrote, so that the log's connections in this
 * process can give them to their subscribers without reading them back (sqlite.ts).
 */
import type Database from 'better-sqlite3';
import { WrongExpectedVersionError } from '../../errors.js';
import type { AppendResult, ExpectedVersion } from '../../ports/event-store.js';

/** One append, ready to write: validated, ids given, data serialised (structured-clonable). */
export interface CommitRequest {
  stream: string;
  commitId: string;
  expectedVersion: ExpectedVersion;
  tenantId: string;
  occurredAt: string;
  causationId: string | null;
  correlationId: string | null;
  events: Array<{ id: string; type: string; schemaVersion: number; data: string }>;
}

/** A row of the events table, as a connection reads it. */
export interface EventRow {
  stream: string;
  version: number;
  position: number;
  id: string;
  type: string;
  tenant_id: string;
  occurred_at: string;
  schema_version: number;
  causation_id: string | null;
  correlation_id: string | null;
  /** The event's data as its JSON text. */
  data: string;
}

/**
 * A commit just written, for the log's connections in this process: the commit (`Commit`, its
 * events' data parsed) as the JSON text of exactly what reading it back would return. One string
 * rather than rows: posting it to another thread copies bytes instead of cloning hundreds of
 * objects, and the receiving connection parses it in one go (per usage event, about 2.5 µs less
 * across the writer thread and the two receiving threads; docs/history/benchmarks-2026-11-21.md).
 */
export interface WrittenCommit {
  position: number;
  stream: string;
  /** How many events it holds (connections bound what they keep by it). */
  eventCount: number;
  json: string;
}

/**
 * The append's result, and what it wrote: null when it wrote nothing (a retried commit id), or
 * when reading back would not return the same text (see `readsBackAsWritten`).
 */
export type CommitWriter = (request: CommitRequest) => { result: AppendResult; written: WrittenCommit | null };

/**
 * SQLite keeps text as UTF-8, so a string with a lone surrogate half (not valid UTF-16) reads back
 * altered; every other string reads back as written. Only the free-text fields can hold one: ids
 * are UUIDs, the time is an ISO string, and data is JSON.stringify's output, which escapes them.
 */
const loneSurrogate = /\p{Cs}/u;
const readsBackAsWritten = (r: CommitRequest) =>
  ![r.stream, r.tenantId, r.causationId ?? '', r.correlationId ?? '', ...r.events.map((e) => e.type)].some((text) => loneSurrogate.test(text));

/**
 * The commit as reading it back returns it (`{ position, stream, events }`, each event's keys in
 * the table's column order, as `SELECT *` gives them, with its data parsed), as JSON text. The
 * data is embedded as written: it is JSON.stringify's output already.
 */
function commitJson(r: CommitRequest, position: number, versionBefore: number): string {
  const q = JSON.stringify;
  const shared = { stream: q(r.stream), tenant: q(r.tenantId), occurredAt: q(r.occurredAt), causation: q(r.causationId), correlation: q(r.correlationId) };
  let json = `{"position":${position},"stream":${shared.stream},"events":[`;
  r.events.forEach((e, i) => {
    json +=
      `${i === 0 ? '' : ','}{"stream":${shared.stream},"version":${versionBefore + i + 1},"position":${position},"id":${q(e.id)},"type":${q(e.type)},` +
      `"tenant_id":${shared.tenant},"occurred_at":${shared.occurredAt},"schema_version":${e.schemaVersion},` +
      `"causation_id":${shared.causation},"correlation_id":${shared.correlation},"data":${e.data}}`;
  });
  return `${json}]}`;
}

/** Opens the pragmas every connection to the log uses. */
export function configureLogConnection(db: Database.Database): void {
  db.pragma('journal_mode = WAL');
  // FULL: an acknowledged append survives a killed process or a power cut.
  db.pragma('synchronous = FULL');
  db.pragma('busy_timeout = 5000');
}

export function commitWriter(db: Database.Database): CommitWriter {
  const commitById = db.prepare<[string], { position: number; stream: string; last_version: number }>('SELECT position, stream, last_version FROM commits WHERE commit_id = ?');
  const streamVersion = db.prepare<[string], { v: number | null }>('SELECT max(version) AS v FROM events WHERE stream = ?');
  const insertCommit = db.prepare<[string, string, number]>('INSERT INTO commits (commit_id, stream, last_version) VALUES (?, ?, ?)');
  const insertEvent = db.prepare<[string, number, number, string, string, string, string, number, string | null, string | null, string]>(
    `INSERT INTO events (stream, version, position, id, type, tenant_id, occurred_at, schema_version, causation_id, correlation_id, data)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const write = db.transaction((r: CommitRequest): ReturnType<CommitWriter> => {
    const previous = commitById.get(r.commitId);
    // The same commit id again (a retried append): the first one's result, nothing written.
    if (previous && previous.stream === r.stream) return { result: { version: previous.last_version, position: previous.position }, written: null };
    const current = streamVersion.get(r.stream)?.v ?? 0;
    if (r.expectedVersion !== 'any' && r.expectedVersion !== current) throw new WrongExpectedVersionError(r.stream, r.expectedVersion, current);
    const lastVersion = current + r.events.length;
    const position = Number(insertCommit.run(r.commitId, r.stream, lastVersion).lastInsertRowid);
    r.events.forEach((e, i) => {
      insertEvent.run(r.stream, current + i + 1, position, e.id, e.type, r.tenantId, r.occurredAt, e.schemaVersion, r.causationId, r.correlationId, e.data);
    });
    return { result: { version: lastVersion, position }, written: readsBackAsWritten(r) ? { position, stream: r.stream, eventCount: r.events.length, json: commitJson(r, position, current) } : null };
  });
  // IMMEDIATE takes the write lock up front, so two processes cannot both read version N.
  return (request) => write.immediate(request);
}

/** The name of the channel on which every connection to one log file in this process hears of appends. */
export const appendChannelName = (file: string) => `switchyard:sqlite-log:${file}`;
