/**
 * Server-sent events: an incremental parser for upstream bodies and the writer for clients.
 *
 * Upstream text is read in linear time whatever its split: each piece is scanned once (a line
 * that spans many pieces is kept as a list of parts and joined once, when it ends), and a line or
 * an event longer than the limit fails the stream instead of growing without bound.
 */
import { UpstreamFaultError } from '../errors.js';

export interface SseEvent {
  event: string | null;
  data: string;
}

/** The default limit on one upstream line or event (UPSTREAM_MAX_EVENT_SIZE), in characters. */
export const DEFAULT_MAX_EVENT_SIZE = 8 * 1024 * 1024;

/** The 502 for an upstream line, event or frame past the limit. */
export function upstreamTooLarge(): UpstreamFaultError {
  return new UpstreamFaultError('the upstream sent a response larger than the relay accepts', 'upstream_response_too_large');
}

/**
 * Splits text into lines across any split: \n, \r\n and \r line ends (a \r at the end of one
 * piece and a \n at the start of the next are one line end). Throws upstreamTooLarge() for a
 * line longer than `maxLength` characters, as soon as it gets that long.
 */
export class LineSplitter {
  /** The start of the line not yet ended, in pieces (joined once, when the line ends). */
  private parts: string[] = [];
  private partsLength = 0;
  /** The last piece ended with \r: a \n first in the next piece belongs to that line end. */
  private skipLf = false;

  constructor(private readonly maxLength: number = DEFAULT_MAX_EVENT_SIZE) {}

  /** The complete lines in `text` (with what came before it), without their line ends. */
  push(text: string): string[] {
    const lines: string[] = [];
    const n = text.length;
    let start = 0;
    if (this.skipLf && n > 0) {
      this.skipLf = false;
      if (text.charCodeAt(0) === 10) start = 1;
    }
    // The next \n and \r at or after `start`, each searched again only once passed: one scan.
    let lf = text.indexOf('\n', start);
    let cr = text.indexOf('\r', start);
    while (lf !== -1 || cr !== -1) {
      let end: number;
      let next: number;
      if (cr === -1 || (lf !== -1 && lf < cr)) {
        end = lf;
        next = lf + 1;
      } else {
        end = cr;
        if (cr + 1 < n) next = text.charCodeAt(cr + 1) === 10 ? cr + 2 : cr + 1;
        else {
          next = n;
          this.skipLf = true;
        }
      }
      lines.push(this.complete(text.slice(start, end)));
      start = next;
      if (lf !== -1 && lf < start) lf = text.indexOf('\n', start);
      if (cr !== -1 && cr < start) cr = text.indexOf('\r', start);
    }
    if (start < n) {
      this.partsLength += n - start;
      if (this.partsLength > this.maxLength) throw upstreamTooLarge();
      this.parts.push(start === 0 ? text : text.slice(start));
    }
    return lines;
  }

  /** End of input: the last line when it had no line end ('' when there is none). */
  flush(): string {
    const rest = this.parts.length === 0 ? '' : this.complete('');
    this.skipLf = false;
    return rest;
  }

  private complete(tail: string): string {
    if (this.parts.length === 0) {
      if (tail.length > this.maxLength) throw upstreamTooLarge();
      return tail;
    }
    const length = this.partsLength + tail.length;
    if (length > this.maxLength) throw upstreamTooLarge();
    this.parts.push(tail);
    const line = this.parts.join('');
    this.parts = [];
    this.partsLength = 0;
    return line;
  }
}

/**
 * Feed it text in any split; it returns each complete event (terminated by a blank line).
 * Handles \n, \r\n and \r line ends, multi-line data, comments and a missing final blank line
 * (`flush`). A line, or the data of one event, longer than `maxEventSize` characters throws
 * upstreamTooLarge().
 */
export class SseParser {
  private readonly lines: LineSplitter;
  private event: string | null = null;
  private data: string[] = [];
  private dataLength = 0;

  constructor(private readonly maxEventSize: number = DEFAULT_MAX_EVENT_SIZE) {
    this.lines = new LineSplitter(maxEventSize);
  }

  push(text: string): SseEvent[] {
    const out: SseEvent[] = [];
    for (const line of this.lines.push(text)) this.line(line, out);
    return out;
  }

  /** End of input: a pending event without its blank line still counts. */
  flush(): SseEvent[] {
    const out: SseEvent[] = [];
    const rest = this.lines.flush();
    if (rest.length > 0) this.line(rest, out);
    this.line('', out);
    return out;
  }

  private line(line: string, out: SseEvent[]) {
    if (line === '') {
      if (this.data.length > 0) out.push({ event: this.event, data: this.data.length === 1 ? this.data[0]! : this.data.join('\n') });
      this.event = null;
      this.data = [];
      this.dataLength = 0;
      return;
    }
    if (line.charCodeAt(0) === 58 /* : */) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32 /* space */) value = value.slice(1);
    if (field === 'data') {
      // Many short data lines add up to one event: the limit is on the event.
      this.dataLength += value.length + 1;
      if (this.dataLength > this.maxEventSize) throw upstreamTooLarge();
      this.data.push(value);
    } else if (field === 'event') this.event = value;
  }
}

/** One SSE event carrying a JSON payload. */
export function sseData(payload: unknown): string {
  return `data: ${JSON.stringify(payload)}\n\n`;
}

export const SSE_DONE = 'data: [DONE]\n\n';
