/**
 * The relay's chat answers in the Responses API's form, for channels that do not speak it: a
 * whole chat completion becomes a response object, and a stream of chat chunks becomes the
 * Responses event stream (`event: <type>` + `data: {..., sequence_number}`), as OpenAI sends it.
 * Pure but for the ids of output items, made here (`msg_...`, `fc_...`).
 */
import { randomBytes } from 'node:crypto';
import { SseParser } from '../../sse.js';
import type { ChatCompletion, ChatCompletionChunk, FinishReason, Usage } from '../../schema.js';
import type { OutputFunctionCall, OutputItem, OutputMessage, ResponseObject, ResponsesRequest, ResponseStatus, ResponseUsage } from './schema.js';

export const responseId = (): string => `resp_${randomBytes(24).toString('hex')}`;
const itemId = (prefix: 'msg' | 'fc'): string => `${prefix}_${randomBytes(24).toString('hex')}`;

/** What a response says about its own request (echoed in every response object). */
export interface ResponseEcho {
  id: string;
  /** Unix seconds. */
  createdAt: number;
  request: ResponsesRequest;
  /** True when the response is kept (`store`, default true). */
  store: boolean;
}

/** The response object before any output: what `response.created` carries, and the base of the rest. */
export function responseShell(echo: ResponseEcho, model: string, status: ResponseStatus): ResponseObject {
  const { request } = echo;
  return {
    id: echo.id,
    object: 'response',
    created_at: echo.createdAt,
    status,
    error: null,
    incomplete_details: null,
    instructions: request.instructions ?? null,
    max_output_tokens: request.max_output_tokens ?? null,
    model,
    output: [],
    parallel_tool_calls: request.parallel_tool_calls ?? true,
    previous_response_id: request.previous_response_id ?? null,
    store: echo.store,
    temperature: request.temperature ?? 1,
    text: { format: request.text?.format ?? { type: 'text' } },
    tool_choice: request.tool_choice ?? 'auto',
    tools: (request.tools ?? []).map((tool) => ({ type: 'function', name: tool.name, description: tool.description ?? null, parameters: tool.parameters ?? null, strict: tool.strict ?? null })),
    top_p: request.top_p ?? 1,
    usage: null,
    user: request.user ?? null,
    metadata: request.metadata ?? {},
  };
}

export function responseUsageOf(usage: Usage): ResponseUsage {
  return {
    input_tokens: usage.prompt_tokens,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: usage.completion_tokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: usage.total_tokens,
  };
}

/** A response that stopped early says why; anything else completed. */
function endingOf(finish: FinishReason | null): { status: ResponseStatus; incomplete_details: { reason: string } | null } {
  if (finish === 'length') return { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } };
  if (finish === 'content_filter') return { status: 'incomplete', incomplete_details: { reason: 'content_filter' } };
  return { status: 'completed', incomplete_details: null };
}

function messageItem(text: string, status: OutputMessage['status']): OutputMessage {
  return { id: itemId('msg'), type: 'message', role: 'assistant', status, content: [{ type: 'output_text', text, annotations: [] }] };
}

/** A whole chat completion as the response object (its first choice: Responses have one). */
export function responseOfCompletion(echo: ResponseEcho, completion: ChatCompletion): ResponseObject {
  const choice = completion.choices[0];
  const ending = endingOf(choice?.finish_reason ?? null);
  const itemStatus = ending.status === 'completed' ? 'completed' : 'incomplete';
  const output: OutputItem[] = [];
  const text = choice?.message.content ?? '';
  const calls = choice?.message.tool_calls ?? [];
  if (text !== '' || calls.length === 0) output.push(messageItem(text, itemStatus));
  for (const call of calls) {
    output.push({ id: itemId('fc'), type: 'function_call', call_id: call.id, name: call.function.name, arguments: call.function.arguments, status: itemStatus });
  }
  return { ...responseShell(echo, completion.model, ending.status), ...ending, output, usage: responseUsageOf(completion.usage) };
}

