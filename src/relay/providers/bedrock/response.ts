/** Bedrock Converse response -> OpenAI chat completion; Bedrock error bodies -> UpstreamError. */
import type { ChatCompletion, FinishReason, ToolCall, Usage } from '../../schema.js';
import type { ProviderContext, ResponseMeta, UpstreamError } from '../provider.js';
import { completionOf, isRecord, upstreamError, upstreamErrorOf, upstreamObject, usageOf } from '../shared.js';

/** Bedrock stopReason -> OpenAI finish_reason. */
export function finishReasonOf(stopReason: unknown): FinishReason {
  switch (stopReason) {
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'content_filtered':
    case 'guardrail_intervened':
      return 'content_filter';
    default:
      // end_turn, stop_sequence, and anything newer
      return 'stop';
  }
}

/** Bedrock `usage` ({inputTokens, outputTokens, totalTokens}) -> OpenAI usage, or null. */
export function bedrockUsageOf(usage: unknown): Usage | null {
  if (!isRecord(usage)) return null;
  const input = typeof usage.inputTokens === 'number' ? usage.inputTokens : null;
  const output = typeof usage.outputTokens === 'number' ? usage.outputTokens : null;
  if (input === null && output === null) return null;
  const base = usageOf(input ?? 0, output ?? 0);
  return typeof usage.totalTokens === 'number' ? { ...base, total_tokens: usage.totalTokens } : base;
}

export function parseBedrockResponse(body: string, _ctx: ProviderContext, meta: ResponseMeta): ChatCompletion {
  const json = upstreamObject(body, 'bedrock');
  const output = isRecord(json.output) ? json.output : {};
  const message = isRecord(output.message) ? output.message : {};
  const blocks = Array.isArray(message.content) ? (message.content as unknown[]) : [];
  const texts: string[] = [];
  const toolCalls: ToolCall[] = [];
  for (const block of blocks) {
    if (!isRecord(block)) continue;
    if (typeof block.text === 'string') texts.push(block.text);
    else if (isRecord(block.toolUse)) {
      const use = block.toolUse;
      toolCalls.push({
        id: typeof use.toolUseId === 'string' && use.toolUseId ? use.toolUseId : `call_${toolCalls.length}`,
        type: 'function',
        function: { name: typeof use.name === 'string' ? use.name : '', arguments: JSON.stringify(use.input ?? {}) },
      });
    }
  }
  // Null only when there is no text block at all (an empty text block next to tool calls stays '').
  const content = texts.length > 0 ? texts.join('') : toolCalls.length > 0 ? null : '';
  return completionOf(meta, meta.model, content, toolCalls, finishReasonOf(json.stopReason), bedrockUsageOf(json.usage) ?? usageOf(0, 0));
}

/** `com.amazon.coral.validate#ValidationException:http://...` -> `ValidationException`. */
export function errorTypeOf(raw: string): string {
  let type = raw;
  const hash = type.lastIndexOf('#');
  if (hash !== -1) type = type.slice(hash + 1);
  const colon = type.indexOf(':');
  if (colon !== -1) type = type.slice(0, colon);
  return type.trim();
}

/** `{message}` (or `Message`), plus the error type when the body carries one (`__type`, `code`, `type`). */
export function parseBedrockError(status: number, body: string): UpstreamError {
  const fallback = `bedrock returned HTTP ${status}`;
  return upstreamErrorOf(body, fallback, 1000, (json) => {
    if (!isRecord(json)) return { message: fallback };
    const raw = json.message ?? json.Message ?? (isRecord(json.error) ? json.error.message : undefined);
    const rawType = json.__type ?? json.code ?? json.Code ?? json.type;
    return upstreamError(typeof raw === 'string' && raw ? raw : fallback, typeof rawType === 'string' && rawType ? errorTypeOf(rawType) : undefined);
  });
}
