/**
 * The built-in file processor: a piscina pool of worker threads, one file per worker at a time,
 * never on the serving event loop (decision 0140). FILE_PROCESSING_TIMEOUT bounds each file from
 * the moment its worker begins it (the worker says so with a message): past it the task's
 * AbortSignal fires and piscina terminates that worker (a loop in a parser cannot be interrupted
 * any other way); the next file gets a new one. A worker that crashes or runs out of its heap
 * ends its file in `file_processing_error`; the pool replaces it.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import type { Logger } from '../../logger.js';
import { entryModule } from '../../threads.js';
import type { OcrSettings } from './ocr.js';
import { pdfJsAssets } from './pdfjs-assets.js';
import type { FileProcessor, ProcessingInput, ProcessingResult } from './processor.js';
import type { FileStarted, FileTask, FileWorkerData } from './worker.js';

export interface FilePoolOptions {
  /** FILE_PROCESSING_WORKERS: threads, each processing one file at a time. */
  workers: number;
  /** FILE_PROCESSING_TIMEOUT in milliseconds. */
  timeoutMs: number;
  ocr: OcrSettings;
  /** Each worker's V8 heap cap: a decompression bomb or a runaway parser ends that worker, not the process. */
  heapLimitMb?: number;
  /** The worker module (default: ./worker.js beside this file); tests name a wrapper that can misbehave. */
  workerModule?: URL;
  /** How long a file may wait for its worker to begin it (default WORKER_START_GRACE_MS). */
  startGraceMs?: number;
}

/** Enough for pdf.js on a MAX_FILE_SIZE PDF of hundreds of pages, small beside a server's memory. */
const DEFAULT_HEAP_LIMIT_MB = 512;

/**
 * How long a file may wait for its worker to begin it (a replaced worker loading pdf.js, a busy
 * machine): past it no worker could start, and the file fails instead of waiting forever.
 */
const WORKER_START_GRACE_MS = 60_000;

/** Workers run below the serving thread's priority so a busy pool cannot delay responses. */
const WORKER_NICE_INCREMENT = 10;

const SHUTTING_DOWN: ProcessingResult = { ok: false, code: 'file_processing_error', reason: 'shutting down' };

export class FileProcessingPool implements FileProcessor {
  private readonly piscina: Piscina;
  private readonly timeoutMs: number;
  private readonly startGraceMs: number;
  /** Files waiting for a free worker: the timeout starts when a file gets one, not while it waits. */
  private readonly waiting: ((granted: boolean) => void)[] = [];
  private readonly slots: number;
  private busy = 0;
  private closed = false;
  private nextJob = 1;
  /** Files handed to piscina whose worker has not yet said it began them: what to do when it does. */
  private readonly starting = new Map<number, () => void>();

  constructor(
    options: FilePoolOptions,
    private readonly logger: Logger,
  ) {
    const module = entryModule(options.workerModule ?? new URL('./worker.js', import.meta.url));
    this.slots = options.workers;
    this.timeoutMs = options.timeoutMs;
    this.startGraceMs = options.startGraceMs ?? WORKER_START_GRACE_MS;
    this.piscina = new Piscina({
      filename: fileURLToPath(module),
      // Started on the first file, not with the app: an instance that never sees a file pays nothing.
      minThreads: 0,
      maxThreads: options.workers,
      // Workers are kept once started: a start costs about 400 ms of a core, and pdf.js as much again.
      idleTimeout: Number.POSITIVE_INFINITY,
      concurrentTasksPerWorker: 1,
      niceIncrement: WORKER_NICE_INCREMENT,
      resourceLimits: { maxOldGenerationSizeMb: options.heapLimitMb ?? DEFAULT_HEAP_LIMIT_MB },
      // From source, the worker is TypeScript: tsx's require hook loads it (a worker's --import is ignored by Node 20).
      execArgv: module.pathname.endsWith('.ts') ? ['--require', tsxRequireHook()] : [],
      workerData: { ocr: options.ocr, pdfAssets: pdfJsAssets() } satisfies FileWorkerData,
    });
    this.piscina.on('message', (message: Partial<FileStarted> | null) => {
      if (typeof message?.fileJobStarted === 'number') this.starting.get(message.fileJobStarted)?.();
    });
    // Errors no file is waiting for: a worker dying while idle (the pool replaces it), or one that
    // cannot load its module at all (a broken installation: files then fail after the start grace).
    this.piscina.on('error', (error: unknown) => this.logger.error({ error: describe(error) }, 'a file-processing worker failed outside a file'));
  }

