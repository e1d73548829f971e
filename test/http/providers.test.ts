/**
 * Every channel kind through the real relay, driven by the official OpenAI SDK: each native kind
 * against a fake that speaks its wire format (streaming framing included), the OpenAI-compatible
 * kinds against the OpenAI fake.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ChannelType } from '../../src/relay/channel.js';
import { startAnthropicFake } from '../support/fake-upstreams/anthropic.js';
import { BEDROCK_API_KEY, startBedrockFake } from '../support/fake-upstreams/bedrock.js';
import { startCohereFake } from '../support/fake-upstreams/cohere.js';
import { FAKE_COMPLETION_TOKENS, FAKE_PROMPT_TOKENS, FAKE_TOOL_ARGUMENTS, type FakeUpstream } from '../support/fake-upstreams/fake.js';
import { startGeminiFake } from '../support/fake-upstreams/gemini.js';
import { startOllamaFake } from '../support/fake-upstreams/ollama.js';
import { startOpenAiFake, type OpenAiFake } from '../support/fake-upstreams/openai.js';
import { call, startApp, type RunningApp } from '../support/app.js';
import { createChannel, sdk } from '../support/relay.js';

interface Kind {
  type: ChannelType;
  fake: () => FakeUpstream;
  channel: () => { base_url: string; key?: string; config?: Record<string, unknown>; models: string[] };
}

const COMPATIBLE: ChannelType[] = ['openai', 'mistral', 'deepseek', 'groq', 'openrouter', 'xai', 'moonshot', 'zhipu', 'qwen', 'vllm', 'llamacpp', 'lmstudio', 'custom'];

describe('every provider kind through the relay', () => {
  let s: RunningApp;
  const fakes: Record<string, FakeUpstream> = {};
  let openai: OpenAiFake;

  const kinds: Kind[] = [
    { type: 'anthropic', fake: () => fakes.anthropic!, channel: () => ({ base_url: fakes.anthropic!.baseUrl, models: ['anthropic-model'] }) },
    { type: 'gemini', fake: () => fakes.gemini!, channel: () => ({ base_url: fakes.gemini!.baseUrl, models: ['gemini-model'] }) },
    {
      type: 'bedrock',
      fake: () => fakes.bedrock!,
      channel: () => ({ base_url: fakes.bedrock!.baseUrl, key: BEDROCK_API_KEY, config: { region: 'us-east-1' }, models: ['bedrock-model'] }),
    },
    { type: 'cohere', fake: () => fakes.cohere!, channel: () => ({ base_url: fakes.cohere!.baseUrl, models: ['cohere-model'] }) },
    { type: 'ollama', fake: () => fakes.ollama!, channel: () => ({ base_url: fakes.ollama!.baseUrl, key: '', models: ['ollama-model'] }) },
    { type: 'azure', fake: () => openai, channel: () => ({ base_url: openai.origin, config: { deployment: 'my-deployment', api_version: '2024-10-21' }, models: ['azure-model'] }) },
    ...COMPATIBLE.map((type) => ({ type, fake: () => openai as FakeUpstream, channel: () => ({ base_url: openai.baseUrl, models: [`${type}-model`] }) })),
  ];

  beforeAll(async () => {
    [fakes.anthropic, fakes.gemini, fakes.bedrock, fakes.cohere, fakes.ollama, openai] = await Promise.all([
      startAnthropicFake(),
      startGeminiFake(),
      startBedrockFake(),
      startCohereFake(),
      startOllamaFake(),
      startOpenAiFake(),
    ]);
    s = await startApp({ HEALTH_CHECK_ENABLED: 'false', RELAY_MAX_RETRIES: '0', CHANNEL_FAILURE_THRESHOLD: '1000' });
    for (const kind of kinds) await createChannel(s, { type: kind.type, name: `${kind.type}-ch`, ...kind.channel() });
  });
  afterAll(async () => {
    await s.close();
    await Promise.all([...Object.values(fakes), openai].map((f) => f.close()));
  });
  beforeEach(() => {
    for (const f of [...Object.values(fakes), openai]) f.mode = { kind: 'reply' };
  });

  it('offers 19 kinds', () => {
    expect(kinds).toHaveLength(19);
  });

  describe.each(kinds.map((k) => [k.type, k] as const))('%s', (type, kind) => {
    const model = `${type}-model`;
    const messages = [
      { role: 'system' as const, content: 'Be brief.' },
      { role: 'user' as const, content: `hello ${type}` },
    ];

    it('answers non-streaming with text, finish reason and usage mapped back', async () => {
      const before = kind.fake().requests.length;
      const completion = await sdk(s).chat.completions.create({ model, messages, temperature: 0.5, max_tokens: 50 });
      expect(completion.object).toBe('chat.completion');
      expect(completion.choices[0]!.message.content).toContain(`hello ${type}`);
      expect(completion.choices[0]!.finish_reason).toBe('stop');
      expect(completion.usage).toEqual({ prompt_tokens: FAKE_PROMPT_TOKENS, completion_tokens: FAKE_COMPLETION_TOKENS, total_tokens: FAKE_PROMPT_TOKENS + FAKE_COMPLETION_TOKENS });
      expect(kind.fake().requests.length).toBe(before + 1);
    });

    it('streams chunks with a final usage chunk when asked', async () => {
      const stream = await sdk(s).chat.completions.create({ model, messages, stream: true, stream_options: { include_usage: true } });
      let text = '';
      let finish: string | null = null;
      let usage: unknown = null;
      let chunks = 0;
      for await (const chunk of stream) {
        chunks++;
        text += chunk.choices[0]?.delta.content ?? '';
        finish = chunk.choices[0]?.finish_reason ?? finish;
        if (chunk.usage) usage = chunk.usage;
      }
      expect(chunks).toBeGreaterThan(2);
      expect(text).toContain(`hello ${type}`);
      expect(finish).toBe('stop');
      expect(usage).toMatchObject({ prompt_tokens: FAKE_PROMPT_TOKENS, completion_tokens: FAKE_COMPLETION_TOKENS });
    });

    it('maps tool calls both ways', async () => {
      kind.fake().mode = { kind: 'tool_call' };
      const tools = [{ type: 'function' as const, function: { name: 'get_weather', description: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
      const completion = await sdk(s).chat.completions.create({ model, messages, tools });
      expect(completion.choices[0]!.finish_reason).toBe('tool_calls');
      const call0 = completion.choices[0]!.message.tool_calls![0]!;
      expect(call0.type).toBe('function');
      if (call0.type !== 'function') throw new Error('not a function call');
      expect(call0.function.name).toBe('get_weather');
      expect(JSON.parse(call0.function.arguments)).toEqual(JSON.parse(FAKE_TOOL_ARGUMENTS));

      const streamed = await sdk(s).chat.completions.create({ model, messages, tools, stream: true });
      let args = '';
      let name = '';
      let finish: string | null = null;
      for await (const chunk of streamed) {
        for (const tc of chunk.choices[0]?.delta.tool_calls ?? []) {
          name += tc.function?.name ?? '';
          args += tc.function?.arguments ?? '';
        }
        finish = chunk.choices[0]?.finish_reason ?? finish;
      }
      expect(name).toBe('get_weather');
      expect(JSON.parse(args)).toEqual(JSON.parse(FAKE_TOOL_ARGUMENTS));
      expect(finish).toBe('tool_calls');

      // The tool result goes back in the provider's own shape and the conversation continues.
      kind.fake().mode = { kind: 'reply' };
      const followUp = await sdk(s).chat.completions.create({
        model,
        tools,
        messages: [...messages, { role: 'assistant', content: null, tool_calls: [call0] }, { role: 'tool', tool_call_id: call0.id, content: '{"temp":21}' }, { role: 'user', content: 'thanks' }],
      });
      expect(followUp.choices[0]!.message.content).toContain('thanks');
    });

    it('maps the length finish reason', async () => {
      kind.fake().mode = { kind: 'length' };
      const completion = await sdk(s).chat.completions.create({ model, messages });
      expect(completion.choices[0]!.finish_reason).toBe('length');
    });

    it('turns an upstream failure into an OpenAI-style error', async () => {
      kind.fake().mode = { kind: 'error', status: 500, message: `${type} exploded` };
      const res = await call(`${s.url}/v1/chat/completions`, { token: s.userToken, body: { model, messages } });
      expect(res.status).toBe(502);
      expect(res.json.error).toMatchObject({ type: 'upstream_error', code: 'upstream_error' });
      expect(res.json.error.message).toContain(`${type} exploded`);
    });
  });

  it('refuses values a provider cannot take with a 400, not an upstream error', async () => {
    const before = fakes.anthropic!.requests.length;
    const res = await call(`${s.url}/v1/chat/completions`, { token: s.userToken, body: { model: 'anthropic-model', messages: [{ role: 'user', content: 'x' }], n: 3 } });
    expect(res.status).toBe(400);
    expect(res.json.error).toMatchObject({ type: 'invalid_request_error', code: 'unsupported_parameter', param: 'n' });
    expect(fakes.anthropic!.requests.length).toBe(before);
  });

  it('sends Anthropic max_tokens always and the system prompt at the top level', async () => {
    await sdk(s).chat.completions.create({ model: 'anthropic-model', messages: [{ role: 'system', content: 'sys' }, { role: 'user', content: 'u' }], temperature: 0.2 });
    const body = fakes.anthropic!.requests.at(-1)!.json as Record<string, unknown>;
    expect(body).toMatchObject({ model: 'anthropic-model', system: 'sys', temperature: 0.2, messages: [{ role: 'user' }] });
    expect(typeof body.max_tokens).toBe('number');
  });

  it('joins the Gemini system message and the next user message with a blank line', async () => {
    await sdk(s).chat.completions.create({ model: 'gemini-model', messages: [{ role: 'system', content: 'sys' }, { role: 'user', content: 'u' }] });
    const req = fakes.gemini!.requests.at(-1)!;
    expect(req.path).toContain('/models/gemini-model:generateContent');
    expect(req.json).toMatchObject({ contents: [{ role: 'user', parts: [{ text: 'sys\n\nu' }] }] });
  });

  it('calls Azure deployments with api-key and api-version', async () => {
    await sdk(s).chat.completions.create({ model: 'azure-model', messages: [{ role: 'user', content: 'az' }] });
    const req = openai.requests.at(-1)!;
    expect(req.path).toBe('/openai/deployments/my-deployment/chat/completions?api-version=2024-10-21');
    expect(req.headers['api-key']).toBe('test-key');
    expect(req.headers.authorization).toBeUndefined();
  });

  it('streams Azure answers with content filter results as chat completion chunks only, the text whole', async () => {
    for (const filtered of [false, true]) {
      openai.mode = { kind: 'azure_filters', filtered };
      const stream = await sdk(s).chat.completions.create({ model: 'azure-model', messages: [{ role: 'user', content: 'filters' }], stream: true, stream_options: { include_usage: true } });
      const objects: string[] = [];
      let text = '';
      let finish: string | null = null;
      let usage: unknown = null;
      for await (const chunk of stream) {
        objects.push(chunk.object);
        expect(chunk.id).toBe('chatcmpl-fake123');
        text += chunk.choices[0]?.delta.content ?? '';
        finish = chunk.choices[0]?.finish_reason ?? finish;
        if (chunk.usage) usage = chunk.usage;
      }
      expect(objects.length).toBeGreaterThan(3);
      expect(new Set(objects)).toEqual(new Set(['chat.completion.chunk']));
      expect(text).toBe('Hello! You said: filters');
      expect(finish).toBe(filtered ? 'content_filter' : 'stop');
      expect(usage).toMatchObject({ prompt_tokens: FAKE_PROMPT_TOKENS, completion_tokens: FAKE_COMPLETION_TOKENS });
    }
    openai.mode = { kind: 'azure_filters' };
    const completion = await sdk(s).chat.completions.create({ model: 'azure-model', messages: [{ role: 'user', content: 'filters' }] });
    expect(completion.choices[0]!.message.content).toBe('Hello! You said: filters');
    expect((completion as unknown as { prompt_filter_results: unknown[] }).prompt_filter_results).toHaveLength(1);
  });

  it('signs Bedrock requests with SigV4', async () => {
    await sdk(s).chat.completions.create({ model: 'bedrock-model', messages: [{ role: 'user', content: 'sig' }] });
    const req = fakes.bedrock!.requests.at(-1)!;
    expect(req.path).toBe('/model/bedrock-model/converse');
    expect(req.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/us-east-1\/bedrock\/aws4_request/);
  });
});
