/**
 * Writing one commit to the embedded event log: the same code whether it runs on the caller's
 * thread (an in-memory log) or in the log's writer thread (a file; see sqlite-writer.ts).
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

export type CommitWriter = (request: CommitRequest) => AppendResult;

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
  const write = db.transaction((r: CommitRequest): AppendResult => {
    const previous = commitById.get(r.commitId);
    // The same commit id again (a retried append): the first one's result, nothing written.
    if (previous && previous.stream === r.stream) return { version: previous.last_version, position: previous.position };
    const current = streamVersion.get(r.stream)?.v ?? 0;
    if (r.expectedVersion !== 'any' && r.expectedVersion !== current) throw new WrongExpectedVersionError(r.stream, r.expectedVersion, current);
    const lastVersion = current + r.events.length;
    const position = Number(insertCommit.run(r.commitId, r.stream, lastVersion).lastInsertRowid);
    r.events.forEach((e, i) => {
      insertEvent.run(r.stream, current + i + 1, position, e.id, e.type, r.tenantId, r.occurredAt, e.schemaVersion, r.causationId, r.correlationId, e.data);
    });
    return { version: lastVersion, position };
  });
  // IMMEDIATE takes the write lock up front, so two processes cannot both read version N.
  return (request) => write.immediate(request);
}

/** The name of the channel on which every connection to one log file in this process hears of appends. */
export const appendChannelName = (file: string) => `switchyard:sqlite-log:${file}`;
