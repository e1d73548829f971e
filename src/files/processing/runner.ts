/**
 * Runs file processing after uploads, never on the request path: the upload answers 201, then the
 * file is scheduled here. A job claims the file (FileProcessingStarted, appended at the version it
 * read with no retry: of several instances one wins), copies the bytes to a temp local file
 * (DATA_DIR/tmp; S3 objects too), hands it to the processor, stores the text at `texts/<file id>`
 * and records FileProcessed or FileProcessingFailed. At most FILE_PROCESSING_WORKERS jobs at once.
 *
 * At startup (`pickUp`) it takes over what dead instances left: files still `uploaded`, and files
 * `processing` for longer than FILE_PROCESSING_TIMEOUT (plus a margin).
 */
import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { CommandBus } from '../../commands/bus.js';
import { files, type FileCommand } from '../../commands/files/decider.js';
import type { Config } from '../../config.js';
import { AppError, WrongExpectedVersionError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import type { Storage } from '../../ports/storage.js';
import type { ReadModelDb } from '../../projections/runtime/projection.js';
import { filesInStatus } from '../../queries/files.js';
import { textKeyOf } from '../service.js';
import type { FileProcessor, ProcessingResult } from './processor.js';

export interface ProcessingRunnerDeps {
  commands: CommandBus;
  storage: Storage;
  db: ReadModelDb;
  processor: FileProcessor;
  config: Config['files'];
  /** Where bytes are copied for the processor (DATA_DIR/tmp). */
  tmpDir: string;
  logger: Logger;
}

interface Job {
  fileId: string;
  tenantId: string;
  /** Take over a claim made before this instant (startup's pick-up of a dead instance's work). */
  reclaimStartedBefore?: string;
}

/** Past the timeout, a claim is given this much more before another instance takes it over. */
const RECLAIM_MARGIN_MS = 30_000;
const PICK_UP_BATCH = 1000;

export class FileProcessingRunner {
  private readonly queue: Job[] = [];
  private readonly running = new Set<Promise<void>>();
  private closed = false;

  constructor(private readonly deps: ProcessingRunnerDeps) {}

  /** Processes the file soon (in the background). */
  schedule(fileId: string, tenantId: string): void {
    this.enqueue({ fileId, tenantId });
  }

  /** Schedules what dead instances left behind. */
  async pickUp(now = Date.now()): Promise<number> {
    const waiting = await filesInStatus(this.deps.db, 'uploaded', PICK_UP_BATCH);
    const cutoff = new Date(now - this.deps.config.processingTimeoutMs - RECLAIM_MARGIN_MS).toISOString();
    const stale = (await filesInStatus(this.deps.db, 'processing', PICK_UP_BATCH)).filter((f) => f.processing_started_at !== null && f.processing_started_at < cutoff);
    for (const f of waiting) this.enqueue({ fileId: f.id, tenantId: f.tenant_id });
    for (const f of stale) this.enqueue({ fileId: f.id, tenantId: f.tenant_id, reclaimStartedBefore: cutoff });
    return waiting.length + stale.length;
  }

  /** Resolves when nothing is queued or running (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.queue.length = 0;
    await this.idle();
    await this.deps.processor.close();
  }

  private enqueue(job: Job): void {
    if (this.closed) return;
    this.queue.push(job);
    this.pump();
  }

  private pump(): void {
    while (!this.closed && this.running.size < this.deps.config.workers && this.queue.length > 0) {
      const job = this.queue.shift()!;
      const run: Promise<void> = this.run(job)
        .catch((error: unknown) => this.deps.logger.error({ err: error, fileId: job.fileId }, 'file processing failed unexpectedly'))
        .finally(() => {
          this.running.delete(run);
          this.pump();
        });
      this.running.add(run);
    }
  }

  private execute(job: Job, command: FileCommand, claim = false) {
    return this.deps.commands.execute(files, job.fileId, command, { tenantId: job.tenantId }, claim ? { maxRetries: 0 } : undefined);
  }

  private async run(job: Job): Promise<void> {
    let claimed;
    try {
      claimed = await this.execute(job, { type: 'StartProcessing', at: new Date().toISOString(), ...(job.reclaimStartedBefore !== undefined && { reclaimStartedBefore: job.reclaimStartedBefore }) }, true);
    } catch (error) {
      // Another instance claimed it first, or it is no longer waiting (processed, deleted).
      if (error instanceof WrongExpectedVersionError || (error instanceof AppError && error.status === 409) || (error instanceof AppError && error.status === 404)) return;
      throw error;
    }
    const { storageKey, mimeType } = claimed.state;
    const result = await this.processStored(storageKey!, mimeType!);
    if (!result.ok) {
      await this.execute(job, { type: 'FailProcessing', code: result.code, reason: result.reason });
      return;
    }
    const textKey = textKeyOf(job.fileId);
    await this.deps.storage.put(textKey, Readable.from([Buffer.from(result.text, 'utf8')]));
    const done = await this.execute(job, { type: 'CompleteProcessing', textKey, textChars: result.text.length, textLimit: this.deps.config.textLimit, pages: result.pages, ocrPages: result.ocrPages });
    // Deleted while it was processed: the text is not wanted (the deletion may have run before the put).
    if (done.events.length === 0) await this.deps.storage.delete(textKey);
  }

  /** Copies the bytes to a temp file and processes it; a storage failure is the file's error too. */
  private async processStored(storageKey: string, mimeType: string): Promise<ProcessingResult> {
    await mkdir(this.deps.tmpDir, { recursive: true });
    const path = join(this.deps.tmpDir, `file-${randomUUID()}`);
    try {
      try {
        const object = await this.deps.storage.get(storageKey);
        if (!object) return { ok: false, code: 'file_processing_error', reason: "the file's bytes are missing from storage" };
        await pipeline(object.body, createWriteStream(path));
      } catch (error) {
        this.deps.logger.warn({ err: error, storageKey }, 'a file could not be read for processing');
        return { ok: false, code: 'file_processing_error', reason: "the file's bytes could not be read" };
      }
      // Rejects only when the processor is closed (shutdown): the file stays `processing`, and is
      // taken over by a later start once its claim is stale.
      return await this.deps.processor.process({ path, mimeType });
    } finally {
      await rm(path, { force: true });
    }
  }
}
