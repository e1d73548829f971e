/**
 * The OpenAI Responses API spoken natively (NativeCodec 'openai-responses'): OpenAI's
 * `POST {base}/responses`, Azure's `POST {resource}/openai/v1/responses` (the deployment as the
 * model). The client's request goes up as it is, with the upstream model and `store: false`:
 * Switchyard keeps responses itself (src/commands/responses/), and the ingress has already
 * expanded `previous_response_id` into `input`. The answer comes back untouched; the codec only
 * reads it for usage, text and in-band errors.
 */
import { UpstreamFaultError } from '../../../errors.js';
import { SseParser } from '../../sse.js';
import type { Usage } from '../../schema.js';
import type { NativeCodec, NativeRequest, ProviderContext, StreamConverter, StreamOutcome, UpstreamRequest } from '../provider.js';
import { isRecord, joinUrl, upstreamObject } from '../shared.js';

/** Usage as the Responses API reports it, in the relay's terms (null when absent or malformed). */
export function usageOfResponse(response: unknown): Usage | null {
  if (!isRecord(response) || !isRecord(response.usage)) return null;
  const { input_tokens: input, output_tokens: output, total_tokens: total } = response.usage;
  if (typeof input !== 'number' || typeof output !== 'number') return null;
  return { prompt_tokens: input, completion_tokens: output, total_tokens: typeof total === 'number' ? total : input + output };
}

/** The text of a response's message items. */
export function textOfResponse(response: unknown): string {
  if (!isRecord(response) || !Array.isArray(response.output)) return '';
  let text = '';
  for (const item of response.output as unknown[]) {
    if (!isRecord(item) || item.type !== 'message' || !Array.isArray(item.content)) continue;
    for (const part of item.content as unknown[]) if (isRecord(part) && part.type === 'output_text' && typeof part.text === 'string') text += part.text;
  }
  return text;
}

function upstreamBody(request: NativeRequest, model: string): string {
  // fromEntries defines own properties (a `__proto__` key stays a plain field).
  const body = Object.fromEntries(Object.entries(request.body).filter(([key]) => key !== 'previous_response_id' && key !== 'model' && key !== 'store'));
  return JSON.stringify({ model, ...body, store: false });
}

function openAiRequest(request: NativeRequest, ctx: ProviderContext): UpstreamRequest {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (ctx.channel.apiKey) headers.authorization = `Bearer ${ctx.channel.apiKey}`;
  const organization = ctx.channel.config.organization;
  if (typeof organization === 'string' && organization) headers['openai-organization'] = organization;
  if (request.body.stream === true) headers.accept = 'text/event-stream';
  return { url: joinUrl(ctx.channel.baseUrl, 'responses'), method: 'POST', headers, body: upstreamBody(request, ctx.model) };
}

function azureRequest(request: NativeRequest, ctx: ProviderContext): UpstreamRequest {
  const headers: Record<string, string> = { 'content-type': 'application/json', 'api-key': ctx.channel.apiKey };
  if (request.body.stream === true) headers.accept = 'text/event-stream';
  const deployment = typeof ctx.channel.config.deployment === 'string' && ctx.channel.config.deployment ? ctx.channel.config.deployment : ctx.model;
  return { url: joinUrl(ctx.channel.baseUrl, 'openai/v1/responses'), method: 'POST', headers, body: upstreamBody(request, deployment) };
}

function readAnswer(text: string): { body: string; usage: Usage | null; completionText: string } {
  const response = upstreamObject(text, 'the upstream');
  if (response.object !== 'response' || !Array.isArray(response.output)) throw new UpstreamFaultError('the upstream sent a response that is not a Responses API response object');
  return { body: text, usage: usageOfResponse(response), completionText: textOfResponse(response) };
}

/** The upstream's events passed through as SSE text, read for usage, text and errors on the way. */
export function createResponsesStreamReader(maxEventSize?: number): StreamConverter {
  const parser = new SseParser(maxEventSize);
  const decoder = new TextDecoder('utf-8');
  let usage: Usage | null = null;
  let text = '';
  let error: StreamOutcome['error'] = null;
  let sawEvent = false;

  const pass = (events: ReturnType<SseParser['push']>): string => {
    let out = '';
    for (const event of events) {
      let data: unknown;
      try {
        data = JSON.parse(event.data);
      } catch {
        continue; // keep-alive noise
      }
      if (!isRecord(data)) continue;
      sawEvent = true;
      const type = typeof data.type === 'string' ? data.type : event.event;
      if (type === 'response.output_text.delta' && typeof data.delta === 'string') text += data.delta;
      else if (type === 'response.completed' || type === 'response.incomplete') usage = usageOfResponse(data.response) ?? usage;
      else if (type === 'response.failed') {
        usage = usageOfResponse(data.response) ?? usage;
        const reported = isRecord(data.response) && isRecord(data.response.error) ? data.response.error : {};
        error ??= { message: typeof reported.message === 'string' ? reported.message : 'the upstream response failed', code: typeof reported.code === 'string' ? reported.code : 'upstream_error' };
      } else if (type === 'error') {
        error = { message: typeof data.message === 'string' ? data.message : 'upstream error', code: typeof data.code === 'string' ? data.code : 'upstream_error' };
      }
      out += event.event === null ? `data: ${event.data}\n\n` : `event: ${event.event}\ndata: ${event.data}\n\n`;
    }
    return out;
  };

  return {
    push: (bytes) => pass(parser.push(decoder.decode(bytes, { stream: true }))),
    end: () => {
      const out = pass([...parser.push(decoder.decode()), ...parser.flush()]);
      if (!sawEvent) throw new UpstreamFaultError('the upstream answered without a stream of response events');
      return out;
    },
    outcome: () => ({ usage, finishReason: null, completionText: text, error }),
  };
}

/**
 * The Responses API's in-stream `error` event, for a stream cut off after bytes went out. Its
 * `sequence_number` would be the upstream's next one, which the codec does not know: left out.
 */
export function responsesErrorEvent(message: string, code: string): string {
  return `event: error\ndata: ${JSON.stringify({ type: 'error', code, message, param: null })}\n\n`;
}

function codec(buildRequest: (request: NativeRequest, ctx: ProviderContext) => UpstreamRequest): NativeCodec {
  return {
    buildRequest,
    readAnswer: (text) => readAnswer(text),
    createStreamConverter: (_ctx, maxEventSize) => createResponsesStreamReader(maxEventSize),
    errorEvent: responsesErrorEvent,
    streamMediaType: 'text/event-stream',
  };
}

export const openAiResponsesCodec = codec(openAiRequest);
export const azureResponsesCodec = codec(azureRequest);
