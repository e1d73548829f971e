/** Non-streaming responses and error bodies of OpenAI-compatible upstreams. */
import type { ChatCompletion} from '../../schema.js';
import { FinishReason, type Usage } from '../../schema.js';
import type { ResponseMeta, UpstreamError } from '../provider.js';

/** Some servers invent finish reasons ("eos", "end_turn", "function_call"): map them home. */
export function normaliseFinishReason(reason: unknown): FinishReason | null {
  if (reason === null || reason === undefined) return null;
  if (FinishReason.safeParse(reason).success) return reason as FinishReason;
  if (reason === 'function_call' || reason === 'tool_use') return 'tool_calls';
  if (reason === 'max_tokens' || reason === 'model_length') return 'length';
  return 'stop';
}

interface LooseCompletion {
  id?: string;
  created?: number;
  model?: string;
  choices?: Array<{ index?: number; message?: { content?: string | null; tool_calls?: unknown }; finish_reason?: unknown }>;
  usage?: Partial<Usage> | null;
}

/**
 * Keeps the upstream's body as it is where it already speaks the format, filling what the OpenAI
 * shape requires (usage is all zero when absent: the relay then counts tokens itself).
 */
export function parseCompatResponse(text: string, meta: ResponseMeta): ChatCompletion {
  const raw = JSON.parse(text) as LooseCompletion;
  const usage = raw.usage;
  const prompt = usage?.prompt_tokens ?? 0;
  const completion = usage?.completion_tokens ?? 0;
  return {
    ...(raw as object),
    id: raw.id ?? meta.id,
    object: 'chat.completion' as const,
    created: raw.created ?? meta.created,
    model: raw.model ?? meta.model,
    choices: (raw.choices ?? []).map((c, i) => ({
      ...(c as object),
      index: c.index ?? i,
      message: { ...(c.message as object), role: 'assistant' as const, content: c.message?.content ?? null },
      finish_reason: normaliseFinishReason(c.finish_reason),
    })),
    usage: { ...(usage as object), prompt_tokens: prompt, completion_tokens: completion, total_tokens: usage?.total_tokens ?? prompt + completion },
  } as ChatCompletion;
}

export function parseCompatError(status: number, body: string): UpstreamError {
  try {
    const parsed = JSON.parse(body) as { error?: { message?: string; code?: unknown; type?: string } | string; message?: string; detail?: string };
    if (parsed.error && typeof parsed.error === 'object' && parsed.error.message) {
      const code = parsed.error.code ?? parsed.error.type;
      return { message: parsed.error.message, code: code === undefined || code === null ? undefined : String(code) };
    }
    if (typeof parsed.error === 'string') return { message: parsed.error };
    if (parsed.message) return { message: parsed.message };
    if (typeof parsed.detail === 'string') return { message: parsed.detail };
  } catch {
    // not JSON: fall through
  }
  return { message: body.trim().slice(0, 500) || `upstream answered ${status}` };
}
