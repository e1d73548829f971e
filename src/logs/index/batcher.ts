/**
 * The front of the log index for process entries: entries from the LogHub are queued in memory
 * and written in batches (every `flushEveryMs`, or at once when `maxBatch` are waiting), so
 * logging never waits for the database and one INSERT carries many entries.
 *
 * When the database is down, the queue keeps at most `maxQueued` entries (the oldest: the start of
 * an outage says most about it); newer ones are dropped and counted, and the failure and what was
 * dropped are reported through `onTrouble` (once when writes start failing, once when they work
 * again). `push` never blocks and never throws.
 */
import { levelRank, type LogEntry, type LogIndexWriter, type LogLevel } from '../entry.js';

export interface LogIndexBatcherOptions {
  /** Entries below this level are not indexed (LOG_INDEX_LEVEL). */
  minLevel: LogLevel;
  flushEveryMs?: number;
  maxBatch?: number;
  maxQueued?: number;
  /** Retry delay after a failed write, doubling up to `maxRetryMs`. */
  retryMs?: number;
  maxRetryMs?: number;
  /** Writes started failing (`error`) or work again (`recovered`), with what was dropped meanwhile. */
  onTrouble?: (report: { state: 'failing' | 'recovered'; error?: unknown; dropped: number; queued: number }) => void;
}

export interface LogIndexBatcherStats {
  queued: number;
  written: number;
  /** Entries dropped because the queue was full (database down or too slow). */
  dropped: number;
  failedWrites: number;
}

export class LogIndexBatcher {
  private readonly minRank: number;
  private readonly flushEveryMs: number;
  private readonly maxBatch: number;
  private readonly maxQueued: number;
  private readonly retryMs: number;
  private readonly maxRetryMs: number;
  private queue: LogEntry[] = [];
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;
  private failing = false;
  private retryDelay = 0;
  private closed = false;
  private droppedInStreak = 0;
  private readonly counts = { written: 0, dropped: 0, failedWrites: 0 };

  constructor(
    private readonly writer: LogIndexWriter,
    private readonly options: LogIndexBatcherOptions,
  ) {
    this.minRank = levelRank(options.minLevel);
    this.flushEveryMs = options.flushEveryMs ?? 200;
    this.maxBatch = options.maxBatch ?? 500;
    this.maxQueued = options.maxQueued ?? 10_000;
    this.retryMs = options.retryMs ?? 500;
    this.maxRetryMs = options.maxRetryMs ?? 10_000;
  }

  /** Queues `entry` if its level is indexed. O(1); never throws, never waits. */
  push(entry: LogEntry): void {
    if (levelRank(entry.level) < this.minRank) return;
    if (this.closed || this.queue.length >= this.maxQueued) {
      this.counts.dropped++;
      this.droppedInStreak++;
      return;
    }
    this.queue.push(entry);
    if (this.queue.length >= this.maxBatch && !this.failing) this.flushSoon(0);
    else if (!this.timer) this.flushSoon(this.failing ? this.retryDelay : this.flushEveryMs);
  }

  stats(): LogIndexBatcherStats {
    return { queued: this.queue.length, ...this.counts };
  }

  /** Writes what is queued now (resolves when written or failed). */
  async flush(): Promise<void> {
    if (this.flushing) return this.flushing;
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    this.flushing = this.writeAll().finally(() => {
      this.flushing = null;
      if (this.queue.length > 0 && !this.closed) this.flushSoon(this.failing ? this.retryDelay : this.flushEveryMs);
    });
    return this.flushing;
  }

  /** Stops taking entries and writes what is queued (one attempt; what fails is counted as dropped). */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.flushing) await this.flushing;
    await this.writeAll();
    if (this.queue.length > 0) {
      this.counts.dropped += this.queue.length;
      this.queue = [];
    }
  }

  private flushSoon(delayMs: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.flush();
    }, delayMs);
    this.timer.unref();
  }

  private async writeAll(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, this.maxBatch);
      try {
        await this.writer.append(batch);
      } catch (error) {
        // Back in front, in order; the queue's bound holds (the newest beyond it are dropped).
        this.queue = batch.concat(this.queue);
        const over = this.queue.length - this.maxQueued;
        if (over > 0) {
          this.queue.length = this.maxQueued;
          this.counts.dropped += over;
          this.droppedInStreak += over;
        }
        this.counts.failedWrites++;
        this.retryDelay = Math.min(this.maxRetryMs, this.retryDelay === 0 ? this.retryMs : this.retryDelay * 2);
        if (!this.failing) {
          this.failing = true;
          this.report({ state: 'failing', error, dropped: this.droppedInStreak, queued: this.queue.length });
        }
        return;
      }
      this.counts.written += batch.length;
      if (this.failing) {
        this.failing = false;
        this.retryDelay = 0;
        this.report({ state: 'recovered', dropped: this.droppedInStreak, queued: this.queue.length });
        this.droppedInStreak = 0;
      }
    }
  }

  private report(report: Parameters<NonNullable<LogIndexBatcherOptions['onTrouble']>>[0]): void {
    try {
      this.options.onTrouble?.(report);
    } catch {
      // A reporter that throws must not stop the index.
    }
  }
}
