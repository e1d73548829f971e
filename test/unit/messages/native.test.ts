import { describe, expect, it } from 'vitest';
import { UpstreamFaultError } from '../../../src/errors.js';
import { anthropicErrorAnswer, anthropicErrorType } from '../../../src/relay/ingress/messages/errors.js';
import { anthropicProvider } from '../../../src/relay/providers/anthropic/index.js';
import { anthropicMessagesCodec } from '../../../src/relay/providers/anthropic/native.js';
import type { NativeRequest } from '../../../src/relay/providers/provider.js';
import { AppError, BadRequestError, UnauthorizedError } from '../../../src/errors.js';
import { channelOf, ctxOf, runEverySplit } from '../providers/stream-helpers.js';

const ctx = ctxOf(channelOf('anthropic', {}, 'https://proxy.example/anthropic'), 'claude-upstream');

function native(body: Record<string, unknown>, headers: Record<string, string> = {}): NativeRequest {
  return { format: 'anthropic-messages', body, headers };
}

describe('anthropic native codec (Messages pass-through)', () => {
  it('is the anthropic provider’s codec for anthropic-messages', () => {
    expect(anthropicProvider.native?.['anthropic-messages']).toBe(anthropicMessagesCodec);
  });

  it('POSTs the client body with only the model replaced (key order kept), the channel key, and the client’s version and betas', () => {
    const body = { max_tokens: 5, model: 'client-name', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi', cache_control: { type: 'ephemeral' } }] }], top_k: 3, stream: true };
    const request = anthropicMessagesCodec.buildRequest(native(body, { 'anthropic-version': '2023-06-01', 'anthropic-beta': 'a,b' }), ctx);
    expect(request.url).toBe('https://proxy.example/anthropic/v1/messages');
    expect(request.method).toBe('POST');
    expect(request.body).toBe(JSON.stringify({ ...body, model: 'claude-upstream' }));
    expect(Object.keys(JSON.parse(request.body!))).toEqual(Object.keys(body));
    expect(request.headers).toMatchObject({ 'x-api-key': 'test-key', 'anthropic-version': '2023-06-01', 'anthropic-beta': 'a,b', accept: 'text/event-stream', 'content-type': 'application/json' });
    const plain = anthropicMessagesCodec.buildRequest(native({ model: 'x', max_tokens: 1, messages: [] }), ctxOf(channelOf('anthropic', { api_version: '2099-01-01' }), 'm'));
    expect(plain.headers['anthropic-version']).toBe('2099-01-01');
    expect(plain.headers['anthropic-beta']).toBeUndefined();
    expect(plain.headers.accept).toBe('application/json');
  });

  it('passes a whole answer untouched and reads its usage (cache counts in the prompt) and text', () => {
    const text = JSON.stringify({ id: 'msg_1', type: 'message', role: 'assistant', model: 'claude', content: [{ type: 'thinking', thinking: 'x', signature: 's' }, { type: 'text', text: 'Hello' }], stop_reason: 'end_turn', usage: { input_tokens: 10, cache_read_input_tokens: 5, output_tokens: 3 } });
    expect(anthropicMessagesCodec.readAnswer(text, ctx)).toEqual({ body: text, usage: { prompt_tokens: 15, completion_tokens: 3, total_tokens: 18 }, completionText: 'Hello' });
    expect(anthropicMessagesCodec.readAnswer(JSON.stringify({ type: 'message', content: [] }), ctx).usage).toBeNull();
    expect(() => anthropicMessagesCodec.readAnswer('not json', ctx)).toThrow(UpstreamFaultError);
    expect(() => anthropicMessagesCodec.readAnswer('{"type":"error","error":{"message":"x"}}', ctx)).toThrow(UpstreamFaultError);
  });

  const sse = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
  const stream = [
    sse('message_start', { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', content: [], model: 'claude', usage: { input_tokens: 25, cache_creation_input_tokens: 2, output_tokens: 1 } } }),
    sse('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
    sse('ping', { type: 'ping' }),
    sse('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Héllo ✓' } }),
    sse('content_block_stop', { type: 'content_block_stop', index: 0 }),
    sse('content_block_start', { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 't', name: 'f', input: {} } }),
    sse('content_block_delta', { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"a":1}' } }),
    sse('content_block_stop', { type: 'content_block_stop', index: 1 }),
    sse('message_delta', { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 15 } }),
    sse('message_stop', { type: 'message_stop' }),
  ].join('');

  it('passes a stream through unchanged at every split, reading usage, stop reason and text', () => {
    const run = runEverySplit(() => anthropicMessagesCodec.createStreamConverter(ctx), Buffer.from(stream));
    expect(run.out).toBe(stream);
    expect(run.outcome).toEqual({ usage: { prompt_tokens: 27, completion_tokens: 15, total_tokens: 42 }, finishReason: 'tool_calls', completionText: 'Héllo ✓{"a":1}', error: null });
  });

  it('records an error event as the outcome’s error, and passes it on', () => {
    const failing = stream.slice(0, stream.indexOf('event: content_block_stop')) + sse('error', { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
    const run = runEverySplit(() => anthropicMessagesCodec.createStreamConverter(ctx), Buffer.from(failing));
    expect(run.out).toBe(failing);
    expect(run.outcome.error).toEqual({ message: 'Overloaded', code: 'overloaded_error' });
  });

  it('an empty stream is a bad upstream response; the in-band error event is Anthropic’s', () => {
    const converter = anthropicMessagesCodec.createStreamConverter(ctx);
    expect(() => converter.end()).toThrow(UpstreamFaultError);
    expect(anthropicMessagesCodec.errorEvent('cut', 'upstream_stream_interrupted')).toBe('event: error\ndata: {"type":"error","error":{"type":"api_error","message":"cut"}}\n\n');
  });
});

describe('errors in Anthropic shape', () => {
  it('maps statuses and codes to Anthropic error types', () => {
    expect([400, 401, 402, 403, 404, 413, 429, 500, 502, 503, 504, 529].map((s) => anthropicErrorType(s))).toEqual([
      'invalid_request_error',
      'authentication_error',
      'billing_error',
      'permission_error',
      'not_found_error',
      'request_too_large',
      'rate_limit_error',
      'api_error',
      'api_error',
      'overloaded_error',
      'timeout_error',
      'overloaded_error',
    ]);
    expect(anthropicErrorType(429, 'insufficient_quota')).toBe('billing_error');
  });

  it('keeps the status and headers, names the relay’s code in the message, hides internal errors', () => {
    const limited = new AppError(429, 'rate_limit_error', 'rate_limit_exceeded', 'too many requests', { 'retry-after': '3' });
    expect(anthropicErrorAnswer(limited, 'req-1')).toEqual({
      status: 429,
      headers: { 'retry-after': '3' },
      body: { type: 'error', error: { type: 'rate_limit_error', message: 'rate_limit_exceeded: too many requests' }, request_id: 'req-1' },
    });
    expect(anthropicErrorAnswer(new BadRequestError('model: Field required'), 'r').body.error.message).toBe('model: Field required');
    expect(anthropicErrorAnswer(new UnauthorizedError(), 'r').body.error).toEqual({ type: 'authentication_error', message: 'unauthorized' });
    // An anthropic upstream's 400, as the relay classifies it: its type is the code.
    expect(anthropicErrorAnswer(new AppError(400, 'invalid_request_error', 'invalid_request_error', 'messages: bad'), 'r').body.error).toEqual({ type: 'invalid_request_error', message: 'messages: bad' });
    expect(anthropicErrorAnswer(new Error('db password wrong'), 'r')).toEqual({ status: 500, headers: {}, body: { type: 'error', error: { type: 'api_error', message: 'internal server error' }, request_id: 'r' } });
  });
});
