/** Cohere v2 chat response -> OpenAI chat completion; Cohere error bodies -> UpstreamError. */
import { AppError } from '../../../errors.js';
import type { ChatCompletion, FinishReason, ToolCall, Usage } from '../../schema.js';
import type { ProviderContext, ResponseMeta, UpstreamError } from '../provider.js';
import { completionOf, isRecord, upstreamError, upstreamErrorOf, upstreamObject, usageOf } from '../shared.js';

/**
 * Cohere finish_reason -> OpenAI finish_reason; `error` for the reasons that mean the generation
 * failed (ERROR, TIMEOUT, USER_CANCEL). ERROR_TOXIC is a content filter, ERROR_LIMIT (context
 * window full) a length stop.
 */
export function cohereFinishOf(reason: unknown): FinishReason | 'error' {
  switch (reason) {
    case 'MAX_TOKENS':
    case 'ERROR_LIMIT':
      return 'length';
    case 'TOOL_CALL':
      return 'tool_calls';
    case 'ERROR_TOXIC':
      return 'content_filter';
    case 'ERROR':
    case 'TIMEOUT':
    case 'USER_CANCEL':
      return 'error';
    default:
      // COMPLETE, STOP_SEQUENCE, and anything newer
      return 'stop';
  }
}

/** `usage.billed_units` (what is billed), else `usage.tokens`; null when neither has counts. */
export function cohereUsageOf(usage: unknown): Usage | null {
  if (!isRecord(usage)) return null;
  for (const key of ['billed_units', 'tokens'] as const) {
    const counts = usage[key];
    if (!isRecord(counts)) continue;
    const input = typeof counts.input_tokens === 'number' ? counts.input_tokens : null;
    const output = typeof counts.output_tokens === 'number' ? counts.output_tokens : null;
    if (input !== null || output !== null) return usageOf(input ?? 0, output ?? 0);
  }
  return null;
}

/** The tool_calls of a v2 message (an array; a single object is accepted too). */
export function cohereToolCalls(raw: unknown): ToolCall[] {
  const list = Array.isArray(raw) ? raw : isRecord(raw) ? [raw] : [];
  const calls: ToolCall[] = [];
  for (const item of list) {
    if (!isRecord(item)) continue;
    const fn = isRecord(item.function) ? item.function : {};
    const args = fn.arguments;
    calls.push({
      id: typeof item.id === 'string' && item.id ? item.id : `call_${calls.length}`,
      type: 'function',
      function: { name: typeof fn.name === 'string' ? fn.name : '', arguments: typeof args === 'string' ? args : JSON.stringify(args ?? {}) },
    });
  }
  return calls;
}

export function parseCohereResponse(body: string, _ctx: ProviderContext, meta: ResponseMeta): ChatCompletion {
  const json = upstreamObject(body, 'cohere');
  const finish = cohereFinishOf(json.finish_reason);
  if (finish === 'error') {
    const message = typeof json.error === 'string' && json.error ? json.error : `cohere generation failed (${String(json.finish_reason)})`;
    throw new AppError(502, 'upstream_error', 'upstream_error', message);
  }
  const message = isRecord(json.message) ? json.message : {};
  const parts = Array.isArray(message.content) ? (message.content as unknown[]) : [];
  const text = parts
    .filter(isRecord)
    .filter((part) => (part.type === undefined || part.type === 'text') && typeof part.text === 'string')
    .map((part) => part.text as string)
    .join('');
  const toolCalls = cohereToolCalls(message.tool_calls);
  const plan = typeof message.tool_plan === 'string' ? message.tool_plan : '';
  // With tool calls and no text, the tool_plan stands in for the content (as in the stream).
  const content = text !== '' ? text : toolCalls.length > 0 ? (plan !== '' ? plan : null) : '';
  return completionOf(meta, meta.model, content, toolCalls, finish, cohereUsageOf(json.usage) ?? usageOf(0, 0));
}

/** `{message}` (Cohere's error body; `{id, message}`). */
export function parseCohereError(status: number, body: string): UpstreamError {
  const fallback = `cohere returned HTTP ${status}`;
  return upstreamErrorOf(body, fallback, 1000, (json) => {
    if (!isRecord(json)) return { message: fallback };
    const raw = json.message ?? (isRecord(json.error) ? json.error.message : json.error);
    return upstreamError(typeof raw === 'string' && raw ? raw : fallback, typeof json.code === 'string' ? json.code : undefined);
  });
}
