/**
 * Publishes usage events without ever blocking a response and without losing one.
 *
 * `publish` only enqueues. A flush appends the queue as ONE commit to this instance's own usage
 * stream (`usage-<instance>`: a single writer, so no contention and no read before the append),
 * batching many requests per fsync / JetStream ack. A quiet instance appends within
 * `flushIntervalMs` of a request; under load commits are spaced at least `minCommitIntervalMs`
 * apart (or sooner when `maxBatch` events are waiting), because every commit has a fixed cost on
 * the event loop: the embedded SQLite store fsyncs synchronously, and every subscriber in the
 * process (projections, live views) wakes up to read it. At thousands of requests/s, 100 commits/s
 * of a handful of events each cost the relay a measurable share of its time (docs/history/benchmarks-2026-11-21.md).
 *
 * If the append fails (bus or disk down), the batch is written to a spool file under
 * DATA_DIR/spool and re-published once the store answers again; a spool left by a crashed process
 * is picked up at the next start.
 */
import { randomUUID } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { WrongExpectedVersionError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { EventStore } from '../ports/event-store.js';
import { USAGE_RECORDED, type UsageData } from '../commands/usage/events.js';
import { timeOrderedUuid } from '../ids.js';

interface Pending {
  id: string;
  data: UsageData;
}

export interface UsagePublisherOptions {
  spoolDir: string;
  /** Longest wait before a partial batch is appended (when no commit happened recently). */
  flushIntervalMs?: number;
  /** Shortest time between two commits, unless `maxBatch` events are waiting. */
  minCommitIntervalMs?: number;
  maxBatch?: number;
  /** How often to retry a spool while the store is failing. */
  retryIntervalMs?: number;
  /**
   * Called with every event before it goes into this publisher's stream: as the relay publishes
   * it, and again for a spooled event when it is re-published (a spool may come from an earlier
   * process). The billing live view folds this instance's usage here rather than when the log
   * hands it back (app.ts); it ignores an event it has seen.
   */
  beforeAppend?: (data: UsageData) => void;
}

export class UsagePublisher {
  readonly stream = `usage-${randomUUID().replace(/-/g, '')}`;
  private version = 0;
  private queue: Pending[] = [];
  private timer: NodeJS.Timeout | null = null;
  /** When the last non-empty batch was taken for appending (performance.now()). */
  private lastCommitAt = -Infinity;
  private flushing: Promise<void> = Promise.resolve();
  private retryTimer: NodeJS.Timeout | null = null;
  private readonly spoolFile: string;
  private closed = false;
  /** Count of events appended to the store (observability and tests). */
  published = 0;

  constructor(
    private readonly store: EventStore,
    private readonly logger: Logger,
    private readonly options: UsagePublisherOptions,
  ) {
    mkdirSync(options.spoolDir, { recursive: true });
    this.spoolFile = join(options.spoolDir, 'usage.jsonl');
  }

  /** Replays spools left by earlier processes. Call once at startup. */
  start(): void {
    if (this.spoolFiles().length > 0) this.scheduleRetry(0);
  }

  publish(data: UsageData): void {
    this.observe(data);
    if (this.closed) {
      this.spool([{ id: timeOrderedUuid(), data }]);
      return;
    }
    // Time-ordered: the log's index on event ids (and the ledger's on charges) grows at its end.
    this.queue.push({ id: timeOrderedUuid(), data });
    if (this.queue.length >= (this.options.maxBatch ?? 500)) this.flushSoon(0);
    else this.flushSoon(this.options.flushIntervalMs ?? 10);
  }

  /** Appends everything queued (and waits for flushes in progress). */
  async flush(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    const batch = this.queue;
    this.queue = [];
    if (batch.length > 0) this.lastCommitAt = performance.now();
    const previous = this.flushing;
    this.flushing = previous.then(() => this.appendOrSpool(batch));
    await this.flushing;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    await this.flush();
  }

  private flushSoon(delayMs: number) {
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

  private async append(batch: Pending[], retried = false): Promise<void> {
    try {
      const result = await this.store.append(
        this.stream,
        batch.map((p) => ({ id: p.id, type: USAGE_RECORDED, data: p.data })),
        // The tenant of a batch is that of its first event; each event's data carries its own.
        { expectedVersion: this.version, tenantId: batch[0]!.data.tenant_id, causationId: batch[0]!.data.request_id, commitId: batch[0]!.id },
      );
      this.version = result.version;
      this.published += batch.length;
    } catch (error) {
      // An earlier append may have been written although its acknowledgement was lost: learn the
      // stream's real version and try once more (the commit id makes a written batch a no-op).
      if (!(error instanceof WrongExpectedVersionError) || retried) throw error;
      this.version = error.actual;
      await this.append(batch, true);
    }
  }

  private async appendOrSpool(batch: Pending[]): Promise<void> {
    if (batch.length === 0) return;
    try {
      await this.append(batch);
    } catch (error) {
      this.logger.warn({ err: error, events: batch.length }, 'usage events could not be published; spooled to disk');
      this.spool(batch);
      this.scheduleRetry(this.options.retryIntervalMs ?? 2000);
    }
  }

  /** `beforeAppend`, which must never fail a request or a spool replay. */
  private observe(data: UsageData) {
    try {
      this.options.beforeAppend?.(data);
    } catch (error) {
      this.logger.error({ err: error, request_id: data.request_id }, 'usage event observer failed');
    }
  }

  private spool(batch: Pending[]) {
    appendFileSync(this.spoolFile, batch.map((p) => JSON.stringify(p)).join('\n') + '\n');
  }

  private spoolFiles(): string[] {
    if (!existsSync(this.options.spoolDir)) return [];
    return readdirSync(this.options.spoolDir)
      .filter((f) => f.startsWith('usage') && (f.endsWith('.jsonl') || f.endsWith('.sending')))
      .map((f) => join(this.options.spoolDir, f));
  }

  private scheduleRetry(delayMs: number) {
    if (this.retryTimer || this.closed) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.flushing = this.flushing.then(() => this.drainSpool());
    }, delayMs);
    this.retryTimer.unref();
  }

  /** Re-publishes spooled events; a file is removed only once all of it is in the store. */
  private async drainSpool(): Promise<void> {
    for (const file of this.spoolFiles()) {
      // Rename first so events spooled meanwhile go to a fresh file, not one being sent.
      const sending = file.endsWith('.sending') ? file : `${file}.${Date.now()}.sending`;
      if (sending !== file) renameSync(file, sending);
      const events = readFileSync(sending, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Pending);
      for (const event of events) this.observe(event.data);
      try {
        for (let i = 0; i < events.length; i += 500) await this.append(events.slice(i, i + 500));
        unlinkSync(sending);
        this.logger.info({ events: events.length }, 'spooled usage events published');
      } catch (error) {
        this.logger.warn({ err: error }, 'usage spool still cannot be published; will retry');
        this.scheduleRetry(this.options.retryIntervalMs ?? 2000);
        return;
      }
    }
  }
}
