/**
 * Azure OpenAI streams are OpenAI's plus content filter annotations that are not chunks: the
 * stream begins with `prompt_filter_results` (`id: ""`, `object: ""`, `choices: []`), and in
 * asynchronous filter mode chunks of `content_filter_results` / `content_filter_offsets` follow
 * the text the same way. Clients expect every event to be a `chat.completion.chunk`, so an
 * annotation that carries nothing a chunk carries is dropped; one that does (the filter's
 * `finish_reason: "content_filter"`, text, usage) goes out as a chunk, with the stream's id,
 * created and model and a `delta` in each choice.
 */
import type { ResponseMeta, StreamConverter } from '../provider.js';
import { normaliseFinishReason } from '../openai-compatible/response.js';
import { createCompatStreamConverter, type CheckedChoice, type ChunkIdentity } from '../openai-compatible/stream.js';

const carriesContent = (choice: CheckedChoice): boolean =>
  (choice.finish_reason !== undefined && choice.finish_reason !== null) || Boolean(choice.delta?.content) || (choice.delta?.tool_calls !== undefined && choice.delta.tool_calls !== null);

/** The chunk to send for an annotation chunk, or null when it carries nothing but filter results. */
export function azureAnnotationChunk(chunk: Record<string, unknown>, choices: CheckedChoice[], identity: ChunkIdentity): string | null {
  const usage = chunk.usage;
  if (!choices.some(carriesContent) && (usage === undefined || usage === null)) return null;
  return JSON.stringify({
    ...chunk,
    id: identity.id,
    object: 'chat.completion.chunk',
    created: identity.created,
    model: identity.model,
    choices: choices.map((choice, i) => ({ ...choice, index: typeof choice.index === 'number' ? choice.index : i, delta: choice.delta ?? {}, finish_reason: normaliseFinishReason(choice.finish_reason) })),
  });
}

export function createAzureStreamConverter(meta: ResponseMeta, maxEventSize?: number): StreamConverter {
  return createCompatStreamConverter(meta, maxEventSize, { foreignChunk: azureAnnotationChunk });
}
