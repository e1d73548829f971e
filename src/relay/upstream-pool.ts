/**
 * The one upstream HTTP client: an undici Pool per origin (keep-alive, no fetch/web-streams
 * layer on the hot path). HTTP_MAX_CONNS_PER_HOST caps connections per origin,
 * HTTP_IDLE_CONN_TIMEOUT closes idle ones, and at most HTTP_MAX_IDLE_CONNS origins keep a pool
 * (the least recently used pool beyond that is closed).
 *
 * Each origin's requests pass a gate first: at most HTTP_MAX_CONNS_PER_HOST in flight (one per
 * connection); the rest wait in a FIFO queue of our own, at most UPSTREAM_QUEUE_TIMEOUT, then fail
 * fast with `503 upstream_busy` (UpstreamBusyError). undici's own queue has no bound, no deadline
 * and no way to take a request back out; ours is also what the queue metrics count.
 *
 * Requests go through `Pool.dispatch()` with our own handler rather than `Pool.request()`: the
 * latter wraps every response body in a Node Readable (plus an AsyncResource and its promise
 * plumbing), and in CPU profiles of the relay that layer was a visible share of each request.
 * The handler below hands the body out as a small object of our own: `text()` collects the
 * Buffers and decodes once, iteration yields the Buffers as they arrive, with backpressure.
 */
import { Pool, errors as undiciErrors, type Dispatcher } from 'undici';
import type { Config } from '../config.js';
import { UpstreamBusyError, UpstreamFaultError } from '../errors.js';
import type { UpstreamRequest } from './providers/provider.js';

/** Upstream URLs parsed per distinct URL string (they are per channel, so few). */
const MAX_PARSED_URLS = 1_000;

/**
 * Bytes a body may hold unread before the connection is paused (the socket then stops being
 * read, and TCP pushes back on the upstream). Node's default stream high-water mark.
 */
const HIGH_WATER_MARK = 64 * 1024;

/** Response header names are lower-case; a repeated header is an array. */
export type UpstreamHeaders = Record<string, string | string[] | undefined>;

/**
 * An upstream response body, read once: with `text()`, by iterating it (Buffer chunks as they
 * arrive), or discarded with `destroy()`. A failure after the headers (timeout, lost
 * connection, the request's signal) rejects `text()` or throws from the iteration.
 */
export interface UpstreamBody extends AsyncIterable<Buffer> {
  /**
   * The whole body as UTF-8 (a leading byte order mark is dropped). A body longer than the
   * pool's `maxBodyBytes` rejects with UpstreamFaultError `upstream_response_too_large` as soon
   * as it gets that long, and the request is aborted (nothing more is read).
   */
  text(): Promise<string>;
  /** Discards the rest now, aborting the request if the upstream has not finished sending. */
  destroy(reason?: Error): void;
}

export interface UpstreamResponse {
  statusCode: number;
  headers: UpstreamHeaders;
  body: UpstreamBody;
}

/** An emitter that says "abort" the way undici accepts (the relay's ClientGone). */
export interface AbortEmitter {
  readonly aborted: boolean;
  readonly reason?: unknown;
  once(event: 'abort', listener: () => void): unknown;
  off(event: 'abort', listener: () => void): unknown;
}

/** What aborts an upstream request: an AbortSignal, or an AbortEmitter (no EventTarget per request). */
export type UpstreamSignal = AbortSignal | AbortEmitter;

interface Waiter<T> {
  resolve(value: T): void;
  reject(error: unknown): void;
}

const DONE: IteratorReturnResult<undefined> = Object.freeze({ done: true, value: undefined });

// What the body is being used for. IDLE: headers are in, nobody has read yet.
const IDLE = 0;
const ITERATING = 1;
const COLLECTING = 2;
/** Read to the end, failed and reported, or discarded: nothing more is delivered. */
const CLOSED = 3;
type Mode = typeof IDLE | typeof ITERATING | typeof COLLECTING | typeof CLOSED;

function abortReason(signal: UpstreamSignal): Error {
  return (signal.reason as Error | undefined) ?? new undiciErrors.RequestAbortedError();
}

