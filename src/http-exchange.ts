/**
 * What the relay and the access checks need from one HTTP exchange, whichever server carried it:
 * fastify (node:http) for the whole API, or the front server on the chat-completions hot path
 * (src/api/relay-server.ts: the relay's own HTTP/1.1 server, src/api/http1/, or plain node:http).
 * Keeping these two small shapes free of fastify's types is what lets one relay implementation
 * answer on every one.
 */
import { timeOrderedUuid } from './ids.js';

/** The request side. A FastifyRequest satisfies it as it is. */
export interface HttpRequestLike {
  /** The request id (X-Request-Id when the client sent a well-formed one). */
  readonly id: string;
  readonly method: string;
  /** Header names lower-cased. */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly socket: { readonly remoteAddress?: string | undefined };
}

export type HeaderValue = string | number | string[];

/** The response side, as the relay writes it: a whole answer, or a stream of text. */
export interface RelayResponse {
  /** A header for whatever answer follows (set before `send` / `start`). */
  setHeader(name: string, value: HeaderValue): void;
  /** The whole answer at once. */
  send(status: number, headers: Record<string, HeaderValue>, body: string): void;
  /** Starts a streamed answer; `write` the parts, then `end`. */
  start(status: number, headers: Record<string, HeaderValue>): void;
  /** False: wait for `drained()` before writing more. */
  write(text: string): boolean;
  /** Resolves when the client can take more (or has gone). */
  drained(): Promise<void>;
  end(): void;
  /** The client went away before the answer was complete. */
  readonly closed: boolean;
  onClose(listener: () => void): void;
  offClose(listener: () => void): void;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * The request's id: a well-formed incoming X-Request-Id (so a request can be traced across
 * services), else a new one. Generated ids are time-ordered: a relayed request's id keys the usage
 * and billing tables' request-id indexes, which then grow at their end instead of at random pages
 * (src/ids.ts).
 */
export function requestIdOf(incoming: unknown): string {
  return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : timeOrderedUuid();
}

/** A header's value (the first, when it was sent more than once). */
export function headerOf(request: HttpRequestLike, name: string): string | undefined {
// eslint-disable-next-line switchyard/no-string-index-lookup -- names are the code's own; request headers come without a prototype (node, src/api/http1)
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : (value as string | undefined);
}