/** One Responses stream event as SSE text. */
function sseEvent(type: string, sequence: number, fields: Record<string, unknown>): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence, ...fields })}\n\n`;
}

interface OpenCall {
  outputIndex: number;
  item: OutputFunctionCall;
}

/**
 * The relay's chat SSE (whole events: chunks, an in-band `{"error":...}`, `[DONE]`) in, the
 * Responses event stream out. Output items open as their first delta arrives and close when the
 * next kind of output starts or the stream ends; `[DONE]` ends the response with
 * `response.completed` (or `response.incomplete`), carrying the usage of the last chunk.
 */
export class ResponsesStreamWriter {
  private readonly parser = new SseParser();
  private sequence = 0;
  private started = false;
  private ended = false;
  private model: string;
  private readonly output: OutputItem[] = [];
  /** The message being written (its output index), if any. */
  private message: { outputIndex: number; item: OutputMessage } | null = null;
  /** Function calls by the chat stream's tool-call index. */
  private readonly calls = new Map<number, OpenCall>();
  private finish: FinishReason | null = null;
  private usage: Usage | null = null;

  constructor(private readonly echo: ResponseEcho) {
    this.model = echo.request.model;
  }

  push(sse: string): string {
    let out = '';
    for (const event of this.parser.push(sse)) out += this.event(event.data);
    return out;
  }

  /** The response as the stream has built it so far. */
  snapshot(status: ResponseStatus): ResponseObject {
    return { ...responseShell(this.echo, this.model, status), output: this.output.map((item) => ({ ...item })) };
  }

  private emit(type: string, fields: Record<string, unknown>): string {
    return sseEvent(type, this.sequence++, fields);
  }

  private start(): string {
    if (this.started) return '';
    this.started = true;
    const response = this.snapshot('in_progress');
    return this.emit('response.created', { response }) + this.emit('response.in_progress', { response });
  }

  private event(data: string): string {
    if (this.ended) return '';
    if (data === '[DONE]') return this.start() + this.complete();
    let parsed: unknown;
    try {
      parsed = JSON.parse(data);
    } catch {
      return '';
    }
    if (typeof parsed !== 'object' || parsed === null) return '';
    const error = (parsed as { error?: { message?: unknown; code?: unknown } }).error;
    if (error !== undefined && error !== null) return this.start() + this.fail(String(error.message ?? 'upstream error'), String(error.code ?? 'upstream_error'));
    const chunk = parsed as ChatCompletionChunk;
    let out = this.start();
    if (typeof chunk.model === 'string' && chunk.model) this.model = chunk.model;
    if (chunk.usage) this.usage = chunk.usage;
    const choice = chunk.choices?.[0];
    if (!choice) return out;
    const delta = choice.delta;
    if (typeof delta?.content === 'string' && delta.content !== '') out += this.text(delta.content);
    for (const call of delta?.tool_calls ?? []) out += this.toolCall(call.index, call.id, call.function?.name, call.function?.arguments);
    if (choice.finish_reason) this.finish = choice.finish_reason;
    return out;
  }

  private openMessage(): string {
    const out = this.closeCalls();
    const item: OutputMessage = { id: itemId('msg'), type: 'message', role: 'assistant', status: 'in_progress', content: [] };
    const outputIndex = this.output.push(item) - 1;
    this.message = { outputIndex, item };
    const part = { type: 'output_text' as const, text: '', annotations: [] };
    item.content.push(part);
    return (
      out +
      this.emit('response.output_item.added', { output_index: outputIndex, item: { ...item, content: [] } }) +
      this.emit('response.content_part.added', { item_id: item.id, output_index: outputIndex, content_index: 0, part: { ...part } })
    );
  }

  private text(delta: string): string {
    const out = this.message === null ? this.openMessage() : '';
    const { item, outputIndex } = this.message!;
    item.content[0]!.text += delta;
    return out + this.emit('response.output_text.delta', { item_id: item.id, output_index: outputIndex, content_index: 0, delta, logprobs: [] });
  }

  private toolCall(index: number, id: string | undefined, name: string | undefined, args: string | undefined): string {
    let out = '';
    let open = this.calls.get(index);
    if (open === undefined) {
      out += this.closeMessage('completed');
      const item: OutputFunctionCall = { id: itemId('fc'), type: 'function_call', call_id: id ?? `call_${index}`, name: name ?? '', arguments: '', status: 'in_progress' };
      open = { outputIndex: this.output.push(item) - 1, item };
      this.calls.set(index, open);
      out += this.emit('response.output_item.added', { output_index: open.outputIndex, item: { ...item } });
    } else if (name) open.item.name += name;
    if (args) {
      open.item.arguments += args;
      out += this.emit('response.function_call_arguments.delta', { item_id: open.item.id, output_index: open.outputIndex, delta: args });
    }
    return out;
  }

  private closeMessage(status: OutputMessage['status']): string {
    const open = this.message;
    if (open === null) return '';
    this.message = null;
    const { item, outputIndex } = open;
    const part = item.content[0]!;
    item.status = status;
    return (
      this.emit('response.output_text.done', { item_id: item.id, output_index: outputIndex, content_index: 0, text: part.text, logprobs: [] }) +
      this.emit('response.content_part.done', { item_id: item.id, output_index: outputIndex, content_index: 0, part: { ...part } }) +
      this.emit('response.output_item.done', { output_index: outputIndex, item: { ...item, content: [{ ...part }] } })
    );
  }

  private closeCalls(status: OutputFunctionCall['status'] = 'completed'): string {
    let out = '';
    for (const { item, outputIndex } of this.calls.values()) {
      if (item.status !== 'in_progress') continue;
      item.status = status;
      out += this.emit('response.function_call_arguments.done', { item_id: item.id, output_index: outputIndex, name: item.name, arguments: item.arguments });
      out += this.emit('response.output_item.done', { output_index: outputIndex, item: { ...item } });
    }
    return out;
  }

  private complete(): string {
    this.ended = true;
    const ending = endingOf(this.finish);
    const itemStatus = ending.status === 'completed' ? 'completed' : 'incomplete';
    let out = this.closeMessage(itemStatus) + this.closeCalls(itemStatus);
    // A response with no output at all still has its (empty) message, as in the whole-answer form.
    if (this.output.length === 0) {
      out += this.openMessage() + this.closeMessage(itemStatus);
    }
    const response = { ...this.snapshot(ending.status), ...ending, usage: this.usage ? responseUsageOf(this.usage) : null };
    return out + this.emit(ending.status === 'completed' ? 'response.completed' : 'response.incomplete', { response });
  }

  private fail(message: string, code: string): string {
    this.ended = true;
    const out = this.closeMessage('incomplete') + this.closeCalls('incomplete');
    const response = { ...this.snapshot('failed'), error: { code: 'server_error', message }, usage: this.usage ? responseUsageOf(this.usage) : null };
    return out + this.emit('error', { code, message, param: null }) + this.emit('response.failed', { response });
  }
}