  async process(input: ProcessingInput): Promise<ProcessingResult> {
    if (this.closed) throw new Error('the file processor is closed');
    if (!(await this.acquire())) return SHUTTING_DOWN;
    try {
      return await this.run(input);
    } finally {
      this.release();
    }
  }

  private async run(input: ProcessingInput): Promise<ProcessingResult> {
    const job = this.nextJob++;
    const controller = new AbortController();
    let ended: 'timeout' | 'no worker' | null = null;
    let started = 0;
    // Until the worker says it began the file, only the start grace runs: a worker that was just
    // replaced (after a timeout or a crash) loads its modules first, and that is not the file's time.
    let timer = setTimeout(() => {
      ended = 'no worker';
      controller.abort();
    }, this.startGraceMs);
    this.starting.set(job, () => {
      started = performance.now();
      clearTimeout(timer);
      timer = setTimeout(() => {
        ended = 'timeout';
        controller.abort();
      }, this.timeoutMs);
    });
    try {
      return (await this.piscina.run({ ...input, job } satisfies FileTask, { signal: controller.signal })) as ProcessingResult;
    } catch (error) {
      if (this.closed) return SHUTTING_DOWN;
      // The started notice and the task's answer travel on different ports: an answer may come
      // first, so only the timers (not `started`) say why a file ended.
      const ms = started ? Math.round(performance.now() - started) : null;
      if (ended === 'timeout') {
        this.logger.warn({ mimeType: input.mimeType, ms }, 'file processing timed out; its worker was terminated');
        return { ok: false, code: 'file_processing_timeout', reason: `processing took longer than ${formatSeconds(this.timeoutMs)}` };
      }
      if (ended === 'no worker') {
        this.logger.error({ mimeType: input.mimeType, error: describe(error) }, 'no file-processing worker started within the grace period');
        return { ok: false, code: 'file_processing_error', reason: 'no worker available' };
      }
      this.logger.warn({ mimeType: input.mimeType, ms, error: describe(error) }, 'file processing failed in its worker');
      return { ok: false, code: 'file_processing_error', reason: crashReason(error) };
    } finally {
      clearTimeout(timer);
      this.starting.delete(job);
    }
  }

  private acquire(): Promise<boolean> {
    if (this.busy < this.slots) {
      this.busy++;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private release(): void {
    const next = this.waiting.shift();
    // The slot passes straight to the next file (busy stays as it is).
    if (next) next(!this.closed);
    else this.busy--;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const waiter of this.waiting.splice(0)) waiter(false);
    await this.piscina.destroy();
  }
}

/** tsx's CommonJS register module (resolved through its package.json: test runners resolve `require` differently). */
function tsxRequireHook(): string {
  const require = createRequire(import.meta.url);
  const manifest = require.resolve('tsx/package.json');
  const entry = (require(manifest) as { exports: Record<string, unknown> }).exports['./cjs'];
  if (typeof entry !== 'string') throw new Error("tsx's package.json has no ./cjs entry");
  return join(dirname(manifest), entry);
}

/** What the user is told when a worker died under a file: short, no internals. */
function crashReason(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'ERR_WORKER_OUT_OF_MEMORY') return 'out of memory';
  if (error instanceof Error && /^worker exited/.test(error.message)) return 'the worker stopped';
  return 'processing failed';
}

/**
 * An error for the log: its class and code, and its message only when Node or piscina wrote it
 * (a coded error, a worker's exit): a parser's message may quote the file, which stays out of logs.
 */
function describe(error: unknown): { name: string; code?: string; message?: string } {
  if (!(error instanceof Error)) return { name: typeof error };
  const code = (error as { code?: unknown }).code;
  const ours = typeof code === 'string' || /^worker exited/.test(error.message);
  return { name: error.name, ...(typeof code === 'string' ? { code } : {}), ...(ours ? { message: error.message.slice(0, 200) } : {}) };
}

const formatSeconds = (ms: number): string => `${Number((ms / 1000).toFixed(3))} s`;
