/**
 * The Anthropic Messages API (`POST /v1/messages`, `/v1/messages/count_tokens`) end to end, with
 * the official Anthropic SDK as the client: an anthropic channel served natively (the upstream
 * gets the client's body, model replaced), and OpenAI-compatible, Gemini, Bedrock and Ollama
 * channels through the chat conversion, each against its fake upstream. One usage event per
 * request. The common cases run in the distributed mode too (NATS + MariaDB + Redis).
 */
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import type { ChannelType } from '../../src/relay/channel.js';
import { call, startApp, type RunningApp } from '../support/app.js';
import { fakeCountedTokens, startAnthropicFake } from '../support/fake-upstreams/anthropic.js';
import { BEDROCK_API_KEY, startBedrockFake } from '../support/fake-upstreams/bedrock.js';
import { FAKE_COMPLETION_TOKENS, FAKE_PROMPT_TOKENS, type FakeUpstream } from '../support/fake-upstreams/fake.js';
import { startGeminiFake } from '../support/fake-upstreams/gemini.js';
import { startOllamaFake } from '../support/fake-upstreams/ollama.js';
import { startOpenAiFake } from '../support/fake-upstreams/openai.js';
import { distributedEnv } from '../support/modes.js';
import { createChannel, usageEvents } from '../support/relay.js';

const services = inject('services');
const urls = inject('serviceUrls');

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const WEATHER_TOOL = { name: 'get_weather', description: 'The weather in a city', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] } };
/** A 1x1 PNG. */
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

interface Kind {
  type: ChannelType;
  model: string;
  fake: () => FakeUpstream;
}

/** What each fake upstream received as the conversation's system prompt, last user text, and tool result. */
function upstreamView(type: ChannelType, json: Json): { system: string; stop: unknown; user: unknown; toolResult: string | null } {
  switch (type) {
    case 'gemini': {
      const contents = json.contents as Json[];
      const response = contents.flatMap((c) => c.parts).find((p: Json) => p.functionResponse);
      // The Gemini conversion puts the system text ahead of the first user message's.
      return { system: contents[0].parts[0].text, stop: json.generationConfig?.stopSequences, user: undefined, toolResult: response ? JSON.stringify(response.functionResponse.response) : null };
    }
    case 'bedrock': {
      const result = (json.messages as Json[]).flatMap((m) => m.content).find((b: Json) => b.toolResult);
      return { system: (json.system ?? []).map((b: Json) => b.text).join(''), stop: json.inferenceConfig?.stopSequences, user: undefined, toolResult: result ? JSON.stringify(result.toolResult.content) : null };
    }
    default: {
      // openai and ollama: chat messages
      const messages = json.messages as Json[];
      const tool = messages.find((m) => m.role === 'tool');
      return { system: messages.filter((m) => m.role === 'system').map((m) => m.content).join(''), stop: json.stop ?? json.options?.stop, user: json.user, toolResult: tool ? String(tool.content) : null };
    }
  }
}

interface Setup {
  env: Record<string, string>;
  cleanup: () => Promise<void>;
}

