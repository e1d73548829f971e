/**
 * An incremental HTTP/1.1 request parser (RFC 9112), pure: no sockets, no timers, no events.
 *
 * Why it exists: the relay's hot path skips node:http (IncomingMessage/ServerResponse cost a large
 * share of the serving thread), so the bytes are parsed here. It is deliberately strict where
 * leniency enables request smuggling (bare LF, obs-fold, whitespace before the colon, both
 * Transfer-Encoding and Content-Length, unknown transfer codings, malformed chunk sizes): anything
 * ambiguous is refused rather than guessed. It refuses whatever llhttp (node:http's parser, which
 * shares the port) refuses, and frames alike what both take (test/unit/http1-differential.test.ts).
 * Anything the fast path does not want is not parsed further here: the caller hands the
 * unconsumed bytes to node:http (see `takeUnconsumed`).
 *
 * Use: `feed()` each Buffer as it arrives, then call `next()` until it answers `NEED_MORE`:
 *  - `HEAD`: a request head is complete (`head`). The caller decides: either `takeUnconsumed()`
 *    (every byte from the start of that request, for another server) or continue; the first
 *    `next()`/`commitHead()` afterwards checks the body framing and consumes the head.
 *  - `MESSAGE`: the request's body is complete (`body`); `head` is still that request's head.
 * Errors are thrown as `HttpParseError` (an HTTP status and a short message); the parser is then
 * dead (every later `next()` throws the same error).
 *
 * Bytes are not copied when a request arrives in one chunk: the body is a view of the fed
 * Buffer. Partial input is kept in a growable buffer (amortised, so a byte-at-a-time client does
 * not cost quadratic copying).
 */
import { METHODS } from 'node:http';
import type { NullPrototypeRecord } from '../../own.js';

/** What `next()` found. Numbers, not objects: this runs once or twice per request. */
export const NEED_MORE = 0;
export const HEAD = 1;
export const MESSAGE = 2;
export type ParseStep = typeof NEED_MORE | typeof HEAD | typeof MESSAGE;

export type ParseErrorStatus = 400 | 408 | 413 | 431 | 501 | 505;

/** A request that cannot be served, with the status to answer it with. */
export class HttpParseError extends Error {
  override readonly name = 'HttpParseError';
  constructor(
    readonly status: ParseErrorStatus,
    message: string,
    /** The error code to answer with, when more specific than the status's. */
    readonly code: string | null = null,
  ) {
    super(message);
  }
}

export interface RequestHead {
  method: string;
  /** The request-target exactly as sent (origin-form for ordinary requests). */
  url: string;
  /** `url` up to the first '?' (the same string when there is no query). */
  path: string;
  httpVersion: '1.0' | '1.1';
  /** Lower-cased names; repeated fields joined with ', ' (cookie: '; '). No inherited properties. */
  headers: Record<string, string>;
  /** Whether the connection may carry another request after this one (RFC 9112 §9.3). */
  keepAlive: boolean;
  /** `Expect: 100-continue` on an HTTP/1.1 request. */
  expectContinue: boolean;
  /**
   * An HTTP/1.1 request whose Expect field asks for something other than 100-continue: node:http
   * answers it `417 Expectation Failed` (and so must whoever serves it, to stay alike).
   */
  expectUnsupported: boolean;
}

export interface ParserLimits {
  /** Request line + header fields (and, separately, chunked trailers), in bytes. Default 16 KiB. */
  maxHeaderSize?: number;
  /** Decoded body bytes. Default 32 MiB. */
  maxBodySize?: number;
}

export const DEFAULT_MAX_HEADER_SIZE = 16 * 1024;
export const DEFAULT_MAX_BODY_SIZE = 32 * 1024 * 1024;
/** A chunk-size line (size + extensions) longer than this is refused: extensions are ignored, so
 * there is no reason to buffer many of them (a known DoS: endless extensions). */
const MAX_CHUNK_LINE = 4096;
/** A body in more pieces than this is copied into one buffer instead of kept as views. */
const MAX_BODY_VIEWS = 128;

const CR = 13;
const LF = 10;
const SP = 32;
const HTAB = 9;
const COLON = 58;
const SEMICOLON = 59;
const EQUALS = 61;
const DQUOTE = 34;
const BACKSLASH = 92;