function bodyTooLarge(): UpstreamFaultError {
  return new UpstreamFaultError('the upstream sent a response larger than the relay accepts', 'upstream_response_too_large');
}

/** Chunks to one string, decoded once. undici's `text()` dropped a UTF-8 BOM, so this does too. */
function decodeUtf8(chunks: Buffer[], length: number): string {
  if (length === 0) return '';
  const buffer = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, length);
  const start = buffer.length > 2 && buffer[0] === 0xef && buffer[1] === 0xbb && buffer[2] === 0xbf ? 3 : 0;
  return buffer.toString('utf8', start);
}

/**
 * One upstream request: the undici dispatch handler, and once the headers are in, the response
 * body too (one object per request instead of a handler, a Readable and its buffers).
 *
 * undici calls the on* methods from its HTTP parser; consumers call text()/next()/destroy()
 * from promise continuations. `controller.resume()` must not run inside the parser, and it is only
 * ever called from the consumer side here.
 */
class UpstreamCall implements Dispatcher.DispatchHandler, UpstreamBody, AsyncIterator<Buffer, undefined> {
  private controller: Dispatcher.DispatchController | null = null;
  /** The response promise, until the headers arrive or the request fails. */
  private pending: Waiter<UpstreamResponse> | null;
  private signal: UpstreamSignal | null = null;
  /** The signal fired while the request still waited for a connection: abort it when it starts. */
  private abortBeforeStart: Error | null = null;

  private mode: Mode = IDLE;
  /** Received and not yet read (or, when collecting, the whole body so far). */
  private chunks: Buffer[] = [];
  /** Bytes in `chunks`. */
  private bytes = 0;
  /** The upstream has sent the whole body. */
  private ended = false;
  /** Set when the body failed after the headers; delivered to the next read. */
  private failure: { error: unknown } | null = null;
  private reader: Waiter<IteratorResult<Buffer, undefined>> | null = null;
  private collector: Waiter<string> | null = null;

  constructor(
    pending: Waiter<UpstreamResponse>,
    signal: UpstreamSignal | undefined,
    /** The most `text()` collects. */
    private readonly maxBodyBytes: number,
    /** Called once when undici is done with the request (ended or failed): its connection is free. */
    private settled: (() => void) | null = null,
  ) {
    this.pending = pending;
    if (signal) {
      this.signal = signal;
      if ('addEventListener' in signal) signal.addEventListener('abort', this.onAbort, { once: true });
      else signal.once('abort', this.onAbort);
    }
  }

  // ---- undici's side ----

  onRequestStart(controller: Dispatcher.DispatchController): void {
    // Called again for the same request when undici retries it on another connection.
    this.controller = controller;
    if (this.abortBeforeStart !== null) controller.abort(this.abortBeforeStart);
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: UpstreamHeaders): void {
    if (statusCode < 200) return; // informational (1xx): the real response follows
    const pending = this.pending!;
    this.pending = null;
    pending.resolve({ statusCode, headers, body: this });
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    switch (this.mode) {
      case COLLECTING:
        this.chunks.push(chunk);
        this.bytes += chunk.length;
        if (this.bytes > this.maxBodyBytes) this.destroy(bodyTooLarge());
        return;
      case CLOSED:
        return;
      default: {
        if (this.failure !== null) return;
        const reader = this.reader;
        if (reader !== null) {
          // Someone is waiting: the chunk goes straight out, never queued.
          this.reader = null;
          reader.resolve({ done: false, value: chunk });
          return;
        }
        this.chunks.push(chunk);
        this.bytes += chunk.length;
        if (this.bytes >= HIGH_WATER_MARK) controller.pause();
      }
    }
  }

  onResponseEnd(): void {
    this.ended = true;
    this.settle();
    switch (this.mode) {
      case COLLECTING: {
        const collector = this.collector!;
        const text = decodeUtf8(this.chunks, this.bytes);
        this.close();
        collector.resolve(text);
        return;
      }
      case ITERATING: {
        const reader = this.reader;
        if (reader !== null) {
          this.reader = null;
          this.close();
          reader.resolve(DONE);
        }
        return;
      }
      // IDLE: the chunks wait for a reader; CLOSED: nothing to do.
    }
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.settle();
    const pending = this.pending;
    if (pending !== null) {
      this.pending = null;
      this.unlisten();
      pending.reject(error);
      return;
    }
    this.fail(error);
  }

