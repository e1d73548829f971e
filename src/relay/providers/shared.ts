/**
 * Small helpers every provider conversion uses. What lives here is the part of a conversion that
 * is the same whatever the upstream: reading the OpenAI request's fields, shaping the OpenAI
 * response, and the 502 the relay answers when an upstream body cannot be read. Each provider's
 * folder keeps what is its own (wire shapes, field names, its error messages); the stream side
 * shared by the native converters is in ./stream-writer.ts.
 */
import { randomBytes } from 'node:crypto';
import { type AppError, BadRequestError, UpstreamFaultError } from '../../errors.js';
import type { ChatCompletion, ChatCompletionChunk, ChatCompletionRequest, ContentPart, FinishReason, Message, Tool, ToolCall, ToolChoice, Usage } from '../schema.js';
import type { ProviderContext, ResponseMeta, UpstreamError, UpstreamRequest } from './provider.js';

/** A 400 for a value the provider cannot take, naming the request field. */
export function unsupported(param: string, message: string): BadRequestError {
  return new BadRequestError(message, 'unsupported_parameter', param);
}

export function completionId(): string {
  return `chatcmpl-${randomBytes(12).toString('base64url')}`;
}

/** A plain JSON object (not null, not an array): what upstream bodies are checked against. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** `text` as a JSON object, or null (not JSON, or not an object). */
export function parseJsonObject(text: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(text);
    return isRecord(value) ? value : null;
  } catch {
    return null;
  }
}

/** Set in the request: neither absent nor an explicit null (the OpenAI schema allows both). */
export const defined = <T>(value: T | null | undefined): value is T => value !== null && value !== undefined;

// --- Request side ---------------------------------------------------------------------------

/** The text of a message's content; images are refused unless the caller handles them. */
export function textOf(content: Message['content'], param = 'messages'): string {
  if (content === null || content === undefined) return '';
  if (typeof content === 'string') return content;
  return content
    .map((part: ContentPart) => {
      if (part.type === 'text') return part.text;
      throw unsupported(param, 'this provider does not accept image content parts');
    })
    .join('');
}

/** A `data:` URL split into media type and base64 payload, or null for a remote URL. */
export function parseDataUrl(url: string): { mediaType: string; base64: string } | null {
  const match = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  return match ? { mediaType: match[1]!, base64: match[2]! } : null;
}

/**
 * OpenAI request fields that some native APIs have no counterpart for. Each provider names the
 * ones it refuses, with its own message; what counts as "asking for it" is the same everywhere.
 */
const REFUSABLE = {
  n: (r: ChatCompletionRequest) => r.n != null && r.n > 1,
  logprobs: (r: ChatCompletionRequest) => r['logprobs'] === true,
  top_logprobs: (r: ChatCompletionRequest) => r['top_logprobs'] != null,
  logit_bias: (r: ChatCompletionRequest) => {
    const bias = r['logit_bias'];
    return !!bias && typeof bias === 'object' && Object.keys(bias).length > 0;
  },
  audio: (r: ChatCompletionRequest) => r['audio'] != null,
  presence_penalty: (r: ChatCompletionRequest) => !!r.presence_penalty,
  frequency_penalty: (r: ChatCompletionRequest) => !!r.frequency_penalty,
};

export type RefusableField = keyof typeof REFUSABLE;

/** Throws a 400 (naming the field) for the first field in `messages` the request asks for. */
export function refuseFields(request: ChatCompletionRequest, messages: Partial<Record<RefusableField, string>>): void {
  for (const [field, asks] of Object.entries(REFUSABLE) as [RefusableField, (r: ChatCompletionRequest) => boolean][]) {
    const message = messages[field];
    if (message !== undefined && asks(request)) throw unsupported(field, message);
  }
}

/** `max_completion_tokens`, or the older `max_tokens` when only that is given. */
export function maxTokensOf(request: ChatCompletionRequest): number | null | undefined {
  return request.max_completion_tokens ?? request.max_tokens;
}

/** `stop` as a list, or undefined when there is none (a native API refuses an empty list). */
export function stopSequencesOf(stop: ChatCompletionRequest['stop']): string[] | undefined {
  if (stop === null || stop === undefined) return undefined;
  const stops = typeof stop === 'string' ? [stop] : stop;
  return stops.length > 0 ? stops : undefined;
}

/**
 * Tool-call arguments (a JSON string) as the object native APIs want. Empty means no arguments;
 * anything but a JSON object is a 400 with `code` (each provider has always used its own).
 */
export function toolArguments(raw: string, param: string, code: 'invalid_request' | 'unsupported_parameter'): Record<string, unknown> {
  if (raw.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    // not JSON: refused below, like any value that is not an object
  }
  if (!isRecord(parsed)) throw new BadRequestError('tool call arguments must be a JSON object', code, param);
  return parsed;
}

/** A tool's JSON Schema; a function without one takes no arguments (an empty object schema). */
export function toolParameters(tool: Tool): Record<string, unknown> {
  return tool.function.parameters ?? { type: 'object', properties: {} };
}

/** A tool in the OpenAI function shape with parameters always present (Cohere, Ollama). */
export function functionTool(tool: Tool): { type: 'function'; function: { name: string; description?: string; parameters: Record<string, unknown> } } {
  return {
    type: 'function',
    function: {
      name: tool.function.name,
      ...(tool.function.description !== undefined ? { description: tool.function.description } : {}),
      parameters: toolParameters(tool),
    },
  };
}

