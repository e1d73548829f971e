/** Gemini GenerateContentResponse / error body -> OpenAI chat completion / upstream error. */
import { AppError } from '../../../errors.js';
import type { ChatCompletion, FinishReason, ToolCall, Usage } from '../../schema.js';
import type { ProviderContext, ResponseMeta, UpstreamError } from '../provider.js';
import { usageOf } from '../shared.js';

export interface GeminiResponsePart {
  text?: string;
  /** A thought summary (thinking models): not part of the answer. */
  thought?: boolean;
  functionCall?: { id?: string; name?: string; args?: unknown };
}

export interface GeminiCandidate {
  content?: { role?: string; parts?: GeminiResponsePart[] };
  finishReason?: string;
  index?: number;
}

export interface GeminiUsageMetadata {
  promptTokenCount?: number;
  candidatesTokenCount?: number;
  thoughtsTokenCount?: number;
  toolUsePromptTokenCount?: number;
  totalTokenCount?: number;
}

export interface GeminiResponse {
  candidates?: GeminiCandidate[];
  promptFeedback?: { blockReason?: string };
  usageMetadata?: GeminiUsageMetadata;
  modelVersion?: string;
  responseId?: string;
  error?: { code?: number; message?: string; status?: string };
}

const CONTENT_FILTER = new Set(['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY', 'IMAGE_PROHIBITED_CONTENT', 'IMAGE_RECITATION']);

/**
 * Gemini `finishReason` -> OpenAI `finish_reason`. STOP is `tool_calls` when the answer carries
 * function calls; unknown reasons (OTHER, LANGUAGE, MALFORMED_FUNCTION_CALL...) are `stop`.
 */
export function finishReasonOf(reason: string | undefined, hasToolCalls: boolean): FinishReason | null {
  if (!reason || reason === 'FINISH_REASON_UNSPECIFIED') return null;
  if (reason === 'MAX_TOKENS') return 'length';
  if (CONTENT_FILTER.has(reason)) return 'content_filter';
  return hasToolCalls ? 'tool_calls' : 'stop';
}

/** prompt = promptTokenCount (+ toolUsePromptTokenCount), completion = candidates + thoughts. */
export function usageFromGemini(usage: GeminiUsageMetadata | undefined): Usage | null {
  if (!usage) return null;
  const prompt = (usage.promptTokenCount ?? 0) + (usage.toolUsePromptTokenCount ?? 0);
  const completion = (usage.candidatesTokenCount ?? 0) + (usage.thoughtsTokenCount ?? 0);
  const computed = usageOf(prompt, completion);
  return typeof usage.totalTokenCount === 'number' ? { ...computed, total_tokens: Math.max(usage.totalTokenCount, computed.total_tokens) } : computed;
}

/** Ids for Gemini function calls that come without one: `call_<response>_<n>`, unique per response. */
export function toolCallId(meta: ResponseMeta, n: number): string {
  return `call_${meta.id.replace(/^chatcmpl-/, '')}_${n}`;
}

export function toolCallOf(call: NonNullable<GeminiResponsePart['functionCall']>, meta: ResponseMeta, n: number): ToolCall {
  return { id: call.id || toolCallId(meta, n), type: 'function', function: { name: call.name ?? '', arguments: JSON.stringify(call.args ?? {}) } };
}

export function badUpstream(message: string): AppError {
  return new AppError(502, 'upstream_error', 'bad_upstream_response', message);
}

export function parseGeminiResponse(body: string, _ctx: ProviderContext, meta: ResponseMeta): ChatCompletion {
  let parsed: GeminiResponse;
  try {
    parsed = JSON.parse(body) as GeminiResponse;
  } catch {
    throw badUpstream('Gemini returned a body that is not JSON');
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw badUpstream('Gemini returned an unexpected body');
  if (parsed.error) throw badUpstream(`Gemini error: ${parsed.error.message ?? 'unknown error'}`);

  const candidate = parsed.candidates?.[0];
  let text = '';
  const toolCalls: ToolCall[] = [];
  for (const part of candidate?.content?.parts ?? []) {
    if (part.functionCall) toolCalls.push(toolCallOf(part.functionCall, meta, toolCalls.length));
    else if (typeof part.text === 'string' && !part.thought) text += part.text;
  }
  // A blocked prompt has no candidate at all, only promptFeedback.blockReason.
  const finish = candidate ? finishReasonOf(candidate.finishReason, toolCalls.length > 0) : parsed.promptFeedback?.blockReason ? 'content_filter' : null;
  const message: ChatCompletion['choices'][number]['message'] = { role: 'assistant', content: text === '' && toolCalls.length > 0 ? null : text };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  return {
    id: meta.id,
    object: 'chat.completion',
    created: meta.created,
    model: parsed.modelVersion || meta.model,
    choices: [{ index: 0, message, finish_reason: finish }],
    usage: usageFromGemini(parsed.usageMetadata) ?? usageOf(0, 0),
  };
}

/** `{"error":{"code","message","status"}}` (or a one-element array of it, as streams without alt=sse send). */
export function parseGeminiError(status: number, body: string): UpstreamError {
  try {
    const parsed = JSON.parse(body) as GeminiResponse | GeminiResponse[];
    const error = (Array.isArray(parsed) ? parsed[0] : parsed)?.error;
    if (error && typeof error.message === 'string' && error.message) {
      const code = error.status || (error.code !== undefined ? String(error.code) : undefined);
      return code ? { message: error.message, code } : { message: error.message };
    }
  } catch {
    // not JSON: use the text
  }
  const text = body.trim().slice(0, 500);
  return { message: text || `Gemini answered HTTP ${status}` };
}
