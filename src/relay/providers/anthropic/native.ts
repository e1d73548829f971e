/**
 * Anthropic Messages requests served by an anthropic channel as the client sent them (the
 * Messages ingress, src/relay/ingress/messages/): the body goes to {base}/v1/messages with only
 * its model replaced, the client's anthropic-version / anthropic-beta headers with it, and the
 * answer comes back untouched. What the relay records is read on the way: usage
 * (message_start.message.usage.input_tokens plus the cache counts, message_delta.usage.output_tokens),
 * the stop reason, the generated text, and an `error` event as the outcome's error.
 */
import { SseParser, type SseEvent } from '../../sse.js';
import type { NativeAnswer, NativeCodec, NativeRequest, ProviderContext, StreamConverter, StreamOutcome, UpstreamRequest } from '../provider.js';
import { badUpstream, upstreamObject, usageOf } from '../shared.js';
import { noStreamEvents } from '../stream-writer.js';
import { anthropicHeaders, messagesUrl } from './request.js';
import { finishReasonOf, promptTokensOf, usageFromAnthropic, type AnthropicResponse, type AnthropicUsage } from './response.js';

/** Client headers an anthropic channel gets as they are (versions and betas are the client's choice). */
export const FORWARDED_HEADERS = ['anthropic-version', 'anthropic-beta'] as const;

/** The client's body with the upstream model (in its place: the key order is kept). */
export function nativeBody(request: NativeRequest, ctx: ProviderContext): string {
  return JSON.stringify({ ...request.body, model: ctx.model });
}

/** The channel's credentials and defaults, then the client's version and betas. */
export function nativeHeaders(request: NativeRequest, ctx: ProviderContext, stream: boolean): Record<string, string> {
  const headers = anthropicHeaders(ctx, stream);
  for (const name of FORWARDED_HEADERS) {
    const value = request.headers[name];
    if (typeof value === 'string' && value !== '') headers[name] = value;
  }
  return headers;
}

function buildNativeRequest(request: NativeRequest, ctx: ProviderContext): UpstreamRequest {
  return { url: messagesUrl(ctx), method: 'POST', headers: nativeHeaders(request, ctx, request.body['stream'] === true), body: nativeBody(request, ctx) };
}

function readNativeAnswer(text: string): NativeAnswer {
  const parsed = upstreamObject(text, 'Anthropic') as AnthropicResponse;
  if (parsed.type === 'error') throw badUpstream(`Anthropic error: ${parsed.error?.message ?? 'unknown error'}`);
  if (parsed.type !== 'message') throw badUpstream('Anthropic returned an unexpected body');
  const completionText = (parsed.content ?? []).map((block) => (block.type === 'text' && typeof block.text === 'string' ? block.text : '')).join('');
  return { body: text, usage: parsed.usage ? usageFromAnthropic(parsed.usage) : null, completionText };
}

interface NativeStreamEvent {
  type?: string;
  message?: { usage?: AnthropicUsage };
  delta?: { type?: string; text?: string; partial_json?: string; stop_reason?: string | null };
  usage?: AnthropicUsage;
  error?: { type?: string; message?: string };
}

/** Passes the upstream's text through as it comes, and reads what the relay records out of its events. */
function createNativeStreamConverter(_ctx: ProviderContext, maxEventSize?: number): StreamConverter {
  const decoder = new TextDecoder('utf-8');
  const parser = new SseParser(maxEventSize);
  const counts: AnthropicUsage = {};
  const outcome: StreamOutcome = { usage: null, finishReason: null, completionText: '', error: null };
  let events = 0;
  let ended = false;

  const takeUsage = (usage: AnthropicUsage | undefined) => {
    if (!usage) return;
    for (const name of ['input_tokens', 'output_tokens', 'cache_creation_input_tokens', 'cache_read_input_tokens'] as const) {
      const value = usage[name];
      if (typeof value === 'number') counts[name] = value;
    }
    outcome.usage = usageOf(promptTokensOf(counts), counts.output_tokens ?? 0);
  };

  const read = (found: SseEvent[]) => {
    for (const sse of found) {
      events++;
      let data: NativeStreamEvent;
      try {
        data = JSON.parse(sse.data) as NativeStreamEvent;
      } catch {
        continue; // the client gets it as it is; nothing in it to record
      }
      switch (sse.event ?? data.type) {
        case 'message_start':
          takeUsage(data.message?.usage);
          break;
        case 'content_block_delta':
          if (data.delta?.type === 'text_delta' && typeof data.delta.text === 'string') outcome.completionText += data.delta.text;
          else if (data.delta?.type === 'input_json_delta' && typeof data.delta.partial_json === 'string') outcome.completionText += data.delta.partial_json;
          break;
        case 'message_delta':
          takeUsage(data.usage);
          outcome.finishReason = finishReasonOf(data.delta?.stop_reason) ?? outcome.finishReason;
          break;
        case 'error':
          outcome.error = { message: data.error?.message ?? 'Anthropic stream error', code: data.error?.type ?? 'upstream_error' };
          break;
      }
    }
  };

  return {
    push(bytes: Buffer): string {
      if (ended) return '';
      const text = decoder.decode(bytes, { stream: true });
      read(parser.push(text));
      return text;
    },
    end(): string {
      if (ended) return '';
      ended = true;
      const text = decoder.decode();
      read(parser.push(text));
      read(parser.flush());
      if (events === 0) throw noStreamEvents();
      return text;
    },
    outcome: () => outcome,
  };
}

/** The same request to count its tokens (POST {base}/v1/messages/count_tokens; the body has no max_tokens or stream). */
export function countTokensRequest(request: NativeRequest, ctx: ProviderContext): UpstreamRequest {
  return { url: `${messagesUrl(ctx)}/count_tokens`, method: 'POST', headers: nativeHeaders(request, ctx, false), body: nativeBody(request, ctx) };
}

/** `{input_tokens}` out of a count_tokens answer; null for anything else. */
export function countedTokensOf(text: string): number | null {
  try {
    const parsed = JSON.parse(text) as { input_tokens?: unknown };
    return Number.isSafeInteger(parsed.input_tokens) && (parsed.input_tokens as number) >= 0 ? (parsed.input_tokens as number) : null;
  } catch {
    return null;
  }
}

/** An in-stream error event as Anthropic sends one (a stream cut off after bytes went out). */
export function anthropicErrorEvent(message: string, code: string): string {
  const type = code === 'upstream_timeout' ? 'timeout_error' : 'api_error';
  return `event: error\ndata: ${JSON.stringify({ type: 'error', error: { type, message } })}\n\n`;
}

export const anthropicMessagesCodec: NativeCodec = {
  buildRequest: buildNativeRequest,
  readAnswer: (text) => readNativeAnswer(text),
  createStreamConverter: createNativeStreamConverter,
  errorEvent: anthropicErrorEvent,
  streamMediaType: 'text/event-stream',
};
