/**
 * The OpenAI-compatible provider's shortcuts: a completion filled in place must serialise exactly
 * as the copying version did (same keys, same order), and the per-channel URL and headers must
 * follow a channel whose settings change.
 */
import { describe, expect, it } from 'vitest';
import { buildCompatRequest, compatBody, DEFAULT_QUIRKS } from '../../../src/relay/providers/openai-compatible/request.js';
import { parseCompatResponse } from '../../../src/relay/providers/openai-compatible/response.js';
import type { ChatCompletionRequest } from '../../../src/relay/schema.js';
import { channelOf, ctxOf, metaOf } from './stream-helpers.js';

const meta = metaOf(false, { id: 'chatcmpl-meta', created: 5, model: 'client-model' });
const serialised = (text: string) => JSON.stringify(parseCompatResponse(text, meta));

describe('openai-compatible response', () => {
  it('sends a complete body as it came', () => {
    const body =
      '{"id":"a","object":"chat.completion","created":1,"model":"x","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3},"system_fingerprint":"fp"}';
    expect(serialised(body)).toBe(body);
  });

  it('keeps present keys in place and appends missing ones in a fixed order', () => {
    expect(serialised('{"choices":[{"message":{"content":"hi"}}]}')).toBe(
      '{"choices":[{"message":{"content":"hi","role":"assistant"},"index":0,"finish_reason":null}],"id":"chatcmpl-meta","object":"chat.completion","created":5,"model":"client-model","usage":{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0}}',
    );
    expect(serialised('{"usage":{"completion_tokens":4},"choices":[{"message":null,"finish_reason":"end_turn","index":null}],"object":"other","id":null}')).toBe(
      '{"usage":{"completion_tokens":4,"prompt_tokens":0,"total_tokens":4},"choices":[{"message":{"role":"assistant","content":null},"finish_reason":"stop","index":0}],"object":"chat.completion","id":"chatcmpl-meta","created":5,"model":"client-model"}',
    );
    expect(serialised('{}')).toBe('{"id":"chatcmpl-meta","object":"chat.completion","created":5,"model":"client-model","choices":[],"usage":{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0}}');
  });

  it('answers bodies of unusual shapes as before', () => {
    expect(serialised('{"choices":[1],"usage":"s"}')).toBe(
      '{"choices":[{"index":0,"message":{"role":"assistant","content":null},"finish_reason":null}],"usage":{"0":"s","prompt_tokens":0,"completion_tokens":0,"total_tokens":0},"id":"chatcmpl-meta","object":"chat.completion","created":5,"model":"client-model"}',
    );
    expect(() => parseCompatResponse('{"choices":"x"}', meta)).toThrow(TypeError);
  });
});

describe('openai-compatible request', () => {
  const request: ChatCompletionRequest = { model: 'm', messages: [{ role: 'user', content: 'hi' }], temperature: 0.5 };

  it('serialises the request as it is when nothing changes, and as a copy otherwise', () => {
    const ctx = ctxOf(channelOf('openai'), 'm');
    expect(buildCompatRequest(request, ctx).body).toBe('{"model":"m","messages":[{"role":"user","content":"hi"}],"temperature":0.5}');
    expect(buildCompatRequest(request, ctxOf(channelOf('openai'), 'upstream-m')).body).toBe('{"model":"upstream-m","messages":[{"role":"user","content":"hi"}],"temperature":0.5}');
    expect(buildCompatRequest({ ...request, provider_config: { primary: 'openai' } }, ctx).body).toBe('{"model":"m","messages":[{"role":"user","content":"hi"}],"temperature":0.5}');
    expect(JSON.parse(buildCompatRequest({ ...request, stream: true }, ctx).body!)).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect(() => buildCompatRequest({ ...request, n: 2 }, ctx, { streamUsage: true, multipleChoices: false })).toThrow(/n must be 1/);
  });

  it('copies a parsed body\'s own `__proto__` key as nothing: the copy keeps its prototype and sends no such field', () => {
    const parsed = JSON.parse('{"model":"m","messages":[{"role":"user","content":"hi"}],"__proto__":{"stream":true}}') as ChatCompletionRequest;
    const body = compatBody(parsed, ctxOf(channelOf('openai'), 'upstream-m'), DEFAULT_QUIRKS);
    expect(Object.getPrototypeOf(body)).toBe(Object.prototype);
    expect(body.stream).toBeUndefined();
    expect(JSON.parse(buildCompatRequest(parsed, ctxOf(channelOf('openai'), 'upstream-m')).body!)).toEqual({ model: 'upstream-m', messages: [{ role: 'user', content: 'hi' }] });
  });

  it('follows a channel whose URL, key or organization change in place', () => {
    const channel = channelOf('openai', {}, 'https://one.example/v1/');
    const ctx = ctxOf(channel, 'm');
    const first = buildCompatRequest(request, ctx);
    expect(first).toMatchObject({ url: 'https://one.example/v1/chat/completions', headers: { 'content-type': 'application/json', authorization: 'Bearer test-key' } });
    expect(buildCompatRequest({ ...request, stream: true }, ctx).headers).toEqual({ 'content-type': 'application/json', authorization: 'Bearer test-key', accept: 'text/event-stream' });
    expect(first.headers.accept).toBeUndefined();

    channel.baseUrl = 'https://two.example';
    channel.apiKey = 'other-key';
    channel.config = { organization: 'org-1' };
    expect(buildCompatRequest(request, ctx)).toMatchObject({
      url: 'https://two.example/chat/completions',
      headers: { 'content-type': 'application/json', authorization: 'Bearer other-key', 'openai-organization': 'org-1' },
    });
    channel.apiKey = '';
    expect(buildCompatRequest(request, ctx).headers.authorization).toBeUndefined();
  });
});
