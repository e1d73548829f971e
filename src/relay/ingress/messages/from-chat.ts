/**
 * The relay's chat answers -> Anthropic Messages answers (AnswerTranslation), for channels that
 * do not speak Anthropic's API.
 *
 * - finish_reason: stop -> end_turn, length -> max_tokens, tool_calls -> tool_use,
 *   content_filter -> refusal. The chat form does not say which stop sequence ended the text, so
 *   a stop is always reported as end_turn (stop_sequence null).
 * - Ids: the chat answer's id with `msg_` for `chatcmpl-`; tool call ids as the upstream gave them.
 * - Usage: prompt tokens -> input_tokens, completion tokens -> output_tokens; the cache counts
 *   are 0 (the chat form reports none). A stream's message_start carries input_tokens 0 (the
 *   chat stream reports usage in its last chunk); message_delta carries the real counts, input
 *   included, as Anthropic's own message_delta may.
 * - A stream's reasoning (`reasoning_content` / `reasoning` deltas, which some OpenAI-compatible
 *   servers send) becomes a thinking block without a signature.
 */
import { SseParser } from '../../sse.js';
import type { ChatCompletion, ChatCompletionChunk, FinishReason, Usage } from '../../schema.js';
import type { AnswerTranslation, StreamTranslator } from '../../translation.js';
import { anthropicErrorType } from './errors.js';
import type { MessagesResponse, MessagesUsage, ResponseBlock, StopReason } from './schema.js';

export function stopReasonOf(finish: FinishReason | null | undefined): StopReason {
  switch (finish) {
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
      return 'tool_use';
    case 'content_filter':
      return 'refusal';
    default:
      return 'end_turn';
  }
}

/** `msg_` ids, from the chat answer's own id (the same id in the whole answer and the stream). */
export function messageIdOf(chatId: string): string {
  return `msg_${chatId.replace(/^chatcmpl-/, '')}`;
}

export function messagesUsageOf(usage: Usage | null | undefined): MessagesUsage {
  return { input_tokens: usage?.prompt_tokens ?? 0, output_tokens: usage?.completion_tokens ?? 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
}

/** Tool arguments (JSON text) as the object Anthropic's `input` is; text that is no object is kept under `arguments`. */
export function toolInputOf(args: string): Record<string, unknown> {
  if (args.trim() === '') return {};
  try {
    const parsed: unknown = JSON.parse(args);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // not JSON: kept as text below
  }
  return { arguments: args };
}

/** A whole chat completion as a Messages answer (its first choice: Messages has one). */
export function messageOf(completion: ChatCompletion): MessagesResponse {
  const choice = completion.choices[0];
  const content: ResponseBlock[] = [];
  const text = choice?.message.content ?? '';
  const calls = choice?.message.tool_calls ?? [];
  if (text !== '' || calls.length === 0) content.push({ type: 'text', text });
  for (const call of calls) content.push({ type: 'tool_use', id: call.id, name: call.function.name, input: toolInputOf(call.function.arguments) });
  return {
    id: messageIdOf(completion.id),
    type: 'message',
    role: 'assistant',
    model: completion.model,
    content,
    stop_reason: stopReasonOf(choice?.finish_reason),
    stop_sequence: null,
    usage: messagesUsageOf(completion.usage),
  };
}

/** One Anthropic SSE event: its type on the `event:` line and in the data. */
function event(type: string, data: Record<string, unknown>): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
}

type OpenBlock = { kind: 'text' } | { kind: 'thinking' } | { kind: 'tool_use'; call: number };

/** A chat delta with the reasoning fields some OpenAI-compatible servers add. */
type Delta = ChatCompletionChunk['choices'][number]['delta'] & { reasoning_content?: unknown; reasoning?: unknown };

/**
 * The state of one translated stream: whether message_start went out, the open content block
 * and its index, the tool calls seen (chat index -> block), the stop reason and the usage.
 */
export class MessagesStreamTranslator implements StreamTranslator {
  private started = false;
  private finished = false;
  private open: OpenBlock | null = null;
  private blockIndex = -1;
  /** Chat tool-call index -> its content block index (calls whose block is closed stay, to drop late pieces). */
  private readonly callBlocks = new Map<number, number>();
  private stopReason: StopReason = 'end_turn';
  private usage: Usage | null = null;
  private readonly parser = new SseParser();

  constructor(private model: string) {}

