/**
 * A `node:net` HTTP/1.1 server for the relay's hot path, sharing its port with node:http.
 *
 * Why: node:http's IncomingMessage/ServerResponse plus fastify cost a large share of the serving
 * thread per relayed request. This server parses requests itself (./parser.ts) and answers the
 * few routes `accepts` claims with a small response object; everything else is node:http's.
 *
 * How the two share a connection: the FIRST request head of a connection decides. If `accepts`
 * refuses it (or it does not parse), the socket and every byte read so far go to the `fallback`
 * node:http server (`socket.unshift` + `fallback.emit('connection')`) and stay there. A
 * connection that starts on the fast path is served here, one request at a time (pipelined
 * requests wait in the parser), until a request `accepts` refuses: it is handed over at that
 * point, after the responses before it were written (same socket, so their order holds).
 *
 * node:http consumes a socket's handle natively once attached (its C++ parser reads from libuv
 * directly, bypassing the JS stream), so the bytes put back must be drained from the JS stream
 * before libuv delivers anything new. The socket is paused, the bytes are unshifted (in front of
 * whatever the socket itself buffered while reading was paused), node:http attaches, and the
 * socket is resumed: the resume drains the JS buffer on the next tick, before the next I/O
 * callback can feed node's parser. Tests pipeline hand-overs in one write, across many writes,
 * and with bytes in all three places (this parser, the socket buffer, the kernel).
 *
 * Like node:http, it stops making answers while earlier ones sit unflushed in the socket (a
 * client that pipelines without reading), and stops reading when pipelined input piles up.
 *
 * Timeouts (headers, request, keep-alive idle) are deadlines checked by one sweep timer per
 * server, not timers per request: the hot path only assigns a number.
 */
import { STATUS_CODES, type Server as HttpServer } from 'node:http';
import net, { type Socket } from 'node:net';
import { DEFAULT_MAX_BODY_SIZE, DEFAULT_MAX_HEADER_SIZE, HEAD, HttpParseError, NEED_MORE, RequestParser, type RequestHead } from './parser.js';

export type Http1HeaderValue = string | number | readonly string[];
export type Http1Headers = Record<string, Http1HeaderValue>;

export interface Http1Request {
  method: string;
  /** The request-target as sent (path and query). */
  url: string;
  httpVersion: '1.0' | '1.1';
  /** Lower-cased names, repeated fields joined (see parser.ts). No inherited properties. */
  headers: Record<string, string>;
  /** The whole body (empty when there is none). May be a view of a larger socket read. */
  body: Buffer;
  remoteAddress: string;
  remotePort: number;
  socket: Socket;
}

export interface Http1Response {
  /**
   * The whole answer at once, with Content-Length. Framing headers given here (content-length,
   * transfer-encoding, connection, keep-alive) are ignored: this server owns the framing.
   * Throws on a header name or value that could split the response (CR, LF, other controls).
   */
  send(status: number, headers: Http1Headers, body: string | Buffer): void;
  /** A streamed answer: Transfer-Encoding: chunked on HTTP/1.1; close-delimited on HTTP/1.0. */
  start(status: number, headers: Http1Headers): void;
  /** false: the socket's buffer is full, wait for `drained()`. Empty chunks are skipped. */
  write(chunk: string | Buffer): boolean;
  /** Resolves once the socket drained, or at once when it need not (or the client left). */
  drained(): Promise<void>;
  /** Ends a streamed answer; without `start()` first, the same as `send(200, {}, chunk)`. */
  end(chunk?: string | Buffer): void;
  /** A header for the answer, set before `send`/`start` (their own headers win on a clash). */
  setHeader(name: string, value: Http1HeaderValue): void;
  readonly headersSent: boolean;
  /** The status sent (0 until `send`/`start`). */
  readonly statusCode: number;
  readonly finished: boolean;
  /** The client went away (socket closed or errored) before `finished`. */
  readonly closed: boolean;
  /** Called once if the client goes away before `finished` (at once, asynchronously, if it already has). */
  onClose(listener: () => void): void;
  offClose(listener: () => void): void;
}

