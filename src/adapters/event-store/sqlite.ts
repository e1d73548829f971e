/**
 * Embedded event store: one SQLite file (better-sqlite3), WAL journal, synchronous=FULL so an
 * acknowledged append survives a killed process or a power cut. The default when neither
 * NATS_URL nor EVENTSTORE_URL is set.
 *
 * Live tailing: appends made by this process wake subscribers at once; appends made by another
 * process on the same file (the CLI, a second local instance) are picked up by a short poll.
 */
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { WrongExpectedVersionError } from '../../errors.js';
import {
  NewEvent,
  type AppendOptions,
  type AppendResult,
  type Commit,
  type EventStore,
  type ReadAllOptions,
  type StoredEvent,
  type SubscribeOptions,
  type Subscription,
} from '../../ports/event-store.js';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS commits (
  position INTEGER PRIMARY KEY AUTOINCREMENT,
  commit_id TEXT NOT NULL UNIQUE,
  stream TEXT NOT NULL,
  last_version INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS events (
  stream TEXT NOT NULL,
  version INTEGER NOT NULL,
  position INTEGER NOT NULL,
  id TEXT NOT NULL UNIQUE,
  type TEXT NOT NULL,
  tenant_id TEXT NOT NULL,
  occurred_at TEXT NOT NULL,
  schema_version INTEGER NOT NULL,
  causation_id TEXT,
  correlation_id TEXT,
  data TEXT NOT NULL,
  PRIMARY KEY (stream, version)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS events_by_position ON events(position, version);
`;

interface EventRow {
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
  data: string;
}

const toStored = (row: EventRow): StoredEvent => ({ ...row, data: JSON.parse(row.data) as Record<string, unknown> });

export interface SqliteEventStoreOptions {
  file: string;
  /** How often to look for commits written by other processes (ms). */
  pollIntervalMs?: number;
}

export class SqliteEventStore implements EventStore {
  readonly kind = 'sqlite';
  private readonly db: Database.Database;
  private readonly appended = new EventEmitter();
  private readonly pollIntervalMs: number;
  private readonly statements;
  private closed = false;

  constructor(options: SqliteEventStoreOptions) {
    if (options.file !== ':memory:') mkdirSync(dirname(options.file), { recursive: true });
    this.db = new Database(options.file);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = FULL');
    this.db.pragma('busy_timeout = 5000');
    this.db.exec(SCHEMA);
    this.pollIntervalMs = options.pollIntervalMs ?? 250;
    this.appended.setMaxListeners(0);
    this.statements = {
      commitById: this.db.prepare<[string], { position: number; stream: string; last_version: number }>('SELECT position, stream, last_version FROM commits WHERE commit_id = ?'),
      streamVersion: this.db.prepare<[string], { v: number | null }>('SELECT max(version) AS v FROM events WHERE stream = ?'),
      insertCommit: this.db.prepare<[string, string, number]>('INSERT INTO commits (commit_id, stream, last_version) VALUES (?, ?, ?)'),
      insertEvent: this.db.prepare(
        `INSERT INTO events (stream, version, position, id, type, tenant_id, occurred_at, schema_version, causation_id, correlation_id, data)
         VALUES (@stream, @version, @position, @id, @type, @tenant_id, @occurred_at, @schema_version, @causation_id, @correlation_id, @data)`,
      ),
      readStream: this.db.prepare<[string, number], EventRow>('SELECT * FROM events WHERE stream = ? AND version > ? ORDER BY version'),
      commitsAfter: this.db.prepare<[number, number], { position: number; stream: string }>('SELECT position, stream FROM commits WHERE position > ? ORDER BY position LIMIT ?'),
      eventsBetween: this.db.prepare<[number, number], EventRow>('SELECT * FROM events WHERE position >= ? AND position <= ? ORDER BY position, version'),
      head: this.db.prepare<[], { p: number | null }>('SELECT max(position) AS p FROM commits'),
    };
  }

  async append(stream: string, events: readonly NewEvent[], options: AppendOptions): Promise<AppendResult> {
    const parsed = events.map((e) => NewEvent.parse(e));
    if (parsed.length === 0) throw new Error('append needs at least one event');
    const ids = parsed.map((e) => e.id ?? randomUUID());
    const commitId = options.commitId ?? ids[0]!;
    const occurredAt = new Date().toISOString();

    const write = this.db.transaction((): AppendResult => {
      const previous = this.statements.commitById.get(commitId);
      if (previous && previous.stream === stream) return { version: previous.last_version, position: previous.position };
      const current = this.statements.streamVersion.get(stream)?.v ?? 0;
      if (options.expectedVersion !== 'any' && options.expectedVersion !== current) {
        throw new WrongExpectedVersionError(stream, options.expectedVersion, current);
      }
      const lastVersion = current + parsed.length;
      const position = Number(this.statements.insertCommit.run(commitId, stream, lastVersion).lastInsertRowid);
      parsed.forEach((event, i) => {
        this.statements.insertEvent.run({
          stream,
          version: current + i + 1,
          position,
          id: ids[i],
          type: event.type,
          tenant_id: options.tenantId,
          occurred_at: occurredAt,
          schema_version: event.schema_version,
          causation_id: options.causationId ?? null,
          correlation_id: options.correlationId ?? null,
          data: JSON.stringify(event.data),
        });
      });
      return { version: lastVersion, position };
    });
    // IMMEDIATE takes the write lock up front, so two processes cannot both read version N.
    const result = write.immediate();
    this.appended.emit('commit');
    return result;
  }

  async readStream(stream: string, afterVersion = 0): Promise<StoredEvent[]> {
    return this.statements.readStream.all(stream, afterVersion).map(toStored);
  }

  async readAll({ after, limit = 1000 }: ReadAllOptions): Promise<Commit[]> {
    return this.readAllUncached(after, limit); // callers of readAll want the log as it is now
  }

  /**
   * Recent non-empty reads, by (after, limit). Every subscriber in the process (projectors, live
   * views) wakes on the same append and reads the same commits: the first one reads and parses
   * them, the others share the result. A cached read is an immutable prefix of the log, so it is
   * never wrong, at worst short; empty reads are never cached, so tailing still sees new commits.
   */
  private readonly recentReads = new Map<string, Commit[]>();

  private readAllSync(after: number, limit: number): Commit[] {
    const cacheKey = `${after}:${limit}`;
    const cached = this.recentReads.get(cacheKey);
    if (cached) return cached;
    const result = this.readAllUncached(after, limit);
    if (result.length > 0) {
      this.recentReads.set(cacheKey, result);
      if (this.recentReads.size > 32) this.recentReads.delete(this.recentReads.keys().next().value!);
    }
    return result;
  }

  private readAllUncached(after: number, limit: number): Commit[] {
    const commits = this.statements.commitsAfter.all(after, limit);
    if (commits.length === 0) return [];
    const byPosition = new Map<number, Commit>(commits.map((c) => [c.position, { position: c.position, stream: c.stream, events: [] }]));
    for (const row of this.statements.eventsBetween.iterate(commits[0]!.position, commits.at(-1)!.position)) {
      byPosition.get(row.position)?.events.push(toStored(row));
    }
    return [...byPosition.values()];
  }

  async headPosition(): Promise<number> {
    return this.statements.head.get()?.p ?? 0;
  }

  subscribe(options: SubscribeOptions): Subscription {
    let stopped = false;
    let wake: (() => void) | undefined;
    const onAppend = () => wake?.();
    this.appended.on('commit', onAppend);

    const loop = async () => {
      let position = options.after;
      while (!stopped && !this.closed) {
        const batch = this.readAllSync(position, 500);
        for (const commit of batch) {
          if (stopped) return;
          try {
            await options.onCommit(commit);
          } catch (error) {
            stopped = true;
            options.onError?.(error);
            return;
          }
          position = commit.position;
        }
        if (batch.length === 0) {
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, this.pollIntervalMs);
            wake = () => {
              clearTimeout(timer);
              resolve();
            };
          });
          wake = undefined;
        }
      }
    };
    const running = loop().finally(() => this.appended.off('commit', onAppend));
    return {
      close: async () => {
        stopped = true;
        wake?.();
        await running;
      },
    };
  }

  async ping(): Promise<void> {
    this.statements.head.get();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.appended.emit('commit');
    this.db.close();
  }
}
