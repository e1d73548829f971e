/**
 * The Responses API end to end, with the official OpenAI SDK as the client: native on openai and
 * azure channels (the fake's /responses), converted through chat completions on the anthropic,
 * gemini, bedrock and ollama kinds (each fake speaking its own wire format); stored responses
 * (retrieve, delete, previous_response_id chains) per user, embedded and on two distributed
 * instances.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import type { ChannelType } from '../../src/relay/channel.js';
import { call, loggedInUser, startApp, type RunningApp } from '../support/app.js';
import { dereferencedOpenapi } from '../support/openapi.js';
import { startAnthropicFake } from '../support/fake-upstreams/anthropic.js';
import { BEDROCK_API_KEY, startBedrockFake } from '../support/fake-upstreams/bedrock.js';
import { FAKE_COMPLETION_TOKENS, FAKE_PROMPT_TOKENS, FAKE_TOOL_ARGUMENTS, type FakeUpstream } from '../support/fake-upstreams/fake.js';
import { startGeminiFake } from '../support/fake-upstreams/gemini.js';
import { startOllamaFake } from '../support/fake-upstreams/ollama.js';
import { startOpenAiFake, type OpenAiFake } from '../support/fake-upstreams/openai.js';
import { distributedEnv } from '../support/modes.js';
import { createChannel, sdk, usageEvents } from '../support/relay.js';

interface Kind {
  type: ChannelType;
  native: boolean;
  fake: () => FakeUpstream;
  /** The path the upstream was called on. */
  path: RegExp;
  channel: () => { base_url: string; key?: string; config?: Record<string, unknown>; models: string[] };
}