export interface Http1ServerOptions {
  /**
   * Called when a request head is parsed, before its body: true = answered here, false = the
   * connection goes to `fallback`. `path` is the request-target up to '?'; `headers` as in
   * Http1Request. Must be cheap and must not throw (a throw counts as false).
   * Do not accept HEAD (answers here always carry their body); CONNECT always goes to `fallback`.
   */
  accepts(method: string, path: string, headers: Record<string, string>): boolean;
  handle(request: Http1Request, response: Http1Response): void | Promise<void>;
  /** The node:http server for everything else (e.g. fastify's `app.server`); not listening itself. */
  fallback: HttpServer;
  /** Request line + header fields, bytes. Default 16 KiB. */
  maxHeaderSize?: number;
  /** Request body, bytes. Default 32 MiB. */
  maxBodySize?: number;
  /** The 413 answer's message (default: "request body too large"). */
  bodyTooLargeMessage?: string;
  /** Idle time allowed between requests. Default 5 s. 0 = none. */
  keepAliveTimeoutMs?: number;
  /** Time allowed to receive a request head, from its first byte (from connect for the first). Default 60 s. 0 = none. */
  headersTimeoutMs?: number;
  /** Time allowed to receive a whole request (head and body). Default 300 s. 0 = none. */
  requestTimeoutMs?: number;
  /** A handler threw or rejected (or `accepts`/an onClose listener threw). Default: console.error. */
  onError?(error: unknown): void;
}

export interface Http1Server extends net.Server {
  /** Closes fast-path connections waiting for a request, and asks `fallback` to do the same. */
  closeIdleConnections(): void;
  /** Destroys every connection this server accepted, including those handed to `fallback`. */
  closeAllConnections(): void;
}

/** How long a refused connection may take to read its error answer before it is destroyed. */
const LINGER_MS = 5_000;
/** Pipelined bytes buffered while a request is being handled before the socket is paused. */
const PIPELINE_BUFFER_LIMIT = 64 * 1024;
const CONTINUE = 'HTTP/1.1 100 Continue\r\n\r\n';
const RESOLVED = Promise.resolve();
const EMPTY = Buffer.alloc(0);
const INTERNAL_ERROR_BODY = JSON.stringify({ error: { message: 'internal error', type: 'server_error', code: 'internal_error' } });
const ERROR_CODES: Record<number, string> = {
  400: 'bad_request',
  408: 'request_timeout',
  413: 'request_too_large',
  431: 'headers_too_large',
  501: 'not_implemented',
  505: 'http_version_not_supported',
};

const enum Phase {
  /** Waiting for the first byte of a request. */
  Idle,
  /** Receiving a request head. */
  Head,
  /** Receiving the body of an accepted request. */
  Body,
  /** A request is being answered. */
  Handling,
  /** The last answer is written; the socket ends after it. */
  Closing,
  /** Closed, or handed to the fallback. */
  Gone,
}

export function createHttp1Server(options: Http1ServerOptions): Http1Server {
  const server = net.createServer({ allowHalfOpen: true, noDelay: true }) as Http1Server;
  const state = new ServerState(options);
  server.on('connection', (socket: Socket) => {
    state.startSweeping(); // also when connections are emitted without listen()
    state.sockets.add(socket);
    socket.once('close', () => state.sockets.delete(socket));
    new Connection(state, socket);
  });
  server.on('listening', () => {
    state.closing = false; // listening again after a close()
    state.startSweeping();
    // node:http starts tracking connections (for its closeIdleConnections and its header/request
    // timeouts) when it starts listening; the fallback never does, so start it on its behalf.
    if (!options.fallback.listening && !state.fallbackTracking) {
      state.fallbackTracking = true;
      options.fallback.emit('listening');
    }
  });
  server.on('close', () => state.stopSweeping());
  const close = server.close;
  server.close = function (this: Http1Server, callback?: (error?: Error) => void) {
    state.closing = true;
    close.call(this, callback);
    this.closeIdleConnections();
    return this;
  };
  server.closeIdleConnections = () => {
    for (const connection of state.connections) connection.closeIfIdle();
    options.fallback.closeIdleConnections();
  };
  server.closeAllConnections = () => {
    for (const socket of state.sockets) socket.destroy();
  };
  return server;
}

