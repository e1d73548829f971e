/** Ollama `/api/chat` response -> OpenAI chat completion; Ollama error bodies -> UpstreamError. */
import { AppError } from '../../../errors.js';
import type { ChatCompletion, FinishReason, ToolCall, Usage } from '../../schema.js';
import type { ProviderContext, ResponseMeta, UpstreamError } from '../provider.js';
import { completionOf, isRecord, replyContent, toolCallIdOf, upstreamErrorOf, upstreamObject, usageOf } from '../shared.js';

/** done_reason -> finish_reason (a reply that called tools finishes with tool_calls). */
export function ollamaFinishOf(doneReason: unknown, calledTools: boolean): FinishReason {
  if (doneReason === 'length') return 'length';
  return calledTools ? 'tool_calls' : 'stop';
}

/** prompt_eval_count / eval_count -> usage, or null when the body has neither. */
export function ollamaUsageOf(json: Record<string, unknown>): Usage | null {
  const prompt = typeof json.prompt_eval_count === 'number' ? json.prompt_eval_count : null;
  const completion = typeof json.eval_count === 'number' ? json.eval_count : null;
  if (prompt === null && completion === null) return null;
  return usageOf(prompt ?? 0, completion ?? 0);
}

/**
 * `message.tool_calls` ([{function:{name, arguments: object}}]) -> OpenAI tool calls, numbered from
 * `first`. Ollama gives tool calls no id (newer versions may): one is derived from the response id
 * and the call's position, so the same response always converts to the same ids.
 */
export function ollamaToolCalls(raw: unknown, meta: ResponseMeta, first = 0): ToolCall[] {
  if (!Array.isArray(raw)) return [];
  const calls: ToolCall[] = [];
  for (const item of raw) {
    if (!isRecord(item)) continue;
    const fn = isRecord(item.function) ? item.function : {};
    const args = fn.arguments;
    const index = first + calls.length;
    calls.push({
      id: typeof item.id === 'string' && item.id ? item.id : toolCallIdOf(meta, index),
      type: 'function',
      function: { name: typeof fn.name === 'string' ? fn.name : '', arguments: typeof args === 'string' ? args : JSON.stringify(args ?? {}) },
    });
  }
  return calls;
}

export function parseOllamaResponse(body: string, _ctx: ProviderContext, meta: ResponseMeta): ChatCompletion {
  const json = upstreamObject(body, 'ollama');
  if (typeof json.error === 'string' && json.error) throw new AppError(502, 'upstream_error', 'upstream_error', json.error);
  const message = isRecord(json.message) ? json.message : {};
  const toolCalls = ollamaToolCalls(message.tool_calls, meta);
  const text = typeof message.content === 'string' ? message.content : '';
  const model = typeof json.model === 'string' && json.model ? json.model : meta.model;
  return completionOf(meta, model, replyContent(text, toolCalls), toolCalls, ollamaFinishOf(json.done_reason, toolCalls.length > 0), ollamaUsageOf(json) ?? usageOf(0, 0));
}

/** `{error: "..."}` */
export function parseOllamaError(status: number, body: string): UpstreamError {
  const fallback = `ollama returned HTTP ${status}`;
  return upstreamErrorOf(body, fallback, 1000, (json) => {
    if (!isRecord(json)) return { message: fallback };
    const raw = isRecord(json.error) ? json.error.message : (json.error ?? json.message);
    return { message: typeof raw === 'string' && raw ? raw : fallback };
  });
}
