/**
 * How an ingress that does not speak chat completions gets its answers: the relay answers in the
 * chat format (whichever provider served it) and an `AnswerTranslation` rewrites that answer into
 * the ingress's own format (Anthropic Messages, OpenAI Responses) as it is written. One
 * translation per request: it may keep state (a stream's open content blocks, the final answer).
 */
import type { ChatCompletion } from './schema.js';

export interface StreamTranslator {
  /**
   * The relay's SSE text in — whole events only: `data: {chat.completion.chunk}\\n\\n`,
   * `data: {"error":{...}}\\n\\n` (an in-stream failure), `data: [DONE]\\n\\n` — and the
   * ingress's SSE text out ('' when nothing is due yet).
   */
  push(sse: string): string;
}

export interface AnswerTranslation {
  /** The whole answer's body (JSON text) in the ingress's format. */
  completion(completion: ChatCompletion): string;
  /** A translator for one streamed answer (the stream asks the upstream for usage in its last chunk). */
  stream(): StreamTranslator;
}