  // ---- the consumer's side ----

  text(): Promise<string> {
    if (this.mode !== IDLE) return Promise.reject(new TypeError('upstream body already read'));
    if (this.failure !== null) return this.deliverFailure();
    if (this.bytes > this.maxBodyBytes) {
      const error = bodyTooLarge();
      this.destroy(error);
      return Promise.reject(error);
    }
    if (this.ended) {
      const text = decodeUtf8(this.chunks, this.bytes);
      this.close();
      return Promise.resolve(text);
    }
    this.mode = COLLECTING;
    return new Promise<string>((resolve, reject) => {
      this.collector = { resolve, reject };
      this.controller!.resume();
    });
  }

  [Symbol.asyncIterator](): AsyncIterator<Buffer, undefined> {
    if (this.mode !== IDLE) throw new TypeError('upstream body already read');
    this.mode = ITERATING;
    return this;
  }

  next(): Promise<IteratorResult<Buffer, undefined>> {
    const chunks = this.chunks;
    if (chunks.length > 0) {
      const chunk = chunks.shift()!;
      this.bytes -= chunk.length;
      // Below the mark again: let undici read on (it may deliver more right here).
      if (this.bytes < HIGH_WATER_MARK && this.controller!.paused) this.controller!.resume();
      return Promise.resolve({ done: false, value: chunk });
    }
    if (this.failure !== null) return this.deliverFailure();
    if (this.ended || this.mode === CLOSED) {
      this.close();
      return Promise.resolve(DONE);
    }
    if (this.reader !== null) return Promise.reject(new TypeError('upstream body: next() while a read is pending'));
    return new Promise((resolve, reject) => {
      this.reader = { resolve, reject };
    });
  }

  /** The consumer stopped early (a `break` or a throw in `for await`): abort the rest. */
  return(): Promise<IteratorResult<Buffer, undefined>> {
    this.destroy();
    return Promise.resolve(DONE);
  }

  destroy(reason?: Error): void {
    if (this.mode === CLOSED) return;
    const error = reason ?? new undiciErrors.RequestAbortedError();
    const reader = this.reader;
    const collector = this.collector;
    const unfinished = !this.ended && this.failure === null;
    this.close();
    reader?.reject(error);
    collector?.reject(error);
    // Aborting calls onResponseError at once; the body is closed, so that is ignored.
    if (unfinished) this.controller!.abort(error);
  }

  // ---- shared ----

  private settle(): void {
    const settled = this.settled;
    if (settled === null) return;
    this.settled = null;
    settled();
  }

  private readonly onAbort = (): void => {
    const signal = this.signal;
    if (signal === null) return;
    this.signal = null; // the listener was a once-listener
    const reason = abortReason(signal);
    if (this.pending !== null) {
      // No headers yet: abort now, or as soon as the request gets a connection (as undici's request() did).
      if (this.controller !== null) this.controller.abort(reason);
      else this.abortBeforeStart = reason;
      return;
    }
    if (this.mode === CLOSED) return;
    const unfinished = !this.ended && this.failure === null;
    this.fail(reason);
    if (unfinished) this.controller!.abort(reason);
  };

  /** The body failed: drop what is queued and tell whoever is reading, now or at their next read. */
  private fail(error: unknown): void {
    if (this.failure !== null || this.mode === CLOSED) return;
    this.chunks = [];
    this.bytes = 0;
    switch (this.mode) {
      case COLLECTING: {
        const collector = this.collector!;
        this.close();
        collector.reject(error);
        return;
      }
      default: {
        const reader = this.reader;
        if (reader !== null) {
          this.reader = null;
          this.close();
          reader.reject(error);
          return;
        }
        this.failure = { error };
        this.unlisten();
      }
    }
  }

  private deliverFailure<T>(): Promise<T> {
    const { error } = this.failure!;
    this.close();
    return Promise.reject(error as Error);
  }

