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
import type { ChatCompletionChunk, FinishReason, Usage } from '../../schema.js';
import { SSE_DONE, SseParser, sseData, type SseEvent } from '../../sse.js';
import type { ProviderContext, ResponseMeta, StreamConverter, StreamOutcome } from '../provider.js';
import { chunkOf, usageChunkOf } from '../shared.js';
import { finishReasonOf, toolCallOf, usageFromGemini, type GeminiResponse } from './response.js';

type Delta = ChatCompletionChunk['choices'][number]['delta'];

/** An in-stream upstream error as the client sees it (OpenAI error shape). */
export function streamErrorEvent(message: string, code: string): string {
  return sseData({ error: { message, type: 'upstream_error', code, param: null } });
}

export function createGeminiStreamConverter(_ctx: ProviderContext, meta: ResponseMeta): StreamConverter {
  const decoder = new TextDecoder('utf-8');
  const parser = new SseParser();
  let model: string | null = null;
  let started = false;
  let finishSent = false;
  let failed = false;
  let ended = false;
  let toolCount = 0;
  let usage: Usage | null = null;
  let finishReason: FinishReason | null = null;
  let completionText = '';
  let error: StreamOutcome['error'] = null;

  const chunkMeta = () => ({ ...meta, model: model ?? meta.model });
  const emit = (delta: Delta, finish: FinishReason | null = null) => sseData(chunkOf(chunkMeta(), delta, finish));
  const fail = (message: string, code: string) => {
    failed = true;
    error = { message, code };
    return streamErrorEvent(message, code);
  };

  function handle(event: SseEvent): string {
    if (failed) return '';
    if (event.data.trim() === '[DONE]') return '';
    let data: GeminiResponse;
    try {
      data = JSON.parse(event.data) as GeminiResponse;
    } catch {
      return fail('Gemini sent a stream event that is not JSON', 'bad_upstream_response');
    }
    if (!data || typeof data !== 'object') return fail('Gemini sent an unexpected stream event', 'bad_upstream_response');
    if (data.error) return fail(data.error.message ?? 'Gemini stream error', data.error.status ?? String(data.error.code ?? 'upstream_error'));

    if (model === null && data.modelVersion) model = data.modelVersion;
    let out = '';
    if (!started) {
      started = true;
      out += emit({ role: 'assistant', content: '' });
    }
    const candidate = data.candidates?.[0];
    let text = '';
    const calls: NonNullable<Delta['tool_calls']> = [];
    for (const part of candidate?.content?.parts ?? []) {
      if (part.functionCall) {
        const index = toolCount++;
        const call = toolCallOf(part.functionCall, meta, index);
        completionText += call.function.name + call.function.arguments;
        calls.push({ index, id: call.id, type: 'function', function: { name: call.function.name, arguments: call.function.arguments } });
      } else if (typeof part.text === 'string' && part.text && !part.thought) text += part.text;
    }
    if (text) {
      completionText += text;
      out += emit({ content: text });
    }
    if (calls.length > 0) out += emit({ tool_calls: calls });
    if (data.usageMetadata) usage = usageFromGemini(data.usageMetadata);

    const reason = candidate ? finishReasonOf(candidate.finishReason, toolCount > 0) : data.promptFeedback?.blockReason ? 'content_filter' : null;
    if (reason && !finishSent) {
      finishSent = true;
      finishReason = reason;
      out += emit({}, reason);
    }
    return out;
  }

  const run = (events: SseEvent[]) => events.map(handle).join('');

  return {
    push(bytes: Buffer): string {
      if (ended) return '';
      return run(parser.push(decoder.decode(bytes, { stream: true })));
    },
    end(): string {
      if (ended) return '';
      ended = true;
      let out = run(parser.push(decoder.decode()));
      out += run(parser.flush());
      if (!failed && meta.includeUsage && usage) out += sseData(usageChunkOf(chunkMeta(), usage));
      return out + SSE_DONE;
    },
    outcome(): StreamOutcome {
      return { usage, finishReason, completionText, error };
    },
  };
}
