/**
 * The contract every fake upstream follows, so that one relay test can drive all of them.
 *
 * A fake is a real HTTP server speaking one provider's native wire format (streaming framing
 * included). Its answer depends on the current `mode`:
 * - `reply` (default): assistant text `Hello! You said: <text of the last user message>`,
 *   streamed in at least 3 pieces; usage prompt=11, completion=7 (in the provider's own fields);
 *   finish = the provider's "normal stop".
 * - `tool_call`: one call of the first tool in the request (or `get_weather`) with arguments
 *   `{"city":"Paris"}`; finish = the provider's "tool use" reason. Streaming splits the arguments.
 * - `length`: text `Hello! You` and the provider's "max tokens" finish reason.
 * - `no_usage`: like `reply` but the response carries no usage at all (where the format allows).
 * - `error`: answers `status` with the provider's native error body containing `message`, plus
 *   `retry-after` (seconds) when given. Always before any streamed byte.
 * - `stream_error`: (streaming only) sends one text piece, then the provider's in-stream error
 *   (or drops the connection if the format has none).
 * - `slow`: like `reply` but waits `delayMs` before the first byte and between pieces.
 * Misbehaving upstreams (the OpenAI fake implements these; the relay's handling is the same
 * whatever the kind):
 * - `raw`: answers exactly `status`, `headers` and `body` (a JSON body to a stream request, a
 *   gzip-encoded body, malformed chunks...).
 * - `huge`: a 200 whose first event (stream) or body (not streamed) is `bytes` long: after
 *   `prefix` (raw, streams only), one `data:` line of that size, written as fast as the relay
 *   reads it. `started` is called once the first bytes are out; after the first 64 KB of the
 *   line the fake waits for `hold` when given. It stops when the relay hangs up.
 * - `reset`: a 200 with `prefix` as the start of its body, then the connection is destroyed.
 * - `azure_filters` (the OpenAI fake): like `reply`, with Azure OpenAI's content filter results:
 *   a non-streamed body carries `prompt_filter_results` and each choice `content_filter_results`;
 *   a stream begins with a `prompt_filter_results` event that is not a chunk (`id: ""`,
 *   `object: ""`, `choices: []`), its chunks carry `content_filter_results`, and an asynchronous
 *   filter annotation (not a chunk either) follows the text. `filtered`: the finish reason comes
 *   in such an annotation, as `content_filter`, instead of in a chunk.
 * Every request is recorded (method, path, headers lower-cased, raw body, parsed JSON).
 *
 * Embeddings (each fake's embeddings endpoint in its provider's format): `fakeEmbedding(text,
 * dimensions)` per input; the token count, where the format has one, is FAKE_PROMPT_TOKENS
 * (none in `no_usage`); `error`, `slow` and (OpenAI) the misbehaving modes as for chat.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

export const FAKE_PROMPT_TOKENS = 11;
export const FAKE_COMPLETION_TOKENS = 7;
export const FAKE_TOOL_ARGUMENTS = '{"city":"Paris"}';

export type FakeMode =
  | { kind: 'reply' }
  | { kind: 'tool_call' }
  | { kind: 'length' }
  | { kind: 'no_usage' }
  | { kind: 'error'; status: number; message?: string; retryAfterSeconds?: number }
  | { kind: 'stream_error' }
  | { kind: 'slow'; delayMs: number }
  | { kind: 'raw'; status?: number; headers: Record<string, string>; body: string | Buffer }
  | { kind: 'huge'; bytes: number; prefix?: string; started?: () => void; hold?: Promise<void> }
  | { kind: 'reset'; prefix: string }
  | { kind: 'azure_filters'; filtered?: boolean };

export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
  json: unknown;
}

export interface FakeUpstream {
  /** Base URL to configure on a channel (no trailing slash). */
  baseUrl: string;
  requests: RecordedRequest[];
  mode: FakeMode;
  /** Responses whose connection closed before the fake finished them (client/relay aborted). */
  aborted: number;
  close(): Promise<void>;
}