  private close(): void {
    this.mode = CLOSED;
    this.chunks = [];
    this.bytes = 0;
    this.reader = null;
    this.collector = null;
    this.unlisten();
  }

  private unlisten(): void {
    const signal = this.signal;
    if (signal === null) return;
    this.signal = null;
    if ('removeEventListener' in signal) signal.removeEventListener('abort', this.onAbort);
    else signal.off('abort', this.onAbort);
  }
}

/** A request waiting at an origin's gate. */
interface Queued {
  start(): void;
  /** Set once it started, timed out or was aborted: the queue skips it. */
  done: boolean;
}

/**
 * One origin's admission: `active` requests hold a connection (or are about to), up to `limit`;
 * the others wait in FIFO order. A FIFO of our own (an array and a head index, compacted now and
 * then) because requests leave it from the middle when they time out or their client goes away.
 */
class OriginGate {
  active = 0;
  /** Live entries in `queue` (timed-out and aborted ones stay until they reach the head). */
  queued = 0;
  private queue: Queued[] = [];
  private head = 0;

  constructor(
    readonly origin: string,
    readonly pool: Pool,
    private readonly limit: number,
  ) {}

  /** Takes a place now (true), or not (false: enqueue). */
  tryEnter(): boolean {
    if (this.active >= this.limit || this.queued > 0) return false;
    this.active++;
    return true;
  }

  enqueue(entry: Queued): void {
    this.queue.push(entry);
    this.queued++;
  }

  /** An entry left the queue before its turn (timeout, abort). */
  left(entry: Queued): void {
    entry.done = true;
    // Everything still in the array has left: drop it now rather than when connections free up
    // (under an upstream that hangs, timed-out entries would otherwise pile up).
    if (--this.queued === 0) this.reset();
  }

  private reset(): void {
    this.queue = [];
    this.head = 0;
  }

  /** A request's connection came free: the next live waiter takes its place. */
  readonly release = (): void => {
    this.active--;
    while (this.head < this.queue.length && this.active < this.limit) {
      const next = this.queue[this.head]!;
      this.queue[this.head++] = undefined as unknown as Queued;
      if (next.done) continue;
      next.done = true;
      this.queued--;
      this.active++;
      next.start();
    }
    if (this.queued === 0) {
      if (this.head > 0) this.reset();
    } else if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
  };
}

/** Per origin, as the metrics show it. */
export interface OriginStats {
  origin: string;
  /** Requests waiting at the gate for a connection. */
  queued: number;
  /** Requests holding (or being given) a connection. */
  active: number;
  /** Open sockets to the origin. */
  connected: number;
}

export interface UpstreamPoolEvents {
  /** A request waited UPSTREAM_QUEUE_TIMEOUT at `origin`'s gate and was failed fast. */
  queueTimedOut?(origin: string): void;
}

export class UpstreamPools {
  private readonly pools = new Map<string, OriginGate>();
  /** URL -> origin and path: parsing a URL on every request showed in profiles. */
  private readonly parsed = new Map<string, { origin: string; path: string }>();
  /** The most recently used pool: already last in `pools`, so no recency update is needed. */
  private last: OriginGate | null = null;
  /** Retry-After of an upstream_busy answer: the queue timeout, in whole seconds, 1 to 60. */
  private readonly busyRetryAfterSeconds: number;

  constructor(
    private readonly http: Config['upstreamHttp'],
    private readonly timeouts: { firstByteTimeoutMs: number; timeoutMs: number; maxBodyBytes?: number },
    private readonly events: UpstreamPoolEvents = {},
  ) {
    this.busyRetryAfterSeconds = Math.min(60, Math.max(1, Math.ceil(http.queueTimeoutMs / 1000)));
  }

  /** Each origin's gate and sockets, for the metrics (sampled at scrape). */
  stats(): OriginStats[] {
    return [...this.pools.values()].map((gate) => ({ origin: gate.origin, queued: gate.queued, active: gate.active, connected: gate.pool.stats.connected }));
  }

