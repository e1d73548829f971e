/**
 * Bedrock ConverseStream (binary event-stream frames) -> OpenAI chat.completion.chunk SSE.
 *
 * Events: messageStart (role chunk), contentBlockStart (a toolUse block opens a tool call),
 * contentBlockDelta (text, or a piece of the tool input JSON), contentBlockStop, messageStop
 * (finish reason), metadata (usage). `:message-type` exception/error frames and framing/CRC
 * failures end the conversion: `outcome().error` is set and the client gets one OpenAI-style
 * `data: {"error":{...}}` event (then `[DONE]`, without a usage chunk).
 */
import type { ProviderContext, ResponseMeta, StreamConverter, StreamOutcome } from '../provider.js';
import { isRecord } from '../shared.js';
import { upstreamTooLarge } from '../../sse.js';
import { ChunkWriter, noStreamEvents } from '../stream-writer.js';
import { EventStreamDecoder, EventStreamTooLargeError, headerString, MAX_MESSAGE_LENGTH, type EventStreamMessage } from './eventstream.js';
import { bedrockUsageOf, finishReasonOf } from './response.js';

/** Binary frames rather than text, so this converter drives the shared ChunkWriter itself. */
export class BedrockStreamConverter implements StreamConverter {
  private readonly decoder: EventStreamDecoder;
  private readonly writer: ChunkWriter;
  /** Bedrock contentBlockIndex -> OpenAI tool_calls index. */
  private readonly toolIndex = new Map<number, number>();
  private ended = false;

  constructor(meta: ResponseMeta, maxEventSize?: number) {
    this.writer = new ChunkWriter(meta);
    this.decoder = new EventStreamDecoder(maxEventSize === undefined ? undefined : Math.min(maxEventSize, MAX_MESSAGE_LENGTH));
  }

  push(bytes: Buffer): string {
    const writer = this.writer;
    if (writer.failed || this.ended) return '';
    let out = '';
    for (const message of this.decoder.push(bytes)) {
      out += this.handle(message);
      if (writer.failed) return out;
    }
    if (this.decoder.error instanceof EventStreamTooLargeError) throw upstreamTooLarge();
    if (this.decoder.error) out += writer.fail(`bedrock event stream: ${this.decoder.error.message}`, 'invalid_event_stream');
    return out;
  }

  end(): string {
    if (this.ended) return '';
    this.ended = true;
    const writer = this.writer;
    let out = '';
    if (!writer.failed && this.decoder.pending > 0 && writer.finishReason === null) {
      out += writer.fail('bedrock event stream ended in the middle of a frame', 'truncated_event_stream');
    }
    if (!writer.started && !writer.failed) throw noStreamEvents();
    return out + writer.close();
  }

  outcome(): StreamOutcome {
    return this.writer.outcome();
  }

  private handle(message: EventStreamMessage): string {
    const writer = this.writer;
    const messageType = headerString(message, ':message-type') ?? 'event';
    if (messageType === 'error') {
      return writer.fail(headerString(message, ':error-message') ?? 'bedrock stream error', headerString(message, ':error-code') ?? 'stream_error');
    }
    let payload: unknown = {};
    if (message.payload.length > 0) {
      try {
        payload = JSON.parse(message.payload.toString('utf8'));
      } catch {
        return writer.fail('bedrock event stream carried a payload that is not JSON', 'invalid_event_stream');
      }
    }
    const body = isRecord(payload) ? payload : {};
    if (messageType === 'exception') {
      const text = body.message ?? body.Message;
      return writer.fail(typeof text === 'string' && text ? text : 'bedrock stream exception', headerString(message, ':exception-type') ?? 'exception');
    }
    if (messageType !== 'event') return '';
    switch (headerString(message, ':event-type')) {
      case 'messageStart':
        return writer.start();
      case 'contentBlockStart': {
        const start = isRecord(body.start) ? body.start : {};
        if (!isRecord(start.toolUse)) return '';
        const use = start.toolUse;
        const block = typeof body.contentBlockIndex === 'number' ? body.contentBlockIndex : this.toolIndex.size;
        const index = this.toolIndex.size;
        this.toolIndex.set(block, index);
        const id = typeof use.toolUseId === 'string' && use.toolUseId ? use.toolUseId : `call_${index}`;
        const name = typeof use.name === 'string' ? use.name : '';
        return writer.emit({ tool_calls: [{ index, id, type: 'function', function: { name, arguments: '' } }] });
      }
      case 'contentBlockDelta': {
        const delta = isRecord(body.delta) ? body.delta : {};
        if (typeof delta.text === 'string') return delta.text === '' ? '' : writer.content(delta.text);
        if (isRecord(delta.toolUse) && typeof delta.toolUse.input === 'string') {
          const block = typeof body.contentBlockIndex === 'number' ? body.contentBlockIndex : -1;
          let index = this.toolIndex.get(block);
          let out = '';
          if (index === undefined) {
            // a tool input without its contentBlockStart: open the call here
            index = this.toolIndex.size;
            this.toolIndex.set(block, index);
            out += writer.emit({ tool_calls: [{ index, id: `call_${index}`, type: 'function', function: { name: '', arguments: '' } }] });
          }
          const input = delta.toolUse.input;
          writer.completionText += input;
          return out + writer.emit({ tool_calls: [{ index, function: { arguments: input } }] });
        }
        return ''; // reasoning content and other block kinds have no chat-completions field
      }
      case 'messageStop':
        return writer.finish(finishReasonOf(body.stopReason));
      case 'metadata':
        writer.usage = bedrockUsageOf(body.usage) ?? writer.usage;
        return '';
      default:
        return '';
    }
  }
}

export function createBedrockStreamConverter(_ctx: ProviderContext, meta: ResponseMeta, maxEventSize?: number): StreamConverter {
  return new BedrockStreamConverter(meta, maxEventSize);
}