const tool = { type: 'function' as const, name: 'get_weather', description: 'Weather of a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }, strict: false };

/** The last request a fake received, as JSON. */
const lastJson = (fake: FakeUpstream) => fake.requests.at(-1)!.json as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('the Responses API (embedded)', () => {
  let s: RunningApp;
  let openai: OpenAiFake;
  const fakes: Record<string, FakeUpstream> = {};

  const kinds: Kind[] = [
    { type: 'openai', native: true, fake: () => openai, path: /^\/v1\/responses$/, channel: () => ({ base_url: openai.baseUrl, models: ['openai-model'] }) },
    { type: 'azure', native: true, fake: () => openai, path: /^\/openai\/v1\/responses$/, channel: () => ({ base_url: openai.origin, config: { deployment: 'my-deployment' }, models: ['azure-model'] }) },
    { type: 'anthropic', native: false, fake: () => fakes.anthropic!, path: /messages/, channel: () => ({ base_url: fakes.anthropic!.baseUrl, models: ['anthropic-model'] }) },
    { type: 'gemini', native: false, fake: () => fakes.gemini!, path: /generateContent|streamGenerateContent/, channel: () => ({ base_url: fakes.gemini!.baseUrl, models: ['gemini-model'] }) },
    {
      type: 'bedrock',
      native: false,
      fake: () => fakes.bedrock!,
      path: /converse/,
      channel: () => ({ base_url: fakes.bedrock!.baseUrl, key: BEDROCK_API_KEY, config: { region: 'us-east-1' }, models: ['bedrock-model'] }),
    },
    { type: 'ollama', native: false, fake: () => fakes.ollama!, path: /\/api\/chat/, channel: () => ({ base_url: fakes.ollama!.baseUrl, key: '', models: ['ollama-model'] }) },
  ];

  beforeAll(async () => {
    [openai, fakes.anthropic, fakes.gemini, fakes.bedrock, fakes.ollama] = await Promise.all([startOpenAiFake(), startAnthropicFake(), startGeminiFake(), startBedrockFake(), startOllamaFake()]);
    s = await startApp({ HEALTH_CHECK_ENABLED: 'false', RELAY_MAX_RETRIES: '0', CHANNEL_FAILURE_THRESHOLD: '1000' });
    for (const kind of kinds) await createChannel(s, { type: kind.type, name: `${kind.type}-ch`, ...kind.channel() });
  });
  afterAll(async () => {
    await s.close();
    await Promise.all([openai, ...Object.values(fakes)].map((f) => f.close()));
  });
  beforeEach(() => {
    for (const f of [openai, ...Object.values(fakes)]) f.mode = { kind: 'reply' };
  });

  describe.each(kinds.map((k) => [k.type, k] as const))('%s', (type, kind) => {
    const model = `${type}-model`;

    it('answers a response object, keeps it, and retrieves it', async () => {
      const before = kind.fake().requests.length;
      const response = await sdk(s).responses.create({ model, input: `hello ${type}`, instructions: 'Be brief.', max_output_tokens: 50, metadata: { case: type } });
      expect(kind.fake().requests.length).toBe(before + 1);
      expect(kind.fake().requests.at(-1)!.path).toMatch(kind.path);
      expect(response).toMatchObject({ object: 'response', status: 'completed', instructions: 'Be brief.' });
      expect(response.id).toMatch(/^resp_/);
      expect(response.output_text).toContain(`hello ${type}`);
      expect(response.output[0]).toMatchObject({ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', annotations: [] }] });
      expect(response.usage).toMatchObject({ input_tokens: FAKE_PROMPT_TOKENS, output_tokens: FAKE_COMPLETION_TOKENS, total_tokens: FAKE_PROMPT_TOKENS + FAKE_COMPLETION_TOKENS });
      if (kind.native) {
        // Switchyard is the one store: the upstream is told not to keep anything.
        expect(lastJson(kind.fake())).toMatchObject({ store: false, input: `hello ${type}`, instructions: 'Be brief.' });
        expect(lastJson(kind.fake()).model).toBe(type === 'azure' ? 'my-deployment' : model);
      } else expect(response.metadata).toEqual({ case: type });

      const stored = await sdk(s).responses.retrieve(response.id);
      expect(stored).toMatchObject({ id: response.id, object: 'response', status: 'completed', store: true, output: response.output, usage: response.usage });
      expect(stored.output_text).toBe(response.output_text);
    });

    it('streams the Responses events, in order, ending with response.completed and its usage', async () => {
      const stream = sdk(s).responses.stream({ model, input: `stream ${type}` });
      const types: string[] = [];
      const sequence: number[] = [];
      let text = '';
      for await (const event of stream) {
        types.push(event.type);
        sequence.push(event.sequence_number);
        if (event.type === 'response.output_text.delta') text += event.delta;
      }
      const final = await stream.finalResponse();
      expect(types.slice(0, 4)).toEqual(['response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added']);
      expect(types.slice(-4)).toEqual(['response.output_text.done', 'response.content_part.done', 'response.output_item.done', 'response.completed']);
      expect(sequence).toEqual(sequence.map((_, i) => i));
      expect(text).toContain(`stream ${type}`);
      expect(final.output_text).toBe(text);
      expect(final.usage?.total_tokens).toBeGreaterThan(0);
      // Kept at once: retrievable as soon as the stream ended.
      expect((await sdk(s).responses.retrieve(final.id)).output_text).toBe(text);
    });

    it('calls a function tool and takes its output back, on previous_response_id', async () => {
      kind.fake().mode = { kind: 'tool_call' };
      const first = await sdk(s).responses.create({ model, input: 'Weather in Paris?', tools: [tool] });
      const call = first.output.find((item) => item.type === 'function_call');
      expect(call).toMatchObject({ type: 'function_call', name: 'get_weather', arguments: FAKE_TOOL_ARGUMENTS, status: 'completed' });
      expect(call!.type === 'function_call' && call!.call_id).toBeTruthy();
      kind.fake().mode = { kind: 'reply' };
      const callId = call!.type === 'function_call' ? call!.call_id : '';
      const second = await sdk(s).responses.create({ model, previous_response_id: first.id, tools: [tool], input: [{ type: 'function_call_output', call_id: callId, output: '{"temperature":21}' }] });
      expect(second.status).toBe('completed');
      expect(second.previous_response_id).toBe(kind.native ? null : first.id); // a native answer is the upstream's, untouched
      // The upstream saw the whole conversation: the question, the call, its output.
      const sent = JSON.stringify(lastJson(kind.fake()));
      expect(sent).toContain('Weather in Paris?');
      expect(sent).toMatch(/temperature\\?":21/);
      // Kinds whose format carries call ids get the one the call was answered with.
      if (type !== 'gemini' && type !== 'ollama') expect(sent).toContain(callId);
      if (kind.native) {
        expect(lastJson(kind.fake()).previous_response_id).toBeUndefined();
        expect(lastJson(kind.fake()).input.map((item: { type?: string }) => item.type ?? 'message')).toEqual(['message', 'function_call', 'function_call_output']);
      }
    });

    it('streams a function call as function_call_arguments events', async () => {
      kind.fake().mode = { kind: 'tool_call' };
      const stream = sdk(s).responses.stream({ model, input: 'Weather?', tools: [tool] });
      const types: string[] = [];
      let args = '';
      for await (const event of stream) {
        types.push(event.type);
        if (event.type === 'response.function_call_arguments.delta') args += event.delta;
      }
      expect(args).toBe(FAKE_TOOL_ARGUMENTS);
      expect(types).toContain('response.function_call_arguments.done');
      const final = await stream.finalResponse();
      expect(final.output.at(-1)).toMatchObject({ type: 'function_call', name: 'get_weather', arguments: FAKE_TOOL_ARGUMENTS });
    });
  });

  it('chains: previous_response_id prepends the stored input and output, walking the chain', async () => {
    const first = await sdk(s).responses.create({ model: 'anthropic-model', input: 'one' });
    const second = await sdk(s).responses.create({ model: 'anthropic-model', input: 'two', previous_response_id: first.id });
    await sdk(s).responses.create({ model: 'anthropic-model', input: 'three', previous_response_id: second.id, instructions: 'Count.' });
    const sent = lastJson(fakes.anthropic!) as { system?: unknown; messages: Array<{ role: string; content: unknown }> };
    const texts = sent.messages.map((m) => `${m.role}:${typeof m.content === 'string' ? m.content : JSON.stringify(m.content)}`);
    expect(texts).toHaveLength(5);
    expect(texts[0]).toContain('user:');
    expect(texts[0]).toContain('one');
    expect(texts[1]).toContain('Hello! You said: one');
    expect(texts[2]).toContain('two');
    expect(texts[3]).toContain('Hello! You said: two');
    expect(texts[4]).toContain('three');
    expect(JSON.stringify(sent.system)).toContain('Count.');
  });

  it.each(['openai-model', 'gemini-model'])('streams through create({ stream: true }) as well (%s)', async (model) => {
    const stream = await sdk(s).responses.create({ model, input: 'raw stream', stream: true });
    const events: string[] = [];
    let completed: OpenAI.Responses.Response | null = null;
    for await (const event of stream) {
      events.push(event.type);
      if (event.type === 'response.completed') completed = event.response;
    }
    expect(events[0]).toBe('response.created');
    expect(events.at(-1)).toBe('response.completed');
    expect(completed!.usage?.total_tokens).toBe(FAKE_PROMPT_TOKENS + FAKE_COMPLETION_TOKENS);
    expect((await sdk(s).responses.retrieve(completed!.id)).status).toBe('completed');
  });

  it('keeps nothing with store: false', async () => {
    const response = await sdk(s).responses.create({ model: 'openai-model', input: 'ephemeral', store: false });
    expect(response.output_text).toContain('ephemeral');
    await expect(sdk(s).responses.retrieve(response.id)).rejects.toMatchObject({ status: 404 });
    const converted = await sdk(s).responses.create({ model: 'gemini-model', input: 'ephemeral', store: false });
    expect(converted).toMatchObject({ store: false });
    await expect(sdk(s).responses.retrieve(converted.id)).rejects.toMatchObject({ status: 404 });
  });

  it('deletes a response: gone for retrieve, delete and chaining (404 previous_response_not_found)', async () => {
    const response = await sdk(s).responses.create({ model: 'ollama-model', input: 'to delete' });
    const deleted = await call(`${s.url}/v1/responses/${response.id}`, { method: 'DELETE', token: s.userToken });
    expect(deleted.status).toBe(200);
    expect(deleted.json).toEqual({ id: response.id, object: 'response', deleted: true });
    await expect(sdk(s).responses.retrieve(response.id)).rejects.toMatchObject({ status: 404 });
    expect((await call(`${s.url}/v1/responses/${response.id}`, { method: 'DELETE', token: s.userToken })).json.error.code).toBe('response_not_found');
    const chained = await call(`${s.url}/v1/responses`, { token: s.userToken, body: { model: 'ollama-model', input: 'again', previous_response_id: response.id } });
    expect(chained.status).toBe(404);
    expect(chained.json.error).toMatchObject({ code: 'previous_response_not_found', type: 'not_found_error' });
    // The SDK's delete resolves on success.
    const other = await sdk(s).responses.create({ model: 'ollama-model', input: 'sdk delete' });
    await sdk(s).responses.delete(other.id);
    await expect(sdk(s).responses.retrieve(other.id)).rejects.toMatchObject({ status: 404 });
  });

  it("keeps each user's responses to that user, in the same tenant too; an API key acts for its user", async () => {
    const mine = await sdk(s).responses.create({ model: 'openai-model', input: 'private' });
    const neighbour = await loggedInUser(s, 'user', 'default');
    const stranger = await loggedInUser(s, 'user');
    for (const token of [neighbour.token, stranger.token]) {
      expect((await call(`${s.url}/v1/responses/${mine.id}`, { token })).json.error.code).toBe('response_not_found');
      expect((await call(`${s.url}/v1/responses/${mine.id}`, { method: 'DELETE', token })).status).toBe(404);
      const chained = await call(`${s.url}/v1/responses`, { token, body: { model: 'openai-model', input: 'x', previous_response_id: mine.id } });
      expect(chained.json.error.code).toBe('previous_response_not_found');
    }
    // Still there for its owner, through an API key of theirs (x-api-key or Bearer).
    const key = await call(`${s.url}/v1/keys`, { token: s.userToken, body: { name: 'responses' } });
    expect(key.status).toBe(201);
    const viaKey = await call(`${s.url}/v1/responses/${mine.id}`, { headers: { 'x-api-key': key.json.key } });
    expect(viaKey.status).toBe(200);
    const chained = await sdk(s, key.json.key).responses.create({ model: 'openai-model', input: 'via key', previous_response_id: mine.id });
    expect(chained.status).toBe('completed');
    expect((await sdk(s).responses.retrieve(chained.id)).id).toBe(chained.id);
  });

  it('lists a stored response input items', async () => {
    const response = await sdk(s).responses.create({ model: 'gemini-model', input: [{ role: 'user', content: 'listed' }] });
    const items = await sdk(s).responses.inputItems.list(response.id);
    expect(items.data).toHaveLength(1);
    expect(items.data[0]).toMatchObject({ type: 'message', role: 'user', content: 'listed' });
  });

  it('refuses built-in tools and unknown item kinds with a 400 naming the field', async () => {
    const builtin = await call(`${s.url}/v1/responses`, { token: s.userToken, body: { model: 'openai-model', input: 'x', tools: [{ type: 'web_search' }] } });
    expect(builtin.status).toBe(400);
    expect(builtin.json.error).toMatchObject({ code: 'unsupported_parameter', param: 'tools[0].type', type: 'invalid_request_error' });
    const item = await call(`${s.url}/v1/responses`, { token: s.userToken, body: { model: 'openai-model', input: [{ type: 'item_reference', id: 'x' }] } });
    expect(item.json.error).toMatchObject({ code: 'unsupported_parameter', param: 'input[0].type' });
    const invalid = await call(`${s.url}/v1/responses`, { token: s.userToken, body: { model: 'openai-model', input: 'x', temperature: 7 } });
    expect(invalid.json.error).toMatchObject({ code: 'invalid_request', param: 'temperature' });
    await expect(sdk(s).responses.create({ model: 'openai-model', input: 'x', tools: [{ type: 'web_search' }] })).rejects.toBeInstanceOf(OpenAI.BadRequestError);
  });

  it('documents the endpoints in the OpenAPI document', async () => {
    const doc = (await dereferencedOpenapi(s.url));
    expect(Object.keys(doc.paths['/v1/responses'])).toEqual(['post']);
    expect(Object.keys(doc.paths['/v1/responses/{id}']).sort()).toEqual(['delete', 'get']);
    expect(Object.keys(doc.paths['/v1/responses/{id}/input_items'])).toEqual(['get']);
    const body = doc.paths['/v1/responses'].post.requestBody.content['application/json'].schema;
    expect(Object.keys(body.properties)).toEqual(expect.arrayContaining(['model', 'input', 'instructions', 'tools', 'store', 'previous_response_id', 'max_output_tokens', 'text']));
  });

  it('treats Object.prototype names as any unknown name: model, ids, metadata keys', async () => {
    for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
      const model = await call(`${s.url}/v1/responses`, { token: s.userToken, body: { model: name, input: 'x' } });
      expect(model.json.error.code).toBe('model_not_found');
      const chained = await call(`${s.url}/v1/responses`, { token: s.userToken, body: { model: 'openai-model', input: 'x', previous_response_id: name } });
      expect(chained.json.error.code).toBe('previous_response_not_found');
      expect((await call(`${s.url}/v1/responses/${encodeURIComponent(name)}`, { token: s.userToken })).status).toBe(404);
    }
    const created = await sdk(s).responses.create({ model: 'gemini-model', input: 'meta', metadata: { constructor: 'y', toString: 'z' } });
    const stored = await call(`${s.url}/v1/responses/${created.id}`, { token: s.userToken });
    expect(JSON.parse(stored.text).metadata).toEqual({ constructor: 'y', toString: 'z' });
    // A `__proto__` key is refused by the API's JSON parser before anything reads it.
    const proto = await call(`${s.url}/v1/responses`, { token: s.userToken, body: '{"model":"gemini-model","input":"x","metadata":{"__proto__":"x"}}' });
    expect(proto.json.error.code).toBe('invalid_json');
  });

  it('maps text.format json_schema to response_format, and max_output_tokens, on converted kinds', async () => {
    await sdk(s).responses.create({
      model: 'ollama-model',
      input: 'json please',
      max_output_tokens: 64,
      text: { format: { type: 'json_schema', name: 'answer', schema: { type: 'object', properties: { a: { type: 'string' } } }, strict: true } },
    });
    const sent = lastJson(fakes.ollama!);
    expect(sent.format).toEqual({ type: 'object', properties: { a: { type: 'string' } } });
    expect(sent.options?.num_predict).toBe(64);
  });

  it('answers an upstream failure OpenAI-shaped, in a stream as response.failed', async () => {
    openai.mode = { kind: 'error', status: 400, message: 'bad thing' };
    const failed = await call(`${s.url}/v1/responses`, { token: s.userToken, body: { model: 'openai-model', input: 'x' } });
    expect(failed.status).toBe(400);
    expect(failed.json.error.message).toContain('bad thing');
    fakes.anthropic!.mode = { kind: 'stream_error' };
    const res = await fetch(`${s.url}/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${s.userToken}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'anthropic-model', input: 'x', stream: true }) });
    const text = await res.text();
    expect(text).toContain('event: response.created');
    expect(text).toMatch(/event: response\.failed\ndata: \{"type":"response\.failed"/);
    expect(text).not.toContain('[DONE]');
    // Natively, the upstream's own error event reaches the client; the request is recorded as failed, nothing is kept.
    openai.mode = { kind: 'stream_error' };
    const native = await fetch(`${s.url}/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${s.userToken}`, 'content-type': 'application/json', 'x-request-id': 'resp-native-stream-error' }, body: JSON.stringify({ model: 'openai-model', input: 'x', stream: true }) });
    const nativeText = await native.text();
    expect(nativeText).toContain('event: error\ndata: {"type":"error"');
    expect(nativeText).not.toContain('response.completed');
    const recorded = (await usageEvents(s)).find((e) => e.request_id === 'resp-native-stream-error');
    expect(recorded).toMatchObject({ status: 502, error_code: 'server_error' });
  });

  it('records one usage event per request, tokens included, for both paths', async () => {
    const native = await sdk(s).responses.create({ model: 'openai-model', input: 'usage native', stream: false });
    const converted = await sdk(s).responses.create({ model: 'bedrock-model', input: 'usage converted' });
    expect(native.usage?.total_tokens).toBe(FAKE_PROMPT_TOKENS + FAKE_COMPLETION_TOKENS);
    const events = await usageEvents(s);
    const byModel = (model: string) => events.filter((e) => e.model_requested === model && e.status === 200);
    for (const model of ['openai-model', 'bedrock-model']) {
      const last = byModel(model).at(-1);
      expect(last).toMatchObject({ prompt_tokens: FAKE_PROMPT_TOKENS, completion_tokens: FAKE_COMPLETION_TOKENS, usage_source: 'upstream', user_id: s.userId });
    }
    expect(converted.status).toBe('completed');
  });
});

describe.each(['node', 'fastify'])('the Responses API on the %s front server', (front) => {
  let s: RunningApp;
  let openai: OpenAiFake;
  let gemini: FakeUpstream;

  beforeAll(async () => {
    [openai, gemini] = await Promise.all([startOpenAiFake(), startGeminiFake()]);
    s = await startApp({ HEALTH_CHECK_ENABLED: 'false', RELAY_MAX_RETRIES: '0', RELAY_HTTP_SERVER: front });
    await createChannel(s, { type: 'openai', base_url: openai.baseUrl, models: ['openai-model'] });
    await createChannel(s, { type: 'gemini', base_url: gemini.baseUrl, models: ['gemini-model'] });
  });
  afterAll(async () => {
    await s.close();
    await Promise.all([openai.close(), gemini.close()]);
  });

  it.each(['openai-model', 'gemini-model'])('answers, streams and keeps responses as the lean front does (%s)', async (model) => {
    const whole = await sdk(s).responses.create({ model, input: `front ${front}` });
    expect(whole.output_text).toContain(`front ${front}`);
    const streamed = await sdk(s).responses.stream({ model, input: 'streamed', previous_response_id: whole.id }).finalResponse();
    expect(streamed.status).toBe('completed');
    expect((await sdk(s).responses.retrieve(streamed.id)).output_text).toBe(streamed.output_text);
    const refused = await call(`${s.url}/v1/responses`, { token: s.userToken, body: { model, input: 'x', tools: [{ type: 'web_search' }] } });
    expect(refused.json.error).toMatchObject({ code: 'unsupported_parameter', param: 'tools[0].type' });
  });
});

const services = inject('services');
const urls = inject('serviceUrls');

describe.each(['mysql', 'postgres'] as const)('the Responses API on two instances (NATS + %s + Redis)', (dialect) => {
  const enabled = services.nats && services[dialect] && services.redis;
  const { env: stores, cleanup: dropStores } = distributedEnv(urls, dialect);
  const env = {
    ...stores,
    HEALTH_CHECK_ENABLED: 'false',
    RELAY_MAX_RETRIES: '0',
  };
  let a: RunningApp;
  let b: RunningApp;
  let openai: OpenAiFake;
  let anthropic: FakeUpstream;

  beforeAll(async () => {
    if (!enabled) return;
    [openai, anthropic] = await Promise.all([startOpenAiFake(), startAnthropicFake()]);
    a = await startApp(env);
    b = await startApp(env);
    await createChannel(a, { type: 'openai', name: 'openai-ch', base_url: openai.baseUrl, models: ['openai-model'] });
    await createChannel(a, { type: 'anthropic', name: 'anthropic-ch', base_url: anthropic.baseUrl, models: ['anthropic-model'] });
  });
  afterAll(async () => {
    if (!enabled) return;
    await a?.close();
    await b?.close();
    await dropStores();
    await Promise.all([openai?.close(), anthropic?.close()]);
  });

  it.skipIf(!enabled).each(['openai-model', 'anthropic-model'])('stores on one instance, retrieves and chains on the other at once (%s)', async (model) => {
    // B serves the channels once its directory has them (they came through the bus).
    await expect.poll(async () => (await call(`${b.url}/v1/models`, { token: b.userToken })).json?.data?.length ?? 0).toBe(2);
    const first = await sdk(a, a.userToken).responses.create({ model, input: 'remember me' });
    expect((await sdk(b, b.userToken).responses.retrieve(first.id)).output_text).toBe(first.output_text);
    const streamed = sdk(b, b.userToken).responses.stream({ model, input: 'and now?', previous_response_id: first.id });
    const second = await streamed.finalResponse();
    expect(second.status).toBe('completed');
    const sent = JSON.stringify(model === 'openai-model' ? lastJson(openai) : lastJson(anthropic));
    expect(sent).toContain('remember me');
    expect(sent).toContain('Hello! You said: remember me');
    expect((await sdk(a, a.userToken).responses.retrieve(second.id)).id).toBe(second.id);
    await sdk(a, a.userToken).responses.delete(first.id);
    await expect(sdk(b, b.userToken).responses.retrieve(first.id)).rejects.toMatchObject({ status: 404 });
  });
});
