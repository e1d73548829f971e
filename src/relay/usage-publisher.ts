/**
 * Publishes usage events without losing one, even to kill -9 (docs/decisions/0020-usage-journal.md).
 *
 * `publish` validates the event, journals it (src/relay/usage-journal.ts) and queues it; the
 * promise it returns settles once the journal write is durable, and the relay holds the last bytes
 * of the answer until then. A flush appends the queue as ONE commit to this instance's own usage
 * stream (`usage-<owner>`: a single writer, so no contention and no read before the append),
 * batching many requests per fsync / JetStream ack. A quiet instance appends within
 * `flushIntervalMs` of a request; under load commits are spaced at least `minCommitIntervalMs`
 * apart (or sooner when `maxBatch` events are waiting), because every commit has a fixed cost on
 * the event loop: the embedded SQLite store fsyncs synchronously, and every subscriber in the
 * process (projections, live views) wakes up to read it (docs/history/benchmarks-2026-11-21.md).
 *
 * The journal forgets an event once the log acknowledges it. If the append fails (bus or disk
 * down), the same batch (same ids, same commit id) is retried until it succeeds, later events
 * waiting behind it in order; they are all in the journal meanwhile. At start, journals of dead
 * processes are replayed into their own streams, skipping events the log already has.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { WrongExpectedVersionError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { EventStore } from '../ports/event-store.js';
import { USAGE_RECORDED, UsageData } from '../commands/usage/events.js';
import { timeOrderedUuid } from '../ids.js';
import { readJournalFile, UsageJournal, type JournalEntry, type JournalLine } from './usage-journal.js';

export interface UsagePublisherOptions {
  /** The journal directory (DATA_DIR/usage-journal). */
  journalDir: string;
  /** What an answer waits for (USAGE_JOURNAL_WAIT): see UsageJournalOptions.wait. */
  journalWait?: 'write' | 'fsync';
  /** USAGE_JOURNAL_FSYNC_MS: see UsageJournalOptions.fsyncMs. */
  journalFsyncMs?: number;
  /** Journal segment size before rotation (USAGE_JOURNAL_SEGMENT_BYTES). */
  journalSegmentBytes?: number;
  /** The spool directory of earlier versions, read once at start for upgrades. */
  legacySpoolDir?: string;
  /** Longest wait before a partial batch is appended (when no commit happened recently). */
  flushIntervalMs?: number;
  /** Shortest time between two commits, unless `maxBatch` events are waiting. */
  minCommitIntervalMs?: number;
  maxBatch?: number;
  /** How long to wait before appending again after the store failed. */
  retryIntervalMs?: number;
  /** An event failed validation and went to the dead-letter file. */
  onDeadLetter?: () => void;
}

const APPEND_BATCH = 500;

/**
 * Takes every event of a publisher as it is published, before it goes into the stream: the
 * billing live view folds this instance's usage here rather than when the log hands it back
 * (app.ts); it ignores an event it has seen.
 */
export type UsageSink = (data: UsageData) => void;

export class UsagePublisher {
  private readonly owner = randomUUID().replace(/-/g, '');
  readonly stream = `usage-${this.owner}`;
  private readonly journal: UsageJournal;
  /** Version of the last event queued (its single writer appends them in this order). */
  private queuedVersion = 0;
  private queue: JournalEntry[] = [];
  private timer: NodeJS.Timeout | null = null;
  /** When the last non-empty batch was taken for appending (performance.now()). */
  private lastCommitAt = -Infinity;
  private flushing: Promise<void> = Promise.resolve();
  private replaying: Promise<void> = Promise.resolve();
  private closed = false;
  private storeFailing = false;
  private readonly sleepers = new Set<() => void>();
  private readonly sinks: Array<{ name: string; take: UsageSink }> = [];
  /** Count of events appended to the store (observability and tests). */
  published = 0;
  /** Count of events that failed validation. */
  deadLettered = 0;

  constructor(
    private readonly store: EventStore,
    private readonly logger: Logger,
    private readonly options: UsagePublisherOptions,
  ) {
    this.journal = new UsageJournal({ dir: options.journalDir, owner: this.owner, wait: options.journalWait ?? 'write', fsyncMs: options.journalFsyncMs ?? ((options.journalWait ?? 'write') === 'write' ? 1000 : 2), segmentBytes: options.journalSegmentBytes ?? 4 * 1024 * 1024 });
    this.journal.open();
  }

  /** Events journaled and not yet in the log. */
  get depth(): number {
    return this.journal.depth;
  }

  /** Journal group commits so far. */
  get journalCommits(): number {
    return this.journal.commits;
  }

  /** Bytes of this process's journal segments. */
  get journalBytes(): number {
    return this.journal.bytes;
  }