  private gateFor(origin: string): OriginGate {
    if (this.last?.origin === origin) return this.last;
    let gate = this.pools.get(origin);
    if (gate) {
      // Map order = recency: move to the end.
      this.pools.delete(origin);
      this.pools.set(origin, gate);
      this.last = gate;
      return gate;
    }
    const pool = new Pool(origin, {
      connections: this.http.maxConnsPerHost,
      keepAliveTimeout: this.http.idleConnTimeoutMs,
      keepAliveMaxTimeout: Math.max(this.http.idleConnTimeoutMs, 1000),
      headersTimeout: this.timeouts.firstByteTimeoutMs,
      bodyTimeout: this.timeouts.timeoutMs,
      connect: { timeout: 10_000 },
    });
    gate = new OriginGate(origin, pool, this.http.maxConnsPerHost);
    this.pools.set(origin, gate);
    this.last = gate;
    while (this.pools.size > this.http.maxIdleConns) {
      const [oldest, evicted] = this.pools.entries().next().value as [string, OriginGate];
      this.pools.delete(oldest);
      // Graceful: requests in flight (and those still queued at its gate) finish first.
      void evicted.pool.close().catch(() => undefined);
    }
    return gate;
  }

  /**
   * Sends one upstream request; resolves when the response headers arrive. The body is not
   * buffered here: it is read (or discarded) through `response.body`. `signal` aborts the
   * request before or after the headers (the relay passes its ClientGone emitter).
   */
  request(upstream: UpstreamRequest, signal?: UpstreamSignal): Promise<UpstreamResponse> {
    let target = this.parsed.get(upstream.url);
    if (!target) {
      const url = new URL(upstream.url);
      target = { origin: url.origin, path: url.pathname + url.search };
      if (this.parsed.size >= MAX_PARSED_URLS) this.parsed.clear();
      this.parsed.set(upstream.url, target);
    }
    // Already aborted: nothing is sent (undici's request() would also fail it before writing).
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    const gate = this.gateFor(target.origin);
    const options: Dispatcher.DispatchOptions = {
      path: target.path,
      method: upstream.method,
      headers: upstream.headers,
      body: upstream.body,
    };
    const maxBodyBytes = this.timeouts.maxBodyBytes ?? Infinity;
    return new Promise<UpstreamResponse>((resolve, reject) => {
      const dispatch = () => {
        // Errors, even synchronous ones (a closed pool), arrive through onResponseError.
        gate.pool.dispatch(options, new UpstreamCall({ resolve, reject }, signal, maxBodyBytes, gate.release));
      };
      if (gate.tryEnter()) dispatch();
      else this.wait(gate, dispatch, reject, signal);
    });
  }

  /** Queues a request at its origin's gate until a connection comes free, the deadline, or an abort. */
  private wait(gate: OriginGate, dispatch: () => void, reject: (error: unknown) => void, signal: UpstreamSignal | undefined): void {
    const queueTimeoutMs = this.http.queueTimeoutMs;
    let timer: NodeJS.Timeout | undefined;
    const onAbort = () => {
      if (entry.done) return;
      clearTimeout(timer);
      gate.left(entry);
      reject(abortReason(signal!));
    };
    const stopListening = () => {
      if (!signal) return;
      if ('removeEventListener' in signal) signal.removeEventListener('abort', onAbort);
      else signal.off('abort', onAbort);
    };
    const entry: Queued = {
      done: false,
      start: () => {
        clearTimeout(timer);
        stopListening();
        dispatch();
      },
    };
    gate.enqueue(entry);
    if (queueTimeoutMs > 0) {
      timer = setTimeout(() => {
        if (entry.done) return;
        stopListening();
        gate.left(entry);
        this.events.queueTimedOut?.(gate.origin);
        reject(new UpstreamBusyError(queueTimeoutMs, this.busyRetryAfterSeconds));
      }, queueTimeoutMs);
    }
    if (signal) {
      if ('addEventListener' in signal) signal.addEventListener('abort', onAbort, { once: true });
      else signal.once('abort', onAbort);
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.pools.values()].map((gate) => gate.pool.close().catch(() => undefined)));
    this.pools.clear();
    this.last = null;
  }
}
