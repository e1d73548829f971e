/**
 * Ollama `/api/chat` stream (NDJSON: one JSON object per line) -> OpenAI chunk SSE.
 *
 * Each line carries `message.content` (a text piece) and, for tool calls, complete
 * `message.tool_calls`; the last line has `done: true`, `done_reason` and the counts. A line
 * `{"error": "..."}` is Ollama's in-stream error: it sets `outcome().error` and reaches the client
 * as one OpenAI-style `data: {"error":{...}}` event.
 */
import { LineSplitter } from '../../sse.js';
import type { ProviderContext, ResponseMeta, StreamConverter } from '../provider.js';
import { isRecord } from '../shared.js';
import { ChunkWriter, textStreamConverter, type TextFraming } from '../stream-writer.js';
import { ollamaFinishOf, ollamaToolCalls, ollamaUsageOf } from './response.js';

/** NDJSON framing: complete lines as they arrive; a last line without its newline at the end. */
class NdjsonFraming implements TextFraming<string> {
  private readonly lines: LineSplitter;

  constructor(maxLineSize: number | undefined) {
    this.lines = new LineSplitter(maxLineSize);
  }

  push(text: string): string[] {
    return this.lines.push(text);
  }

  flush(): string[] {
    const rest = this.lines.flush();
    return rest === '' ? [] : [rest];
  }
}

export function createOllamaStreamConverter(_ctx: ProviderContext, meta: ResponseMeta, maxEventSize?: number): StreamConverter {
  const writer = new ChunkWriter(meta);
  let sawModel = false;
  /** The `done: true` line has been converted: anything after it is ignored. */
  let done = false;
  let toolCount = 0;

  function handle(frame: string): string {
    const line = frame.trim();
    if (line === '' || done) return '';
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch {
      return writer.malformed('ollama stream carried a line that is not JSON');
    }
    if (!isRecord(json)) return '';
    if (json.error !== undefined) {
      const raw = isRecord(json.error) ? json.error.message : json.error;
      return writer.fail(typeof raw === 'string' && raw ? raw : 'ollama stream error', 'stream_error');
    }
    // Every line of an Ollama chat stream has its message, but the last (`done`) may not.
    if (!isRecord(json.message) && json.done !== true) return writer.malformed('ollama stream carried a line that is not a chat chunk');
    // The first model named is the model for the whole stream.
    if (!sawModel && typeof json.model === 'string' && json.model) {
      sawModel = true;
      writer.setModel(json.model);
    }
    let out = '';
    const message = isRecord(json.message) ? json.message : {};
    const text = typeof message.content === 'string' ? message.content : '';
    // The first line opens the stream (role chunk) even when its content is empty.
    if (text !== '' || (!writer.started && json.done !== true)) out += writer.content(text);
    const calls = ollamaToolCalls(message.tool_calls, meta, toolCount);
    if (calls.length > 0) {
      toolCount += calls.length;
      for (const call of calls) writer.completionText += call.function.arguments;
      out += writer.emit({ tool_calls: calls.map((call, i) => ({ index: toolCount - calls.length + i, id: call.id, type: 'function' as const, function: { ...call.function } })) });
    }
    if (json.done === true) {
      done = true;
      writer.usage = ollamaUsageOf(json);
      out += writer.finish(ollamaFinishOf(json.done_reason, toolCount > 0));
    }
    return out;
  }

  return textStreamConverter(writer, new NdjsonFraming(maxEventSize), handle);
}
