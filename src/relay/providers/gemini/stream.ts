/**
 * Gemini streamGenerateContent?alt=sse (`data: {GenerateContentResponse}` events) -> OpenAI
 * chat.completion.chunk events.
 *
 * The first upstream event gives the first chunk (delta.role 'assistant'); text parts become
 * content deltas (thought parts are skipped); each functionCall part (Gemini sends it whole)
 * becomes one tool_calls delta with id, name and the full arguments; the event carrying
 * finishReason gives the finish chunk; the last usageMetadata seen is the usage. An event with
 * `error` sets outcome.error and is passed on as one OpenAI-style `data: {"error":{...}}` event;
 * nothing else is emitted after it except the closing `data: [DONE]`.
 */
import { SseParser, type SseEvent } from '../../sse.js';
import type { ProviderContext, ResponseMeta, StreamConverter } from '../provider.js';
import { ChunkWriter, textStreamConverter, type Delta } from '../stream-writer.js';
import { finishReasonOf, toolCallOf, usageFromGemini, type GeminiResponse } from './response.js';

export function createGeminiStreamConverter(_ctx: ProviderContext, meta: ResponseMeta, maxEventSize?: number): StreamConverter {
  const writer = new ChunkWriter(meta);
  let sawModel = false;
  let toolCount = 0;

  function handle(event: SseEvent): string {
    if (event.data.trim() === '[DONE]') return '';
    let data: GeminiResponse;
    try {
      data = JSON.parse(event.data) as GeminiResponse;
    } catch {
      return writer.malformed('Gemini sent a stream event that is not JSON');
    }
    if (!data || typeof data !== 'object') return writer.malformed('Gemini sent an unexpected stream event');
    if (data.error) return writer.fail(data.error.message ?? 'Gemini stream error', data.error.status ?? String(data.error.code ?? 'upstream_error'));

    // The first modelVersion names the model for the whole stream.
    if (!sawModel && data.modelVersion) {
      sawModel = true;
      writer.setModel(data.modelVersion);
    }
    let out = writer.start();
    const candidate = data.candidates?.[0];
    let text = '';
    const calls: NonNullable<Delta['tool_calls']> = [];
    for (const part of candidate?.content?.parts ?? []) {
      if (part.functionCall) {
        const index = toolCount++;
        const call = toolCallOf(part.functionCall, meta, index);
        writer.completionText += call.function.name + call.function.arguments;
        calls.push({ index, id: call.id, type: 'function', function: { name: call.function.name, arguments: call.function.arguments } });
      } else if (typeof part.text === 'string' && part.text && !part.thought) text += part.text;
    }
    if (text) out += writer.content(text);
    if (calls.length > 0) out += writer.emit({ tool_calls: calls });
    if (data.usageMetadata) writer.usage = usageFromGemini(data.usageMetadata);

    const reason = candidate ? finishReasonOf(candidate.finishReason, toolCount > 0) : data.promptFeedback?.blockReason ? 'content_filter' : null;
    if (reason && writer.finishReason === null) out += writer.finish(reason);
    return out;
  }

  return textStreamConverter(writer, new SseParser(maxEventSize), handle);
}
