/**
 * The writer a conversation's reply is relayed through: it wraps the gate's writer, forwards the
 * relay's `chat.completion.chunk` events as they are while reading them (the text so far, the
 * finish reason), and keeps back what must come after the reply is stored: a stream's `[DONE]`
 * and its end (the ingress writes its final event before them), a whole answer's body (the
 * ingress answers with the stored messages instead).
 *
 * `stop()` ends the generation as a client disconnect would (the relay aborts the upstream
 * request and stops writing), while the client's connection stays open for the final event.
 */
import type { HeaderValue } from '../../../http-exchange.js';
import { parseJsonObject } from '../../providers/shared.js';
import type { AnswerWriter } from '../../relay.js';
import type { ChatCompletion } from '../../schema.js';
import { SSE_DONE, SseParser } from '../../sse.js';

interface ChunkView {
  model?: unknown;
  choices?: Array<{ delta?: { content?: unknown }; finish_reason?: unknown }>;
  error?: unknown;
}

export class ReplyRecorder implements AnswerWriter {
  private parser: SseParser | null = null;
  private texts: string[] = [];
  private stopListeners: Array<() => void> = [];
  /** The reply's finish reason, as the upstream gave it (null: none yet). */
  finishReason: string | null = null;
  /** An error event the relay wrote in the stream (bytes had gone out), or null. */
  streamError: { message: string; code: string } | null = null;
  /** The stream's head went out (the relay started a stream). */
  started = false;
  /** A whole (not streamed) 200 answer, kept instead of sent. */
  completion: ChatCompletion | null = null;
  /** `stop()` was called. */
  stopped = false;
  /** Called once, after the answer's first bytes were handed to the client's writer. */
  private onFirstBytes: (() => void) | null = null;

  constructor(readonly inner: AnswerWriter) {}

  /** The reply's text so far. */
  get text(): string {
    if (this.texts.length > 1) this.texts = [this.texts.join('')];
    return this.texts[0] ?? '';
  }

  /** `listener` runs once the first bytes of the answer went out (a stream's first chunk, a whole answer, an error). */
  afterFirstBytes(listener: () => void): void {
    this.onFirstBytes = listener;
  }

  private firstBytesOut(): void {
    const listener = this.onFirstBytes;
    this.onFirstBytes = null;
    listener?.();
  }

  setHeader(name: string, value: HeaderValue): void {
    this.inner.setHeader(name, value);
  }

  send(status: number, headers: Record<string, HeaderValue>, body: string): void {
    if (status === 200) {
      const completion = parseJsonObject(body) as ChatCompletion | null;
      if (completion !== null) {
        this.completion = completion;
        const choice = completion.choices?.[0];
        this.texts = [typeof choice?.message?.content === 'string' ? choice.message.content : ''];
        this.finishReason = typeof choice?.finish_reason === 'string' ? choice.finish_reason : null;
        this.firstBytesOut();
        return;
      }
    }
    this.inner.send(status, headers, body);
    this.firstBytesOut();
  }

  start(status: number, headers: Record<string, HeaderValue>): void {
    this.started = true;
    this.parser = new SseParser();
    this.inner.start(status, headers);
  }

  write(text: string): boolean {
    this.read(text);
    const more = this.inner.write(text);
    this.firstBytesOut();
    return more;
  }

  /** The stream's last text: what precedes `[DONE]` goes now, `[DONE]` after the final event. */
  writeLast(text: string): void {
    this.read(text);
    const body = text.endsWith(SSE_DONE) ? text.slice(0, -SSE_DONE.length) : text;
    if (body !== '') this.inner.write(body);
    this.firstBytesOut();
  }

  drained(): Promise<void> {
    return this.inner.drained();
  }

  /** Kept back: the ingress ends the answer after its final event. */
  end(): void {}

  get closed(): boolean {
    return this.stopped || this.inner.closed;
  }

  onClose(listener: () => void): void {
    this.stopListeners.push(listener);
    this.inner.onClose(listener);
  }

  offClose(listener: () => void): void {
    const at = this.stopListeners.indexOf(listener);
    if (at !== -1) this.stopListeners.splice(at, 1);
    this.inner.offClose(listener);
  }

  /** Ends the generation (the relay sees its client gone); the real client still gets the final event. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    const listeners = this.stopListeners;
    this.stopListeners = [];
    for (const listener of listeners) listener();
  }

  private read(text: string): void {
    if (this.parser === null) return;
    for (const event of this.parser.push(text)) {
      if (event.data === '[DONE]') continue;
      const chunk = parseJsonObject(event.data) as ChunkView | null;
      if (chunk === null) continue;
      if (chunk.error !== undefined && typeof chunk.error === 'object' && chunk.error !== null) {
        const { message, code } = chunk.error as { message?: unknown; code?: unknown };
        this.streamError = { message: typeof message === 'string' ? message : 'upstream error', code: typeof code === 'string' ? code : 'upstream_error' };
        continue;
      }
      const choice = chunk.choices?.[0];
      if (choice === undefined) continue;
      const content = choice.delta?.content;
      if (typeof content === 'string' && content !== '') this.texts.push(content);
      if (typeof choice.finish_reason === 'string') this.finishReason = choice.finish_reason;
    }
  }
}
