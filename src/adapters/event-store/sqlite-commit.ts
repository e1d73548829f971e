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

/** A commit just written: its rows exactly as reading them back would return them (structured-clonable). */
export interface WrittenCommit {
  position: number;
  stream: string;
  events: EventRow[];
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
    // Keys in the table's column order, as `SELECT *` returns them.
    const rows = r.events.map((e, i): EventRow => ({
      stream: r.stream,
      version: current + i + 1,
      position,
      id: e.id,
      type: e.type,
      tenant_id: r.tenantId,
      occurred_at: r.occurredAt,
      schema_version: e.schemaVersion,
      causation_id: r.causationId,
      correlation_id: r.correlationId,
      data: e.data,
    }));
    for (const row of rows) {
      insertEvent.run(row.stream, row.version, row.position, row.id, row.type, row.tenant_id, row.occurred_at, row.schema_version, row.causation_id, row.correlation_id, row.data);
    }
    return { result: { version: lastVersion, position }, written: readsBackAsWritten(r) ? { position, stream: r.stream, events: rows } : null };
  });
  // IMMEDIATE takes the write lock up front, so two processes cannot both read version N.
  return (request) => write.immediate(request);
}

/** The name of the channel on which every connection to one log file in this process hears of appends. */
export const appendChannelName = (file: string) => `switchyard:sqlite-log:${file}`;
