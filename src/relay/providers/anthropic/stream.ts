/**
 * Anthropic Messages SSE (`event:` + `data:` lines) -> OpenAI chat.completion.chunk events.
 *
 * message_start gives the first chunk (delta.role 'assistant'), the model and the input tokens;
 * content_block_start/_delta give content and tool_calls deltas (the tool-call index counts
 * tool_use blocks only); message_delta gives the finish chunk and the output tokens; ping,
 * content_block_stop, message_stop and thinking deltas produce nothing. An `error` event sets
 * outcome.error and is passed on as one OpenAI-style `data: {"error":{...}}` event; nothing else
 * is emitted after it except the closing `data: [DONE]`.
 */
import { SseParser, type SseEvent } from '../../sse.js';
import type { ProviderContext, ResponseMeta, StreamConverter } from '../provider.js';
import { usageOf } from '../shared.js';
import { ChunkWriter, textStreamConverter } from '../stream-writer.js';
import { finishReasonOf, promptTokensOf, type AnthropicUsage } from './response.js';

interface AnthropicStreamEvent {
  type?: string;
  index?: number;
  message?: { id?: string; model?: string; usage?: AnthropicUsage };
  content_block?: { type?: string; text?: string; id?: string; name?: string };
  delta?: { type?: string; text?: string; partial_json?: string; stop_reason?: string | null };
  usage?: AnthropicUsage;
  error?: { type?: string; message?: string };
}

export function createAnthropicStreamConverter(_ctx: ProviderContext, meta: ResponseMeta, maxEventSize?: number): StreamConverter {
  const writer = new ChunkWriter(meta);
  let toolCount = 0;
  const toolIndexByBlock = new Map<number, number>();
  /** Anthropic reports usage in pieces (input at message_start, output at message_delta). */
  const counts: AnthropicUsage = {};
  const takeUsage = (u: AnthropicUsage | undefined) => {
    if (!u) return;
    for (const key of ['input_tokens', 'output_tokens', 'cache_creation_input_tokens', 'cache_read_input_tokens'] as const) {
      const value = u[key];
      if (typeof value === 'number') counts[key] = value;
    }
    // Usage stays null until the upstream has reported a count.
    if (Object.keys(counts).length > 0) writer.usage = usageOf(promptTokensOf(counts), counts.output_tokens ?? 0);
  };

  function handle(event: SseEvent): string {
    let data: AnthropicStreamEvent;
    try {
      data = JSON.parse(event.data) as AnthropicStreamEvent;
    } catch {
      return writer.malformed('Anthropic sent a stream event that is not JSON');
    }
    switch (event.event ?? data.type) {
      case 'message_start':
        if (data.message?.model) writer.setModel(data.message.model);
        takeUsage(data.message?.usage);
        return writer.start();
      case 'content_block_start': {
        let out = writer.start();
        const block = data.content_block;
        if (block?.type === 'text' && block.text) {
          out += writer.content(block.text);
        } else if (block?.type === 'tool_use' && typeof data.index === 'number') {
          const index = toolCount++;
          toolIndexByBlock.set(data.index, index);
          writer.completionText += block.name ?? '';
          out += writer.emit({ tool_calls: [{ index, id: block.id, type: 'function', function: { name: block.name, arguments: '' } }] });
        }
        return out;
      }
      case 'content_block_delta': {
        const delta = data.delta;
        if (delta?.type === 'text_delta' && delta.text) return writer.start() + writer.content(delta.text);
        if (delta?.type === 'input_json_delta' && delta.partial_json && typeof data.index === 'number') {
          const index = toolIndexByBlock.get(data.index);
          if (index === undefined) return '';
          writer.completionText += delta.partial_json;
          return writer.start() + writer.emit({ tool_calls: [{ index, function: { arguments: delta.partial_json } }] });
        }
        return ''; // thinking, signature, citations: not part of the chat format
      }
      case 'message_delta': {
        takeUsage(data.usage);
        const reason = finishReasonOf(data.delta?.stop_reason);
        if (!reason || writer.finishReason !== null) return '';
        return writer.start() + writer.finish(reason);
      }
      case 'error':
        return writer.fail(data.error?.message ?? 'Anthropic stream error', data.error?.type ?? 'upstream_error');
      default:
        return ''; // ping, content_block_stop, message_stop, unknown future events
    }
  }

  return textStreamConverter(writer, new SseParser(maxEventSize), handle);
}
