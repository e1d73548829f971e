/**
 * The AWS event-stream binary framing (`application/vnd.amazon.eventstream`), as used by
 * Bedrock ConverseStream. One message:
 *
 *   [total length u32][headers length u32][prelude CRC32 u32][headers][payload][message CRC32 u32]
 *
 * All integers big-endian. The prelude CRC covers the first 8 bytes; the message CRC covers
 * everything before it. A header is [name length u8][name][type u8][value], where the value's
 * encoding depends on the type (7 = string: [length u16][utf-8 bytes]).
 *
 * CRC32 is the IEEE one (zlib's), from `node:zlib`.
 */
import { crc32 as zlibCrc32 } from 'node:zlib';
import { ownValue, type NullPrototypeRecord } from '../../../own.js';

/** CRC-32 (IEEE 802.3, as zlib), optionally continuing from a previous value. */
export function crc32(bytes: Uint8Array, previous = 0): number {
  return zlibCrc32(bytes, previous);
}

export type HeaderValue =
  | { type: 'boolean'; value: boolean }
  | { type: 'byte' | 'short' | 'integer'; value: number }
  | { type: 'long'; value: bigint }
  | { type: 'binary'; value: Buffer }
  | { type: 'string'; value: string }
  | { type: 'timestamp'; value: Date }
  | { type: 'uuid'; value: string };

export interface EventStreamMessage {
  headers: Record<string, HeaderValue>;
  payload: Buffer;
}

export class EventStreamError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EventStreamError';
  }
}

/** A frame longer than the decoder's limit (UPSTREAM_MAX_EVENT_SIZE). */
export class EventStreamTooLargeError extends EventStreamError {
  constructor(length: number) {
    super(`event-stream message of ${length} bytes is over the limit`);
    this.name = 'EventStreamTooLargeError';
  }
}

const PRELUDE_LENGTH = 12;
const MIN_MESSAGE_LENGTH = 16;
/** Refuse absurd frames rather than buffer them forever (AWS caps messages well below this). */
export const MAX_MESSAGE_LENGTH = 16 * 1024 * 1024;

/** The string value of a header, or undefined when absent or not a string. */
export function headerString(message: EventStreamMessage, name: string): string | undefined {
  const header = ownValue(message.headers, name);
  return header && header.type === 'string' ? header.value : undefined;
}

/** Encodes one message. Header values given as plain strings are string headers (type 7). */
export function encodeMessage(headers: Record<string, string | HeaderValue>, payload: Buffer | string): Buffer {
  const headerBytes = Buffer.concat(Object.entries(headers).map(([name, value]) => encodeHeader(name, typeof value === 'string' ? { type: 'string', value } : value)));
  const body = typeof payload === 'string' ? Buffer.from(payload, 'utf8') : payload;
  const total = PRELUDE_LENGTH + headerBytes.length + body.length + 4;
  const out = Buffer.alloc(total);
  out.writeUInt32BE(total, 0);
  out.writeUInt32BE(headerBytes.length, 4);
  out.writeUInt32BE(crc32(out.subarray(0, 8)), 8);
  headerBytes.copy(out, PRELUDE_LENGTH);
  body.copy(out, PRELUDE_LENGTH + headerBytes.length);
  out.writeUInt32BE(crc32(out.subarray(0, total - 4)), total - 4);
  return out;
}

function encodeHeader(name: string, header: HeaderValue): Buffer {
  const nameBytes = Buffer.from(name, 'utf8');
  if (nameBytes.length > 255) throw new EventStreamError(`header name too long: ${name}`);
  let value: Buffer;
  switch (header.type) {
    case 'boolean':
      value = Buffer.from([header.value ? 0 : 1]);
      break;
    case 'byte':
      value = Buffer.alloc(2);
      value[0] = 2;
      value.writeInt8(header.value, 1);
      break;
    case 'short':
      value = Buffer.alloc(3);
      value[0] = 3;
      value.writeInt16BE(header.value, 1);
      break;
    case 'integer':
      value = Buffer.alloc(5);
      value[0] = 4;
      value.writeInt32BE(header.value, 1);
      break;
    case 'long':
      value = Buffer.alloc(9);
      value[0] = 5;
      value.writeBigInt64BE(header.value, 1);
      break;
    case 'binary':
    case 'string': {
      const bytes = header.type === 'binary' ? header.value : Buffer.from(header.value, 'utf8');
      if (bytes.length > 0xffff) throw new EventStreamError(`header ${name} too long`);
      value = Buffer.alloc(3 + bytes.length);
      value[0] = header.type === 'binary' ? 6 : 7;
      value.writeUInt16BE(bytes.length, 1);
      bytes.copy(value, 3);
      break;
    }
    case 'timestamp':
      value = Buffer.alloc(9);
      value[0] = 8;
      value.writeBigInt64BE(BigInt(header.value.getTime()), 1);
      break;
    case 'uuid': {
      const hex = header.value.replace(/-/g, '');
      if (!/^[0-9a-fA-F]{32}$/.test(hex)) throw new EventStreamError(`header ${name}: bad uuid`);
      value = Buffer.concat([Buffer.from([9]), Buffer.from(hex, 'hex')]);
      break;
    }
  }
  return Buffer.concat([Buffer.from([nameBytes.length]), nameBytes, value]);
}

