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
import type { ChatCompletionChunk, FinishReason } from '../../schema.js';
import { SSE_DONE, SseParser, sseData, type SseEvent } from '../../sse.js';
import type { ProviderContext, ResponseMeta, StreamConverter, StreamOutcome } from '../provider.js';
import { chunkOf, usageChunkOf, usageOf } from '../shared.js';
import { finishReasonOf, promptTokensOf, type AnthropicUsage } from './response.js';

type Delta = ChatCompletionChunk['choices'][number]['delta'];

interface AnthropicStreamEvent {
  type?: string;
  index?: number;
  message?: { id?: string; model?: string; usage?: AnthropicUsage };
  content_block?: { type?: string; text?: string; id?: string; name?: string };
  delta?: { type?: string; text?: string; partial_json?: string; stop_reason?: string | null };
  usage?: AnthropicUsage;
  error?: { type?: string; message?: string };
}

/** An in-stream upstream error as the client sees it (OpenAI error shape). */
export function streamErrorEvent(message: string, code: string): string {
  return sseData({ error: { message, type: 'upstream_error', code, param: null } });
}

export function createAnthropicStreamConverter(_ctx: ProviderContext, meta: ResponseMeta): StreamConverter {
  const decoder = new TextDecoder('utf-8');
  const parser = new SseParser();
  let model = meta.model;
  let started = false;
  let finishSent = false;
  let failed = false;
  let ended = false;
  let toolCount = 0;
  const toolIndexByBlock = new Map<number, number>();
  const usage: AnthropicUsage = {};
  let sawUsage = false;
  let finishReason: FinishReason | null = null;
  let completionText = '';
  let error: StreamOutcome['error'] = null;

  const emit = (delta: Delta, finish: FinishReason | null = null) => sseData(chunkOf({ ...meta, model }, delta, finish));
  const start = () => {
    if (started) return '';
    started = true;
    return emit({ role: 'assistant', content: '' });
  };
  const takeUsage = (u: AnthropicUsage | undefined) => {
    if (!u) return;
    for (const key of ['input_tokens', 'output_tokens', 'cache_creation_input_tokens', 'cache_read_input_tokens'] as const) {
      const value = u[key];
      if (typeof value === 'number') {
        usage[key] = value;
        sawUsage = true;
      }
    }
  };
  const fail = (message: string, code: string) => {
    failed = true;
    error = { message, code };
    return streamErrorEvent(message, code);
  };

  function handle(event: SseEvent): string {
    if (failed) return '';
    let data: AnthropicStreamEvent;
    try {
      data = JSON.parse(event.data) as AnthropicStreamEvent;
    } catch {
      return fail('Anthropic sent a stream event that is not JSON', 'bad_upstream_response');
    }
    switch (event.event ?? data.type) {
      case 'message_start':
        if (data.message?.model) model = data.message.model;
        takeUsage(data.message?.usage);
        return start();
      case 'content_block_start': {
        let out = start();
        const block = data.content_block;
        if (block?.type === 'text' && block.text) {
          completionText += block.text;
          out += emit({ content: block.text });
        } else if (block?.type === 'tool_use' && typeof data.index === 'number') {
          const index = toolCount++;
          toolIndexByBlock.set(data.index, index);
          completionText += block.name ?? '';
          out += emit({ tool_calls: [{ index, id: block.id, type: 'function', function: { name: block.name, arguments: '' } }] });
        }
        return out;
      }
      case 'content_block_delta': {
        const delta = data.delta;
        if (delta?.type === 'text_delta' && delta.text) {
          completionText += delta.text;
          return start() + emit({ content: delta.text });
        }
        if (delta?.type === 'input_json_delta' && delta.partial_json && typeof data.index === 'number') {
          const index = toolIndexByBlock.get(data.index);
          if (index === undefined) return '';
          completionText += delta.partial_json;
          return start() + emit({ tool_calls: [{ index, function: { arguments: delta.partial_json } }] });
        }
        return ''; // thinking, signature, citations: not part of the chat format
      }
      case 'message_delta': {
        takeUsage(data.usage);
        const reason = finishReasonOf(data.delta?.stop_reason);
        if (!reason || finishSent) return '';
        finishReason = reason;
        finishSent = true;
        return start() + emit({}, reason);
      }
      case 'error':
        return fail(data.error?.message ?? 'Anthropic stream error', data.error?.type ?? 'upstream_error');
      default:
        return ''; // ping, content_block_stop, message_stop, unknown future events
    }
  }

  const run = (events: SseEvent[]) => events.map(handle).join('');
  const currentUsage = () => (sawUsage ? usageOf(promptTokensOf(usage), usage.output_tokens ?? 0) : null);

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
      const final = currentUsage();
      if (!failed && meta.includeUsage && final) out += sseData(usageChunkOf({ ...meta, model }, final));
      return out + SSE_DONE;
    },
    outcome(): StreamOutcome {
      return { usage: currentUsage(), finishReason, completionText, error };
    },
  };
}