/**
 * `tool_choice` in a provider's terms: `to` says what each OpenAI form becomes, so every
 * provider answers for all four. Undefined when the request has no tool_choice.
 */
export function toolChoiceOf<T>(choice: ToolChoice | undefined, to: { auto: T; required: T; none: T; named: (name: string) => T }): T | undefined {
  if (choice === undefined) return undefined;
  if (typeof choice === 'string') return to[choice];
  return to.named(choice.function.name);
}

/** One conversation turn while native messages are built: a role and its content blocks. */
export interface Turn<R, T> {
  role: R;
  items: T[];
}

/**
 * Appends a turn, merged into the previous one when the role repeats (Anthropic, Gemini and
 * Bedrock require user/assistant alternation). A turn with nothing in it is skipped.
 */
export function pushTurn<R, T>(turns: Turn<R, T>[], role: R, items: T[]): void {
  if (items.length === 0) return;
  const last = turns.at(-1);
  if (last && last.role === role) last.items.push(...items);
  else turns.push({ role, items });
}

/** The request behind channel tests and health probes: one word in, one token out. */
export function pingRequest(model: string): ChatCompletionRequest {
  return { model, messages: [{ role: 'user', content: 'ping' }], max_tokens: 1, stream: false };
}

/** A provider's probe: its own request conversion applied to the ping request. */
export function probeWith(build: (request: ChatCompletionRequest, ctx: ProviderContext) => UpstreamRequest): (ctx: ProviderContext) => UpstreamRequest {
  return (ctx) => build(pingRequest(ctx.model), ctx);
}

/** Joins a base URL and a path without doubling or dropping the slash. */
export function joinUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
}

// --- Response side --------------------------------------------------------------------------

export function usageOf(prompt: number, completion: number): Usage {
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

/** A 502 for an upstream body the relay cannot read. */
export function badUpstream(message: string): AppError {
  return new UpstreamFaultError(message);
}

/** A successful upstream body parsed as JSON; a 502 naming the upstream (`who`) when it is not JSON. */
export function upstreamJson(body: string, who: string): unknown {
  try {
    return JSON.parse(body) as unknown;
  } catch {
    throw badUpstream(`${who} returned a body that is not JSON`);
  }
}

/** As upstreamJson, and a 502 unless the body is a JSON object. */
export function upstreamObject(body: string, who: string): Record<string, unknown> {
  const json = upstreamJson(body, who);
  if (!isRecord(json)) throw badUpstream(`${who} returned an unexpected body`);
  return json;
}

/** Ids for tool calls the upstream sends without one: `call_<response>_<n>`, the same on every conversion. */
export function toolCallIdOf(meta: ResponseMeta, n: number): string {
  return `call_${meta.id.replace(/^chatcmpl-/, '')}_${n}`;
}

/** The message content of a reply: its text, or null when the reply is only tool calls (as OpenAI sends it). */
export function replyContent(text: string, toolCalls: ToolCall[]): string | null {
  return text === '' && toolCalls.length > 0 ? null : text;
}

/** The one-choice chat completion every native provider answers with; `tool_calls` only when there are some. */
export function completionOf(meta: ResponseMeta, model: string, content: string | null, toolCalls: ToolCall[], finishReason: FinishReason | null, usage: Usage): ChatCompletion {
  const message: ChatCompletion['choices'][number]['message'] = { role: 'assistant', content };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  return { id: meta.id, object: 'chat.completion', created: meta.created, model, choices: [{ index: 0, message, finish_reason: finishReason }], usage };
}

/** An UpstreamError with `code` only when there is one. */
export function upstreamError(message: string, code: string | undefined): UpstreamError {
  return code ? { message, code } : { message };
}

/**
 * An upstream error body -> UpstreamError. `read` takes message and code out of the parsed JSON,
 * or gives null when it finds none; then, as for a body that is not JSON, the body's own text
 * (cut to `limit` characters) is the message, or `fallback` when the body is empty.
 */
export function upstreamErrorOf(body: string, fallback: string, limit: number, read: (json: unknown) => UpstreamError | null): UpstreamError {
  let json: unknown;
  let parsed = true;
  try {
    json = JSON.parse(body);
  } catch {
    parsed = false;
  }
  const found = parsed ? read(json) : null;
  if (found) return found;
  const text = body.trim().slice(0, limit);
  return { message: text || fallback };
}

// --- Stream side ----------------------------------------------------------------------------

export function chunkOf(meta: ResponseMeta, delta: ChatCompletionChunk['choices'][number]['delta'], finishReason: FinishReason | null = null): ChatCompletionChunk {
  return { id: meta.id, object: 'chat.completion.chunk', created: meta.created, model: meta.model, choices: [{ index: 0, delta, finish_reason: finishReason }] };
}

/** The final usage chunk of a stream (`stream_options.include_usage`): no choices. */
export function usageChunkOf(meta: ResponseMeta, usage: Usage): ChatCompletionChunk {
  return { id: meta.id, object: 'chat.completion.chunk', created: meta.created, model: meta.model, choices: [], usage };
}