const enum State {
  Head,
  HeadDone,
  LengthBody,
  ChunkSize,
  ChunkData,
  ChunkDataEnd,
  Trailers,
  Failed,
}

/** tchar (RFC 9110 §5.6.2): the characters of methods and field names. */
const TCHAR = new Uint8Array(256);
for (let c = 0; c < 128; c++) {
  const ch = String.fromCharCode(c);
  if (/[A-Za-z0-9!#$%&'*+\-.^_`|~]/.test(ch)) TCHAR[c] = 1;
}
/** Allowed in a field value: HTAB, SP, VCHAR, obs-text. Not NUL, not other CTLs, not DEL. */
const FIELD_CHAR = new Uint8Array(256);
FIELD_CHAR[HTAB] = 1;
for (let c = 0x20; c < 0x100; c++) if (c !== 0x7f) FIELD_CHAR[c] = 1;
/** Hex digit values (+1 so 0 means "not a hex digit"). */
const HEX = new Uint8Array(256);
for (let c = 0; c < 10; c++) HEX[48 + c] = c + 1;
for (let c = 0; c < 6; c++) {
  HEX[65 + c] = c + 11;
  HEX[97 + c] = c + 11;
}

const EMPTY = Buffer.alloc(0);
const CRLF_CRLF = Buffer.from('\r\n\r\n', 'latin1');

export class RequestParser {
  /** The head of the current (or just completed) request; valid after `HEAD`/`MESSAGE`. */
  head: RequestHead | null = null;
  /** The body of the request just completed; valid after `MESSAGE`. */
  body: Buffer = EMPTY;

  private readonly maxHeaderSize: number;
  private readonly maxBodySize: number;
  private state = State.Head;
  private error: HttpParseError | null = null;
  // Pending input is buf[off, end). `owned`: we allocated buf, so bytes past `end` may be
  // overwritten; a fed Buffer is never written to (views of it may have been handed out as bodies).
  private buf: Buffer = EMPTY;
  private off = 0;
  private end = 0;
  private owned = false;
  /** Head scanning resumes here (bytes after `off` already searched for the end of the head). */
  private scanned = 0;
  /** Body bytes still expected (Content-Length, or the current chunk). */
  private remaining = 0;
  /** Chunked: the sum of the chunk sizes announced so far (for the limit). */
  private bodySize = 0;
  /** The body so far: views of the input while there are few of them... */
  private readonly parts: Buffer[] = [];
  /** ...then one growing copy, so a body sent in tiny pieces does not pin millions of views. */
  private copy: Buffer | null = null;
  private copied = 0;
  private trailerBytes = 0;
  private failedInHead = false;

  constructor(limits: ParserLimits = {}) {
    this.maxHeaderSize = limits.maxHeaderSize ?? DEFAULT_MAX_HEADER_SIZE;
    this.maxBodySize = limits.maxBodySize ?? DEFAULT_MAX_BODY_SIZE;
  }

  /** Bytes received and not yet consumed by a completed step. */
  get pendingBytes(): number {
    return this.end - this.off;
  }

  /** Between requests with no byte of the next one received. */
  get idle(): boolean {
    return this.state === State.Head && this.end === this.off;
  }

  /** Reading a body (the head was committed). */
  get inBody(): boolean {
    return this.state >= State.LengthBody && this.state <= State.Trailers;
  }

  feed(chunk: Buffer): void {
    const length = chunk.length;
    if (length === 0) return;
    if (this.off === this.end) {
      this.buf = chunk;
      this.off = 0;
      this.end = length;
      this.owned = false;
      return;
    }
    if (this.owned && this.buf.length - this.end >= length) {
      chunk.copy(this.buf, this.end);
      this.end += length;
      return;
    }
    const pending = this.end - this.off;
    const grown = Buffer.allocUnsafe(Math.max(pending + length, pending * 2, 4096));
    this.buf.copy(grown, 0, this.off, this.end);
    chunk.copy(grown, pending);
    this.buf = grown;
    this.off = 0;
    this.end = pending + length;
    this.owned = true;
  }

  next(): ParseStep {
    switch (this.state) {
      case State.Head:
        return this.readHead();
      case State.HeadDone:
        this.commitHead();
        return this.readBody();
      case State.Failed:
        throw this.error!;
      default:
        return this.readBody();
    }
  }

  /**
   * The caller takes the request whose head `next()` just returned: check its framing (throws
   * `HttpParseError`: 400 ambiguous or invalid framing, 501 unsupported transfer coding, 413 a
   * Content-Length over the limit) and consume the head. Returns whether a body follows, i.e.
   * whether `Expect: 100-continue` deserves an interim answer. Idempotent until `next()`.
   */
  commitHead(): boolean {
    if (this.state !== State.HeadDone) {
      if (this.state === State.Failed) throw this.error!;
      return this.state !== State.Head;
    }
    let hasBody: boolean;
    try {
      hasBody = this.checkFraming(this.head!);
    } catch (error) {
      throw this.fail(error as HttpParseError);
    }
    this.off += this.scanned; // the head's bytes
    this.scanned = 0;
    return hasBody;
  }

  /** Sets the body state from the framing headers (RFC 9112 §6.3); true when a body follows. */
  private checkFraming(head: RequestHead): boolean {
    const headers = head.headers;
    if (head.httpVersion === '1.1' && headers.host === undefined) throw new HttpParseError(400, 'missing Host header');
    const te = headers['transfer-encoding'];
    const cl = headers['content-length'];
    if (te !== undefined) {
      if (cl !== undefined) throw new HttpParseError(400, 'both Transfer-Encoding and Content-Length');
      if (head.httpVersion === '1.0') throw new HttpParseError(400, 'Transfer-Encoding in an HTTP/1.0 request');
      checkTransferEncoding(te);
      this.state = State.ChunkSize;
      return true;
    }
    const length = cl === undefined ? 0 : parseContentLength(cl);
    if (length > this.maxBodySize) throw new HttpParseError(413, 'request body too large');
    this.remaining = length;
    this.state = State.LengthBody;
    return length > 0;
  }

  /**
   * Every byte received from the start of the current request on (or of the next one, between
   * requests), for another parser; this parser is empty afterwards. Only valid before a head is
   * committed: once a body is being read, its bytes are gone.
   */
  takeUnconsumed(): Buffer {
    if (this.state !== State.Head && this.state !== State.HeadDone && !(this.state === State.Failed && this.failedInHead)) {
      throw new Error('takeUnconsumed: the body of the current request is already consumed');
    }
    const bytes = this.off === 0 && this.end === this.buf.length ? this.buf : this.buf.subarray(this.off, this.end);
    this.buf = EMPTY;
    this.off = this.end = this.scanned = 0;
    this.owned = false;
    this.state = State.Head;
    this.error = null;
    this.failedInHead = false;
    this.head = null;
    return bytes;
  }

  private fail(error: HttpParseError): HttpParseError {
    // Before the head is committed no byte of this request is consumed: it can still be handed on.
    this.failedInHead = this.state === State.Head || this.state === State.HeadDone;
    this.state = State.Failed;
    this.error = error;
    return error;
  }

  private readHead(): ParseStep {
    const buf = this.buf;
    const end = this.end;
    let off = this.off;
    if (this.scanned === 0) {
      // RFC 9112 §2.2: ignore empty lines before a request-line (some clients send CRLF after a body).
      while (off < end && buf[off] === CR) {
        if (off + 1 === end) {
          this.off = off;
          return NEED_MORE;
        }
        if (buf[off + 1] !== LF) throw this.fail(new HttpParseError(400, 'bare CR'));
        off += 2;
      }
      this.off = off;
      if (off === end) return NEED_MORE;
    }
    // One native search for the blank line; bare LFs inside a complete head are refused by
    // parseHead (LF is not allowed in any token or value).
    const terminator = buf.indexOf(CRLF_CRLF, this.scanned > 3 ? off + this.scanned - 3 : off);
    if (terminator === -1 || terminator + 4 > end) {
      // Incomplete: refuse what can never become a request now, rather than wait for a
      // terminator that never comes: a bare LF, or bytes that cannot be a method (TLS, binary).
      for (let lf = buf.indexOf(LF, off + this.scanned); lf !== -1 && lf < end; lf = buf.indexOf(LF, lf + 1)) {
        if (lf === off || buf[lf - 1] !== CR) throw this.fail(new HttpParseError(400, 'bare LF'));
      }
      let i = off;
      while (i < end && TCHAR[buf[i]!] === 1) i++;
      if (i < end && (i === off || buf[i] !== SP)) throw this.fail(new HttpParseError(400, 'invalid request line'));
      this.scanned = end - off;
      if (end - off > this.maxHeaderSize) throw this.fail(new HttpParseError(431, 'request header fields too large'));
      return NEED_MORE;
    }
    const headEnd = terminator + 4;
    if (headEnd - off > this.maxHeaderSize) throw this.fail(new HttpParseError(431, 'request header fields too large'));
    try {
      this.head = parseHead(buf, off, headEnd);
    } catch (error) {
      throw this.fail(error as HttpParseError);
    }
    this.scanned = headEnd - off; // the head's length, consumed on commit
    this.state = State.HeadDone;
    return HEAD;
  }

  private readBody(): ParseStep {
    try {
      for (;;) {
        switch (this.state) {
          case State.LengthBody: {
            if (this.remaining > 0 && !this.take()) return NEED_MORE;
            return this.completeMessage();
          }
          case State.ChunkSize: {
            if (!this.readChunkSize()) return NEED_MORE;
            break;
          }
          case State.ChunkData: {
            if (!this.take()) return NEED_MORE;
            this.state = State.ChunkDataEnd;
            break;
          }
          case State.ChunkDataEnd: {
            if (this.end - this.off < 2) return NEED_MORE;
            if (this.buf[this.off] !== CR || this.buf[this.off + 1] !== LF) throw new HttpParseError(400, 'chunk data not followed by CRLF');
            this.off += 2;
            this.state = State.ChunkSize;
            break;
          }
          case State.Trailers: {
            if (!this.readTrailers()) return NEED_MORE;
            return this.completeMessage();
          }
          default:
            throw new Error(`readBody in state ${this.state}`);
        }
      }
    } catch (error) {
      if (error instanceof HttpParseError) throw this.fail(error);
      throw error;
    }
  }

  /** Moves up to `remaining` body bytes into the body; true when they are all there. */
  private take(): boolean {
    const available = this.end - this.off;
    if (available === 0) return false;
    const n = available < this.remaining ? available : this.remaining;
    this.addBodyPart(this.buf.subarray(this.off, this.off + n));
    this.off += n;
    this.remaining -= n;
    return this.remaining === 0;
  }

  /** chunk-size [ chunk-ext ] CRLF (RFC 9112 §7.1). The extensions are checked, then ignored. */
  private readChunkSize(): boolean {
    const buf = this.buf;
    const start = this.off;
    const lf = buf.indexOf(LF, start);
    if (lf === -1 || lf >= this.end) {
      if (this.end - start > MAX_CHUNK_LINE) throw new HttpParseError(400, 'chunk size line too long');
      return false;
    }
    if (lf - start > MAX_CHUNK_LINE) throw new HttpParseError(400, 'chunk size line too long');
    const cr = lf - 1;
    if (cr < start || buf[cr] !== CR) throw new HttpParseError(400, 'bare LF in chunked body');
    const limit = this.maxBodySize - this.bodySize;
    let size = 0;
    let i = start;
    for (; i < cr; i++) {
      const digit = HEX[buf[i]!]!;
      if (digit === 0) break;
      size = size * 16 + digit - 1;
      if (size > limit) throw new HttpParseError(413, 'request body too large');
    }
    if (i === start) throw new HttpParseError(400, 'invalid chunk size');
    if (i < cr) {
      if (buf[i] !== SEMICOLON) throw new HttpParseError(400, 'invalid chunk size');
      checkChunkExtensions(buf, i, cr);
    }
    this.off = lf + 1;
    if (size === 0) {
      this.trailerBytes = 0;
      this.state = State.Trailers;
    } else {
      this.bodySize += size;
      this.remaining = size;
      this.state = State.ChunkData;
    }
    return true;
  }

  /** trailer-section CRLF: fields are checked like header fields, then dropped. */
  private readTrailers(): boolean {
    const buf = this.buf;
    for (;;) {
      const start = this.off;
      const lf = buf.indexOf(LF, start);
      if (lf === -1 || lf >= this.end) {
        if (this.trailerBytes + this.end - start > this.maxHeaderSize) throw new HttpParseError(431, 'trailer fields too large');
        return false;
      }
      this.trailerBytes += lf + 1 - start;
      if (this.trailerBytes > this.maxHeaderSize) throw new HttpParseError(431, 'trailer fields too large');
      if (lf === start || buf[lf - 1] !== CR) throw new HttpParseError(400, 'bare LF in trailers');
      this.off = lf + 1;
      if (lf - 1 === start) return true;
      checkTrailerLine(buf, start, lf - 1);
    }
  }

  private completeMessage(): ParseStep {
    const parts = this.parts;
    if (this.copy !== null) {
      this.body = this.copy.subarray(0, this.copied);
      this.copy = null;
      this.copied = 0;
    } else {
      this.body = parts.length === 0 ? EMPTY : parts.length === 1 ? parts[0]! : Buffer.concat(parts, sizeOf(parts));
      parts.length = 0;
    }
    this.bodySize = 0;
    this.remaining = 0;
    this.scanned = 0;
    this.state = State.Head;
    if (this.off === this.end) {
      // Nothing pending: drop the reference so a large input buffer can be collected.
      this.buf = EMPTY;
      this.off = this.end = 0;
      this.owned = false;
    }
    return MESSAGE;
  }

  private addBodyPart(part: Buffer): void {
    if (this.copy === null) {
      if (this.parts.length < MAX_BODY_VIEWS) {
        this.parts.push(part);
        return;
      }
      // Content-Length: the final size is known (`remaining` counts what is still to come).
      const sofar = sizeOf(this.parts);
      const known = this.state === State.LengthBody ? sofar + this.remaining : 0;
      this.copy = Buffer.allocUnsafe(Math.max(known, 2 * (sofar + part.length)));
      for (const view of this.parts) this.copied += view.copy(this.copy, this.copied);
      this.parts.length = 0;
    }
    if (this.copy.length - this.copied < part.length) {
      const grown = Buffer.allocUnsafe(Math.max(2 * this.copy.length, this.copied + part.length));
      this.copy.copy(grown, 0, 0, this.copied);
      this.copy = grown;
    }
    this.copied += part.copy(this.copy, this.copied);
  }
}

/**
 * A header record without a prototype, so a field named `constructor` or `__proto__` is just a
 * field. Made by a constructor (not Object.create(null)) so V8 keeps it a fast-mode object.
 */
const HeaderRecord = function HeaderRecord() {} as unknown as new () => NullPrototypeRecord<string>;
HeaderRecord.prototype = Object.create(null) as object;

/** Parses request-line and header fields of buf[start, end) (which ends with CRLF CRLF). */
function parseHead(buf: Buffer, start: number, end: number): RequestHead {
  // Bytes are scanned in the Buffer; strings are cut from one latin1 decoding of the whole head
  // (offsets are the same: one byte, one character), far cheaper than a decoding per string.
  const text = buf.toString('latin1', start, end);
  // method SP
  let i = start;
  while (TCHAR[buf[i]!] === 1) i++;
  if (i === start || buf[i] !== SP) throw new HttpParseError(400, 'invalid request line');
  const method = knownMethod(buf, start, i);
  if (method === undefined) throw new HttpParseError(400, 'unknown method');
  // request-target SP: visible ASCII only
  const targetStart = ++i;
  let query = -1;
  for (;;) {
    const c = buf[i]!;
    if (c <= SP || c >= 0x7f) break;
    if (c === 63 && query === -1) query = i;
    i++;
  }
  if (i === targetStart || buf[i] !== SP) throw new HttpParseError(400, 'invalid request target');
  const url = text.slice(targetStart - start, i - start);
  const path = query === -1 ? url : text.slice(targetStart - start, query - start);
  // HTTP-version CRLF
  i++;
  if (
    buf[i] !== 72 || buf[i + 1] !== 84 || buf[i + 2] !== 84 || buf[i + 3] !== 80 || buf[i + 4] !== 47 ||
    !isDigit(buf[i + 5]!) || buf[i + 6] !== 46 || !isDigit(buf[i + 7]!) || buf[i + 8] !== CR || buf[i + 9] !== LF
  ) {
    throw new HttpParseError(400, 'invalid HTTP version');
  }
  if (buf[i + 5] !== 49 || (buf[i + 7] !== 49 && buf[i + 7] !== 48)) throw new HttpParseError(505, 'HTTP version not supported');
  const httpVersion = buf[i + 7] === 49 ? '1.1' : '1.0';
  i += 10;

  const headers = new HeaderRecord();
  const last = end - 2; // the final CRLF
  while (i < last) {
    const c = buf[i]!;
    // A line starting with whitespace is obs-fold (or whitespace before the first field): refused.
    if (c === SP || c === HTAB) throw new HttpParseError(400, 'obsolete line folding');
    const nameStart = i;
    let upper = false;
    for (;;) {
      const b = buf[i]!;
      if (TCHAR[b] !== 1) break;
      if (b >= 65 && b <= 90) upper = true;
      i++;
    }
    if (buf[i] !== COLON || i === nameStart) throw new HttpParseError(400, 'invalid header field name');
    let name = knownHeaderName(buf, nameStart, i);
    if (name === undefined) {
      name = text.slice(nameStart - start, i - start);
      if (upper) name = name.toLowerCase();
    }
    i++;
    while (buf[i] === SP || buf[i] === HTAB) i++;
    const valueStart = i;
    let valueEnd = i;
    let tab = false;
    for (;;) {
      const b = buf[i]!;
      if (b === CR) break;
      if (FIELD_CHAR[b] !== 1) throw new HttpParseError(400, 'invalid character in header field value');
      i++;
      if (b > SP) valueEnd = i;
      else if (b === HTAB) tab = true;
    }
    if (buf[i + 1] !== LF) throw new HttpParseError(400, 'bare CR');
    // llhttp refuses a tab inside or after a framing field's value (not before it): so do we, so
    // that the two never frame a request differently.
    if (tab && (name === 'content-length' || name === 'transfer-encoding')) throw new HttpParseError(400, `tab in ${name}`);
    const value = valueEnd === valueStart ? '' : text.slice(valueStart - start, valueEnd - start);
    i += 2;
    const previous = headers[name];
    if (previous === undefined) {
      headers[name] = value;
    } else if (name === 'content-length') {
      // Even equal ones (RFC 9112 §6.3 would allow merging them): llhttp refuses, and so do we,
      // so that node:http and this parser never disagree on a request's framing.
      throw new HttpParseError(400, previous === value ? 'more than one Content-Length header' : 'conflicting Content-Length headers');
    } else if (name === 'host') {
      throw new HttpParseError(400, 'more than one Host header');
    } else if (name === 'authorization') {
      // Which credentials would count is a guess (node:http keeps the first): refused.
      throw new HttpParseError(400, 'the request has more than one Authorization header; send one', 'duplicate_authorization');
    } else {
      headers[name] = previous + (name === 'cookie' ? '; ' : ', ') + value;
    }
  }

  const connection = headers.connection;
  const keepAlive =
    httpVersion === '1.1'
      ? connection === undefined || !hasToken(connection, 'close')
      : connection !== undefined && hasToken(connection, 'keep-alive') && !hasToken(connection, 'close');
  const expect = headers.expect;
  // As node:http decides: only HTTP/1.1 requests, 100-continue anywhere in the value.
  const expectContinue = httpVersion === '1.1' && expect !== undefined && EXPECT_CONTINUE.test(expect);
  const expectUnsupported = httpVersion === '1.1' && expect !== undefined && !expectContinue;
  return { method, url, path, httpVersion, headers, keepAlive, expectContinue, expectUnsupported };
}

/**
 * Common request field names, by length. A name cut from the input is a new string that V8 must
 * look up in its string table every time it is used as a property key (~60 ns each); these
 * constants are already there. Matching the bytes against a few candidates is cheaper.
 */
const KNOWN_HEADER_NAMES: Array<Array<{ name: string; bytes: Uint8Array }> | undefined> = [];
for (const name of [
  'host', 'user-agent', 'accept', 'accept-encoding', 'accept-language', 'authorization', 'content-type',
  'content-length', 'connection', 'transfer-encoding', 'expect', 'cookie', 'origin', 'referer', 'x-api-key',
  'x-request-id', 'x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host', 'x-real-ip', 'cache-control',
  'pragma', 'priority', 'traceparent', 'openai-organization', 'openai-project', 'openai-beta', 'idempotency-key',
  'x-stainless-lang', 'x-stainless-package-version', 'x-stainless-os', 'x-stainless-arch', 'x-stainless-runtime',
  'x-stainless-runtime-version', 'x-stainless-retry-count', 'x-stainless-async', 'x-stainless-timeout',
  'sec-fetch-mode', 'sec-fetch-site', 'sec-fetch-dest', 'sec-ch-ua', 'sec-ch-ua-mobile', 'sec-ch-ua-platform',
]) {
  (KNOWN_HEADER_NAMES[name.length] ??= []).push({ name, bytes: Buffer.from(name, 'latin1') });
}

/** The interned lower-case name when buf[start, end) is a known field name (any case). */
function knownHeaderName(buf: Buffer, start: number, end: number): string | undefined {
  const candidates = KNOWN_HEADER_NAMES[end - start];
  if (candidates === undefined) return undefined;
  next: for (let k = 0; k < candidates.length; k++) {
    const candidate = candidates[k]!;
    const bytes = candidate.bytes;
    for (let j = 0; j < bytes.length; j++) {
      let b = buf[start + j]!;
      if (b >= 65 && b <= 90) b += 32;
      if (b !== bytes[j]) continue next;
    }
    return candidate.name;
  }
  return undefined;
}

/**
 * The methods llhttp (node:http's parser) knows, by length, as interned strings: any other method
 * is refused there, so it is here (a request one parser refuses and the other frames is where
 * smuggling starts). Matched on the bytes, case-sensitively, like the header names above.
 */
const KNOWN_METHODS: Array<Array<{ name: string; bytes: Uint8Array }> | undefined> = [];
// The common ones first: a length's candidates are tried in order.
for (const name of new Set(['GET', 'POST', ...METHODS])) (KNOWN_METHODS[name.length] ??= []).push({ name, bytes: Buffer.from(name, 'latin1') });

function knownMethod(buf: Buffer, start: number, end: number): string | undefined {
  const candidates = KNOWN_METHODS[end - start];
  if (candidates === undefined) return undefined;
  next: for (let k = 0; k < candidates.length; k++) {
    const bytes = candidates[k]!.bytes;
    for (let j = 0; j < bytes.length; j++) if (buf[start + j] !== bytes[j]) continue next;
    return candidates[k]!.name;
  }
  return undefined;
}

/** node:http's test for 100-continue in an Expect value. */
const EXPECT_CONTINUE = /(?:^|\W)100-continue(?:$|\W)/i;

const CONTENT_LENGTH = Buffer.from('content-length', 'latin1');
const TRANSFER_ENCODING = Buffer.from('transfer-encoding', 'latin1');

/**
 * A trailer field line buf[start, end) (without CRLF): name ":" value, checked like a header.
 * Framing fields are refused there (as llhttp does): a trailer must not pretend to frame the
 * message it ends.
 */
function checkTrailerLine(buf: Buffer, start: number, end: number): void {
  let i = start;
  while (i < end && TCHAR[buf[i]!] === 1) i++;
  if (i === start || buf[i] !== COLON) throw new HttpParseError(400, 'invalid trailer field');
  if (sameNameIgnoringCase(buf, start, i, CONTENT_LENGTH) || sameNameIgnoringCase(buf, start, i, TRANSFER_ENCODING)) {
    throw new HttpParseError(400, 'framing field in trailers');
  }
  for (i++; i < end; i++) if (FIELD_CHAR[buf[i]!] !== 1) throw new HttpParseError(400, 'invalid trailer field');
}

function sameNameIgnoringCase(buf: Buffer, start: number, end: number, lower: Buffer): boolean {
  if (end - start !== lower.length) return false;
  for (let j = 0; j < lower.length; j++) {
    let b = buf[start + j]!;
    if (b >= 65 && b <= 90) b += 32;
    if (b !== lower[j]) return false;
  }
  return true;
}

/**
 * chunk-ext = *( ";" token [ "=" ( token / quoted-string ) ] ) in buf[i, end), i at the first ';'
 * (RFC 9112 §7.1.1), with no whitespace anywhere: what llhttp accepts, so that node:http and this
 * parser agree on where a chunk's data starts.
 */
function checkChunkExtensions(buf: Buffer, i: number, end: number): void {
  while (i < end) {
    if (buf[i] !== SEMICOLON) throw new HttpParseError(400, 'invalid chunk extension');
    const nameStart = ++i;
    while (i < end && TCHAR[buf[i]!] === 1) i++;
    if (i === nameStart) throw new HttpParseError(400, 'invalid chunk extension');
    if (i === end || buf[i] === SEMICOLON) continue;
    if (buf[i] !== EQUALS) throw new HttpParseError(400, 'invalid chunk extension');
    i++;
    if (buf[i] === DQUOTE) {
      // quoted-string: qdtext or quoted-pair, up to the closing quote.
      for (i++; ; i++) {
        if (i >= end) throw new HttpParseError(400, 'invalid chunk extension');
        const c = buf[i]!;
        if (c === DQUOTE) break;
        if (c === BACKSLASH) i++;
        if (i >= end || FIELD_CHAR[buf[i]!] === 0) throw new HttpParseError(400, 'invalid chunk extension');
      }
      i++;
    } else {
      const valueStart = i;
      while (i < end && TCHAR[buf[i]!] === 1) i++;
      if (i === valueStart) throw new HttpParseError(400, 'invalid chunk extension');
    }
  }
}

function sizeOf(parts: Buffer[]): number {
  let n = 0;
  for (const part of parts) n += part.length;
  return n;
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

/** 1*DIGIT (RFC 9110 §8.6), no sign, no list. */
export function parseContentLength(value: string): number {
  if (value.length === 0) throw new HttpParseError(400, 'invalid Content-Length');
  let n = 0;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 48 || c > 57) throw new HttpParseError(400, 'invalid Content-Length');
    n = n * 10 + c - 48;
    // Past 2^53 the number is meaningless; it is far over any body limit anyway.
    if (n > Number.MAX_SAFE_INTEGER) throw new HttpParseError(413, 'request body too large');
  }
  return n;
}

/**
 * Only `chunked` alone is supported. RFC 9112 §6.3: chunked not last (or repeated) makes the
 * length undeterminable -> 400; other codings before it are merely not implemented -> 501.
 */
export function checkTransferEncoding(value: string): void {
  if (value.length === 7 && value.toLowerCase() === 'chunked') return;
  const codings = value.split(',');
  let chunkedCount = 0;
  for (let i = 0; i < codings.length; i++) {
    if (codings[i]!.trim().toLowerCase() === 'chunked') chunkedCount++;
  }
  const lastIsChunked = codings[codings.length - 1]!.trim().toLowerCase() === 'chunked';
  if (!lastIsChunked || chunkedCount > 1) throw new HttpParseError(400, 'invalid Transfer-Encoding');
  throw new HttpParseError(501, 'unsupported Transfer-Encoding');
}

/** Whether a comma-separated header value lists `token` (lower-case), case-insensitively. */
export function hasToken(value: string, token: string): boolean {
  const n = value.length;
  const t = token.length;
  let i = 0;
  while (i < n) {
    while (i < n && (value.charCodeAt(i) === SP || value.charCodeAt(i) === HTAB || value.charCodeAt(i) === 44)) i++;
    const start = i;
    while (i < n && value.charCodeAt(i) !== 44) i++;
    let stop = i;
    while (stop > start && (value.charCodeAt(stop - 1) === SP || value.charCodeAt(stop - 1) === HTAB)) stop--;
    if (stop - start === t) {
      let same = true;
      for (let k = 0; k < t; k++) {
        if ((value.charCodeAt(start + k) | 0x20) !== token.charCodeAt(k)) {
          same = false;
          break;
        }
      }
      if (same) return true;
    }
  }
  return false;
}
