/** Small helpers every provider conversion uses. */
import { randomBytes } from 'node:crypto';
import { BadRequestError } from '../../errors.js';
import type { ChatCompletionChunk, ContentPart, FinishReason, Message, Usage } from '../schema.js';
import type { ResponseMeta } from './provider.js';

/** A 400 for a value the provider cannot take, naming the request field. */
export function unsupported(param: string, message: string): BadRequestError {
  return new BadRequestError(message, 'unsupported_parameter', param);
}

export function completionId(): string {
  return `chatcmpl-${randomBytes(12).toString('base64url')}`;
}

/** The text of a message's content; images are refused unless the caller handles them. */
export function textOf(content: Message['content'], param = 'messages'): string {
  if (content === null || content === undefined) return '';
  if (typeof content === 'string') return content;
  return content
    .map((part: ContentPart) => {
      if (part.type === 'text') return part.text;
      throw unsupported(param, 'this provider does not accept image content parts');
    })
    .join('');
}

/** A `data:` URL split into media type and base64 payload, or null for a remote URL. */
export function parseDataUrl(url: string): { mediaType: string; base64: string } | null {
  const match = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  return match ? { mediaType: match[1]!, base64: match[2]! } : null;
}

export function usageOf(prompt: number, completion: number): Usage {
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

export function chunkOf(meta: ResponseMeta, delta: ChatCompletionChunk['choices'][number]['delta'], finishReason: FinishReason | null = null): ChatCompletionChunk {
  return { id: meta.id, object: 'chat.completion.chunk', created: meta.created, model: meta.model, choices: [{ index: 0, delta, finish_reason: finishReason }] };
}

/** The final usage chunk of a stream (`stream_options.include_usage`): no choices. */
export function usageChunkOf(meta: ResponseMeta, usage: Usage): ChatCompletionChunk {
  return { id: meta.id, object: 'chat.completion.chunk', created: meta.created, model: meta.model, choices: [], usage };
}

/** Joins a base URL and a path without doubling or dropping the slash. */
export function joinUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
}