/** What every connection of one server shares. */
class ServerState {
  readonly accepts: Http1ServerOptions['accepts'];
  readonly handle: Http1ServerOptions['handle'];
  readonly fallback: HttpServer;
  readonly onError: (error: unknown) => void;
  readonly maxHeaderSize: number;
  readonly maxBodySize: number;
  readonly bodyTooLargeMessage: string | null;
  readonly keepAliveTimeoutMs: number;
  readonly headersTimeoutMs: number;
  readonly requestTimeoutMs: number;
  /** The Connection/Keep-Alive lines of a kept-alive answer. */
  readonly keepAliveLines: string;
  /** Fast-path connections (not those handed over): for timeouts and closeIdleConnections. */
  readonly connections = new Set<Connection>();
  /** Every socket accepted, handed over or not: for closeAllConnections. */
  readonly sockets = new Set<Socket>();
  closing = false;
  fallbackTracking = false;
  private sweeper: NodeJS.Timeout | null = null;

  constructor(options: Http1ServerOptions) {
    this.accepts = options.accepts;
    this.handle = options.handle;
    this.fallback = options.fallback;
    this.onError = options.onError ?? ((error) => console.error('http1 server:', error));
    this.maxHeaderSize = options.maxHeaderSize ?? DEFAULT_MAX_HEADER_SIZE;
    this.maxBodySize = options.maxBodySize ?? DEFAULT_MAX_BODY_SIZE;
    this.bodyTooLargeMessage = options.bodyTooLargeMessage ?? null;
    this.keepAliveTimeoutMs = options.keepAliveTimeoutMs ?? 5_000;
    this.headersTimeoutMs = options.headersTimeoutMs ?? 60_000;
    this.requestTimeoutMs = options.requestTimeoutMs ?? 300_000;
    // The hint is in whole seconds, rounded down: clients must give up on an idle connection
    // before this server closes it (it closes a little after the timeout, never before).
    const hintSeconds = Math.floor(this.keepAliveTimeoutMs / 1000);
    this.keepAliveLines = hintSeconds > 0 ? `Connection: keep-alive\r\nKeep-Alive: timeout=${hintSeconds}\r\n` : 'Connection: keep-alive\r\n';
  }

  startSweeping(): void {
    if (this.sweeper) return;
    const timeouts = [this.keepAliveTimeoutMs, this.headersTimeoutMs, this.requestTimeoutMs].filter((t) => t > 0);
    if (timeouts.length === 0) return;
    // A quarter of the shortest timeout, within [10 ms, 1 s]: deadlines fire at most that late.
    const period = Math.min(1000, Math.max(10, Math.floor(Math.min(...timeouts) / 4)));
    this.sweeper = setInterval(() => this.sweep(), period);
    this.sweeper.unref();
  }

  stopSweeping(): void {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = null;
  }

  private sweep(): void {
    const now = Date.now();
    for (const connection of this.connections) {
      if (connection.deadline !== 0 && connection.deadline <= now) connection.timedOut();
    }
  }

  report(error: unknown): void {
    try {
      this.onError(error);
    } catch {
      // An error reporter that throws must not take the connection (or the process) with it.
    }
  }
}

/** One fast-path connection: reads, parses, dispatches one request at a time, hands over. */
class Connection {
  readonly parser: RequestParser;
  readonly remoteAddress: string;
  readonly remotePort: number;
  phase = Phase.Idle;
  /** When the current phase times out (ms since epoch), 0 = never. */
  deadline = 0;
  /** A request was accepted on this connection: from now on its parse errors are answered here. */
  private served = false;
  private requestStart = 0;
  private response: Response | null = null;
  /** Reading stopped: pipelined input piled up while a request was handled or blocked. */
  private paused = false;
  /** Parsing waits for 'drain': earlier answers are still in the socket's buffer. */
  private drainBlocked = false;
  private advancing = false;
  private drainWaiters: Array<() => void> | null = null;
  private readonly onData = (chunk: Buffer) => this.received(chunk);
  private readonly onEnd = () => this.ended();
  private readonly onError = () => {
    // ECONNRESET and the like: 'close' follows, which is where the state is cleaned up.
  };
  private readonly onClose = () => this.closed();
  private readonly onDrain = () => this.drainedNow();

