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
import { SseParser, type SseEvent } from '../../sse.js';
import type { ProviderContext, ResponseMeta, StreamConverter } from '../provider.js';
import { isRecord } from '../shared.js';
import { ChunkWriter, textStreamConverter } from '../stream-writer.js';
import { cohereFinishOf, cohereUsageOf } from './response.js';

/** `delta.message.tool_calls` of a stream event: an object (v2 streams) or a one-item array. */
function streamedToolCall(delta: unknown): Record<string, unknown> {
  const message = isRecord(delta) && isRecord(delta.message) ? delta.message : {};
  const calls = message.tool_calls;
  if (Array.isArray(calls)) return isRecord(calls[0]) ? calls[0] : {};
  return isRecord(calls) ? calls : {};
}

export function createCohereStreamConverter(_ctx: ProviderContext, meta: ResponseMeta, maxEventSize?: number): StreamConverter {
  const writer = new ChunkWriter(meta);
  /** Cohere tool-call `index` -> OpenAI tool_calls index. */
  const toolIndex = new Map<number, number>();
  let lastToolIndex = -1;

  function handle(event: SseEvent): string {
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
        return writer.start();
      case 'content-start':
      case 'content-delta': {
        const content = isRecord(message.content) ? message.content : {};
        const text = typeof content.text === 'string' ? content.text : '';
        return text === '' ? '' : writer.content(text);
      }
      case 'tool-plan-delta': {
        const plan = typeof message.tool_plan === 'string' ? message.tool_plan : '';
        return plan === '' ? '' : writer.content(plan);
      }
      case 'tool-call-start': {
        const call = streamedToolCall(delta);
        const fn = isRecord(call.function) ? call.function : {};
        const index = toolIndex.size;
        if (typeof json.index === 'number') toolIndex.set(json.index, index);
        else toolIndex.set(-1 - index, index);
        lastToolIndex = index;
        const name = typeof fn.name === 'string' ? fn.name : '';
        const args = typeof fn.arguments === 'string' ? fn.arguments : '';
        writer.completionText += args;
        const id = typeof call.id === 'string' && call.id ? call.id : `call_${index}`;
        return writer.emit({ tool_calls: [{ index, id, type: 'function', function: { name, arguments: args } }] });
      }
      case 'tool-call-delta': {
        const call = streamedToolCall(delta);
        const fn = isRecord(call.function) ? call.function : {};
        const args = typeof fn.arguments === 'string' ? fn.arguments : '';
        if (args === '') return '';
        const index = (typeof json.index === 'number' ? toolIndex.get(json.index) : undefined) ?? lastToolIndex;
        if (index < 0) return '';
        writer.completionText += args;
        return writer.emit({ tool_calls: [{ index, function: { arguments: args } }] });
      }
      case 'message-end': {
        writer.usage = cohereUsageOf(delta.usage) ?? writer.usage;
        const finish = cohereFinishOf(delta.finish_reason);
        if (finish === 'error') {
          const text = typeof delta.error === 'string' && delta.error ? delta.error : `cohere generation failed (${String(delta.finish_reason)})`;
          return writer.fail(text, String(delta.finish_reason));
        }
        return writer.finish(finish);
      }
      case 'error': {
        const raw = json.message ?? (isRecord(json.error) ? json.error.message : json.error);
        return writer.fail(typeof raw === 'string' && raw ? raw : 'cohere stream error', 'stream_error');
      }
      default:
        return ''; // content-end, tool-call-end, citation events
    }
  }

  return textStreamConverter(writer, new SseParser(maxEventSize), handle);
}
