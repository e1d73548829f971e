/**
 * The upstream chat request of a conversation's reply, built from what the conversation holds
 * (pure: the route reads the rows, this decides). Messages, in order: the system prompt (the
 * conversation's, else the preset's), the preset's context, the history (current messages, oldest
 * first, ending with the user message being answered). The history is trimmed to the model's
 * context window, leaving room for `max_tokens`: the oldest turns go first; the system prompt, the
 * preset's context and the message being answered always stay.
 */
import { BadRequestError } from '../../../errors.js';
import type { RelayPreset } from '../../presets.js';
import type { ChatCompletionRequest, ContentPart, Message } from '../../schema.js';
import { countPromptTokens, countTokens } from '../../tokens.js';

/** A message as the conversation holds it (clear text). */
export interface HistoryMessage {
  role: string;
  content: string;
  /** What its attached files became (src/relay/files.ts): sent after its text. */
  fileParts?: readonly ContentPart[];
}

/** What fills in a reply's settings: the request, the conversation, the user's preferences, the preset. */
export interface ReplySettingsSources {
  /** The request's own `model` (send, regenerate, edit). */
  asked: string | undefined;
  conversation: { model: string | null; temperature: number | null; maxTokens: number | null };
  user: { default_model: string | null; temperature: number; max_tokens: number };
  preset: RelayPreset | null;
}

export interface ReplySettings {
  model: string;
  temperature: number;
  maxTokens: number;
}

/**
 * Model: the request's, else the conversation's, else the user's default, else the first of the
 * preset's preferences the caller can use (else its first). Temperature and max_tokens: the
 * conversation's, else the user's defaults. No model anywhere: 400 model_required.
 */
export function replySettings(sources: ReplySettingsSources, usable: (model: string) => boolean): ReplySettings {
  const { asked, conversation, user, preset } = sources;
  const fromPreset = preset === null ? undefined : (preset.model_preferences.find(usable) ?? preset.model_preferences[0]);
  const model = nonEmpty(asked) ?? nonEmpty(conversation.model) ?? nonEmpty(user.default_model) ?? fromPreset;
  if (model === undefined) {
    throw new BadRequestError('no model: name one in the request, the conversation, your default_model preference, or its preset', 'model_required', 'model');
  }
  return { model, temperature: conversation.temperature ?? user.temperature, maxTokens: conversation.maxTokens ?? user.max_tokens };
}

const nonEmpty = (value: string | null | undefined) => (value === null || value === undefined || value === '' ? undefined : value);

export interface ReplyRequestInput {
  settings: ReplySettings;
  stream: boolean;
  /** The conversation's system prompt (clear), or null. */
  systemPrompt: string | null;
  preset: RelayPreset | null;
  /** Current messages, oldest first; the last is the user message being answered. */
  history: readonly HistoryMessage[];
  /** The model's context window in tokens. */
  contextTokens: number;
}

export interface ReplyRequest {
  body: ChatCompletionRequest;
  /** History messages left out to fit the context window. */
  omitted: number;
}

export function replyRequest(input: ReplyRequestInput): ReplyRequest {
  const { settings, preset, history } = input;
  const fixed: Message[] = [];
  const system = input.systemPrompt ?? preset?.system_prompt ?? null;
  if (system) fixed.push({ role: 'system', content: system });
  for (const m of preset?.context ?? []) fixed.push(m.name === undefined ? { role: asRole(m.role), content: m.content } : { role: asRole(m.role), content: m.content, name: m.name });
  const turns = history.map((m): Message => ({ role: asRole(m.role), content: m.fileParts === undefined || m.fileParts.length === 0 ? m.content : [{ type: 'text', text: m.content }, ...m.fileParts] }));
  const kept = fitToContext(fixed, turns, input.contextTokens - settings.maxTokens);
  const body: ChatCompletionRequest = {
    model: settings.model,
    messages: [...fixed, ...kept],
    temperature: settings.temperature,
    max_tokens: settings.maxTokens,
    stream: input.stream,
  } as ChatCompletionRequest;
  return { body, omitted: turns.length - kept.length };
}

function asRole(role: string): Message['role'] {
  return role === 'system' || role === 'assistant' || role === 'developer' || role === 'tool' ? role : 'user';
}

/** Framing tokens of one message (as countPromptTokens counts them). */
const PER_MESSAGE = 3;

/**
 * The newest turns that fit in `budget` prompt tokens besides `fixed` (the last turn always
 * stays). Kept history starts with a user message: an assistant reply whose question was cut
 * goes too. Tokens are only counted when the texts' UTF-8 sizes could exceed the budget (a token
 * is at least one byte): short conversations are never tokenized.
 */
export function fitToContext(fixed: readonly Message[], turns: readonly Message[], budget: number): Message[] {
  if (turns.length <= 1) return [...turns];
  let bytes = PER_MESSAGE * (fixed.length + turns.length + 1);
  for (const m of fixed) bytes += sizeOf(m);
  for (const m of turns) bytes += sizeOf(m);
  if (bytes <= budget) return [...turns];

  let left = budget - countPromptTokens([...fixed, turns.at(-1)!]);
  let from = turns.length - 1;
  while (from > 0) {
    const cost = PER_MESSAGE + countTokens(textOf(turns[from - 1]!));
    if (cost > left) break;
    left -= cost;
    from -= 1;
  }
  while (from < turns.length - 1 && turns[from]!.role !== 'user') from += 1;
  return turns.slice(from);
}

/** The message's text (an attached file's text included: it costs tokens like the rest). */
const textOf = (m: Message) => (typeof m.content === 'string' ? m.content : (m.content ?? []).map((part) => (part.type === 'text' ? part.text : '')).join(''));
const sizeOf = (m: Message) => Buffer.byteLength(textOf(m)) + (m.name ? Buffer.byteLength(m.name) + 1 : 0);

/**
 * Context windows (tokens) of well-known model families, by name prefix (longest first wins). A
 * deployment names its own in CONVERSATION_CONTEXT_LENGTHS; anything else gets
 * CONVERSATION_CONTEXT_TOKENS.
 */
const KNOWN_CONTEXT_LENGTHS: ReadonlyArray<readonly [string, number]> = (
  [
  ['gpt-4.1', 1_047_576],
  ['gpt-4o', 128_000],
  ['gpt-4-turbo', 128_000],
  ['gpt-4-32k', 32_768],
  ['gpt-4', 8_192],
  ['gpt-3.5-turbo', 16_385],
  ['gpt-5', 400_000],
  ['o1', 200_000],
  ['o3', 200_000],
  ['o4', 200_000],
  ['claude', 200_000],
  ['gemini-1.5', 1_048_576],
  ['gemini-2', 1_048_576],
  ['gemini', 32_768],
  ['mistral-large', 128_000],
  ['llama3', 8_192],
  ['llama-3', 128_000],
    ['command-r', 128_000],
  ] as Array<[string, number]>
).sort((a, b) => b[0].length - a[0].length);

export function contextLengthOf(model: string, settings: { contextTokens: number; contextLengths: ReadonlyMap<string, number> }): number {
  const configured = settings.contextLengths.get(model);
  if (configured !== undefined) return configured;
  for (const [prefix, tokens] of KNOWN_CONTEXT_LENGTHS) if (model.startsWith(prefix)) return tokens;
  return settings.contextTokens;
}
