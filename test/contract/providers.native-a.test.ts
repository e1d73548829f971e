/**
 * The Anthropic and Gemini providers against their fake upstreams over real HTTP (undici):
 * buildRequest -> send -> parseResponse / stream converter / parseError, for each fake mode.
 */
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Channel } from '../../src/relay/channel.js';
import { anthropicProvider } from '../../src/relay/providers/anthropic/index.js';
import { geminiProvider } from '../../src/relay/providers/gemini/index.js';
import type { Provider, ProviderContext, ResponseMeta, StreamOutcome, UpstreamRequest } from '../../src/relay/providers/provider.js';
import type { ChatCompletionChunk, ChatCompletionRequest } from '../../src/relay/schema.js';
import { startAnthropicFake } from '../support/fake-upstreams/anthropic.js';
import { FAKE_COMPLETION_TOKENS, FAKE_PROMPT_TOKENS, FAKE_TOOL_ARGUMENTS, replyText, type FakeUpstream } from '../support/fake-upstreams/fake.js';
import { startGeminiFake } from '../support/fake-upstreams/gemini.js';

interface Case {
  name: string;
  type: Channel['type'];
  model: string;
  provider: Provider;
  start: () => Promise<FakeUpstream>;
  authHeader: string;
}

const cases: Case[] = [
  { name: 'anthropic', type: 'anthropic', model: 'claude-x', provider: anthropicProvider, start: startAnthropicFake, authHeader: 'x-api-key' },
  { name: 'gemini', type: 'gemini', model: 'gemini-x', provider: geminiProvider, start: startGeminiFake, authHeader: 'x-goog-api-key' },
];

