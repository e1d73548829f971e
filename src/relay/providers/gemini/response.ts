/** Gemini GenerateContentResponse / error body -> OpenAI chat completion / upstream error. */
import type { ChatCompletion, FinishReason, ToolCall, Usage } from '../../schema.js';
import type { ProviderContext, ResponseMeta, UpstreamError } from '../provider.js';
import { badUpstream, completionOf, replyContent, toolCallIdOf, upstreamError, upstreamErrorOf, upstreamObject, usageOf } from '../shared.js';

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

/** A function call (Gemini sends each whole); one without an id gets `call_<response>_<n>`. */
export function toolCallOf(call: NonNullable<GeminiResponsePart['functionCall']>, meta: ResponseMeta, n: number): ToolCall {
  return { id: call.id || toolCallIdOf(meta, n), type: 'function', function: { name: call.name ?? '', arguments: JSON.stringify(call.args ?? {}) } };
}

export function parseGeminiResponse(body: string, _ctx: ProviderContext, meta: ResponseMeta): ChatCompletion {
  const parsed = upstreamObject(body, 'Gemini') as GeminiResponse;
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
  return completionOf(meta, parsed.modelVersion || meta.model, replyContent(text, toolCalls), toolCalls, finish, usageFromGemini(parsed.usageMetadata) ?? usageOf(0, 0));
}

/** `{"error":{"code","message","status"}}` (or a one-element array of it, as streams without alt=sse send). */
export function parseGeminiError(status: number, body: string): UpstreamError {
  return upstreamErrorOf(body, `Gemini answered HTTP ${status}`, 500, (json) => {
    const parsed = json as GeminiResponse | GeminiResponse[] | null;
    const error = (Array.isArray(parsed) ? parsed[0] : parsed)?.error;
    if (!error || typeof error.message !== 'string' || !error.message) return null;
    return upstreamError(error.message, error.status || (error.code !== undefined ? String(error.code) : undefined));
  });
}