  constructor(
    readonly server: ServerState,
    readonly socket: Socket,
  ) {
    this.parser = new RequestParser({ maxHeaderSize: server.maxHeaderSize, maxBodySize: server.maxBodySize });
    this.remoteAddress = socket.remoteAddress ?? '';
    this.remotePort = socket.remotePort ?? 0;
    socket.on('data', this.onData);
    socket.on('end', this.onEnd);
    socket.on('error', this.onError);
    socket.on('close', this.onClose);
    socket.on('drain', this.onDrain);
    server.connections.add(this);
    this.deadline = server.headersTimeoutMs > 0 ? Date.now() + server.headersTimeoutMs : 0;
  }

  private received(chunk: Buffer): void {
    if (this.phase >= Phase.Closing) return;
    this.parser.feed(chunk);
    if (this.phase === Phase.Idle) this.startHead();
    if (this.phase === Phase.Handling || this.drainBlocked) {
      // Pipelined input waits for the current answer; stop reading if a lot of it piles up.
      // Reading resumes when the parser runs out of input (NEED_MORE in advance()).
      if (this.parser.pendingBytes > PIPELINE_BUFFER_LIMIT && !this.paused) {
        this.paused = true;
        this.socket.pause();
      }
      return;
    }
    this.advance();
  }

  private startHead(): void {
    this.phase = Phase.Head;
    this.requestStart = Date.now();
    this.deadline = this.server.headersTimeoutMs > 0 ? this.requestStart + this.server.headersTimeoutMs : 0;
  }

  /** Parses as far as the input goes, dispatching requests one at a time. */
  advance(): void {
    if (this.advancing) return; // the running loop continues once the current answer is done
    this.advancing = true;
    try {
      const parser = this.parser;
      while (this.phase <= Phase.Body) {
        if (this.phase !== Phase.Body && this.socket.writableNeedDrain) {
          // The answers so far are not flushed (a client pipelining without reading): make no
          // more until they are, like node:http. 'drain' resumes.
          this.drainBlocked = true;
          return;
        }
        let step;
        try {
          step = parser.next();
        } catch (error) {
          if (!(error instanceof HttpParseError)) throw error;
          // A head that does not parse, on a connection that is not ours yet: node:http's call.
          // (Body errors cannot happen before a request was accepted, i.e. `served`.)
          if (!this.served) this.handOver();
          else this.refuse(error);
          return;
        }
        if (step === NEED_MORE) {
          if (parser.idle) this.waitForRequest();
          if (this.paused) {
            this.paused = false;
            this.socket.resume();
          }
          return;
        }
        if (step === HEAD) {
          if (!this.take(parser.head!)) return;
          continue;
        }
        this.dispatch(parser.head!, parser.body);
      }
    } finally {
      this.advancing = false;
    }
  }

  /** A head was parsed: keep it (true) or give the connection away / refuse it (false). */
  private take(head: RequestHead): boolean {
    let accepted = false;
    // CONNECT, and expectations node:http answers itself (417), are node:http's.
    if (head.method !== 'CONNECT' && !head.expectUnsupported) {
      try {
        accepted = this.server.accepts(head.method, head.path, head.headers);
      } catch (error) {
        this.server.report(error);
      }
    }
    if (!accepted) {
      this.handOver();
      return false;
    }
    this.served = true;
    let hasBody: boolean;
    try {
      hasBody = this.parser.commitHead();
    } catch (error) {
      this.refuse(error as HttpParseError);
      return false;
    }
    if (hasBody) {
      if (head.expectContinue) this.socket.write(CONTINUE, 'latin1');
      this.phase = Phase.Body;
      this.deadline = this.server.requestTimeoutMs > 0 ? this.requestStart + this.server.requestTimeoutMs : 0;
    }
    return true;
  }

  private dispatch(head: RequestHead, body: Buffer): void {
    this.phase = Phase.Handling;
    this.deadline = 0;
    const request: Http1Request = {
      method: head.method,
      url: head.url,
      httpVersion: head.httpVersion,
      headers: head.headers,
      body,
      remoteAddress: this.remoteAddress,
      remotePort: this.remotePort,
      socket: this.socket,
    };
    const response = new Response(this, head.keepAlive, head.httpVersion === '1.0');
    this.response = response;
    let result: void | Promise<void>;
    try {
      result = this.server.handle(request, response);
    } catch (error) {
      this.handlerFailed(response, error);
      return;
    }
    if (result) result.then(undefined, (error: unknown) => this.handlerFailed(response, error));
  }

