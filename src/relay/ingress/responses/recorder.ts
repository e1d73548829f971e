/**
 * Keeps the final response object of an answer as it is written, whoever wrote it (the relay's
 * translation, or a native upstream's bytes passed through): the whole JSON body of a 200, or
 * the `response` of a stream's `response.completed` / `response.incomplete` event. Everything is
 * forwarded to the gate's writer unchanged; its last bytes are still held by the gate.
 */
import type { HeaderValue } from '../../../http-exchange.js';
import { isRecord, parseJsonObject } from '../../providers/shared.js';
import type { AnswerWriter } from '../../relay.js';
import { SseParser } from '../../sse.js';

const FINAL_EVENTS: ReadonlySet<string | null> = new Set(['response.completed', 'response.incomplete']);

export class AnswerRecorder implements AnswerWriter {
  private parser: SseParser | null = null;
  /** The response object the client got, once its answer is complete. */
  final: Record<string, unknown> | null = null;

  constructor(private readonly inner: AnswerWriter) {}

  setHeader(name: string, value: HeaderValue): void {
    this.inner.setHeader(name, value);
  }

  send(status: number, headers: Record<string, HeaderValue>, body: string): void {
    if (status === 200) this.final = parseJsonObject(body);
    this.inner.send(status, headers, body);
  }

  start(status: number, headers: Record<string, HeaderValue>): void {
    this.parser = new SseParser();
    this.inner.start(status, headers);
  }

  write(text: string): boolean {
    this.read(text);
    return this.inner.write(text);
  }

  writeLast(text: string): void {
    this.read(text);
    this.inner.writeLast(text);
  }

  drained(): Promise<void> {
    return this.inner.drained();
  }

  end(): void {
    this.inner.end();
  }

  get closed(): boolean {
    return this.inner.closed;
  }

  onClose(listener: () => void): void {
    this.inner.onClose(listener);
  }

  offClose(listener: () => void): void {
    this.inner.offClose(listener);
  }

  private read(text: string): void {
    if (this.parser === null) return;
    for (const event of this.parser.push(text)) {
      // Only the final event is parsed (deltas are many and not needed).
      if (!FINAL_EVENTS.has(event.event)) continue;
      const data = parseJsonObject(event.data);
      if (data !== null && isRecord(data.response)) this.final = data.response;
    }
  }
}
