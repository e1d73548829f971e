/**
 * Bedrock (Converse, SigV4, event-stream), Cohere (v2 chat, SSE) and Ollama (/api/chat, NDJSON)
 * providers against their fake upstreams over real HTTP (undici), per the fake contract.
 */
import { request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Channel, ChannelType } from '../../src/relay/channel.js';
import { bedrockProvider } from '../../src/relay/providers/bedrock/index.js';
import { cohereProvider } from '../../src/relay/providers/cohere/index.js';
import { ollamaProvider } from '../../src/relay/providers/ollama/index.js';
import type { Provider, ProviderContext, ResponseMeta, StreamOutcome, UpstreamRequest } from '../../src/relay/providers/provider.js';
import type { ChatCompletionChunk, ChatCompletionRequest } from '../../src/relay/schema.js';
import { BEDROCK_API_KEY, startBedrockFake } from '../support/fake-upstreams/bedrock.js';
import { COHERE_API_KEY, startCohereFake } from '../support/fake-upstreams/cohere.js';
import { FAKE_COMPLETION_TOKENS, FAKE_PROMPT_TOKENS, FAKE_TOOL_ARGUMENTS, replyText, type FakeUpstream } from '../support/fake-upstreams/fake.js';
import { startOllamaFake } from '../support/fake-upstreams/ollama.js';

interface Case {
  name: string;
  type: ChannelType;
  provider: Provider;
  start: () => Promise<FakeUpstream>;
  apiKey: string;
  model: string;
  /** Whether the native stream splits tool arguments (Ollama sends calls whole). */
  splitsToolArguments: boolean;
}

const cases: Case[] = [
  { name: 'bedrock', type: 'bedrock', provider: bedrockProvider, start: startBedrockFake, apiKey: BEDROCK_API_KEY, model: 'anthropic.claude-3-haiku-20240307-v1:0', splitsToolArguments: true },
  { name: 'cohere', type: 'cohere', provider: cohereProvider, start: startCohereFake, apiKey: COHERE_API_KEY, model: 'command-r-plus', splitsToolArguments: true },
  { name: 'ollama', type: 'ollama', provider: ollamaProvider, start: startOllamaFake, apiKey: '', model: 'llama3.2', splitsToolArguments: false },
];

const USER_TEXT = 'hi there, ünïcode ✓';
const USAGE = { prompt_tokens: FAKE_PROMPT_TOKENS, completion_tokens: FAKE_COMPLETION_TOKENS, total_tokens: FAKE_PROMPT_TOKENS + FAKE_COMPLETION_TOKENS };
const TOOLS: ChatCompletionRequest['tools'] = [{ type: 'function', function: { name: 'lookup_weather', description: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];

function chat(partial: Partial<ChatCompletionRequest> = {}): ChatCompletionRequest {
  return { model: 'client-alias', messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: USER_TEXT }], ...partial };
}

async function send(up: UpstreamRequest) {
  const res = await request(up.url, { method: up.method, headers: up.headers, body: up.body });
  return res;
}

async function nonStream(provider: Provider, ctx: ProviderContext, meta: ResponseMeta, body: ChatCompletionRequest) {
  const res = await send(provider.buildRequest(body, ctx));
  const text = await res.body.text();
  expect(res.statusCode, text).toBe(200);
  return provider.parseResponse(text, ctx, meta);
}

interface StreamError {
  error: { message: string; type: string; code: string };
}

async function stream(
  provider: Provider,
  ctx: ProviderContext,
  meta: ResponseMeta,
  body: ChatCompletionRequest,
): Promise<{ chunks: ChatCompletionChunk[]; errors: StreamError[]; outcome: StreamOutcome; sse: string }> {
  const res = await send(provider.buildRequest({ ...body, stream: true }, ctx));
  expect(res.statusCode).toBe(200);
  const converter = provider.createStreamConverter(ctx, meta);
  let sse = '';
  for await (const piece of res.body) sse += converter.push(piece as Buffer);
  sse += converter.end();
  expect(sse.endsWith('data: [DONE]\n\n')).toBe(true);
  const events = sse
    .split('\n\n')
    .filter((e) => e !== '' && e !== 'data: [DONE]')
    .map((e) => JSON.parse(e.replace(/^data: /, '')) as ChatCompletionChunk | StreamError);
  const chunks = events.filter((e): e is ChatCompletionChunk => !('error' in e));
  const errors = events.filter((e): e is StreamError => 'error' in e);
  return { chunks, errors, outcome: converter.outcome(), sse };
}

const textOf = (chunks: ChatCompletionChunk[]) => chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');