  handlerFailed(response: Response, error: unknown): void {
    this.server.report(error);
    if (response.finished || response.closed) return;
    if (!response.headersSent) response.sendInternalError();
    else this.socket.destroy();
  }

  /** The response's last byte was written: close, or go on with the next request. */
  responseFinished(response: Response): void {
    if (this.response !== response) return;
    this.response = null;
    if (this.phase !== Phase.Handling) return; // the socket closed meanwhile
    if (!response.keepAlive || this.server.closing) {
      this.phase = Phase.Closing;
      this.deadline = 0;
      this.socket.destroySoon();
      return;
    }
    if (this.parser.idle) {
      this.waitForRequest();
    } else {
      this.startHead();
      // Pipelined input: parse it on the next tick, not inside the handler that just answered.
      if (!this.advancing) process.nextTick(advanceConnection, this);
    }
  }

  private waitForRequest(): void {
    this.phase = Phase.Idle;
    const timeout = this.served ? this.server.keepAliveTimeoutMs : this.server.headersTimeoutMs;
    this.deadline = timeout > 0 ? Date.now() + timeout : 0;
  }

  /** Gives the socket and every unconsumed byte to node:http, for good. */
  private handOver(): void {
    const socket = this.socket;
    const bytes = this.parser.takeUnconsumed();
    this.detach();
    socket.pause();
    if (bytes.length > 0) socket.unshift(bytes);
    // Given away once the current 'data' dispatch has returned: handed over inside it, node:http
    // never applied backpressure to the request body, and a large upload piled up in memory
    // (docs/benchmarks.md, Files).
    process.nextTick(() => {
      this.server.fallback.emit('connection', socket);
      socket.resume();
    });
  }

  private detach(): void {
    this.phase = Phase.Gone;
    this.deadline = 0;
    this.server.connections.delete(this);
    const socket = this.socket;
    socket.removeListener('data', this.onData);
    socket.removeListener('end', this.onEnd);
    socket.removeListener('error', this.onError);
    socket.removeListener('close', this.onClose);
    socket.removeListener('drain', this.onDrain);
  }

  /** Answers a request that cannot be served (parse error, timeout) and closes. */
  private refuse(error: HttpParseError): void {
    this.phase = Phase.Closing;
    // A client that never reads would otherwise keep the socket (destroySoon waits for the flush).
    this.deadline = Date.now() + LINGER_MS;
    const message = error.status === 413 ? (this.server.bodyTooLargeMessage ?? error.message) : error.message;
    if (this.socket.writable) this.socket.write(errorResponse(error.status, message, error.code), 'latin1');
    this.socket.destroySoon();
  }

  timedOut(): void {
    if (this.phase === Phase.Idle || this.phase === Phase.Closing) {
      this.socket.destroy();
      return;
    }
    const what = this.phase === Phase.Head ? 'request headers' : 'request';
    this.refuse(new HttpParseError(408, `${what} not received in time`));
  }

  closeIfIdle(): void {
    if (this.phase === Phase.Idle) this.socket.destroy();
  }

  private ended(): void {
    // The client half-closed. With a request in flight that means it gave up (node:http's
    // default, httpAllowHalfOpen=false, ends the socket too); otherwise there is nothing to answer.
    if (this.phase !== Phase.Closing) this.socket.destroy();
  }

  private closed(): void {
    this.detach();
    const response = this.response;
    this.response = null;
    if (response) response.clientLeft();
    this.drainedNow();
  }

  waitForDrain(resolve: () => void): void {
    (this.drainWaiters ??= []).push(resolve);
  }

  private drainedNow(): void {
    const waiters = this.drainWaiters;
    if (waiters !== null) {
      this.drainWaiters = null;
      for (const resolve of waiters) resolve();
    }
    if (this.drainBlocked) {
      this.drainBlocked = false;
      this.advance();
    }
  }
}

function advanceConnection(connection: Connection): void {
  connection.advance();
}

const releaseHeld = (response: Response) => response.release();