  push(sse: string): string {
    let out = '';
    for (const event of this.parser.push(sse)) {
      if (this.finished) break;
      out += this.event(event.data);
    }
    return out;
  }

  private event(data: string): string {
    if (data === '[DONE]') return this.done();
    let parsed: (ChatCompletionChunk & { error?: undefined }) | { error: { message?: unknown; code?: unknown; type?: unknown } };
    try {
      parsed = JSON.parse(data) as typeof parsed;
    } catch {
      return '';
    }
    if (parsed.error !== undefined) return this.fail(parsed.error);
    return this.chunk(parsed);
  }

  private start(id: string): string {
    if (this.started) return '';
    this.started = true;
    const message = { id: messageIdOf(id), type: 'message', role: 'assistant', model: this.model, content: [], stop_reason: null, stop_sequence: null, usage: messagesUsageOf(null) };
    // A ping right after message_start, as Anthropic sends one.
    return event('message_start', { message }) + event('ping', {});
  }

  private close(): string {
    if (this.open === null) return '';
    this.open = null;
    return event('content_block_stop', { index: this.blockIndex });
  }

  private openBlock(block: OpenBlock, content: Record<string, unknown>): string {
    const out = this.close();
    this.open = block;
    this.blockIndex++;
    return out + event('content_block_start', { index: this.blockIndex, content_block: content });
  }

  private chunk(chunk: ChatCompletionChunk): string {
    // message_start names the model the upstream reports in its first chunk.
    if (!this.started && chunk.model) this.model = chunk.model;
    let out = this.start(chunk.id);
    if (chunk.usage) this.usage = chunk.usage;
    const choice = chunk.choices[0];
    if (choice === undefined) return out;
    const delta = choice.delta as Delta;
    const reasoning = typeof delta.reasoning_content === 'string' ? delta.reasoning_content : typeof delta.reasoning === 'string' ? delta.reasoning : '';
    if (reasoning !== '') {
      if (this.open?.kind !== 'thinking') out += this.openBlock({ kind: 'thinking' }, { type: 'thinking', thinking: '', signature: '' });
      out += event('content_block_delta', { index: this.blockIndex, delta: { type: 'thinking_delta', thinking: reasoning } });
    }
    if (typeof delta.content === 'string' && delta.content !== '') {
      if (this.open?.kind !== 'text') out += this.openBlock({ kind: 'text' }, { type: 'text', text: '' });
      out += event('content_block_delta', { index: this.blockIndex, delta: { type: 'text_delta', text: delta.content } });
    }
    for (const call of delta.tool_calls ?? []) out += this.toolCall(call);
    if (choice.finish_reason) {
      this.stopReason = stopReasonOf(choice.finish_reason);
      out += this.close();
    }
    return out;
  }

  private toolCall(call: NonNullable<Delta['tool_calls']>[number]): string {
    let out = '';
    let block = this.callBlocks.get(call.index);
    if (block === undefined) {
      out += this.openBlock({ kind: 'tool_use', call: call.index }, { type: 'tool_use', id: call.id ?? `toolu_${this.blockIndex + 1}`, name: call.function?.name ?? '', input: {} });
      block = this.blockIndex;
      this.callBlocks.set(call.index, block);
    }
    const args = call.function?.arguments;
    // Anthropic's blocks do not interleave: a piece of a call whose block is closed cannot be sent.
    if (args && this.open?.kind === 'tool_use' && this.open.call === call.index) {
      out += event('content_block_delta', { index: block, delta: { type: 'input_json_delta', partial_json: args } });
    }
    return out;
  }

  private done(): string {
    this.finished = true;
    const start = this.started ? '' : this.start('chatcmpl-0');
    const usage = messagesUsageOf(this.usage);
    const delta = event('message_delta', { delta: { stop_reason: this.stopReason, stop_sequence: null }, usage });
    return start + this.close() + delta + event('message_stop', {});
  }

  private fail(error: { message?: unknown; code?: unknown; type?: unknown }): string {
    this.finished = true;
    const message = typeof error.message === 'string' ? error.message : 'the upstream stream failed';
    const code = typeof error.code === 'string' ? error.code : '';
    return event('error', { error: { type: anthropicErrorType(502, code), message } });
  }
}

/** The translation of one request's answer; `model` is the client's (streams name it until the upstream's chunk does). */
export function messagesTranslation(model: string): AnswerTranslation {
  return {
    completion: (completion) => JSON.stringify(messageOf(completion)),
    stream: () => new MessagesStreamTranslator(model),
  };
}
