/**
 * Background threads: work that must not run on the serving thread's event loop (the event log's
 * fsyncs, the projectors' SQL writes) runs in a worker thread of the same process, spoken to with
 * request/response messages.
 *
 * One entry module per job. It is started the same way from the build (`.js`) and from source
 * (`.ts`, as in tests and `npm run dev`): for a `.ts` entry the thread first registers tsx's
 * loader, the same one the main thread runs under. A test run compiles the sources once and names
 * the copy in SWITCHYARD_COMPILED_SOURCES: threads then load the compiled twin of a `.ts` entry,
 * without tsx (decision 0300: a start then takes a third of the CPU).
 */
import { existsSync, readlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { getPriority, setPriority } from 'node:os';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { ownValue } from './own.js';
import { packageRoot } from './package-root.js';

interface Call {
  id: number;
  method: string;
  payload: unknown;
}

type Reply = { id: number; value: unknown } | { id: number; error: SerializedError };

/** A log line written in the thread (pino's JSON), handed to the owner's logger. */
interface LogLine {
  log: string;
}

/** An error as it crosses the thread boundary: its class name, message and own fields. */
export interface SerializedError {
  name: string;
  message: string;
  fields: Record<string, unknown>;
}

const serializeError = (error: unknown): SerializedError =>
  error instanceof Error
    ? { name: error.name === 'Error' ? error.constructor.name : error.name, message: error.message, fields: { ...error } }
    : { name: 'Error', message: String(error), fields: {} };

/** Thrown on the calling side when the thread failed a call; `remote` says what it threw. */
export class ThreadCallError extends Error {
  constructor(readonly remote: SerializedError) {
    super(remote.message);
  }
}

/** What the entry module's `serveThread` handlers receive and return (structured-clonable). */
type Handlers = Record<string, (payload: never) => unknown>;

/**
 * The thread side: answers calls with the handlers `init` returns. `init` receives the data the
 * caller passed to `new Thread()`; `Thread.start()` resolves once it has run (rejects if it threw).
 */
export function serveThread<Data>(init: (data: Data) => Promise<Handlers>): void {
  if (isMainThread || !parentPort) throw new Error('serveThread() runs in a worker thread');
  const port = parentPort;
  const ready = init((workerData as { data: Data }).data);
  ready.then(
    () => port.postMessage({ id: 0, value: 'ready' } satisfies Reply),
    (error: unknown) => port.postMessage({ id: 0, error: serializeError(error) } satisfies Reply),
  );
  port.on('message', (call: Call) => {
    void ready
      .then((handlers) => {
        const handler = ownValue(handlers, call.method);
        if (!handler) throw new Error(`unknown thread method ${call.method}`);
        return handler(call.payload as never);
      })
      .then(
        (value) => port.postMessage({ id: call.id, value } satisfies Reply),
        (error: unknown) => port.postMessage({ id: call.id, error: serializeError(error) } satisfies Reply),
      );
  });
}

/**
 * A pino destination for a thread: each line goes to the thread's owner, which writes it with
 * its own logger (so a thread's records go where the process's records go, redaction included).
 */
export const threadLogDestination = {
  write(line: string): void {
    parentPort?.postMessage({ log: line } satisfies LogLine);
  },
};

/**
 * Lowers the calling thread's scheduling priority to `nice` (0-19; a thread already lower stays as
 * it is) and returns what it is now, with the thread's id; null where a thread has no priority of
 * its own (not Linux) or when `nice` is 0. On Linux a priority belongs to a thread, and
 * setpriority() takes a thread id in place of a process id. Raising a priority needs privileges,
 * so a thread only ever lowers its own.
 */
export function lowerThreadPriority(nice: number): { tid: number; nice: number } | null {
  if (nice === 0 || process.platform !== 'linux') return null;
  // "<pid>/task/<tid>": the one place Node lets a thread learn its own id.
  const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
  if (!Number.isInteger(tid) || tid <= 0) throw new Error(`cannot tell this thread's id from /proc/thread-self`);
  if (getPriority(tid) < nice) setPriority(tid, nice);
  return { tid, nice: getPriority(tid) };
}

const require = createRequire(import.meta.url);

/** Runs in the new thread before the entry: tsx's loader for a `.ts` entry, then the entry. */
const BOOT = `
const { workerData } = require('node:worker_threads');
(async () => {
  if (workerData.tsx) (await import(workerData.tsx)).register();
  await import(workerData.entry);
})().catch((error) => { process.nextTick(() => { throw error; }); });
`;

/**
 * The calling side of one thread. `start()` resolves once the entry's init has run; `call()`
 * sends one request; a thread that exits fails every call in flight (and later ones).
 */
export class Thread {
  private readonly worker: Worker;
  private readonly pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  private nextId = 1;
  private exited: Error | null = null;
  /** Set by stop(): the exit that follows is not news for `onExit`. */
  private stopping = false;
  private readonly ready: Promise<unknown>;

  constructor(
    /** The entry module (a file next to the caller: `new URL('./x.js', import.meta.url)`). */
    entry: URL,
    data: unknown,
    private readonly events: {
      /** Told when the thread dies on its own (not through `stop()`). */
      onExit?: (error: Error) => void;
      /** Each record the thread logged through `threadLogDestination`, parsed. */
      onLog?: (record: Record<string, unknown>) => void;
    } = {},
  ) {
    const source = entryModule(entry);
    const tsx = source.pathname.endsWith('.ts') ? tsxLoaderUrl() : null;
    this.worker = new Worker(BOOT, { eval: true, workerData: { entry: source.href, tsx, data } });
    this.ready = new Promise((resolve, reject) => this.pending.set(0, { resolve, reject }));
    // A failed init also fails every call; start() is where it is reported.
    this.ready.catch(() => undefined);
    this.worker.on('message', (message: Reply | LogLine) => {
      if ('log' in message) {
        this.events.onLog?.(JSON.parse(message.log) as Record<string, unknown>);
        return;
      }
      const reply = message;
      const waiter = this.pending.get(reply.id);
      if (!waiter) return;
      this.pending.delete(reply.id);
      if ('error' in reply) waiter.reject(new ThreadCallError(reply.error));
      else waiter.resolve(reply.value);
    });
    this.worker.on('error', (error) => this.fail(error));
    this.worker.on('exit', (code) => this.fail(new Error(`thread ${source.pathname} exited (code ${code})`)));
  }

  private fail(error: Error) {
    if (this.exited) return;
    this.exited = error;
    for (const waiter of this.pending.values()) waiter.reject(error);
    this.pending.clear();
    if (!this.stopping) this.events.onExit?.(error);
  }

  /** Resolves when the thread's init has finished (rejects with its error). */
  async start(): Promise<void> {
    await this.ready;
  }

  /** False once the thread has exited (on its own or through stop()). */
  get alive(): boolean {
    return this.exited === null;
  }

  call<T>(method: string, payload?: unknown): Promise<T> {
    if (this.exited) return Promise.reject(this.exited);
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      this.worker.postMessage({ id, method, payload } satisfies Call);
    });
  }

  async stop(): Promise<void> {
    this.stopping = true;
    if (!this.exited) await this.worker.terminate();
  }
}

