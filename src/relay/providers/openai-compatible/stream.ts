/**
 * Streams of OpenAI-compatible upstreams are already in the client's format: each event is
 * forwarded as the upstream wrote it (no re-serialisation on the hot path). The converter only
 * reads each chunk to learn usage, finish reason and text, and drops the usage-only chunk the
 * relay asked for when the client did not.
 */
import { SSE_DONE, SseParser } from '../../sse.js';
import type { FinishReason, Usage } from '../../schema.js';
import type { ResponseMeta, StreamConverter, StreamOutcome } from '../provider.js';
import { normaliseFinishReason } from './response.js';

interface LooseChunk {
  choices?: Array<{ delta?: { content?: string | null }; finish_reason?: unknown }>;
  usage?: Usage | null;
  error?: { message?: string; code?: unknown; type?: string };
}

export function createCompatStreamConverter(meta: ResponseMeta): StreamConverter {
  const parser = new SseParser();
  const decoder = new TextDecoder('utf-8');
  let usage: Usage | null = null;
  let finishReason: FinishReason | null = null;
  let text = '';
  let error: StreamOutcome['error'] = null;

  const forward = (events: ReturnType<SseParser['push']>): string => {
    let out = '';
    for (const event of events) {
      const data = event.data;
      if (data === '[DONE]') continue; // the relay writes its own, last
      let chunk: LooseChunk;
      try {
        chunk = JSON.parse(data) as LooseChunk;
      } catch {
        continue; // keep-alive noise some servers send
      }
      if (chunk.error) {
        error = { message: chunk.error.message ?? 'upstream error', code: String(chunk.error.code ?? chunk.error.type ?? 'upstream_error') };
        out += `data: ${data}\n\n`;
        continue;
      }
      if (chunk.usage && typeof chunk.usage.prompt_tokens === 'number') usage = chunk.usage;
      const choices = chunk.choices ?? [];
      for (const choice of choices) {
        const piece = choice.delta?.content;
        if (piece) text += piece;
        const reason = normaliseFinishReason(choice.finish_reason);
        if (reason) finishReason = reason;
      }
      if (choices.length === 0 && chunk.usage && !meta.includeUsage) continue; // usage we asked for ourselves
      out += `data: ${data}\n\n`;
    }
    return out;
  };

  return {
    push: (bytes) => forward(parser.push(decoder.decode(bytes, { stream: true }))),
    end: () => forward([...parser.push(decoder.decode()), ...parser.flush()]) + SSE_DONE,
    outcome: () => ({ usage, finishReason, completionText: text, error }),
  };
}
