/**
 * Cohere v2 chat stream (SSE, one JSON event per `data:` with a `type`) -> OpenAI chunk SSE.
 *
 * message-start (role chunk), content-delta
 * (`delta.message.content.text`), tool-plan-delta (shown as content, like the non-stream
 * tool_plan), tool-call-start / tool-call-delta (`delta.message.tool_calls`, an object in v2
 * streams), message-end (`delta.finish_reason`, `delta.usage`, `delta.error`). A failed
 * generation (finish_reason ERROR/TIMEOUT/USER_CANCEL, or an `error` event) sets
 * `outcome().error` and reaches the client as one OpenAI-style `data: {"error":{...}}` event.
 */
import type { ChatCompletionChunk, FinishReason, Usage } from '../../schema.js';
import { SseParser, sseData, SSE_DONE, type SseEvent } from '../../sse.js';
import type { ProviderContext, ResponseMeta, StreamConverter, StreamOutcome } from '../provider.js';
import { chunkOf, usageChunkOf } from '../shared.js';
import { cohereFinishOf, cohereUsageOf } from './response.js';

type Delta = ChatCompletionChunk['choices'][number]['delta'];

/** An in-stream upstream error as the client sees it (OpenAI error shape). */
export function streamErrorEvent(message: string, code: string): string {
  return sseData({ error: { message, type: 'upstream_error', code, param: null } });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** `delta.message.tool_calls` of a stream event: an object (v2 streams) or a one-item array. */
function streamedToolCall(delta: unknown): Record<string, unknown> {
  const message = isRecord(delta) && isRecord(delta.message) ? delta.message : {};
  const calls = message.tool_calls;
  if (Array.isArray(calls)) return isRecord(calls[0]) ? calls[0] : {};
  return isRecord(calls) ? calls : {};
}

export class CohereStreamConverter implements StreamConverter {
  private readonly decoder = new TextDecoder('utf-8');
  private readonly parser = new SseParser();
  private readonly meta: ResponseMeta;
  private ended = false;
  private started = false;
  private finishReason: FinishReason | null = null;
  private usage: Usage | null = null;
  private completionText = '';
  private error: StreamOutcome['error'] = null;
  /** Cohere tool-call `index` -> OpenAI tool_calls index. */
  private readonly toolIndex = new Map<number, number>();
  private lastToolIndex = -1;

  constructor(meta: ResponseMeta) {
    this.meta = meta;
  }

  push(bytes: Buffer): string {
    if (this.ended) return '';
    return this.handleAll(this.parser.push(this.decoder.decode(bytes, { stream: true })));
  }

  end(): string {
    if (this.ended) return '';
    this.ended = true;
    let out = this.handleAll(this.parser.push(this.decoder.decode()));
    out += this.handleAll(this.parser.flush());
    if (!this.error && this.meta.includeUsage && this.usage) out += sseData(usageChunkOf(this.meta, this.usage));
    return out + SSE_DONE;
  }

  outcome(): StreamOutcome {
    return { usage: this.usage, finishReason: this.finishReason, completionText: this.completionText, error: this.error };
  }

  private handleAll(events: SseEvent[]): string {
    let out = '';
    for (const event of events) {
      if (this.error) break;
      out += this.handle(event);
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

  private handle(event: SseEvent): string {
    let json: unknown;
    try {
      json = JSON.parse(event.data);
    } catch {
      return ''; // keep-alives, [DONE] and the like
    }
    if (!isRecord(json)) return '';
    const type = typeof json.type === 'string' ? json.type : (event.event ?? '');
    const delta = isRecord(json.delta) ? json.delta : {};
    const message = isRecord(delta.message) ? delta.message : {};
    switch (type) {
      case 'message-start':
        return this.started ? '' : this.emit({ content: '' });
      case 'content-start':
      case 'content-delta': {
        const content = isRecord(message.content) ? message.content : {};
        const text = typeof content.text === 'string' ? content.text : '';
        if (text === '') return '';
        this.completionText += text;
        return this.emit({ content: text });
      }
      case 'tool-plan-delta': {
        const plan = typeof message.tool_plan === 'string' ? message.tool_plan : '';
        if (plan === '') return '';
        this.completionText += plan;
        return this.emit({ content: plan });
      }
      case 'tool-call-start': {
        const call = streamedToolCall(delta);
        const fn = isRecord(call.function) ? call.function : {};
        const index = this.toolIndex.size;
        if (typeof json.index === 'number') this.toolIndex.set(json.index, index);
        else this.toolIndex.set(-1 - index, index);
        this.lastToolIndex = index;
        const name = typeof fn.name === 'string' ? fn.name : '';
        const args = typeof fn.arguments === 'string' ? fn.arguments : '';
        this.completionText += args;
        const id = typeof call.id === 'string' && call.id ? call.id : `call_${index}`;
        return this.emit({ tool_calls: [{ index, id, type: 'function', function: { name, arguments: args } }] });
      }
      case 'tool-call-delta': {
        const call = streamedToolCall(delta);
        const fn = isRecord(call.function) ? call.function : {};
        const args = typeof fn.arguments === 'string' ? fn.arguments : '';
        if (args === '') return '';
        const index = (typeof json.index === 'number' ? this.toolIndex.get(json.index) : undefined) ?? this.lastToolIndex;
        if (index < 0) return '';
        this.completionText += args;
        return this.emit({ tool_calls: [{ index, function: { arguments: args } }] });
      }
      case 'message-end': {
        this.usage = cohereUsageOf(delta.usage) ?? this.usage;
        const finish = cohereFinishOf(delta.finish_reason);
        if (finish === 'error') {
          const text = typeof delta.error === 'string' && delta.error ? delta.error : `cohere generation failed (${String(delta.finish_reason)})`;
          return this.fail(text, String(delta.finish_reason));
        }
        this.finishReason = finish;
        return this.emit({}, finish);
      }
      case 'error': {
        const raw = json.message ?? (isRecord(json.error) ? json.error.message : json.error);
        return this.fail(typeof raw === 'string' && raw ? raw : 'cohere stream error', 'stream_error');
      }
      default:
        return ''; // content-end, tool-call-end, citation events
    }
  }
}

export function createCohereStreamConverter(_ctx: ProviderContext, meta: ResponseMeta): StreamConverter {
  return new CohereStreamConverter(meta);
}
