/**
 * Token counts for when an upstream reports no usage: a real BPE tokenizer (gpt-tokenizer,
 * o200k_base, bundled in the package: nothing downloads at run time). Exact for OpenAI models,
 * a close estimate for others.
 */
import { encode } from 'gpt-tokenizer';
import type { Message } from './schema.js';

export function countTokens(text: string): number {
  return text ? encode(text).length : 0;
}

/** Prompt tokens as chat models count them: each message's text plus a few framing tokens. */
export function countPromptTokens(messages: readonly Message[]): number {
  let total = 3; // every reply is primed with <|start|>assistant<|message|>
  for (const message of messages) {
    total += 3;
    if (typeof message.content === 'string') total += countTokens(message.content);
    else if (Array.isArray(message.content)) for (const part of message.content) if (part.type === 'text') total += countTokens(part.text);
    if (message.name) total += 1 + countTokens(message.name);
    for (const call of message.tool_calls ?? []) total += countTokens(call.function.name) + countTokens(call.function.arguments) + 3;
  }
  return total;
}