class Response implements Http1Response {
  headersSent = false;
  statusCode = 0;
  finished = false;
  closed = false;
  /** The request allows keep-alive; once the head is written: the answer said keep-alive. */
  keepAlive: boolean;
  /** Chunked framing (HTTP/1.1 stream). */
  private chunked = false;
  /** The socket is corked until the end of the current tick (holdUntilTickEnd). */
  private held = false;
  /** 204/304: no body whatever the handler writes. */
  private bodyless = false;
  /** The head has only ASCII (so head and a string body can go out as one UTF-8 write). */
  private asciiHead = true;
  /** setHeader() pairs, flat: name, value, name, value... */
  private extraHeaders: Array<string | Http1HeaderValue> | null = null;
  /** A string value given to setHeader has latin1 characters beyond ASCII. */
  private extraNonAscii = false;
  private closeListeners: Array<() => void> | null = null;

  constructor(
    private readonly connection: Connection,
    keepAlive: boolean,
    private readonly http10: boolean,
  ) {
    this.keepAlive = keepAlive;
  }

  setHeader(name: string, value: Http1HeaderValue): void {
    if (this.headersSent) throw new Error('setHeader: headers already sent');
    checkHeaderName(name);
    // Checked now, so the mistake surfaces where it is made. A string or number cannot change
    // afterwards, so the head takes it as checked here; a list is checked again there.
    if (typeof value === 'string') {
      if (!checkHeaderValue(name, value)) this.extraNonAscii = true;
    } else if (typeof value !== 'number') for (const item of value) checkHeaderValue(name, String(item));
    (this.extraHeaders ??= []).push(name, value);
  }

  send(status: number, headers: Http1Headers, body: string | Buffer): void {
    if (this.headersSent) throw new Error('send: headers already sent');
    checkStatus(status);
    this.statusCode = status;
    const bodyless = status === 204 || status === 304;
    const length = bodyless ? 0 : typeof body === 'string' ? Buffer.byteLength(body) : body.length;
    // Built (and validated) before anything changes, so a bad header throws with nothing sent.
    let head = this.buildHead(status, headers);
    this.headersSent = true;
    this.finished = true;
    this.closeListeners = null;
    if (this.closed) return;
    const connection = this.connection;
    this.keepAlive = this.keepAlive && !connection.server.closing;
    head += (bodyless ? '' : `Content-Length: ${length}\r\n`) + (this.keepAlive ? connection.server.keepAliveLines : 'Connection: close\r\n') + '\r\n';
    const socket = connection.socket;
    if (length === 0) {
      socket.write(head, 'latin1');
    } else if (typeof body === 'string' && this.asciiHead) {
      socket.write(head + body, 'utf8');
    } else {
      socket.cork();
      socket.write(head, 'latin1');
      socket.write(body, 'utf8');
      socket.uncork();
    }
    connection.responseFinished(this);
  }

  start(status: number, headers: Http1Headers): void {
    if (this.headersSent) throw new Error('start: headers already sent');
    checkStatus(status);
    this.statusCode = status;
    let head = this.buildHead(status, headers);
    this.headersSent = true;
    if (this.closed) return;
    const connection = this.connection;
    this.bodyless = status === 204 || status === 304;
    // HTTP/1.0 has no chunked coding: the end of the body is the end of the connection.
    this.keepAlive = this.keepAlive && !connection.server.closing && (!this.http10 || this.bodyless);
    this.chunked = !this.http10 && !this.bodyless;
    head += (this.chunked ? 'Transfer-Encoding: chunked\r\n' : '') + (this.keepAlive ? connection.server.keepAliveLines : 'Connection: close\r\n') + '\r\n';
    // Held until the end of this tick: a first chunk written meanwhile (usually the upstream's
    // first event, already read) goes out with the head in one write, so the client's first body
    // byte does not wait for a second segment.
    this.holdUntilTickEnd();
    connection.socket.write(head, 'latin1');
  }

  /**
   * Corks the socket until the end of this tick (if not already): everything written meanwhile
   * leaves in one system call. A stream's head and first event, or its last event, `[DONE]` and
   * the terminating chunk, are written in the same tick; each write is a system call that, on
   * loopback, also does the receiver's TCP work. Nothing waits longer than the current tick.
   */
  private holdUntilTickEnd(): void {
    if (this.held) return;
    this.held = true;
    this.connection.socket.cork();
    process.nextTick(releaseHeld, this);
  }

  /** The end of the tick: what was held goes out (a no-op if end() already flushed it). */
  release(): void {
    this.held = false;
    this.connection.socket.uncork();
  }

