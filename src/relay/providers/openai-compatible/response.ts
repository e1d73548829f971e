/** Non-streaming responses and error bodies of OpenAI-compatible upstreams. */
import type { ChatCompletion } from '../../schema.js';
import { FinishReason, type Usage } from '../../schema.js';
import type { ResponseMeta, UpstreamError } from '../provider.js';

const FINISH_REASONS: ReadonlySet<unknown> = new Set(FinishReason.options);

/** Some servers invent finish reasons ("eos", "end_turn", "function_call"): map them home. */
export function normaliseFinishReason(reason: unknown): FinishReason | null {
  if (reason === null || reason === undefined) return null;
  // A set lookup, not zod: this runs for every choice of every response and stream chunk.
  if (FINISH_REASONS.has(reason)) return reason as FinishReason;
  if (reason === 'function_call' || reason === 'tool_use') return 'tool_calls';
  if (reason === 'max_tokens' || reason === 'model_length') return 'length';
  return 'stop';
}

interface LooseMessage {
  content?: string | null;
  tool_calls?: unknown;
}

interface LooseCompletion {
  id?: string;
  created?: number;
  model?: string;
  choices?: Array<{ index?: number; message?: LooseMessage | null; finish_reason?: unknown }>;
  usage?: Partial<Usage> | null;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Every value is one `completeInPlace` can fill without changing what the copying version would send. */
function isOrdinaryCompletion(raw: unknown): raw is LooseCompletion {
  if (!isPlainObject(raw)) return false;
  const { choices, usage } = raw;
  if (!(usage === undefined || usage === null || isPlainObject(usage))) return false;
  if (choices === undefined || choices === null) return true;
  if (!Array.isArray(choices)) return false;
  for (const choice of choices as unknown[]) {
    if (!isPlainObject(choice)) return false;
    const message = choice.message;
    if (!(message === undefined || message === null || isPlainObject(message))) return false;
  }
  return true;
}

/**
 * The OpenAI shape by filling the parsed body itself. Assignments keep the position of a key that
 * is there and append one that is not, in the order the copying version writes them, so the JSON
 * sent is the same; nothing is copied (this runs once per relayed completion).
 */
function completeInPlace(raw: LooseCompletion, meta: ResponseMeta): ChatCompletion {
  const usage = raw.usage;
  const prompt = usage?.prompt_tokens ?? 0;
  const completion = usage?.completion_tokens ?? 0;
  raw.id ??= meta.id;
  (raw as { object?: string }).object = 'chat.completion';
  raw.created ??= meta.created;
  raw.model ??= meta.model;
  const choices = (raw.choices ??= []);
  for (let i = 0; i < choices.length; i++) {
    const choice = choices[i]!;
    choice.index ??= i;
    const message = choice.message;
    if (message === undefined || message === null) {
      choice.message = { role: 'assistant', content: null } as LooseMessage;
    } else {
      (message as { role?: string }).role = 'assistant';
      message.content ??= null;
    }
    choice.finish_reason = normaliseFinishReason(choice.finish_reason);
  }
  if (usage === undefined || usage === null) {
    raw.usage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
  } else {
    usage.prompt_tokens = prompt;
    usage.completion_tokens = completion;
    usage.total_tokens ??= prompt + completion;
  }
  return raw as ChatCompletion;
}

/** The same result as completeInPlace, built as a copy: for bodies of unusual shapes. */
function completeByCopy(raw: LooseCompletion, meta: ResponseMeta): ChatCompletion {
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

/**
 * Keeps the upstream's body as it is where it already speaks the format, filling what the OpenAI
 * shape requires (usage is all zero when absent: the relay then counts tokens itself).
 */
export function parseCompatResponse(text: string, meta: ResponseMeta): ChatCompletion {
  const raw = JSON.parse(text) as unknown;
  return isOrdinaryCompletion(raw) ? completeInPlace(raw, meta) : completeByCopy(raw as LooseCompletion, meta);
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
