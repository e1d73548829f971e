/**
 * The reply stream of a conversation turn, folded event by event: chat.completion.chunk deltas add
 * to the text, the conversation.reply event is the stored result, an error object ends it.
 */
import type { Reply } from './types';

export interface StreamState {
  text: string;
  reply: Reply | null;
  error: string | null;
}

export const EMPTY_STREAM: StreamState = { text: '', reply: null, error: null };

interface ChunkLike {
  object?: string;
  choices?: Array<{ delta?: { content?: string | null } }>;
  error?: { message?: string; code?: string | null };
}

/** The state after one SSE event's data (text that is not JSON is ignored). */
export function applyEvent(state: StreamState, data: string): StreamState {
  let parsed: ChunkLike;
  try {
    parsed = JSON.parse(data) as ChunkLike;
  } catch {
    return state;
  }
  if (parsed === null || typeof parsed !== 'object') return state;
  if (parsed.object === 'conversation.reply') {
    const reply = parsed as unknown as Reply;
    // The stored reply is the truth (it may differ from the chunks, e.g. cut by a stop).
    return { ...state, reply, text: reply.assistant_message?.content ?? state.text };
  }
  if (parsed.error) {
    const code = parsed.error.code ? ` (${parsed.error.code})` : '';
    return { ...state, error: `${parsed.error.message ?? 'error'}${code}` };
  }
  const delta = parsed.choices?.map((c) => c.delta?.content ?? '').join('') ?? '';
  return delta ? { ...state, text: state.text + delta } : state;
}

/** Folds a whole list of event datas (tests, and replays). */
export const foldEvents = (datas: readonly string[]): StreamState => datas.reduce(applyEvent, EMPTY_STREAM);
