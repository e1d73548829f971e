/**
 * A response whose last bytes wait for the request's usage event to be durable.
 *
 * The client has its answer only once the last bytes arrive (the whole JSON body; the final
 * `data: [DONE]` and the end of a stream). The relay writes through this wrapper, and `release`
 * lets those last bytes go after the usage journal has the event (docs/decisions/0020): a process
 * killed in between leaves a request the client never saw complete, never an answered request
 * without its usage event. Everything before the last bytes (headers, stream chunks) goes at once.
 */
import type { HeaderValue, RelayResponse } from '../http-exchange.js';

export class HeldBackResponse implements RelayResponse {
  private held: { status: number; headers: Record<string, HeaderValue>; body: string } | null = null;
  private last: string | null = null;
  private ended = false;

  constructor(private readonly inner: RelayResponse) {}

  setHeader(name: string, value: HeaderValue): void {
    this.inner.setHeader(name, value);
  }

  /** Held: the whole answer is its last bytes. */
  send(status: number, headers: Record<string, HeaderValue>, body: string): void {
    this.held = { status, headers, body };
  }

  start(status: number, headers: Record<string, HeaderValue>): void {
    this.inner.start(status, headers);
  }

  write(text: string): boolean {
    return this.inner.write(text);
  }

  /** The stream's final text (its `[DONE]`): held. */
  writeLast(text: string): void {
    this.last = (this.last ?? '') + text;
  }

  drained(): Promise<void> {
    return this.inner.drained();
  }

  /** Held. */
  end(): void {
    this.ended = true;
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

  /** Lets the held bytes go (call once the usage event is durable). */
  release(): void {
    if (this.inner.closed) return;
    if (this.held) this.inner.send(this.held.status, this.held.headers, this.held.body);
    if (this.last !== null) this.inner.write(this.last);
    if (this.ended) this.inner.end();
  }
}
