/**
 * `POST /v1/messages/count_tokens` counted by the relay itself (when no anthropic channel counts), with its tokenizer
 * (src/relay/tokens.ts, o200k_base): exact for OpenAI models, an estimate for the others, Claude
 * included. Counted: the system prompt, every text and thinking block, tool calls (name and
 * input), tool results' text, text documents, and the tools' definitions (name, description,
 * schema as JSON); images and PDF documents are not counted (the relay does not decode them).
 */
import { countTokens } from '../../tokens.js';
import type { ContentBlock, CountTokensRequest } from './schema.js';

/** Framing per message, as src/relay/tokens.ts counts chat messages. */
const PER_MESSAGE = 3;

function blockTokens(block: ContentBlock): number {
  const b = block as Record<string, unknown>;
  switch (block.type) {
    case 'text':
      return countTokens(String(b['text']));
    case 'thinking':
      return countTokens(String(b['thinking']));
    case 'tool_use':
      return countTokens(String(b['name'])) + countTokens(JSON.stringify(b['input'] ?? {})) + 3;
    case 'tool_result': {
      const content = b['content'];
      if (typeof content === 'string') return countTokens(content) + 3;
      if (!Array.isArray(content)) return 3;
      return 3 + (content as ContentBlock[]).reduce((sum, part) => sum + blockTokens(part), 0);
    }
    case 'document': {
      const source = b['source'] as { type?: unknown; data?: unknown; content?: unknown };
      if (source.type === 'text' && typeof source.data === 'string') return countTokens(source.data);
      if (source.type === 'content' && typeof source.content === 'string') return countTokens(source.content);
      if (source.type === 'content' && Array.isArray(source.content)) return (source.content as ContentBlock[]).reduce((sum, part) => sum + blockTokens(part), 0);
      return 0;
    }
    default:
      return 0;
  }
}

export function countMessagesTokens(request: CountTokensRequest): number {
  let total = PER_MESSAGE;
  const { system } = request;
  if (typeof system === 'string') total += countTokens(system);
  else if (system !== undefined) for (const block of system) total += countTokens(block.text);
  for (const message of request.messages) {
    total += PER_MESSAGE;
    if (typeof message.content === 'string') total += countTokens(message.content);
    else for (const block of message.content) total += blockTokens(block);
  }
  for (const tool of request.tools ?? []) {
    total += countTokens(tool.name) + countTokens(tool.description ?? '') + countTokens(JSON.stringify(tool.input_schema ?? {}));
  }
  return total;
}
