/**
 * Ollama `/api/chat` stream (NDJSON: one JSON object per line) -> OpenAI chunk SSE.
 *
 * Each line carries `message.content` (a text piece) and, for tool calls, complete
 * `message.tool_calls`; the last line has `done: true`, `done_reason` and the counts. A line
 * `{"error": "..."}` is Ollama's in-stream error: it sets `outcome().error` and reaches the client
 * as one OpenAI-style `data: {"error":{...}}` event.
 */
import type { ChatCompletionChunk, FinishReason, Usage } from '../../schema.js';
import { sseData, SSE_DONE } from '../../sse.js';
import type { ProviderContext, ResponseMeta, StreamConverter, StreamOutcome } from '../provider.js';
import { chunkOf, usageChunkOf } from '../shared.js';
import { isRecord, ollamaFinishOf, ollamaToolCalls, ollamaUsageOf } from './response.js';

type Delta = ChatCompletionChunk['choices'][number]['delta'];

/** An in-stream upstream error as the client sees it (OpenAI error shape). */
export function streamErrorEvent(message: string, code: string): string {
  return sseData({ error: { message, type: 'upstream_error', code, param: null } });
}

export class OllamaStreamConverter implements StreamConverter {
  private readonly decoder = new TextDecoder('utf-8');
  private buffer = '';
  private meta: ResponseMeta;
  private sawModel = false;
  private ended = false;
  private started = false;
  private done = false;
  private toolCount = 0;
  private finishReason: FinishReason | null = null;
  private usage: Usage | null = null;
  private completionText = '';
  private error: StreamOutcome['error'] = null;

  constructor(meta: ResponseMeta) {
    this.meta = meta;
  }

  push(bytes: Buffer): string {
    if (this.ended) return '';
    this.buffer += this.decoder.decode(bytes, { stream: true });
    return this.drain(false);
  }

  end(): string {
    if (this.ended) return '';
    this.ended = true;
    this.buffer += this.decoder.decode();
    let out = this.drain(true);
    if (!this.error && this.meta.includeUsage && this.usage) out += sseData(usageChunkOf(this.meta, this.usage));
    return out + SSE_DONE;
  }

  outcome(): StreamOutcome {
    return { usage: this.usage, finishReason: this.finishReason, completionText: this.completionText, error: this.error };
  }

  private drain(final: boolean): string {
    let out = '';
    for (;;) {
      const nl = this.buffer.indexOf('\n');
      if (nl === -1) break;
      const line = this.buffer.slice(0, nl);
      this.buffer = this.buffer.slice(nl + 1);
      out += this.line(line);
    }
    if (final && this.buffer !== '') {
      out += this.line(this.buffer);
      this.buffer = '';
    }
    return out;
  }

  private fail(message: string, code: string): string {
    this.error = { message, code };
    return streamErrorEvent(message, code);
  }

  private emit(delta: Delta, finishReason: FinishReason | null = null): string {
    const withRole: Delta = this.started ? delta : { role: 'assistant', ...delta };
    this.started = true;
    return sseData(chunkOf(this.meta, withRole, finishReason));
  }

  private line(raw: string): string {
    const line = raw.trim();
    if (line === '' || this.error || this.done) return '';
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch {
      return this.fail('ollama stream carried a line that is not JSON', 'bad_upstream_response');
    }
    if (!isRecord(json)) return '';
    if (json.error !== undefined) {
      const raw = isRecord(json.error) ? json.error.message : json.error;
      return this.fail(typeof raw === 'string' && raw ? raw : 'ollama stream error', 'stream_error');
    }
    if (!this.sawModel && typeof json.model === 'string' && json.model) {
      this.meta = { ...this.meta, model: json.model };
      this.sawModel = true;
    }
    let out = '';
    const message = isRecord(json.message) ? json.message : {};
    const text = typeof message.content === 'string' ? message.content : '';
    if (text !== '' || (!this.started && json.done !== true)) {
      this.completionText += text;
      out += this.emit({ content: text });
    }
    const calls = ollamaToolCalls(message.tool_calls, this.meta, this.toolCount);
    if (calls.length > 0) {
      this.toolCount += calls.length;
      for (const call of calls) this.completionText += call.function.arguments;
      out += this.emit({ tool_calls: calls.map((call, i) => ({ index: this.toolCount - calls.length + i, id: call.id, type: 'function' as const, function: { ...call.function } })) });
    }
    if (json.done === true) {
      this.done = true;
      this.usage = ollamaUsageOf(json);
      this.finishReason = ollamaFinishOf(json.done_reason, this.toolCount > 0);
      out += this.emit({}, this.finishReason);
    }
    return out;
  }
}

export function createOllamaStreamConverter(_ctx: ProviderContext, meta: ResponseMeta): StreamConverter {
  return new OllamaStreamConverter(meta);
}