  write(chunk: string | Buffer): boolean {
    if (!this.headersSent) throw new Error('write: start() first');
    if (this.finished) throw new Error('write: after end');
    if (this.closed || this.bodyless || chunk.length === 0) return true;
    this.holdUntilTickEnd();
    const socket = this.connection.socket;
    if (!this.chunked) return socket.write(chunk);
    if (typeof chunk === 'string') return socket.write(`${Buffer.byteLength(chunk).toString(16)}\r\n${chunk}\r\n`, 'utf8');
    socket.cork();
    socket.write(`${chunk.length.toString(16)}\r\n`, 'latin1');
    socket.write(chunk);
    const ok = socket.write('\r\n', 'latin1');
    socket.uncork();
    return ok;
  }

  drained(): Promise<void> {
    if (this.closed || !this.connection.socket.writableNeedDrain) return RESOLVED;
    return new Promise((resolve) => this.connection.waitForDrain(resolve));
  }

  end(chunk?: string | Buffer): void {
    if (this.finished) return;
    if (!this.headersSent) {
      this.send(200, {}, chunk ?? EMPTY);
      return;
    }
    this.finished = true;
    this.closeListeners = null;
    if (this.closed) return;
    const socket = this.connection.socket;
    if (!this.bodyless) {
      if (!this.chunked) {
        if (chunk !== undefined && chunk.length > 0) socket.write(chunk);
      } else if (chunk === undefined || chunk.length === 0) {
        socket.write('0\r\n\r\n', 'latin1');
      } else if (typeof chunk === 'string') {
        socket.write(`${Buffer.byteLength(chunk).toString(16)}\r\n${chunk}\r\n0\r\n\r\n`, 'utf8');
      } else {
        socket.cork();
        socket.write(`${chunk.length.toString(16)}\r\n`, 'latin1');
        socket.write(chunk);
        socket.write('\r\n0\r\n\r\n', 'latin1');
        socket.uncork();
      }
    }
    this.connection.responseFinished(this);
  }

  onClose(listener: () => void): void {
    if (this.finished) return;
    if (this.closed) queueMicrotask(listener);
    else (this.closeListeners ??= []).push(listener);
  }

  offClose(listener: () => void): void {
    const listeners = this.closeListeners;
    if (listeners === null) return;
    const i = listeners.indexOf(listener);
    if (i !== -1) listeners.splice(i, 1);
  }

  /** The socket closed before this answer finished. */
  clientLeft(): void {
    if (this.finished || this.closed) return;
    this.closed = true;
    const listeners = this.closeListeners;
    this.closeListeners = null;
    if (listeners === null) return;
    for (const listener of listeners) {
      try {
        listener();
      } catch (error) {
        this.connection.server.report(error);
      }
    }
  }

  /** The handler failed before answering: a generic 500 (without the headers it had set). */
  sendInternalError(): void {
    this.extraHeaders = null;
    this.extraNonAscii = false;
    this.send(500, { 'Content-Type': 'application/json' }, INTERNAL_ERROR_BODY);
  }

  /** Status line and the caller's headers (without framing ones), plus Date unless given. */
  private buildHead(status: number, headers: Http1Headers): string {
    let head = statusLine(status);
    let hasDate = false;
    this.asciiHead = true;
    for (const name in headers) {
// eslint-disable-next-line switchyard/no-string-index-lookup -- own keys of the response's own header record (for-in)
      const value = headers[name];
      if (value === undefined) continue;
      const kind = classifyHeader(name);
      if (kind === HeaderKind.Framing) continue;
      if (kind === HeaderKind.Date) hasDate = true;
      head += this.headerLines(name, value);
    }
    const extra = this.extraHeaders;
    if (extra !== null) {
      for (let i = 0; i < extra.length; i += 2) {
        const name = extra[i] as string;
        if (hasHeaderNamed(headers, name)) continue;
        const kind = classifyHeader(name);
        if (kind === HeaderKind.Framing) continue;
        if (kind === HeaderKind.Date) hasDate = true;
        const value = extra[i + 1] as Http1HeaderValue;
        head += typeof value === 'object' ? this.headerLines(name, value) : `${name}: ${value}\r\n`;
      }
      if (this.extraNonAscii) this.asciiHead = false;
    }
    if (!hasDate) head += `Date: ${httpDate()}\r\n`;
    return head;
  }