/**
 * The module a thread (or the file-processing pool's worker) loads for `entry` (`./x.js` next to
 * its caller): the built `.js` when there is one, else the compiled copy of the `.ts` source in
 * SWITCHYARD_COMPILED_SOURCES, else the `.ts` source itself (then through tsx).
 */
export function entryModule(entry: URL): URL {
  if (!entry.pathname.endsWith('.js') || existsSync(entry)) return entry;
  const source = new URL(entry.href.replace(/\.js$/, '.ts'));
  return compiledTwin(source) ?? source;
}

function compiledTwin(source: URL): URL | null {
  const copy = process.env.SWITCHYARD_COMPILED_SOURCES;
  if (!copy) return null;
  const path = relative(packageRoot(), fileURLToPath(source));
  if (path.startsWith(`..${sep}`)) return null;
  const twin = join(copy, path.replace(/\.ts$/, '.js'));
  return existsSync(twin) ? pathToFileURL(twin) : null;
}

/** tsx's ESM `register()` module (resolved through its package.json: test runners resolve `require` differently). */
function tsxLoaderUrl(): string {
  const manifest = require.resolve('tsx/package.json');
  const exports = (require(manifest) as { exports: Record<string, { import: { default: string } }> }).exports;
  return pathToFileURL(join(dirname(manifest), exports['./esm/api']!.import.default)).href;
}

