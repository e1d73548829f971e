/** Anthropic Messages API response / error body -> OpenAI chat completion / upstream error. */
import type { ChatCompletion, FinishReason, ToolCall, Usage } from '../../schema.js';
import type { ProviderContext, ResponseMeta, UpstreamError } from '../provider.js';
import { badUpstream, completionOf, replyContent, upstreamError, upstreamErrorOf, upstreamObject, usageOf } from '../shared.js';

export interface AnthropicUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
}

/** A content block: text, tool_use, or a kind the relay skips (thinking, server tools...). */
export interface AnthropicResponseBlock {
  type: string;
  text?: unknown;
  id?: unknown;
  name?: unknown;
  input?: unknown;
}

export interface AnthropicResponse {
  id?: string;
  type?: string;
  role?: string;
  model?: string;
  content?: AnthropicResponseBlock[];
  stop_reason?: string | null;
  usage?: AnthropicUsage;
  error?: { type?: string; message?: string };
}

/** Anthropic `stop_reason` -> OpenAI `finish_reason`. */
export function finishReasonOf(stopReason: string | null | undefined): FinishReason | null {
  switch (stopReason) {
    case null:
    case undefined:
      return null;
    case 'end_turn':
    case 'stop_sequence':
    case 'pause_turn':
      return 'stop';
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'refusal':
      return 'content_filter';
    default:
      return 'stop';
  }
}

/** Prompt tokens include cache writes and cache reads (Anthropic counts them apart). */
export function promptTokensOf(usage: AnthropicUsage): number {
  return (usage.input_tokens ?? 0) + (usage.cache_creation_input_tokens ?? 0) + (usage.cache_read_input_tokens ?? 0);
}

export function usageFromAnthropic(usage: AnthropicUsage | undefined): Usage {
  if (!usage) return usageOf(0, 0);
  return usageOf(promptTokensOf(usage), usage.output_tokens ?? 0);
}

export function parseAnthropicResponse(body: string, _ctx: ProviderContext, meta: ResponseMeta): ChatCompletion {
  const parsed = upstreamObject(body, 'Anthropic') as AnthropicResponse;
  if (parsed.type === 'error') throw badUpstream(`Anthropic error: ${parsed.error?.message ?? 'unknown error'}`);

  const texts: string[] = [];
  const toolCalls: ToolCall[] = [];
  for (const block of parsed.content ?? []) {
    if (block.type === 'text' && typeof block.text === 'string') texts.push(block.text);
    else if (block.type === 'tool_use' && typeof block.id === 'string' && typeof block.name === 'string') {
      toolCalls.push({ id: block.id, type: 'function', function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) } });
    }
  }
  return completionOf(meta, parsed.model || meta.model, replyContent(texts.join(''), toolCalls), toolCalls, finishReasonOf(parsed.stop_reason), usageFromAnthropic(parsed.usage));
}

/** `{"type":"error","error":{"type","message"}}`; anything else falls back to the raw text. */
export function parseAnthropicError(status: number, body: string): UpstreamError {
  return upstreamErrorOf(body, `Anthropic answered HTTP ${status}`, 500, (json) => {
    const error = (json as AnthropicResponse | null)?.error;
    const message = error?.message;
    if (typeof message !== 'string' || !message) return null;
    return upstreamError(message, typeof error?.type === 'string' ? error.type : undefined);
  });
}