  private headerLines(name: string, value: Http1HeaderValue): string {
    checkHeaderName(name);
    if (typeof value === 'number') return `${name}: ${value}\r\n`;
    if (typeof value === 'string') {
      if (!checkHeaderValue(name, value)) this.asciiHead = false;
      return `${name}: ${value}\r\n`;
    }
    let lines = '';
    for (const item of value as readonly string[]) {
      const text = String(item);
      if (!checkHeaderValue(name, text)) this.asciiHead = false;
      lines += `${name}: ${text}\r\n`;
    }
    return lines;
  }
}

/**
 * Whether `headers` has a field named `name`, in any case. A scan, not a set of lower-cased
 * names: an answer has a handful of headers, and this runs for each one set with setHeader.
 */
function hasHeaderNamed(headers: Http1Headers, name: string): boolean {
  for (const given in headers) {
    if (given.length === name.length && (given === name || given.toLowerCase() === name.toLowerCase())) return true;
  }
  return false;
}

const enum HeaderKind {
  Plain,
  Date,
  /** content-length, transfer-encoding, connection, keep-alive: set by the server only. */
  Framing,
}

function classifyHeader(name: string): HeaderKind {
  switch (name.length) {
    case 4:
      return name.toLowerCase() === 'date' ? HeaderKind.Date : HeaderKind.Plain;
    case 10: {
      const lower = name.toLowerCase();
      return lower === 'connection' || lower === 'keep-alive' ? HeaderKind.Framing : HeaderKind.Plain;
    }
    case 14:
      return name.toLowerCase() === 'content-length' ? HeaderKind.Framing : HeaderKind.Plain;
    case 17:
      return name.toLowerCase() === 'transfer-encoding' ? HeaderKind.Framing : HeaderKind.Plain;
    default:
      return HeaderKind.Plain;
  }
}

/** A header name must be a token: no whitespace, colon, CR, LF (response splitting). */
function checkHeaderName(name: string): void {
  if (name.length === 0) throw new TypeError('invalid header name: empty');
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c > 127 || TOKEN_CHARS.charCodeAt(c) !== 49) throw new TypeError(`invalid header name: ${JSON.stringify(name)}`);
  }
}

/**
 * A header value may hold HTAB, visible ASCII, SP and latin1 (what node:http allows), never CR,
 * LF or other controls (response splitting). Returns whether it is pure ASCII.
 */
function checkHeaderValue(name: string, value: string): boolean {
  let ascii = true;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c >= 0x20 && c < 0x7f) continue;
    if (c === 9) continue;
    if (c >= 0x80 && c <= 0xff) {
      ascii = false;
      continue;
    }
    throw new TypeError(`invalid character in the value of header ${JSON.stringify(name)}`);
  }
  return ascii;
}

/** '1' at the code of each tchar (RFC 9110 §5.6.2), '0' elsewhere, for the first 128 codes. */
const TOKEN_CHARS = (() => {
  let map = '';
  for (let c = 0; c < 128; c++) map += /[A-Za-z0-9!#$%&'*+\-.^_`|~]/.test(String.fromCharCode(c)) ? '1' : '0';
  return map;
})();

function checkStatus(status: number): void {
  if (!Number.isInteger(status) || status < 200 || status > 999) throw new RangeError(`invalid status code: ${status}`);
}

const statusLines: string[] = [];
function statusLine(status: number): string {
  return (statusLines[status] ??= `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Unknown'}\r\n`);
}

let dateSecond = -1;
let dateValue = '';
/** The Date header value, formatted once per second. */
function httpDate(): string {
  const second = Math.floor(Date.now() / 1000);
  if (second !== dateSecond) {
    dateSecond = second;
    dateValue = new Date(second * 1000).toUTCString();
  }
  return dateValue;
}

/** A complete answer to a request that cannot be served; the connection closes after it. */
function errorResponse(status: number, message: string, code: string | null): string {
  const body = JSON.stringify({ error: { message, type: 'invalid_request_error', code: code ?? ERROR_CODES[status] ?? 'bad_request', param: null } });
  return `${statusLine(status)}Date: ${httpDate()}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
}