/** Vector length of the fakes' embeddings when the request names none. */
export const FAKE_EMBEDDING_DIMENSIONS = 8;

/**
 * The fakes' embedding of `text`: deterministic, different for different texts, and made of
 * multiples of 1/128 in [-1, 1), which float32 holds exactly (a base64 round trip compares equal).
 */
export function fakeEmbedding(text: string, dimensions = FAKE_EMBEDDING_DIMENSIONS): number[] {
  const vector: number[] = [];
  for (let i = 0; i < dimensions; i++) {
    const code = text.length === 0 ? 0 : text.charCodeAt(i % text.length);
    vector.push((((code * (i + 7) + text.length) % 256) - 128) / 128);
  }
  return vector;
}

/** The texts of an OpenAI-shaped `input` (a string or a list of strings). */
export function textsOf(input: unknown): string[] {
  if (typeof input === 'string') return [input];
  return Array.isArray(input) ? input.map((t) => String(t)) : [];
}

export function replyText(lastUserText: string): string {
  return `Hello! You said: ${lastUserText}`;
}

/** Splits text into `n` roughly equal non-empty pieces (for streaming). */
export function pieces(text: string, n = 3): string[] {
  const size = Math.max(1, Math.ceil(text.length / n));
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The misbehaving modes (`raw`, `huge`, `reset`): true when `mode` is one and the answer is sent. */
export async function misbehave(mode: FakeMode, res: ServerResponse, stream: boolean): Promise<boolean> {
  switch (mode.kind) {
    case 'raw':
      res.writeHead(mode.status ?? 200, mode.headers).end(mode.body);
      return true;
    case 'reset':
      res.writeHead(200, { 'content-type': stream ? 'text/event-stream' : 'application/json', ...(stream ? {} : { 'content-length': String(mode.prefix.length * 4) }) });
      res.write(mode.prefix);
      await sleep(30); // the prefix reaches the relay first
      res.socket?.resetAndDestroy(); // a TCP reset (ECONNRESET), not an orderly close
      return true;
    case 'huge': {
      res.writeHead(200, { 'content-type': stream ? 'text/event-stream' : 'application/json' });
      const gone = new Promise<void>((resolve) => res.once('close', resolve));
      const write = async (text: string) => {
        if (!res.write(text)) await Promise.race([new Promise((resolve) => res.once('drain', resolve)), gone]);
      };
      await write(stream ? `${mode.prefix ?? ''}data: {"choices":[{"index":0,"delta":{"content":"` : '{"choices":[{"index":0,"message":{"role":"assistant","content":"');
      mode.started?.();
      const piece = 'x'.repeat(64 * 1024);
      for (let sent = 0; sent < mode.bytes && !res.destroyed; sent += piece.length) {
        if (!res.destroyed) await write(piece);
        if (mode.hold && sent === 0) await Promise.race([mode.hold, gone]);
      }
      if (!res.destroyed) res.end(stream ? '"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n' : '"},"finish_reason":"stop"}]}');
      return true;
    }
    default:
      return false;
  }
}

/**
 * Starts an HTTP server on 127.0.0.1 that records each request and hands it to `handle`
 * with the fake's current mode.
 */
export async function startFake(handle: (req: RecordedRequest, res: ServerResponse, fake: FakeUpstream) => Promise<void> | void): Promise<FakeUpstream> {
  const fake: FakeUpstream = { baseUrl: '', requests: [], mode: { kind: 'reply' }, aborted: 0, close: async () => undefined };
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let json: unknown = undefined;
      try {
        json = body ? JSON.parse(body) : undefined;
      } catch {
        json = undefined;
      }
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k.toLowerCase()] = v;
      const recorded: RecordedRequest = { method: req.method ?? 'GET', path: req.url ?? '/', headers, body, json };
      fake.requests.push(recorded);
      res.once('close', () => {
        if (!res.writableFinished) fake.aborted++;
      });
      Promise.resolve(handle(recorded, res, fake)).catch((error: unknown) => {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(String(error));
      });
    });
  });
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  fake.baseUrl = `http://127.0.0.1:${port}`;
  fake.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return fake;
}
