/**
 * Embedded event store: one SQLite file (better-sqlite3), WAL journal, synchronous=FULL so an
 * acknowledged append survives a killed process or a power cut. The default when neither
 * NATS_URL nor EVENTSTORE_URL is set.
 *
 * Appends to a file go through the log's writer thread (sqlite-writer.ts): each commit's fsync
 * blocks that thread, never the caller's event loop. Reads run on this connection (WAL readers
 * do not wait for the writer). An in-memory log (':memory:', tests) is written inline.
 *
 * Live tailing: the writer thread broadcasts each commit it writes, events and all, to every
 * connection to the file in this process (the serving thread's, the projector thread's); an
 * in-memory log hands its commits over the same way, inline. Each connection keeps the last few
 * it heard of and wakes its subscribers; a subscriber whose next commit is among them (exactly the
 * next position: a file's positions are dense, AUTOINCREMENT rolling back with a failed append)
 * takes it from there instead of reading the file. Everything else is read from the file: a
 * subscriber catching up or fallen behind, and commits written by another process on the same
 * file (the CLI, a second local instance), which leave a gap among the handed-over positions or,
 * when nothing in this process writes, are found by a short poll.
 */
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { BroadcastChannel } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { WrongExpectedVersionError } from '../../errors.js';
import { Thread, ThreadCallError } from '../../threads.js';
import {
  appendChannelName,
  commitWriter,
  configureLogConnection,
  type CommitRequest,
  type CommitWriter,
  type EventRow,
  type WrittenCommit,
} from './sqlite-commit.js';
import {
  commitFor,
  parseNewEvent,
  type AppendOptions,
  type AppendResult,
  type Commit,
  type NewEvent,
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

const toStored = (row: EventRow): StoredEvent => ({ ...row, data: JSON.parse(row.data) as Record<string, unknown> });

/**
 * How many handed-over commits a connection keeps (and events in them, usage batches holding up
 * to 500): enough for subscribers that keep up, a few hundred milliseconds of relay traffic.
 * A subscriber further behind reads the file, as it did before.
 */
const HANDED_OVER_COMMITS = 512;
const HANDED_OVER_EVENTS = 4096;

/** Reads the read cache keeps at most, whatever their size (each is one subscriber position). */
const RECENT_READS = 32;

/**
 * Memory a stored event takes once parsed, estimated from its row: twice the length of its data's
 * JSON (as objects, property slots and numbers take more room than as text) plus the other
 * columns and the objects holding them. Rough, and meant to be: it bounds the cache's order of size.
 */
const EVENT_OVERHEAD_BYTES = 400;
const estimatedEventBytes = (row: EventRow): number => 2 * row.data.length + EVENT_OVERHEAD_BYTES;

/** Default bound of the read cache (EVENT_READ_CACHE_BYTES). */
export const DEFAULT_READ_CACHE_BYTES = 32 * 1024 * 1024;

export interface SqliteEventStoreOptions {
  file: string;
  /** How often to look for commits written by other processes (ms). */
  pollIntervalMs?: number;
  /** Estimated bytes of recent reads kept for subscribers that read the same commits (0: none). */
  readCacheBytes?: number;
}

export class SqliteEventStore implements EventStore {
  readonly kind = 'sqlite';
  private readonly db: Database.Database;
  private readonly appended = new EventEmitter();
  private readonly pollIntervalMs: number;
  private readonly readCacheLimit: number;
  private readonly statements;
  /** Inline writer (in-memory log) or the writer thread (a file). */
  private readonly writeInline: CommitWriter | null;
  private writer: Thread | null = null;
  private readonly appendChannel: BroadcastChannel | null;
  /** The highest commit position written in this process that this connection has heard of. */
  private announced = 0;
  /**
   * Commits written in this process, by position, as handed over: JSON text until a subscriber
   * first takes one, then parsed once and shared by every subscriber after it (a commit never changes).
   */
  private readonly handedOver = new Map<number, { written: WrittenCommit; commit?: Commit; bare?: Commit }>();
  private handedOverEvents = 0;
  /** Where each live subscription on this connection is (the last commit it has taken). */
  private readonly subscriberPositions = new Set<{ position: number }>();
  private closed = false;

  constructor(private readonly options: SqliteEventStoreOptions) {
    const inMemory = options.file === ':memory:';
    if (!inMemory) mkdirSync(dirname(options.file), { recursive: true });
    this.db = new Database(options.file);
    configureLogConnection(this.db);
    this.db.exec(SCHEMA);
    this.pollIntervalMs = options.pollIntervalMs ?? 250;
    this.readCacheLimit = options.readCacheBytes ?? DEFAULT_READ_CACHE_BYTES;
    this.appended.setMaxListeners(0);
    this.writeInline = inMemory ? commitWriter(this.db) : null;
    if (inMemory) {
      this.appendChannel = null;
    } else {
      this.appendChannel = new BroadcastChannel(appendChannelName(options.file));
      this.appendChannel.onmessage = (message) => this.heard((message as { data: WrittenCommit | number }).data);
      // Announcements only feed subscribers: they never keep the process alive.
      this.appendChannel.unref();
    }
    this.statements = {
      readStream: this.db.prepare<[string, number], EventRow>('SELECT * FROM events WHERE stream = ? AND version > ? ORDER BY version'),
      commitsAfter: this.db.prepare<[number, number], { position: number; stream: string }>('SELECT position, stream FROM commits WHERE position > ? ORDER BY position LIMIT ?'),
      eventsBetween: this.db.prepare<[number, number], EventRow>('SELECT * FROM events WHERE position >= ? AND position <= ? ORDER BY position, version'),
      head: this.db.prepare<[], { p: number | null }>('SELECT max(position) AS p FROM commits'),
    };
  }

  /** The writer thread, started on first use (and again if it ever died). */
  private writerThread(): Thread {
    if (!this.writer?.alive) this.writer = new Thread(new URL('./sqlite-writer.js', import.meta.url), { file: this.options.file });
    return this.writer;
  }

  async append(stream: string, events: readonly NewEvent[], options: AppendOptions): Promise<AppendResult> {
    if (this.closed) throw new Error('event store is closed');
    const parsed = events.map(parseNewEvent);
    if (parsed.length === 0) throw new Error('append needs at least one event');
    const ids = parsed.map((e) => e.id ?? randomUUID());
    const request: CommitRequest = {
      stream,
      commitId: options.commitId ?? ids[0]!,
      expectedVersion: options.expectedVersion,
      tenantId: options.tenantId,
      occurredAt: new Date().toISOString(),
      causationId: options.causationId ?? null,
      correlationId: options.correlationId ?? null,
      events: parsed.map((event, i) => ({ id: ids[i]!, type: event.type, schemaVersion: event.schema_version, data: JSON.stringify(event.data) })),
    };
    if (this.writeInline) {
      const { result, written } = this.writeInline(request);
      this.heard(written ?? result.position);
      return result;
    }
    try {
      // Subscribers here are woken by the writer's broadcast, which carries the commit, not by
      // this reply: it may arrive first, and they would read the commit back from the file.
      return await this.writerThread().call<AppendResult>('commit', request);
    } catch (error) {
      if (error instanceof ThreadCallError && error.remote.name === 'WrongExpectedVersionError') {
        const { stream: s, expected, actual } = error.remote.fields as { stream: string; expected: number | 'any'; actual: number };
        throw new WrongExpectedVersionError(s, expected, actual);
      }
      throw error;
    }
  }

  /** A commit written in this process, with its rows or (when it has none to hand over) just its position. */
  private heard(commit: WrittenCommit | number): void {
    if (typeof commit !== 'number') this.keep(commit);
    this.announced = Math.max(this.announced, typeof commit === 'number' ? commit : commit.position);
    this.appended.emit('commit');
  }

  private keep(written: WrittenCommit): void {
    this.handedOver.set(written.position, { written });
    this.handedOverEvents += written.eventCount;
    this.forgetHandedOver();
  }

  /**
   * Drops the handed-over commits every subscription here has taken, and the oldest ones beyond
   * the bounds. Why not keep them until the bounds push them out: a usage batch held for a second
   * survives the young generation's collections and is copied into the old one, for nothing —
   * on the serving thread that copying was a measurable share of each request's CPU.
   */
  private forgetHandedOver(): void {
    let taken = Infinity;
    for (const subscriber of this.subscriberPositions) taken = Math.min(taken, subscriber.position);
    // Oldest first (a Map iterates in arrival order).
    for (const [position, entry] of this.handedOver) {
      const overBounds = this.handedOver.size > HANDED_OVER_COMMITS || this.handedOverEvents > HANDED_OVER_EVENTS;
      if (!overBounds && position > taken) break;
      this.handedOver.delete(position);
      this.handedOverEvents -= entry.written.eventCount;
    }
  }

  /**
   * The handed-over commits that follow `after` without a gap, as `subscriber` receives them; none
   * unless the very next one is there. A commit is parsed once, by the first subscriber that
   * needs its events.
   */
  private handedOverAfter(after: number, subscriber: SubscribeOptions): Commit[] {
    const commits: Commit[] = [];
    for (let entry = this.handedOver.get(after + 1); entry; entry = this.handedOver.get(after + 1 + commits.length)) {
      const { written } = entry;
      if (subscriber.skipEventsOf?.(written.stream)) commits.push((entry.bare ??= { position: written.position, stream: written.stream, events: [] }));
      else commits.push((entry.commit ??= JSON.parse(written.json) as Commit));
    }
    return commits;
  }

  async readStream(stream: string, afterVersion = 0): Promise<StoredEvent[]> {
    return this.statements.readStream.all(stream, afterVersion).map(toStored);
  }

  async readAll({ after, limit = 1000 }: ReadAllOptions): Promise<Commit[]> {
    return this.readAllUncached(after, limit).commits; // callers of readAll want the log as it is now
  }

  /**
   * Recent non-empty reads, by (after, limit). Every subscriber in the process (projectors, live
   * views) wakes on the same append and reads the same commits: the first one reads and parses
   * them, the others share the result. A cached read is an immutable prefix of the log, so it is
   * never wrong, at worst short; empty reads are never cached, so tailing still sees new commits.
   * Bounded by an estimate of the bytes it holds (readCacheBytes), not by a count of reads: a read
   * of 500 usage batches is tens of megabytes, and subscribers catching up over a long log (live
   * views after a start) would otherwise keep hundreds of megabytes of it alive.
   */
  private readonly recentReads = new Map<string, { commits: Commit[]; bytes: number }>();
  private recentReadBytes = 0;

  /** What the read cache holds now, in estimated bytes (tests, metrics). */
  get readCacheBytes(): number {
    return this.recentReadBytes;
  }

  private readAllSync(after: number, limit: number): Commit[] {
    const cacheKey = `${after}:${limit}`;
    const cached = this.recentReads.get(cacheKey);
    if (cached) return cached.commits;
    const read = this.readAllUncached(after, limit);
    if (read.commits.length > 0 && read.bytes <= this.readCacheLimit) {
      this.recentReads.set(cacheKey, read);
      this.recentReadBytes += read.bytes;
      // Oldest first (a Map iterates in arrival order).
      for (const [key, entry] of this.recentReads) {
        if (this.recentReadBytes <= this.readCacheLimit && this.recentReads.size <= RECENT_READS) break;
        this.recentReads.delete(key);
        this.recentReadBytes -= entry.bytes;
      }
    }
    return read.commits;
  }

  /** The commits after `after`, and an estimate of the memory they take once parsed. */
  private readAllUncached(after: number, limit: number): { commits: Commit[]; bytes: number } {
    const commits = this.statements.commitsAfter.all(after, limit);
    if (commits.length === 0) return { commits: [], bytes: 0 };
    const byPosition = new Map<number, Commit>(commits.map((c) => [c.position, { position: c.position, stream: c.stream, events: [] }]));
    let bytes = 0;
    for (const row of this.statements.eventsBetween.iterate(commits[0]!.position, commits.at(-1)!.position)) {
      bytes += estimatedEventBytes(row);
      byPosition.get(row.position)?.events.push(toStored(row));
    }
    return { commits: [...byPosition.values()], bytes };
  }

  async headPosition(): Promise<number> {
    return this.statements.head.get()?.p ?? 0;
  }

  subscribe(options: SubscribeOptions): Subscription {
    let stopped = false;
    let wake: (() => void) | undefined;
    const onAppend = () => wake?.();
    this.appended.on('commit', onAppend);

    const subscriber = { position: options.after };
    this.subscriberPositions.add(subscriber);

    const loop = async () => {
      while (!stopped && !this.closed) {
        const handedOver = this.handedOverAfter(subscriber.position, options);
        const batch = handedOver.length > 0 ? handedOver : this.readAllSync(subscriber.position, 500).map((commit) => commitFor(options, commit));
        // Several commits waiting go together to a subscriber that takes them so; else one by one.
        const deliveries = options.onCommits && batch.length > 1 ? [batch] : batch.map((commit) => [commit]);
        for (const commits of deliveries) {
          if (stopped) return;
          try {
            if (commits.length > 1) await options.onCommits!(commits);
            else await options.onCommit(commits[0]!);
          } catch (error) {
            stopped = true;
            options.onError?.(error);
            return;
          }
          subscriber.position = commits[commits.length - 1]!.position;
        }
        if (handedOver.length > 0) this.forgetHandedOver();
        // Nothing new, or everything this process has written so far: wait for the next commit
        // (or the poll, for other processes' commits) rather than ask the file again.
        if (batch.length === 0 || (handedOver.length > 0 && subscriber.position >= this.announced)) {
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
    const running = loop().finally(() => {
      this.appended.off('commit', onAppend);
      this.subscriberPositions.delete(subscriber);
    });
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
    this.appendChannel?.close();
    if (this.writer?.alive) {
      // Appends in flight finish first (calls are answered in order), then the connection closes.
      await this.writer.call('close').catch(() => undefined);
      await this.writer.stop();
    }
    this.db.close();
  }
}
