/**
 * The relay's response side (RelayResponse) on a node:http ServerResponse: for the node:http front
 * (src/api/relay-server.ts), and the streaming half of fastify's (src/api/routes/relay.ts).
 */
import type { ServerResponse } from 'node:http';
import type { HeaderValue, RelayResponse } from '../http-exchange.js';

export interface NodeRelayResponse extends RelayResponse {
  /** The status sent (0 until `send`/`start`). */
  readonly statusCode: number;
  readonly headersSent: boolean;
}

export function nodeRelayResponse(raw: ServerResponse): NodeRelayResponse {
  return new NodeResponse(raw);
}

class NodeResponse implements NodeRelayResponse {
  statusCode = 0;
  /** onClose listeners and the 'close' listener standing for each. */
  private listeners: Map<() => void, () => void> | null = null;

  constructor(private readonly raw: ServerResponse) {}

  get headersSent(): boolean {
    return this.raw.headersSent;
  }

  /** 'close' before the response finished: the client went away. */
  get closed(): boolean {
    return this.raw.destroyed && !this.raw.writableFinished;
  }

  setHeader(name: string, value: HeaderValue): void {
    this.raw.setHeader(name, value);
  }

  send(status: number, headers: Record<string, HeaderValue>, body: string): void {
    this.statusCode = status;
    const raw = this.raw;
    raw.setHeader('content-length', Buffer.byteLength(body));
    raw.writeHead(status, headers);
    raw.end(body);
  }

  start(status: number, headers: Record<string, HeaderValue>): void {
    this.statusCode = status;
    // The head goes out with the first chunk written (node:http holds it until then).
    this.raw.writeHead(status, headers);
  }

  write(text: string): boolean {
    return this.raw.write(text);
  }

  drained(): Promise<void> {
    const raw = this.raw;
    if (raw.destroyed || !raw.writableNeedDrain) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = () => {
        raw.off('drain', done);
        raw.off('close', done);
        resolve();
      };
      raw.once('drain', done);
      raw.once('close', done);
    });
  }

  end(): void {
    this.raw.end();
  }

  onClose(listener: () => void): void {
    if (this.closed) {
      queueMicrotask(listener);
      return;
    }
    const raw = this.raw;
    const onRawClose = () => {
      if (!raw.writableFinished) listener();
    };
    (this.listeners ??= new Map()).set(listener, onRawClose);
    raw.once('close', onRawClose);
  }

  offClose(listener: () => void): void {
    const onRawClose = this.listeners?.get(listener);
    if (onRawClose === undefined) return;
    this.raw.off('close', onRawClose);
    this.listeners!.delete(listener);
  }
}