function decodeHeaders(bytes: Buffer): Record<string, HeaderValue> {
  // No prototype: the names are the upstream's (one named `__proto__` is just a header).
  const headers = Object.create(null) as NullPrototypeRecord<HeaderValue>;
  let at = 0;
  const need = (n: number) => {
    if (at + n > bytes.length) throw new EventStreamError('truncated event-stream header');
  };
  while (at < bytes.length) {
    need(1);
    const nameLength = bytes[at]!;
    at += 1;
    need(nameLength + 1);
    const name = bytes.toString('utf8', at, at + nameLength);
    at += nameLength;
    const type = bytes[at]!;
    at += 1;
    let value: HeaderValue;
    switch (type) {
      case 0:
      case 1:
        value = { type: 'boolean', value: type === 0 };
        break;
      case 2:
        need(1);
        value = { type: 'byte', value: bytes.readInt8(at) };
        at += 1;
        break;
      case 3:
        need(2);
        value = { type: 'short', value: bytes.readInt16BE(at) };
        at += 2;
        break;
      case 4:
        need(4);
        value = { type: 'integer', value: bytes.readInt32BE(at) };
        at += 4;
        break;
      case 5:
        need(8);
        value = { type: 'long', value: bytes.readBigInt64BE(at) };
        at += 8;
        break;
      case 6:
      case 7: {
        need(2);
        const length = bytes.readUInt16BE(at);
        at += 2;
        need(length);
        const slice = bytes.subarray(at, at + length);
        value = type === 6 ? { type: 'binary', value: Buffer.from(slice) } : { type: 'string', value: slice.toString('utf8') };
        at += length;
        break;
      }
      case 8:
        need(8);
        value = { type: 'timestamp', value: new Date(Number(bytes.readBigInt64BE(at))) };
        at += 8;
        break;
      case 9: {
        need(16);
        const hex = bytes.toString('hex', at, at + 16);
        value = { type: 'uuid', value: `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}` };
        at += 16;
        break;
      }
      default:
        throw new EventStreamError(`unknown event-stream header type ${type}`);
    }
    headers[name] = value;
  }
  return headers;
}

/**
 * Incremental decoder: feed bytes split anywhere, get back each complete message. A CRC mismatch
 * or a malformed frame sets `error` (the messages before it are still returned) and the decoder
 * then ignores all further input, so the result never depends on how the bytes were split.
 * Linear in the input: a frame's bytes are joined once, when all of them are in (the length is
 * read from the prelude first), and a frame longer than `maxMessageLength` fails at once
 * (EventStreamTooLargeError) instead of being buffered.
 */
export class EventStreamDecoder {
  private chunks: Buffer[] = [];
  private buffered = 0;
  private failure: EventStreamError | null = null;

  constructor(private readonly maxMessageLength: number = MAX_MESSAGE_LENGTH) {}

  push(bytes: Buffer): EventStreamMessage[] {
    if (this.failure) return [];
    if (bytes.length > 0) {
      this.chunks.push(bytes);
      this.buffered += bytes.length;
    }
    const out: EventStreamMessage[] = [];
    try {
      for (;;) {
        const message = this.next();
        if (!message) break;
        out.push(message);
      }
    } catch (error) {
      this.failure = error instanceof EventStreamError ? error : new EventStreamError(String(error));
      this.chunks = [];
      this.buffered = 0;
    }
    return out;
  }

  /** The framing error that stopped the decoder, if any. */
  get error(): EventStreamError | null {
    return this.failure;
  }

  /** Bytes received but not yet part of a complete message. */
  get pending(): number {
    return this.buffered;
  }

  private next(): EventStreamMessage | null {
    if (this.buffered < PRELUDE_LENGTH) return null;
    const prelude = this.prelude();
    const total = prelude.readUInt32BE(0);
    const headersLength = prelude.readUInt32BE(4);
    const preludeCrc = prelude.readUInt32BE(8);
    if (crc32(prelude.subarray(0, 8)) !== preludeCrc) throw new EventStreamError('event-stream prelude CRC mismatch');
    if (total < MIN_MESSAGE_LENGTH || total > MAX_MESSAGE_LENGTH || headersLength > total - MIN_MESSAGE_LENGTH) {
      throw new EventStreamError(`invalid event-stream message length ${total} (headers ${headersLength})`);
    }
    if (total > this.maxMessageLength) throw new EventStreamTooLargeError(total);
    // Not all in yet: wait without joining what is buffered (joining on every push is quadratic).
    if (this.buffered < total) return null;
    const buffer = this.concat();
    const message = buffer.subarray(0, total);
    const messageCrc = message.readUInt32BE(total - 4);
    if (crc32(message.subarray(0, total - 4)) !== messageCrc) throw new EventStreamError('event-stream message CRC mismatch');
    const headers = decodeHeaders(message.subarray(PRELUDE_LENGTH, PRELUDE_LENGTH + headersLength));
    const payload = Buffer.from(message.subarray(PRELUDE_LENGTH + headersLength, total - 4));
    const rest = buffer.subarray(total);
    this.chunks = rest.length > 0 ? [rest] : [];
    this.buffered = rest.length;
    return { headers, payload };
  }

  /** At least the first PRELUDE_LENGTH bytes (joins the first pieces only when the first is shorter). */
  private prelude(): Buffer {
    const first = this.chunks[0]!;
    if (first.length >= PRELUDE_LENGTH) return first;
    let length = 0;
    let count = 0;
    while (length < PRELUDE_LENGTH) length += this.chunks[count++]!.length;
    const joined = Buffer.concat(this.chunks.slice(0, count), length);
    this.chunks.splice(0, count, joined);
    return joined;
  }

  private concat(): Buffer {
    if (this.chunks.length > 1) this.chunks = [Buffer.concat(this.chunks)];
    return this.chunks[0] ?? Buffer.alloc(0);
  }
}