function suite(name: string, setup: () => Setup, enabled: boolean, kindsToRun: ChannelType[]) {
  describe.skipIf(!enabled)(`Messages API (${name})`, () => {
    let s: RunningApp;
    let key: string;
    let cleanup: () => Promise<void> = async () => undefined;
    const fakes = new Map<ChannelType, FakeUpstream>();
    const kinds: Kind[] = kindsToRun.map((type) => ({ type, model: `${type}-model`, fake: () => fakes.get(type)! }));

    const client = (apiKey = key) => new Anthropic({ apiKey, baseURL: s.url, maxRetries: 0, timeout: 15_000 });

    beforeAll(async () => {
      const [anthropic, openai, gemini, bedrock, ollama] = await Promise.all([startAnthropicFake(), startOpenAiFake(), startGeminiFake(), startBedrockFake(), startOllamaFake()]);
      fakes.set('anthropic', anthropic).set('openai', openai).set('gemini', gemini).set('bedrock', bedrock).set('ollama', ollama);
      const prepared = setup();
      cleanup = prepared.cleanup;
      s = await startApp({ HEALTH_CHECK_ENABLED: 'false', RELAY_MAX_RETRIES: '0', CHANNEL_FAILURE_THRESHOLD: '1000', QUOTA_RESERVE_COMPLETION_TOKENS: '1', ...prepared.env });
      // The anthropic channel maps the client's name to another upstream model: the body's model is the only change.
      await createChannel(s, { type: 'anthropic', base_url: anthropic.baseUrl, models: ['anthropic-model'], model_mapping: { 'anthropic-model': 'claude-upstream-1' } });
      await createChannel(s, { type: 'openai', base_url: openai.baseUrl, models: ['openai-model', 'limited-model'] });
      await createChannel(s, { type: 'gemini', base_url: gemini.baseUrl, models: ['gemini-model'] });
      await createChannel(s, { type: 'bedrock', base_url: bedrock.baseUrl, key: BEDROCK_API_KEY, config: { region: 'us-east-1' }, models: ['bedrock-model'] });
      await createChannel(s, { type: 'ollama', base_url: ollama.baseUrl, key: '', models: ['ollama-model'] });
      const created = await call(`${s.url}/api/admin/keys`, { token: s.adminToken, body: { name: 'messages', user_id: 'user-1' } });
      expect(created.status, created.text).toBe(201);
      key = (created.json as { key: string }).key;
    });
    afterAll(async () => {
      await s?.close();
      await Promise.all([...fakes.values()].map((f) => f.close()));
      await cleanup();
    });
    beforeEach(() => {
      for (const f of fakes.values()) f.mode = { kind: 'reply' };
    });

    /** The usage events of one request. */
    const eventsOf = async (requestId: string | null | undefined) => (await usageEvents(s)).filter((e) => e.request_id === requestId);

    describe.each(kinds.map((k) => [k.type, k] as const))('%s', (type, kind) => {
      const model = kind.model;

      it('answers a message with text, stop reason and usage; one usage event with the upstream counts', async () => {
        const { data, request_id } = await client()
          .messages.create({ model, max_tokens: 64, system: 'Be brief.', messages: [{ role: 'user', content: `hello ${type}` }] })
          .withResponse();
        expect(data.type).toBe('message');
        expect(data.role).toBe('assistant');
        expect(data.id).toMatch(/^msg_/);
        expect(data.content).toEqual([expect.objectContaining({ type: 'text', text: expect.stringContaining(`hello ${type}`) })]);
        expect(data.stop_reason).toBe('end_turn');
        expect(data.stop_sequence).toBeNull();
        expect(data.usage).toMatchObject({ input_tokens: FAKE_PROMPT_TOKENS, output_tokens: FAKE_COMPLETION_TOKENS });
        expect(request_id).toBeTruthy();
        const events = await eventsOf(request_id);
        expect(events).toHaveLength(1);
        expect(events[0]).toMatchObject({ provider: type, model_requested: model, prompt_tokens: FAKE_PROMPT_TOKENS, completion_tokens: FAKE_COMPLETION_TOKENS, status: 200, stream: false, key_id: expect.any(String) });
      });

      it('streams with messages.stream(): the final message and the event sequence', async () => {
        const stream = client().messages.stream({ model, max_tokens: 64, messages: [{ role: 'user', content: `stream ${type}` }] });
        const types: string[] = [];
        stream.on('streamEvent', (event) => types.push(event.type));
        const final = await stream.finalMessage();
        expect(final.content).toEqual([expect.objectContaining({ type: 'text', text: expect.stringContaining(`stream ${type}`) })]);
        expect(final.stop_reason).toBe('end_turn');
        expect(final.usage).toMatchObject({ input_tokens: FAKE_PROMPT_TOKENS, output_tokens: FAKE_COMPLETION_TOKENS });
        expect(types[0]).toBe('message_start');
        expect(types.slice(-3)).toEqual(['content_block_stop', 'message_delta', 'message_stop']);
        expect(types.filter((t) => t === 'content_block_delta').length).toBeGreaterThanOrEqual(2);
        const events = await eventsOf(stream.request_id);
        expect(events).toHaveLength(1);
        expect(events[0]).toMatchObject({ provider: type, prompt_tokens: FAKE_PROMPT_TOKENS, completion_tokens: FAKE_COMPLETION_TOKENS, stream: true, status: 200 });
      });

      it('streams with create({stream: true})', async () => {
        const stream = await client().messages.create({ model, max_tokens: 64, stream: true, messages: [{ role: 'user', content: `raw ${type}` }] });
        let text = '';
        let stop: string | null = null;
        for await (const event of stream) {
          if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') text += event.delta.text;
          if (event.type === 'message_delta') stop = event.delta.stop_reason;
        }
        expect(text).toContain(`raw ${type}`);
        expect(stop).toBe('end_turn');
      });

      it('round-trips a tool call (tool_use, then tool_result) and streams tool input', async () => {
        kind.fake().mode = { kind: 'tool_call' };
        const first = await client().messages.create({ model, max_tokens: 64, tools: [WEATHER_TOOL], tool_choice: { type: 'auto' }, messages: [{ role: 'user', content: 'weather in Paris?' }] });
        expect(first.stop_reason).toBe('tool_use');
        const use = first.content.find((b) => b.type === 'tool_use');
        expect(use).toMatchObject({ type: 'tool_use', name: 'get_weather', input: { city: 'Paris' } });

        const streamed = await client().messages.stream({ model, max_tokens: 64, tools: [WEATHER_TOOL], messages: [{ role: 'user', content: 'weather in Paris?' }] }).finalMessage();
        expect(streamed.stop_reason).toBe('tool_use');
        expect(streamed.content.find((b) => b.type === 'tool_use')).toMatchObject({ name: 'get_weather', input: { city: 'Paris' } });

        kind.fake().mode = { kind: 'reply' };
        const before = kind.fake().requests.length;
        const second = await client().messages.create({
          model,
          max_tokens: 64,
          tools: [WEATHER_TOOL],
          messages: [
            { role: 'user', content: 'weather in Paris?' },
            { role: 'assistant', content: [{ type: 'text', text: 'Let me look.' }, use as Anthropic.ToolUseBlockParam] },
            { role: 'user', content: [{ type: 'tool_result', tool_use_id: (use as { id: string }).id, content: [{ type: 'text', text: 'sunny, 21 C' }] }, { type: 'text', text: 'and now?' }] },
          ],
        });
        expect(second.stop_reason).toBe('end_turn');
        const sent = kind.fake().requests[before]!.json as Json;
        if (type === 'anthropic') expect(sent.messages[2].content[0]).toMatchObject({ type: 'tool_result', content: [{ type: 'text', text: 'sunny, 21 C' }] });
        else expect(upstreamView(type, sent).toolResult).toContain('sunny, 21 C');
      });

      it('system blocks and stop sequences reach the upstream in its own format', async () => {
        const before = kind.fake().requests.length;
        await client().messages.create({
          model,
          max_tokens: 64,
          system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }, { type: 'text', text: 'Be kind.' }],
          stop_sequences: ['STOP'],
          metadata: { user_id: 'someone' },
          messages: [{ role: 'user', content: 'hi' }],
        });
        const sent = kind.fake().requests[before]!.json as Json;
        if (type === 'anthropic') {
          expect(sent.system).toEqual([{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }, { type: 'text', text: 'Be kind.' }]);
          expect(sent.stop_sequences).toEqual(['STOP']);
        } else {
          const view = upstreamView(type, sent);
          expect(view.system).toMatch(/^Be brief\.\n\nBe kind\./);
          expect(view.stop).toEqual(['STOP']);
          if (type === 'openai') expect(view.user).toBe('someone');
        }
      });

      it('reports max_tokens as the stop reason', async () => {
        kind.fake().mode = { kind: 'length' };
        const message = await client().messages.create({ model, max_tokens: 3, messages: [{ role: 'user', content: 'hi' }] });
        expect(message.stop_reason).toBe('max_tokens');
      });
    });

    it('anthropic: the upstream receives the client body unchanged but for the model, with anthropic-version and anthropic-beta', async () => {
      if (!fakes.has('anthropic')) return;
      const fake = fakes.get('anthropic')!;
      const body = {
        model: 'anthropic-model',
        max_tokens: 100,
        system: [{ type: 'text', text: 'You are a coding agent.', cache_control: { type: 'ephemeral' } }],
        messages: [{ role: 'user', content: [{ type: 'text', text: 'hi there', cache_control: { type: 'ephemeral' } }] }],
        metadata: { user_id: 'user_abc' },
        thinking: { type: 'enabled', budget_tokens: 1024 },
        top_k: 5,
      };
      const res = await fetch(`${s.url}/v1/messages`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'anthropic-beta': 'interleaved-thinking-2025-05-14' }, body: JSON.stringify(body) });
      expect(res.status).toBe(200);
      const upstream = fake.requests.at(-1)!;
      expect(upstream.path).toBe('/v1/messages');
      expect(upstream.json).toEqual({ ...body, model: 'claude-upstream-1' });
      expect(upstream.headers['x-api-key']).toBe('test-key');
      expect(upstream.headers['anthropic-version']).toBe('2023-06-01');
      expect(upstream.headers['anthropic-beta']).toBe('interleaved-thinking-2025-05-14');
      // The upstream's answer, untouched.
      expect(((await res.json()) as Json).id).toBe('msg_fake_1');
    });

    it('openai: what Claude Code sends (system blocks with cache_control, tools, metadata.user_id, thinking, stream, anthropic-beta) is served', async () => {
      if (!fakes.has('openai')) return;
      const fake = fakes.get('openai')!;
      const before = fake.requests.length;
      const stream = client().messages.stream(
        {
          model: 'openai-model',
          max_tokens: 32000,
          system: [
            { type: 'text', text: "You are Claude Code, Anthropic's official CLI for Claude.", cache_control: { type: 'ephemeral' } },
            { type: 'text', text: 'Be careful with files.', cache_control: { type: 'ephemeral' } },
          ],
          tools: [{ ...WEATHER_TOOL, cache_control: { type: 'ephemeral' } } as Anthropic.Tool],
          metadata: { user_id: 'user_claude_code_session_1' },
          thinking: { type: 'enabled', budget_tokens: 4000 },
          stop_sequences: ['\n\nHuman:'],
          messages: [{ role: 'user', content: [{ type: 'text', text: '<system-reminder>context</system-reminder>' }, { type: 'text', text: 'fix the bug', cache_control: { type: 'ephemeral' } }] }],
        },
        { headers: { 'anthropic-beta': 'claude-code-20250219,interleaved-thinking-2025-05-14,fine-grained-tool-streaming-2025-05-14' } },
      );
      const final = await stream.finalMessage();
      expect(final.content[0]).toMatchObject({ type: 'text', text: expect.stringContaining('fix the bug') });
      const sent = fake.requests[before]!.json as Json;
      expect(sent.model).toBe('openai-model');
      expect(sent.messages[0]).toEqual({ role: 'system', content: "You are Claude Code, Anthropic's official CLI for Claude.\n\nBe careful with files." });
      expect(sent.messages[1]).toEqual({ role: 'user', content: '<system-reminder>context</system-reminder>\n\nfix the bug' });
      expect(sent.tools).toEqual([{ type: 'function', function: { name: 'get_weather', description: 'The weather in a city', parameters: WEATHER_TOOL.input_schema } }]);
      expect(sent.user).toBe('user_claude_code_session_1');
      expect(sent.stop).toEqual(['\n\nHuman:']);
      expect(sent.max_tokens).toBe(32000);
      expect(sent.stream).toBe(true);
      expect(sent.stream_options).toEqual({ include_usage: true });
      expect(JSON.stringify(sent)).not.toContain('cache_control');
      expect(sent.thinking).toBeUndefined();
    });

    it('anthropic: what only Anthropic serves (a server tool, a PDF) is passed through; refused for other kinds', async () => {
      if (!fakes.has('anthropic') || !fakes.has('openai')) return;
      const body = {
        max_tokens: 64,
        tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 2 }],
        messages: [{ role: 'user' as const, content: [{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0xLjQK' } }, { type: 'text', text: 'summarise' }] }],
      };
      const answered = await client().messages.create({ model: 'anthropic-model', ...body } as never);
      expect((answered as Anthropic.Message).content[0]).toMatchObject({ type: 'text', text: expect.stringContaining('summarise') });
      expect(fakes.get('anthropic')!.requests.at(-1)!.json).toEqual({ model: 'claude-upstream-1', ...body });
      const refused = await client().messages.create({ model: 'openai-model', ...body } as never).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(Anthropic.BadRequestError);
    });

    it('openai: a connection lost mid-stream ends the stream with an error event after the text so far', async () => {
      if (!fakes.has('openai')) return;
      fakes.get('openai')!.mode = { kind: 'stream_error' };
      const stream = await client().messages.create({ model: 'openai-model', max_tokens: 16, stream: true, messages: [{ role: 'user', content: 'hello there' }] });
      const seen: string[] = [];
      const error = await (async () => {
        for await (const event of stream) seen.push(event.type);
      })().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Anthropic.APIError);
      expect((error as InstanceType<typeof Anthropic.APIError>).type).toBe('api_error');
      expect(seen.slice(0, 3)).toEqual(['message_start', 'content_block_start', 'content_block_delta']);
      expect(seen).not.toContain('message_stop');
    });

    it('openai: images (base64 and url) become image_url parts', async () => {
      if (!fakes.has('openai')) return;
      const fake = fakes.get('openai')!;
      const before = fake.requests.length;
      await client().messages.create({
        model: 'openai-model',
        max_tokens: 16,
        messages: [
          {
            role: 'user',
            content: [
              { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
              { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
              { type: 'text', text: 'what is this?' },
            ],
          },
        ],
      });
      const sent = fake.requests[before]!.json as Json;
      expect(sent.messages[0].content).toEqual([
        { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
        { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } },
        { type: 'text', text: 'what is this?' },
      ]);
    });

    it('streams Anthropic event lines: message_start, then one ping', async () => {
      if (!fakes.has('openai')) return;
      // Claude Code posts to /v1/messages?beta=true.
      const res = await fetch(`${s.url}/v1/messages?beta=true`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'openai-model', max_tokens: 16, stream: true, messages: [{ role: 'user', content: 'hi' }] }) });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
      expect(res.headers.get('request-id')).toBeTruthy();
      const text = await res.text();
      const names = [...text.matchAll(/^event: (\w+)$/gm)].map((m) => m[1]);
      expect(names.slice(0, 4)).toEqual(['message_start', 'ping', 'content_block_start', 'content_block_delta']);
      expect(names.filter((n) => n === 'ping')).toHaveLength(1);
      expect(names.slice(-3)).toEqual(['content_block_stop', 'message_delta', 'message_stop']);
      for (const block of text.trim().split('\n\n')) {
        const [eventLine, dataLine] = block.split('\n');
        expect(JSON.parse(dataLine!.slice(6)).type).toBe(eventLine!.slice(7));
      }
      expect(text).not.toContain('[DONE]');
    });

    it('a session user (Authorization: Bearer <access token>) may call it too', async () => {
      const user = new Anthropic({ apiKey: null, authToken: s.userToken, baseURL: s.url, maxRetries: 0 });
      const message = await user.messages.create({ model: kinds[0]!.model, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] });
      expect(message.type).toBe('message');
    });

    it('Object.prototype names as the model or a field are refused like any unknown name', async () => {
      const names = [...new Set([...Object.getOwnPropertyNames(Object.prototype), '__proto__'])];
      for (const name of names) {
        const headers = { 'content-type': 'application/json', 'x-api-key': key };
        const message = await fetch(`${s.url}/v1/messages`, { method: 'POST', headers, body: JSON.stringify({ model: name, max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }) });
        expect([name, message.status]).toEqual([name, 404]);
        expect(((await message.json()) as Json).type).toBe('error');
        const counted = await fetch(`${s.url}/v1/messages/count_tokens`, { method: 'POST', headers, body: JSON.stringify({ model: name, messages: [{ role: 'user', content: 'hi' }] }) });
        expect([name, counted.status]).toEqual([name, 404]);
        if (name === '__proto__') continue; // refused by the JSON parser itself
        const field = await fetch(`${s.url}/v1/messages`, { method: 'POST', headers, body: `{"model":"${kinds[0]!.model}","max_tokens":5,"messages":[{"role":"user","content":"hi"}],"${name}":1}` });
        expect([name, field.status]).toEqual([name, 400]);
      }
      const events = await usageEvents(s);
      expect(events.filter((e) => names.includes(e.model_requested as string)).every((e) => e.status === 404)).toBe(true);
    });

    describe('count_tokens', () => {
      it('a model served by another kind: counted by the relay tokenizer; no usage event', async () => {
        if (!fakes.has('openai')) return;
        const small = await client().messages.countTokens({ model: 'openai-model', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
        const large = await client()
          .messages.countTokens({ model: 'openai-model', system: 'You are a careful assistant.', tools: [WEATHER_TOOL], messages: [{ role: 'user', content: 'hi '.repeat(200) }] })
          .withResponse();
        expect(small.response.headers.get('x-token-count-source')).toBe('tokenizer');
        expect(small.data.input_tokens).toBeGreaterThan(0);
        expect(large.data.input_tokens).toBeGreaterThan(small.data.input_tokens + 150);
        expect(await eventsOf(large.request_id)).toHaveLength(0);
      });

      it('a model served by an anthropic channel: its count_tokens counts (the body passed through, model replaced); the tokenizer when it fails', async () => {
        if (!fakes.has('anthropic')) return;
        const fake = fakes.get('anthropic')!;
        const body = { model: 'anthropic-model', system: [{ type: 'text' as const, text: 'sys', cache_control: { type: 'ephemeral' as const } }], messages: [{ role: 'user' as const, content: 'hi' }, { role: 'assistant' as const, content: 'hello' }, { role: 'user' as const, content: 'bye' }] };
        const counted = await client().messages.countTokens(body, { headers: { 'anthropic-beta': 'token-counting-2024-11-01' } }).withResponse();
        expect(counted.data).toEqual({ input_tokens: fakeCountedTokens(3) });
        expect(counted.response.headers.get('x-token-count-source')).toBe('upstream');
        const upstream = fake.requests.at(-1)!;
        expect(upstream.path).toBe('/v1/messages/count_tokens');
        expect(upstream.json).toEqual({ ...body, model: 'claude-upstream-1' });
        expect(upstream.headers['anthropic-beta']).toBe('token-counting-2024-11-01');
        expect(await eventsOf(counted.request_id)).toHaveLength(0);

        fake.mode = { kind: 'error', status: 500 };
        const fallback = await client().messages.countTokens(body).withResponse();
        expect(fallback.response.headers.get('x-token-count-source')).toBe('tokenizer');
        expect(fallback.data.input_tokens).toBeGreaterThan(0);
      });

      it('applies the caller and key checks: 401, 403 model_not_allowed, 404 for a model nobody serves', async () => {
        const unauthenticated = await client('sk-nope').messages.countTokens({ model: kinds[0]!.model, messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
        expect(unauthenticated).toBeInstanceOf(Anthropic.AuthenticationError);
        const created = await call(`${s.url}/api/admin/keys`, { token: s.adminToken, body: { name: 'ct', user_id: 'user-1', permissions: { models: ['limited-model'] } } });
        const restricted = client((created.json as { key: string }).key);
        expect(await restricted.messages.countTokens({ model: kinds[0]!.model, messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e)).toBeInstanceOf(Anthropic.PermissionDeniedError);
        expect(await client().messages.countTokens({ model: 'no-such-model', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e)).toBeInstanceOf(Anthropic.NotFoundError);
      });
    });

    describe('errors in Anthropic shape, with request-id', () => {
      const post = (body: unknown, headers: Record<string, string> = { 'x-api-key': key }) =>
        fetch(`${s.url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });

      it('400 for an unknown (misspelt) field, a missing max_tokens, and JSON that is not JSON', async () => {
        const typo = await post({ model: kinds[0]!.model, max_tokens: 5, temprature: 0.5, messages: [{ role: 'user', content: 'hi' }] });
        expect(typo.status).toBe(400);
        expect(typo.headers.get('request-id')).toBeTruthy();
        const body = (await typo.json()) as Json;
        expect(body).toEqual({ type: 'error', error: { type: 'invalid_request_error', message: 'temprature: Extra inputs are not permitted' }, request_id: typo.headers.get('request-id') });

        const missing = await post({ model: kinds[0]!.model, messages: [{ role: 'user', content: 'hi' }] });
        expect(missing.status).toBe(400);
        expect(((await missing.json()) as Json).error.message).toMatch(/^max_tokens: /);

        const notJson = await post('{"model":');
        expect(notJson.status).toBe(400);
        expect(((await notJson.json()) as Json).error.type).toBe('invalid_request_error');

        const sdkError = await client()
          .messages.create({ model: kinds[0]!.model, max_tokens: 5, messages: [{ role: 'user', content: 'hi' }], top_k: -1 } as never)
          .catch((e: unknown) => e);
        expect(sdkError).toBeInstanceOf(Anthropic.BadRequestError);
        expect((sdkError as InstanceType<typeof Anthropic.BadRequestError>).type).toBe('invalid_request_error');
      });

      it('400 for a server tool on a model served by another kind; the usage event records the refusal', async () => {
        if (!fakes.has('openai')) return;
        const error = await client()
          .messages.create({ model: 'openai-model', max_tokens: 16, tools: [{ type: 'web_search_20250305', name: 'web_search' } as never], messages: [{ role: 'user', content: 'search' }] })
          .catch((e: unknown) => e as InstanceType<typeof Anthropic.APIError>);
        expect(error).toBeInstanceOf(Anthropic.BadRequestError);
        expect((error as InstanceType<typeof Anthropic.APIError>).message).toContain('web_search_20250305');
        const events = await eventsOf((error as InstanceType<typeof Anthropic.APIError>).requestID);
        expect(events).toHaveLength(1);
        expect(events[0]).toMatchObject({ status: 400, error_code: 'unsupported_parameter' });
      });

      it('401 authentication_error for a bad key (x-api-key and Bearer)', async () => {
        const error = await client('sk-not-a-real-key').messages.create({ model: kinds[0]!.model, max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(Anthropic.AuthenticationError);
        const res = await post({ model: kinds[0]!.model, max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }, { authorization: 'Bearer sk-nope' });
        expect(res.status).toBe(401);
        expect(((await res.json()) as Json).error.type).toBe('authentication_error');
      });

      it('429 rate_limit_error with retry-after and the rate-limit headers', async () => {
        const created = await call(`${s.url}/api/admin/keys`, { token: s.adminToken, body: { name: 'limited', user_id: 'user-1', permissions: { rate_limits: { requests_per_minute: 1 } } } });
        const limited = (created.json as { key: string }).key;
        const body = { model: kinds[0]!.model, max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] };
        const ok = await post(body, { 'x-api-key': limited });
        expect(ok.status).toBe(200);
        expect(ok.headers.get('x-ratelimit-remaining-requests')).toBe('0');
        const refused = await post(body, { 'x-api-key': limited });
        expect(refused.status).toBe(429);
        expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
        expect(refused.headers.get('x-ratelimit-limit-requests')).toBe('1');
        expect(((await refused.json()) as Json).error).toMatchObject({ type: 'rate_limit_error', message: expect.stringMatching(/^rate_limit_exceeded: /) });
      });

      it('403 permission_error for a model the key may not use; 404 not_found_error when no channel serves it', async () => {
        const created = await call(`${s.url}/api/admin/keys`, { token: s.adminToken, body: { name: 'one-model', user_id: 'user-1', permissions: { models: ['limited-model'] } } });
        const restricted = (created.json as { key: string }).key;
        const refused = await post({ model: kinds[0]!.model, max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }, { 'x-api-key': restricted });
        expect(refused.status).toBe(403);
        expect(((await refused.json()) as Json).error).toMatchObject({ type: 'permission_error', message: expect.stringMatching(/^model_not_allowed: /) });
        const unknown = await post({ model: 'no-such-model', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] });
        expect(unknown.status).toBe(404);
        expect(((await unknown.json()) as Json).error).toMatchObject({ type: 'not_found_error', message: expect.stringMatching(/no available channels for model no-such-model/) });
      });

      it('an upstream error mid-stream ends the stream with an error event the SDK raises', async () => {
        const kind = kinds[0]!;
        kind.fake().mode = { kind: 'stream_error' };
        const stream = client().messages.stream({ model: kind.model, max_tokens: 16, messages: [{ role: 'user', content: 'hello there' }] });
        const error = await stream.finalMessage().catch((e: unknown) => e);
        expect(error).toBeInstanceOf(Anthropic.APIError);
        const events = await eventsOf(stream.request_id);
        expect(events).toHaveLength(1);
        expect(events[0]!.status).toBe(502);
      });

      it('an anthropic upstream’s 400 reaches the client with its type and message', async () => {
        if (!fakes.has('anthropic')) return;
        fakes.get('anthropic')!.mode = { kind: 'error', status: 400, message: 'messages.0.content: something the upstream refuses' };
        const res = await post({ model: 'anthropic-model', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] });
        expect(res.status).toBe(400);
        expect(((await res.json()) as Json).error).toEqual({ type: 'invalid_request_error', message: 'messages.0.content: something the upstream refuses' });
      });

      it('maintenance: 503 overloaded_error with retry-after', async () => {
        const on = await call(`${s.url}/v1/admin/maintenance`, { token: s.adminToken, body: { enabled: true, message: 'Upgrading' } });
        expect(on.status).toBe(200);
        try {
          const res = await post({ model: kinds[0]!.model, max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] });
          expect(res.status).toBe(503);
          expect(res.headers.get('retry-after')).toBe('60');
          expect(res.headers.get('request-id')).toBeTruthy();
          expect(((await res.json()) as Json).error).toEqual({ type: 'overloaded_error', message: 'maintenance: Upgrading' });
        } finally {
          await call(`${s.url}/v1/admin/maintenance`, { token: s.adminToken, body: { enabled: false } });
        }
      });

      // Last: the upstream's 429 cools its channel down.
      it('an upstream 429 is answered as a rate_limit_error', async () => {
        const kind = kinds[0]!;
        kind.fake().mode = { kind: 'error', status: 429, message: 'slow down', retryAfterSeconds: 7 };
        const error = await client().messages.create({ model: kind.model, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(Anthropic.RateLimitError);
      });
    });

  });
}

suite('embedded', () => ({ env: {}, cleanup: async () => undefined }), true, ['anthropic', 'openai', 'gemini', 'bedrock', 'ollama']);

suite(
  'distributed',
  () => distributedEnv(urls),
  services.nats && services.mysql && services.redis,
  ['openai', 'anthropic'],
);
