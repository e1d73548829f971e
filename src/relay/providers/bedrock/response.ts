/** Bedrock Converse response -> OpenAI chat completion; Bedrock error bodies -> UpstreamError. */
import { AppError } from '../../../errors.js';
import type { ChatCompletion, FinishReason, ToolCall, Usage } from '../../schema.js';
import type { ProviderContext, ResponseMeta, UpstreamError } from '../provider.js';
import { usageOf } from '../shared.js';

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

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
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

function parseJson(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    throw new AppError(502, 'upstream_error', 'bad_upstream_response', 'bedrock returned a body that is not JSON');
  }
}

export function parseBedrockResponse(body: string, _ctx: ProviderContext, meta: ResponseMeta): ChatCompletion {
  const json = parseJson(body);
  if (!isRecord(json)) throw new AppError(502, 'upstream_error', 'bad_upstream_response', 'bedrock returned an unexpected body');
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
  const content = texts.length > 0 ? texts.join('') : toolCalls.length > 0 ? null : '';
  return {
    id: meta.id,
    object: 'chat.completion',
    created: meta.created,
    model: meta.model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content, ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}) },
        finish_reason: finishReasonOf(json.stopReason),
      },
    ],
    usage: bedrockUsageOf(json.usage) ?? usageOf(0, 0),
  };
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
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    const text = body.trim();
    return { message: text ? text.slice(0, 1000) : `bedrock returned HTTP ${status}` };
  }
  if (!isRecord(json)) return { message: `bedrock returned HTTP ${status}` };
  const raw = json.message ?? json.Message ?? (isRecord(json.error) ? json.error.message : undefined);
  const message = typeof raw === 'string' && raw ? raw : `bedrock returned HTTP ${status}`;
  const rawType = json.__type ?? json.code ?? json.Code ?? json.type;
  const code = typeof rawType === 'string' && rawType ? errorTypeOf(rawType) : undefined;
  return code ? { message, code } : { message };
}
