/** Server-sent events: an incremental parser for upstream bodies and the writer for clients. */

export interface SseEvent {
  event: string | null;
  data: string;
}

/**
 * Feed it text in any split; it returns each complete event (terminated by a blank line).
 * Handles \n, \r\n and \r line ends, multi-line data, comments and a missing final blank line
 * (`flush`).
 */
export class SseParser {
  private buffer = '';
  private event: string | null = null;
  private data: string[] = [];

  push(text: string): SseEvent[] {
    this.buffer += text;
    const out: SseEvent[] = [];
    let start = 0;
    for (;;) {
      const nl = this.nextLineEnd(start);
      if (nl === -1) break;
      const line = this.buffer.slice(start, nl);
      start = nl + (this.buffer[nl] === '\r' && this.buffer[nl + 1] === '\n' ? 2 : 1);
      this.line(line, out);
    }
    this.buffer = this.buffer.slice(start);
    return out;
  }

  /** End of input: a pending event without its blank line still counts. */
  flush(): SseEvent[] {
    const out: SseEvent[] = [];
    if (this.buffer.length > 0) this.line(this.buffer, out);
    this.buffer = '';
    this.line('', out);
    return out;
  }

  private nextLineEnd(from: number): number {
    for (let i = from; i < this.buffer.length; i++) {
      const c = this.buffer.charCodeAt(i);
      if (c === 10) return i;
      if (c === 13) return i + 1 < this.buffer.length ? i : -1; // a \r at the very end may be half of \r\n
    }
    return -1;
  }

  private line(line: string, out: SseEvent[]) {
    if (line === '') {
      if (this.data.length > 0) out.push({ event: this.event, data: this.data.join('\n') });
      this.event = null;
      this.data = [];
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.event = value;
  }
}

/** One SSE event carrying a JSON payload. */
export function sseData(payload: unknown): string {
  return `data: ${JSON.stringify(payload)}\n\n`;
}

export const SSE_DONE = 'data: [DONE]\n\n';