  /**
   * Hands every valid event published from now on to `sink`, synchronously within `publish`. A
   * sink must never fail a request: what it throws is logged under its `name`.
   */
  addSink(name: string, sink: UsageSink): void {
    this.sinks.push({ name, take: sink });
  }

  /** Replays journals left by dead processes (and spools of earlier versions). Call once at startup. */
  start(): void {
    this.takeLegacySpool();
    this.replaying = this.replayOrphans();
  }

  /**
   * Validates, journals and queues one event. Resolves once the event is durable in the journal
   * (the answer's last bytes may go then); never rejects: a journal failure is logged.
   */
  publish(data: UsageData): Promise<void> {
    const checked = UsageData.safeParse(data);
    if (!checked.success) {
      this.deadLetter(data, checked.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`));
      return Promise.resolve();
    }
    this.observe(data);
    // Time-ordered: the log's index on event ids (and the ledger's on charges) grows at its end.
    const { entry, durable } = this.journal.append({ id: timeOrderedUuid(), s: this.stream, v: ++this.queuedVersion, d: data });
    this.queue.push(entry);
    if (!this.storeFailing) {
      if (this.queue.length >= (this.options.maxBatch ?? APPEND_BATCH)) this.flushSoon(0);
      else this.flushSoon(this.options.flushIntervalMs ?? 10);
    }
    return durable.catch((error: unknown) => {
      this.logger.error({ err: error, request_id: data.request_id }, 'usage journal write failed: the event is only in memory until the log has it');
    });
  }

  /** Appends everything queued (and waits for flushes in progress). */
  async flush(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    const batch = this.queue.splice(0, this.options.maxBatch ?? APPEND_BATCH);
    if (batch.length > 0) this.lastCommitAt = performance.now();
    const previous = this.flushing;
    this.flushing = previous.then(() => this.appendUntilDone(batch));
    await this.flushing;
    if (this.queue.length > 0 && !this.closed && !this.storeFailing) this.flushSoon(0);
  }

  /** Appends what is queued; what the store does not take stays in the journal for the next start. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    // A retry waiting for the store tries once more now; if the store still fails, it gives up.
    for (const wake of this.sleepers) wake();
    await this.flushing;
    while (this.queue.length > 0 && !this.storeFailing) {
      await this.flush();
    }
    await this.replaying;
    await this.journal.close();
  }

  /** Stops as a killed process would: nothing more is appended or cleaned up (tests simulate a crash with it). */
  abandon(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    for (const wake of this.sleepers) wake();
    this.journal.abandon();
  }

  /** A pause that close() cuts short. */
  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.sleepers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.sleepers.add(wake);
    });
  }

  private flushSoon(delayMs: number) {
    if (this.closed) return;
    if (this.timer && delayMs > 0) return;
    if (this.timer) clearTimeout(this.timer);
    // A full batch goes at once; otherwise wait the flush interval, and at least until the
    // minimum gap since the previous commit has passed.
    const wait = delayMs === 0 ? 0 : Math.max(delayMs, this.lastCommitAt + (this.options.minCommitIntervalMs ?? 100) - performance.now());
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.flush();
    }, wait);
  }

  /** Appends `batch` to the log, retrying (same ids, same commit) while the store fails, unless closing. */
  private async appendUntilDone(batch: JournalEntry[]): Promise<void> {
    if (batch.length === 0) return;
    for (;;) {
      try {
        await appendLines(this.store, batch.map((e) => e.line), batch[0]!.line.v - 1);
        for (const entry of batch) this.journal.ack(entry);
        this.published += batch.length;
        if (this.storeFailing) this.logger.info({ waiting: this.queue.length }, 'usage events reach the log again');
        this.storeFailing = false;
        return;
      } catch (error) {
        if (!this.storeFailing) this.logger.warn({ err: error, events: batch.length }, 'usage events could not be appended; they stay in the journal and are retried');
        this.storeFailing = true;
        if (this.closed) return; // the journal keeps them for the next start
        await this.pause(this.options.retryIntervalMs ?? 1000);
      }
    }
  }

  /** Hands `data` to every sink; none may fail a request. */
  private observe(data: UsageData) {
    for (const { name, take } of this.sinks) {
      try {
        take(data);
      } catch (error) {
        this.logger.error({ err: error, request_id: data.request_id, sink: name }, 'usage sink failed');
      }
    }
  }

  private deadLetter(data: unknown, issues: string[]) {
    this.deadLettered++;
    const requestId = typeof (data as { request_id?: unknown })?.request_id === 'string' ? (data as { request_id: string }).request_id : null;
    this.logger.error({ request_id: requestId, issues }, 'invalid usage event: written to the dead-letter file, not to the log');
    try {
      this.journal.deadLetter({ at: new Date().toISOString(), issues, data });
    } catch (error) {
      this.logger.error({ err: error }, 'usage dead-letter file could not be written');
    }
    this.options.onDeadLetter?.();
  }

  /** Replays journals of dead processes into their streams, exactly once; retried while the store fails. */
  private async replayOrphans(): Promise<void> {
    const files = this.journal.claimOrphans();
    if (files.length === 0) return;
    const byStream = new Map<string, JournalLine[]>();
    let torn = 0;
    for (const file of files) {
      const read = readJournalFile(file);
      torn += read.torn;
      for (const line of read.lines) {
        const list = byStream.get(line.s);
        if (list) list.push(line);
        else byStream.set(line.s, [line]);
      }
    }
    for (;;) {
      try {
        let appended = 0;
        for (const [stream, lines] of byStream) appended += await replayStream(this.store, stream, lines);
        for (const file of files) unlinkSync(file);
        this.logger.info({ files: files.length, events: appended, skipped_torn_lines: torn }, 'usage journal of a stopped process replayed');
        return;
      } catch (error) {
        this.logger.warn({ err: error }, 'usage journal replay failed; will retry');
        if (this.closed) return;
        await this.pause(this.options.retryIntervalMs ?? 1000);
      }
    }
  }

  /** Spool files of earlier versions (DATA_DIR/spool): journaled and queued as new events, then removed. */
  private takeLegacySpool() {
    const dir = this.options.legacySpoolDir;
    if (dir === undefined || !existsSync(dir)) return;
    for (const name of readdirSync(dir)) {
      if (!name.startsWith('usage') || !(name.endsWith('.jsonl') || name.endsWith('.sending'))) continue;
      const file = join(dir, name);
      const datas = readFileSync(file, 'utf8')
        .split('\n')
        .filter(Boolean)
        .flatMap((line) => {
          try {
            return [(JSON.parse(line) as { data: UsageData }).data];
          } catch {
            return [];
          }
        });
      // Removed once journaled: from then on the journal has them.
      void Promise.all(datas.map((d) => this.publish(d))).then(() => {
        try {
          unlinkSync(file);
        } catch (error) {
          this.logger.warn({ err: error, file }, 'old usage spool file could not be removed');
        }
      });
      this.logger.info({ events: datas.length, file }, 'usage spool of an earlier version taken into the journal');
    }
  }
}

/** Appends journal lines (of one stream, in order) as one commit, expecting the stream at `expectedVersion`. */
async function appendLines(store: EventStore, lines: JournalLine[], expectedVersion: number, retried = false): Promise<void> {
  const first = lines[0]!;
  try {
    await store.append(
      first.s,
      lines.map((l) => ({ id: l.id, type: USAGE_RECORDED, data: l.d })),
      // The tenant of a batch is that of its first event; each event's data carries its own.
      { expectedVersion, tenantId: first.d.tenant_id, causationId: first.d.request_id, commitId: first.id },
    );
  } catch (error) {
    // An earlier append may have been written although its acknowledgement was lost: the commit
    // id makes appending the same batch again a no-op, whatever version the stream is at now.
    if (!(error instanceof WrongExpectedVersionError) || retried) throw error;
    await appendLines(store, lines, error.actual, true);
  }
}

/**
 * Appends the lines the stream does not have yet; returns how many. The stream's single writer
 * gave its n-th event version n, so the stream's version says which lines it has: an append
 * expecting the version before the first line learns the real one from the conflict, and the
 * lines up to it are dropped. No read of the stream (on JetStream that would read all of it).
 */
async function replayStream(store: EventStore, stream: string, lines: JournalLine[]): Promise<number> {
  let pending = [...lines].sort((a, b) => a.v - b.v);
  let expected = pending[0]!.v - 1;
  let appended = 0;
  while (pending.length > 0) {
    const batch = pending.slice(0, APPEND_BATCH);
    const first = batch[0]!;
    try {
      await store.append(
        stream,
        batch.map((l) => ({ id: l.id, type: USAGE_RECORDED, data: l.d })),
        // A commit id of its own: the first line's id may be that of a commit already in the log
        // (a retry of that commit would then be a no-op, dropping the lines after it). The
        // expected version is what keeps a replayed batch from being written twice.
        { expectedVersion: expected, tenantId: first.d.tenant_id, causationId: first.d.request_id, commitId: timeOrderedUuid() },
      );
      appended += batch.length;
      expected += batch.length;
      pending = pending.slice(batch.length);
    } catch (error) {
      if (!(error instanceof WrongExpectedVersionError) || error.actual === expected) throw error;
      // Lines up to the stream's version are in the log already.
      pending = pending.filter((l) => l.v > error.actual);
      expected = error.actual;
    }
  }
  return appended;
}
