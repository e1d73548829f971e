/**
 * A conversation's generated title (after its first exchange): a title model's answer when the
 * tenant names one (relay_settings.conversation_title_model), else the first words of the first
 * message. Pure: the caller asks the model and stores the title.
 */
import type { ChatCompletionRequest } from '../../schema.js';

export const TITLE_MAX_WORDS = 6;
export const TITLE_MAX_CHARS = 60;

/** The first words of `text` (at most 6 words and 60 characters, cut at a word), one line. */
export function titleFromText(text: string): string {
  const words = text.replace(/\s+/g, ' ').trim().split(' ').filter(Boolean).slice(0, TITLE_MAX_WORDS);
  let title = '';
  for (const word of words) {
    const next = title === '' ? word : `${title} ${word}`;
    if (next.length > TITLE_MAX_CHARS) {
      if (title === '') title = [...word].slice(0, TITLE_MAX_CHARS).join('');
      break;
    }
    title = next;
  }
  return title;
}

/** The model's answer as a title: one line, no quotes or trailing period, bounded; '' when unusable. */
export function cleanTitle(answer: string): string {
  const line = answer.replace(/\s+/g, ' ').trim();
  const unquoted = line.replace(/^(title:\s*)/i, '').replace(/^["'“”«»`*]+|["'“”«»`*]+$/g, '').replace(/[.。]+$/, '').trim();
  if (unquoted.length <= TITLE_MAX_CHARS) return unquoted;
  return titleFromText(unquoted);
}

const TITLE_INSTRUCTION =
  'Write a short title (at most 6 words) for a conversation that begins with the exchange below. Answer with the title only, in the language of the conversation, without quotes.';

/** Longest part of each message the title model sees (the beginning is what a title is about). */
const EXCERPT_CHARS = 2000;

export function titleRequest(model: string, question: string, answer: string): ChatCompletionRequest {
  return {
    model,
    messages: [
      { role: 'system', content: TITLE_INSTRUCTION },
      { role: 'user', content: `User: ${question.slice(0, EXCERPT_CHARS)}\n\nAssistant: ${answer.slice(0, EXCERPT_CHARS)}` },
    ],
    max_tokens: 24,
    temperature: 0.2,
    stream: false,
  } as ChatCompletionRequest;
}
