/**
 * Bedrock ConverseStream (binary event-stream frames) -> OpenAI chat.completion.chunk SSE.
 *
 * Events: messageStart (role chunk), contentBlockStart (a toolUse block opens a tool call),
 * contentBlockDelta (text, or a piece of the tool input JSON), contentBlockStop, messageStop
 * (finish reason), metadata (usage). `:message-type` exception/error frames and framing/CRC
 * failures end the conversion: `outcome().error` is set and the client gets one OpenAI-style
 * `data: {"error":{...}}` event (then `[DONE]`, without a usage chunk).
 */
import type { ChatCompletionChunk, FinishReason, Usage } from '../../schema.js';
import { sseData, SSE_DONE } from '../../sse.js';
import type { ProviderContext, ResponseMeta, StreamConverter, StreamOutcome } from '../provider.js';
import { chunkOf, usageChunkOf } from '../shared.js';
import { EventStreamDecoder, headerString, type EventStreamMessage } from './eventstream.js';
import { bedrockUsageOf, finishReasonOf } from './response.js';

type Delta = ChatCompletionChunk['choices'][number]['delta'];

/** An in-stream upstream error as the client sees it (OpenAI error shape). */
export function streamErrorEvent(message: string, code: string): string {
  return sseData({ error: { message, type: 'upstream_error', code, param: null } });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

export class BedrockStreamConverter implements StreamConverter {
  private readonly decoder = new EventStreamDecoder();
  private started = false;
  private finishReason: FinishReason | null = null;
  private usage: Usage | null = null;
  private completionText = '';
  private error: StreamOutcome['error'] = null;
  /** Bedrock contentBlockIndex -> OpenAI tool_calls index. */
  private readonly toolIndex = new Map<number, number>();
  private ended = false;

  constructor(private readonly meta: ResponseMeta) {}

  push(bytes: Buffer): string {
    if (this.error || this.ended) return '';
    let out = '';
    for (const message of this.decoder.push(bytes)) {
      out += this.handle(message);
      if (this.error) return out;
    }
    if (this.decoder.error) out += this.fail(`bedrock event stream: ${this.decoder.error.message}`, 'invalid_event_stream');
    return out;
  }

  end(): string {
    if (this.ended) return '';
    this.ended = true;
    let out = '';
    if (!this.error && this.decoder.pending > 0 && this.finishReason === null) {
      out += this.fail('bedrock event stream ended in the middle of a frame', 'truncated_event_stream');
    }
    if (!this.error && this.meta.includeUsage && this.usage) out += sseData(usageChunkOf(this.meta, this.usage));
    return out + SSE_DONE;
  }

  outcome(): StreamOutcome {
    return { usage: this.usage, finishReason: this.finishReason, completionText: this.completionText, error: this.error };
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

  private handle(message: EventStreamMessage): string {
    const messageType = headerString(message, ':message-type') ?? 'event';
    if (messageType === 'error') {
      return this.fail(headerString(message, ':error-message') ?? 'bedrock stream error', headerString(message, ':error-code') ?? 'stream_error');
    }
    let payload: unknown = {};
    if (message.payload.length > 0) {
      try {
        payload = JSON.parse(message.payload.toString('utf8'));
      } catch {
        return this.fail('bedrock event stream carried a payload that is not JSON', 'invalid_event_stream');
      }
    }
    const body = isRecord(payload) ? payload : {};
    if (messageType === 'exception') {
      const text = body.message ?? body.Message;
      return this.fail(typeof text === 'string' && text ? text : 'bedrock stream exception', headerString(message, ':exception-type') ?? 'exception');
    }
    if (messageType !== 'event') return '';
    switch (headerString(message, ':event-type')) {
      case 'messageStart':
        return this.started ? '' : this.emit({ content: '' });
      case 'contentBlockStart': {
        const start = isRecord(body.start) ? body.start : {};
        if (!isRecord(start.toolUse)) return '';
        const use = start.toolUse;
        const block = typeof body.contentBlockIndex === 'number' ? body.contentBlockIndex : this.toolIndex.size;
        const index = this.toolIndex.size;
        this.toolIndex.set(block, index);
        const id = typeof use.toolUseId === 'string' && use.toolUseId ? use.toolUseId : `call_${index}`;
        const name = typeof use.name === 'string' ? use.name : '';
        return this.emit({ tool_calls: [{ index, id, type: 'function', function: { name, arguments: '' } }] });
      }
      case 'contentBlockDelta': {
        const delta = isRecord(body.delta) ? body.delta : {};
        if (typeof delta.text === 'string') {
          if (delta.text === '') return '';
          this.completionText += delta.text;
          return this.emit({ content: delta.text });
        }
        if (isRecord(delta.toolUse) && typeof delta.toolUse.input === 'string') {
          const block = typeof body.contentBlockIndex === 'number' ? body.contentBlockIndex : -1;
          let index = this.toolIndex.get(block);
          let out = '';
          if (index === undefined) {
            // a tool input without its contentBlockStart: open the call here
            index = this.toolIndex.size;
            this.toolIndex.set(block, index);
            out += this.emit({ tool_calls: [{ index, id: `call_${index}`, type: 'function', function: { name: '', arguments: '' } }] });
          }
          const input = delta.toolUse.input;
          this.completionText += input;
          return out + this.emit({ tool_calls: [{ index, function: { arguments: input } }] });
        }
        return ''; // reasoning content and other block kinds have no chat-completions field
      }
      case 'messageStop':
        this.finishReason = finishReasonOf(body.stopReason);
        return this.emit({}, this.finishReason);
      case 'metadata':
        this.usage = bedrockUsageOf(body.usage) ?? this.usage;
        return '';
      default:
        return '';
    }
  }
}

export function createBedrockStreamConverter(_ctx: ProviderContext, meta: ResponseMeta): StreamConverter {
  return new BedrockStreamConverter(meta);
}