describe.each(cases)('$name provider against its fake upstream', (c) => {
  let fake: FakeUpstream;
  let ctx: ProviderContext;
  const meta: ResponseMeta = { id: 'chatcmpl-contract', created: 1_700_000_000, model: 'client-alias', includeUsage: true };

  beforeAll(async () => {
    fake = await c.start();
    const channel: Channel = {
      id: 'c1',
      tenantId: 't',
      name: 'x',
      type: c.type,
      baseUrl: fake.baseUrl,
      apiKey: c.apiKey,
      models: [c.model],
      modelMapping: {},
      priority: 0,
      weight: 1,
      enabled: true,
      config: { region: 'us-east-1' },
    };
    ctx = { channel, model: c.model };
  });
  afterAll(async () => {
    await fake.close();
  });
  beforeEach(() => {
    fake.mode = { kind: 'reply' };
    fake.requests.length = 0;
  });

  it('non-stream reply: text, usage, stop', async () => {
    const completion = await nonStream(c.provider, ctx, meta, chat());
    expect(completion.choices[0]!.message.content).toBe(replyText(USER_TEXT));
    expect(completion.choices[0]!.finish_reason).toBe('stop');
    expect(completion.usage).toEqual(USAGE);
    expect(fake.requests).toHaveLength(1);
  });

  it('stream reply: role first, text in pieces, stop last, usage before [DONE]', async () => {
    const { chunks, outcome } = await stream(c.provider, ctx, meta, chat());
    expect(chunks[0]!.choices[0]!.delta.role).toBe('assistant');
    const content = chunks.filter((ch) => (ch.choices[0]?.delta.content ?? '') !== '');
    expect(content.length).toBeGreaterThanOrEqual(3);
    expect(textOf(chunks)).toBe(replyText(USER_TEXT));
    const last = chunks[chunks.length - 1]!;
    expect(last.choices).toEqual([]);
    expect(last.usage).toEqual(USAGE);
    expect(chunks[chunks.length - 2]!.choices[0]!.finish_reason).toBe('stop');
    expect(outcome).toEqual({ usage: USAGE, finishReason: 'stop', completionText: replyText(USER_TEXT), error: null });
  });

  it('tool_call: non-stream', async () => {
    fake.mode = { kind: 'tool_call' };
    const completion = await nonStream(c.provider, ctx, meta, chat({ tools: TOOLS }));
    const calls = completion.choices[0]!.message.tool_calls ?? [];
    expect(calls).toHaveLength(1);
    expect(calls[0]!.function.name).toBe('lookup_weather');
    expect(JSON.parse(calls[0]!.function.arguments)).toEqual(JSON.parse(FAKE_TOOL_ARGUMENTS));
    expect(calls[0]!.id).not.toBe('');
    expect(completion.choices[0]!.finish_reason).toBe('tool_calls');
  });

  it('tool_call: stream', async () => {
    fake.mode = { kind: 'tool_call' };
    const { chunks, outcome } = await stream(c.provider, ctx, meta, chat({ tools: TOOLS }));
    const deltas = chunks.flatMap((ch) => ch.choices[0]?.delta.tool_calls ?? []);
    expect(deltas[0]).toMatchObject({ index: 0, type: 'function', function: { name: 'lookup_weather' } });
    expect(deltas[0]!.id).toBeTruthy();
    const args = deltas.map((d) => d.function?.arguments ?? '').join('');
    expect(JSON.parse(args)).toEqual(JSON.parse(FAKE_TOOL_ARGUMENTS));
    if (c.splitsToolArguments) expect(deltas.filter((d) => d.function?.arguments).length).toBeGreaterThanOrEqual(2);
    expect(outcome.finishReason).toBe('tool_calls');
  });

  it('tool results go back upstream in the native shape', async () => {
    const completion = await nonStream(
      c.provider,
      ctx,
      meta,
      chat({
        tools: TOOLS,
        messages: [
          { role: 'user', content: 'weather?' },
          { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup_weather', arguments: FAKE_TOOL_ARGUMENTS } }] },
          { role: 'tool', tool_call_id: 'call_1', content: '{"temp":21}' },
          { role: 'user', content: USER_TEXT },
        ],
      }),
    );
    expect(completion.choices[0]!.message.content).toBe(replyText(USER_TEXT));
  });

  it('length: non-stream and stream', async () => {
    fake.mode = { kind: 'length' };
    const completion = await nonStream(c.provider, ctx, meta, chat({ max_tokens: 3 }));
    expect(completion.choices[0]!.message.content).toBe('Hello! You');
    expect(completion.choices[0]!.finish_reason).toBe('length');
    const { chunks, outcome } = await stream(c.provider, ctx, meta, chat({ max_tokens: 3 }));
    expect(textOf(chunks)).toBe('Hello! You');
    expect(outcome.finishReason).toBe('length');
  });

  it('no_usage: no usage, no usage chunk', async () => {
    fake.mode = { kind: 'no_usage' };
    const { chunks, outcome } = await stream(c.provider, ctx, meta, chat());
    expect(outcome.usage).toBeNull();
    expect(outcome.completionText).toBe(replyText(USER_TEXT));
    expect(chunks.every((ch) => ch.choices.length === 1)).toBe(true);
  });

  it('error: parseError gives the message; retry-after passes through', async () => {
    fake.mode = { kind: 'error', status: 429, message: 'slow down please', retryAfterSeconds: 7 };
    const res = await send(c.provider.buildRequest(chat(), ctx));
    const body = await res.body.text();
    expect(res.statusCode).toBe(429);
    expect(res.headers['retry-after']).toBe('7');
    expect(c.provider.parseError(res.statusCode, body).message).toBe('slow down please');

    fake.mode = { kind: 'error', status: 500, message: 'upstream exploded' };
    const streamed = await send(c.provider.buildRequest(chat({ stream: true }), ctx));
    expect(streamed.statusCode).toBe(500);
    expect(c.provider.parseError(500, await streamed.body.text()).message).toBe('upstream exploded');
  });

  it('stream_error: one piece, then outcome.error and an in-band error event', async () => {
    fake.mode = { kind: 'stream_error' };
    const { outcome, errors, chunks } = await stream(c.provider, ctx, meta, chat());
    expect(errors).toHaveLength(1);
    expect(errors[0]!.error.type).toBe('upstream_error');
    expect(textOf(chunks)).toBe(outcome.completionText);
    expect(outcome.error).not.toBeNull();
    expect(outcome.error!.message).toMatch(/stream error/);
    expect(outcome.completionText.length).toBeGreaterThan(0);
    expect(outcome.finishReason).toBeNull();
  });

  it('slow: still a complete reply', async () => {
    fake.mode = { kind: 'slow', delayMs: 15 };
    const { outcome } = await stream(c.provider, ctx, meta, chat());
    expect(outcome.completionText).toBe(replyText(USER_TEXT));
    expect(outcome.finishReason).toBe('stop');
  });

  it('probe request succeeds', async () => {
    const res = await send(c.provider.probeRequest(ctx));
    expect(res.statusCode).toBe(200);
    await res.body.text();
  });
});

describe('bedrock fake checks the SigV4 signature', () => {
  let fake: FakeUpstream;
  const channel = (apiKey: string): Channel => ({
    id: 'c1',
    tenantId: 't',
    name: 'x',
    type: 'bedrock',
    baseUrl: fake.baseUrl,
    apiKey,
    models: [],
    modelMapping: {},
    priority: 0,
    weight: 1,
    enabled: true,
    config: { region: 'us-east-1' },
  });
  beforeAll(async () => {
    fake = await startBedrockFake();
  });
  afterAll(async () => {
    await fake.close();
  });

  it('sends the model id percent-encoded in the path', async () => {
    const res = await send(bedrockProvider.buildRequest(chat(), { channel: channel(BEDROCK_API_KEY), model: 'anthropic.claude-3-haiku-20240307-v1:0' }));
    expect(res.statusCode).toBe(200);
    await res.body.text();
    expect(fake.requests[fake.requests.length - 1]!.path).toBe('/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse');
  });

  it('accepts a session token (signed)', async () => {
    const res = await send(bedrockProvider.buildRequest(chat(), { channel: channel(`${BEDROCK_API_KEY}:FQoGZXIvYXdzEXAMPLE`), model: 'm:1' }));
    expect(res.statusCode).toBe(200);
    await res.body.text();
    expect(fake.requests[fake.requests.length - 1]!.headers['x-amz-security-token']).toBe('FQoGZXIvYXdzEXAMPLE');
  });

  it('answers 403 with the AWS error body for a wrong secret', async () => {
    const res = await send(bedrockProvider.buildRequest(chat(), { channel: channel('AKIDEXAMPLE:not-the-secret'), model: 'm:1' }));
    expect(res.statusCode).toBe(403);
    expect(String(res.headers['x-amzn-errortype'])).toMatch(/^InvalidSignatureException/);
    expect(bedrockProvider.parseError(403, await res.body.text()).message).toMatch(/signature we calculated does not match/);
  });

  it('answers 403 for an unknown access key', async () => {
    const res = await send(bedrockProvider.buildRequest(chat(), { channel: channel('AKIDOTHER:wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY'), model: 'm:1' }));
    expect(res.statusCode).toBe(403);
    expect(bedrockProvider.parseError(403, await res.body.text()).message).toBe('The security token included in the request is invalid.');
  });

  it('answers 403 for a tampered body', async () => {
    const up = bedrockProvider.buildRequest(chat(), { channel: channel(BEDROCK_API_KEY), model: 'm:1' });
    const res = await send({ ...up, body: up.body!.replace('be brief', 'be long!') });
    expect(res.statusCode).toBe(403);
    await res.body.text();
  });
});

describe('cohere fake checks the bearer key', () => {
  it('answers 401 with a wrong key', async () => {
    const fake = await startCohereFake();
    try {
      const channel: Channel = { id: 'c', tenantId: 't', name: 'x', type: 'cohere', baseUrl: fake.baseUrl, apiKey: 'wrong', models: [], modelMapping: {}, priority: 0, weight: 1, enabled: true, config: {} };
      const res = await send(cohereProvider.buildRequest(chat(), { channel, model: 'command-r' }));
      expect(res.statusCode).toBe(401);
      expect(cohereProvider.parseError(401, await res.body.text()).message).toBe('invalid api token');
    } finally {
      await fake.close();
    }
  });
});