const usage = { prompt_tokens: FAKE_PROMPT_TOKENS, completion_tokens: FAKE_COMPLETION_TOKENS, total_tokens: FAKE_PROMPT_TOKENS + FAKE_COMPLETION_TOKENS };
const weatherTool: ChatCompletionRequest['tools'] = [
  { type: 'function', function: { name: 'lookup_weather', description: 'Weather for a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } },
];

async function send(up: UpstreamRequest) {
  const res = await request(up.url, { method: up.method, headers: up.headers, body: up.body });
  return res;
}

async function readText(up: UpstreamRequest): Promise<{ status: number; headers: Record<string, unknown>; text: string }> {
  const res = await send(up);
  return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
}

describe.each(cases)('$name provider against its fake upstream', ({ type, model, provider, start, authHeader }) => {
  let fake: FakeUpstream;
  let ctx: ProviderContext;
  const meta = (includeUsage = false): ResponseMeta => ({ id: 'chatcmpl-contract', created: 1_700_000_000, model: 'client-alias', includeUsage });
  const chat = (extra: Partial<ChatCompletionRequest> = {}): ChatCompletionRequest => ({
    model: 'client-alias',
    messages: [
      { role: 'system', content: 'Be nice.' },
      { role: 'user', content: 'ping pong' },
    ],
    ...extra,
  });

  /** Streams the upstream body through the converter chunk by chunk as undici hands it over. */
  async function stream(request: ChatCompletionRequest, includeUsage = false): Promise<{ status: number; out: string; outcome: StreamOutcome; payloads: unknown[] }> {
    const res = await send(provider.buildRequest({ ...request, stream: true }, ctx));
    const converter = provider.createStreamConverter(ctx, meta(includeUsage));
    let out = '';
    for await (const chunk of res.body) out += converter.push(chunk as Buffer);
    out += converter.end();
    const payloads = out
      .split('\n\n')
      .filter(Boolean)
      .map((e) => e.slice('data: '.length))
      .map((d) => (d === '[DONE]' ? d : (JSON.parse(d) as unknown)));
    return { status: res.statusCode, out, outcome: converter.outcome(), payloads };
  }

  const contentOf = (payloads: unknown[]) =>
    (payloads.filter((p) => p !== '[DONE]') as ChatCompletionChunk[])
      .map((c) => c.choices[0]?.delta.content ?? '')
      .join('');

  beforeAll(async () => {
    fake = await start();
    ctx = {
      channel: { id: 'c1', tenantId: 't', name: 'x', type, baseUrl: fake.baseUrl, apiKey: 'test-key', models: [model], modelMapping: {}, priority: 0, weight: 1, enabled: true, config: {} },
      model,
    };
  });
  afterAll(async () => {
    await fake.close();
  });

  it('non-stream reply: request reaches the fake with auth and the model, response parses', async () => {
    fake.mode = { kind: 'reply' };
    const before = fake.requests.length;
    const res = await readText(provider.buildRequest(chat(), ctx));
    expect(res.status).toBe(200);
    const recorded = fake.requests[before]!;
    expect(recorded.headers[authHeader]).toBe('test-key');
    expect(recorded.path).toContain(type === 'gemini' ? `/v1beta/models/${model}:generateContent` : '/v1/messages');
    const completion = provider.parseResponse(res.text, ctx, meta());
    expect(completion.choices[0]).toEqual({ index: 0, message: { role: 'assistant', content: replyText(type === 'gemini' ? 'Be nice.\n\nping pong' : 'ping pong') }, finish_reason: 'stop' });
    expect(completion.usage).toEqual(usage);
    expect(completion.model).toBe(model);
    expect(completion.id).toBe('chatcmpl-contract');
  });

  it('stream reply: role first, text in pieces, finish stop, usage chunk, [DONE]', async () => {
    fake.mode = { kind: 'reply' };
    const { status, payloads, outcome } = await stream(chat(), true);
    expect(status).toBe(200);
    const expected = replyText(type === 'gemini' ? 'Be nice.\n\nping pong' : 'ping pong');
    expect(contentOf(payloads)).toBe(expected);
    const chunks = payloads.slice(0, -1) as ChatCompletionChunk[];
    expect(chunks[0]!.choices[0]!.delta.role).toBe('assistant');
    expect(chunks.filter((c) => c.choices[0]?.delta.content).length).toBeGreaterThanOrEqual(3);
    expect(chunks.at(-2)!.choices[0]!.finish_reason).toBe('stop');
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage });
    expect(payloads.at(-1)).toBe('[DONE]');
    expect(outcome).toEqual({ usage, finishReason: 'stop', completionText: expected, error: null });
  });

  it('stream without include_usage has no usage chunk', async () => {
    fake.mode = { kind: 'reply' };
    const { payloads } = await stream(chat(), false);
    expect((payloads.slice(0, -1) as ChatCompletionChunk[]).every((c) => c.choices.length === 1 && c.usage === undefined)).toBe(true);
  });

  it('tool_call: non-stream tool_calls with the request tool name and arguments', async () => {
    fake.mode = { kind: 'tool_call' };
    const res = await readText(provider.buildRequest(chat({ tools: weatherTool, tool_choice: 'auto' }), ctx));
    const completion = provider.parseResponse(res.text, ctx, meta());
    const choice = completion.choices[0]!;
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.tool_calls).toHaveLength(1);
    expect(choice.message.tool_calls![0]!.function).toEqual({ name: 'lookup_weather', arguments: FAKE_TOOL_ARGUMENTS });
    expect(choice.message.tool_calls![0]!.id).toMatch(/\S/);
  });

  it('tool_call: streamed tool_calls deltas reassemble to the arguments; the round trip is accepted', async () => {
    fake.mode = { kind: 'tool_call' };
    const { payloads, outcome } = await stream(chat({ tools: weatherTool }));
    const deltas = (payloads.slice(0, -1) as ChatCompletionChunk[]).flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    expect(deltas[0]).toMatchObject({ index: 0, type: 'function', function: { name: 'lookup_weather' } });
    const id = deltas[0]!.id!;
    expect(id).toMatch(/\S/);
    expect(deltas.every((d) => d.index === 0)).toBe(true);
    expect(deltas.map((d) => d.function?.arguments ?? '').join('')).toBe(FAKE_TOOL_ARGUMENTS);
    expect(outcome.finishReason).toBe('tool_calls');

    // Send the call and its result back: the fake checks the shape (roles, alternation, parts).
    fake.mode = { kind: 'reply' };
    const followUp = chat({
      tools: weatherTool,
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: 'lookup_weather', arguments: FAKE_TOOL_ARGUMENTS } }] },
        { role: 'tool', tool_call_id: id, content: '{"temp":21}' },
        { role: 'user', content: 'and so?' },
      ],
    });
    const res = await readText(provider.buildRequest(followUp, ctx));
    expect(res.status).toBe(200);
    expect(provider.parseResponse(res.text, ctx, meta()).choices[0]!.message.content).toBe(replyText('and so?'));
  });

  it('length: non-stream and stream finish with length', async () => {
    fake.mode = { kind: 'length' };
    const res = await readText(provider.buildRequest(chat(), ctx));
    const completion = provider.parseResponse(res.text, ctx, meta());
    expect(completion.choices[0]).toMatchObject({ message: { content: 'Hello! You' }, finish_reason: 'length' });
    const streamed = await stream(chat());
    expect(contentOf(streamed.payloads)).toBe('Hello! You');
    expect(streamed.outcome.finishReason).toBe('length');
  });

  it('no_usage: the stream outcome has no usage and no usage chunk is sent', async () => {
    fake.mode = { kind: 'no_usage' };
    const { payloads, outcome } = await stream(chat(), true);
    expect(outcome.usage).toBeNull();
    expect(outcome.completionText).toBe(contentOf(payloads));
    expect((payloads.slice(0, -1) as ChatCompletionChunk[]).every((c) => c.choices.length === 1)).toBe(true);
  });

  it('error mode: native error body -> parseError gives the message; retry-after passes through', async () => {
    fake.mode = { kind: 'error', status: 429, message: 'slow down please', retryAfterSeconds: 7 };
    const res = await readText(provider.buildRequest(chat(), ctx));
    expect(res.status).toBe(429);
    expect(res.headers['retry-after']).toBe('7');
    const error = provider.parseError(res.status, res.text);
    expect(error.message).toBe('slow down please');
    expect(error.code).toBe(type === 'gemini' ? 'RESOURCE_EXHAUSTED' : 'rate_limit_error');

    fake.mode = { kind: 'error', status: 500, message: 'boom' };
    const streamed = await send(provider.buildRequest(chat({ stream: true }), ctx));
    expect(streamed.statusCode).toBe(500);
    expect(provider.parseError(500, await streamed.body.text()).message).toBe('boom');
  });

  it('a wrong key is a 401 whose native body parseError reads', async () => {
    fake.mode = { kind: 'reply' };
    const wrong: ProviderContext = { ...ctx, channel: { ...ctx.channel, apiKey: 'wrong-key' } };
    const res = await readText(provider.buildRequest(chat(), wrong));
    expect(res.status).toBe(401);
    expect(provider.parseError(res.status, res.text).message).toMatch(/key/i);
  });

  it('stream_error: one text piece, then outcome.error and an error event before [DONE]', async () => {
    fake.mode = { kind: 'stream_error' };
    const { payloads, outcome } = await stream(chat(), true);
    expect(outcome.error).not.toBeNull();
    expect(outcome.error!.message).toMatch(/overloaded/i);
    expect(outcome.finishReason).toBeNull();
    expect(outcome.completionText.length).toBeGreaterThan(0);
    expect(payloads.at(-2)).toMatchObject({ error: { message: outcome.error!.message, code: outcome.error!.code } });
    expect(payloads.at(-1)).toBe('[DONE]');
  });

  it('probeRequest is accepted by the fake', async () => {
    fake.mode = { kind: 'reply' };
    const res = await readText(provider.probeRequest(ctx));
    expect(res.status).toBe(200);
    expect(provider.parseResponse(res.text, ctx, meta()).choices[0]!.message.content).toBe(replyText('ping'));
  });

  it('slow: still a complete stream', async () => {
    fake.mode = { kind: 'slow', delayMs: 20 };
    const { outcome } = await stream(chat());
    expect(outcome.finishReason).toBe('stop');
    expect(outcome.error).toBeNull();
  });
});
