/**
 * POST /v1/embeddings through the real relay, the official OpenAI SDK as client: every kind with
 * an embeddings codec against a fake that speaks its embeddings API; base64 and float both ways;
 * fallback to another channel; GET /v1/models capabilities; and, in both modes, key policies,
 * one usage event per request (prompt tokens only) and the charge in the ledger.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { countTokens } from '../../src/relay/tokens.js';
import { call, loggedInUser, startApp, type RunningApp } from '../support/app.js';
import { dereferencedOpenapi } from '../support/openapi.js';
import { startAnthropicFake } from '../support/fake-upstreams/anthropic.js';
import { BEDROCK_API_KEY, startBedrockFake } from '../support/fake-upstreams/bedrock.js';
import { startCohereFake } from '../support/fake-upstreams/cohere.js';
import { FAKE_EMBEDDING_DIMENSIONS, FAKE_PROMPT_TOKENS, fakeEmbedding, type FakeUpstream } from '../support/fake-upstreams/fake.js';
import { startGeminiFake } from '../support/fake-upstreams/gemini.js';
import { startOllamaFake } from '../support/fake-upstreams/ollama.js';
import { startOpenAiFake, type OpenAiFake } from '../support/fake-upstreams/openai.js';
import { createChannel, sdk, usageEvents } from '../support/relay.js';
import { appModes } from '../support/modes.js';
import { uniqueSuffix } from '../support/services.js';

const services = inject('services');
const urls = inject('serviceUrls');

/** A base64 vector as OpenAI encodes it (little-endian float32), decoded independently of the relay. */
const decode = (text: string) => Array.from(new Float32Array(new Uint8Array(Buffer.from(text, 'base64')).buffer));

interface Kind {
  name: string;
  model: string;
  fake: () => FakeUpstream;
  channel: () => Parameters<typeof createChannel>[1];
  /** The upstream path the fake must have seen. */
  path: RegExp;
  /** The upstream reports a token count (else the relay counts the inputs). */
  reportsTokens: boolean;
  /** Several inputs in one request (bedrock's titan takes one). */
  batches: boolean;
  /** A `dimensions` value the upstream takes, or null when the fake model ignores it. */
  dimensions: number | null;
}

describe('POST /v1/embeddings on every kind that embeds', () => {
  let s: RunningApp;
  let openai: OpenAiFake;
  const fakes = new Map<string, FakeUpstream>();
  const fake = (name: string) => () => fakes.get(name)!;

  const kinds: Kind[] = [
    { name: 'openai', model: 'text-embedding-3-small', fake: () => openai, channel: () => ({ type: 'openai', base_url: openai.baseUrl, models: ['text-embedding-3-small'] }), path: /^\/v1\/embeddings$/, reportsTokens: true, batches: true, dimensions: 4 },
    {
      name: 'azure',
      model: 'azure-embedding',
      fake: () => openai,
      channel: () => ({ type: 'azure', base_url: openai.origin, config: { deployment: 'emb-deployment', api_version: '2024-10-21' }, models: ['azure-embedding'] }),
      path: /^\/openai\/deployments\/emb-deployment\/embeddings\?api-version=2024-10-21$/,
      reportsTokens: true,
      batches: true,
      dimensions: 4,
    },
    { name: 'gemini', model: 'gemini-embedding-001', fake: fake('gemini'), channel: () => ({ type: 'gemini', base_url: fakes.get('gemini')!.baseUrl, models: ['gemini-embedding-001'] }), path: /^\/v1beta\/models\/gemini-embedding-001:batchEmbedContents$/, reportsTokens: false, batches: true, dimensions: 4 },
    { name: 'cohere', model: 'embed-v4.0', fake: fake('cohere'), channel: () => ({ type: 'cohere', base_url: fakes.get('cohere')!.baseUrl, models: ['embed-v4.0'] }), path: /^\/v2\/embed$/, reportsTokens: true, batches: true, dimensions: 4 },
    {
      name: 'bedrock titan',
      model: 'amazon.titan-embed-text-v2:0',
      fake: fake('bedrock'),
      channel: () => ({ type: 'bedrock', base_url: fakes.get('bedrock')!.baseUrl, key: BEDROCK_API_KEY, config: { region: 'us-east-1' }, models: ['amazon.titan-embed-text-v2:0'] }),
      path: /^\/model\/amazon\.titan-embed-text-v2%3A0\/invoke$/,
      reportsTokens: true,
      batches: false,
      dimensions: 256,
    },
    {
      name: 'bedrock cohere',
      model: 'cohere.embed-english-v3',
      fake: fake('bedrock'),
      channel: () => ({ type: 'bedrock', base_url: fakes.get('bedrock')!.baseUrl, key: BEDROCK_API_KEY, config: { region: 'us-east-1' }, models: ['cohere.embed-english-v3'] }),
      path: /^\/model\/cohere\.embed-english-v3\/invoke$/,
      reportsTokens: false,
      batches: true,
      dimensions: null,
    },
    { name: 'ollama', model: 'nomic-embed-text', fake: fake('ollama'), channel: () => ({ type: 'ollama', base_url: fakes.get('ollama')!.baseUrl, key: '', models: ['nomic-embed-text'] }), path: /^\/api\/embed$/, reportsTokens: true, batches: true, dimensions: 4 },
  ];

  beforeAll(async () => {
    let gemini: FakeUpstream, cohere: FakeUpstream, bedrock: FakeUpstream, ollama: FakeUpstream, anthropic: FakeUpstream;
    [openai, gemini, cohere, bedrock, ollama, anthropic] = await Promise.all([startOpenAiFake(), startGeminiFake(), startCohereFake(), startBedrockFake(), startOllamaFake(), startAnthropicFake()]);
    for (const [name, f] of Object.entries({ gemini, cohere, bedrock, ollama, anthropic })) fakes.set(name, f);
    s = await startApp({ HEALTH_CHECK_ENABLED: 'false', RELAY_MAX_RETRIES: '0', CHANNEL_FAILURE_THRESHOLD: '1000' });
    for (const kind of kinds) await createChannel(s, { name: kind.name.replace(' ', '-'), ...kind.channel() });
    await createChannel(s, { type: 'anthropic', name: 'claude', base_url: anthropic.baseUrl, models: ['claude-chat'] });
  });
  afterAll(async () => {
    await s.close();
    await Promise.all([openai, ...fakes.values()].map((f) => f.close()));
  });
  beforeEach(() => {
    for (const f of [openai, ...fakes.values()]) f.mode = { kind: 'reply' };
  });

  describe.each(kinds.map((k) => [k.name, k] as const))('%s', (_name, kind) => {
    const inputs = kind.batches ? [`first ${kind.name}`, `second ${kind.name}`] : [`only ${kind.name}`];
    const expectedTokens = kind.reportsTokens ? FAKE_PROMPT_TOKENS : inputs.reduce((n, t) => n + countTokens(t), 0);

    it('answers the SDK default (base64, decoded by the SDK) with one vector per input, usage prompt-only', async () => {
      const before = kind.fake().requests.length;
      const answer = await sdk(s).embeddings.create({ model: kind.model, input: inputs });
      expect(answer.object).toBe('list');
      expect(answer.model).toBeTypeOf('string');
      expect(answer.data.map((d) => [d.object, d.index])).toEqual(inputs.map((_, i) => ['embedding', i]));
      expect(answer.data.map((d) => d.embedding)).toEqual(inputs.map((t) => fakeEmbedding(t)));
      expect(answer.usage).toEqual({ prompt_tokens: expectedTokens, total_tokens: expectedTokens });
      const sent = kind.fake().requests.slice(before);
      expect(sent).toHaveLength(1);
      expect(sent[0]!.path).toMatch(kind.path);
    });

    it('answers floats and base64 as asked', async () => {
      const floats = await sdk(s).embeddings.create({ model: kind.model, input: inputs[0]!, encoding_format: 'float' });
      expect(floats.data[0]!.embedding).toEqual(fakeEmbedding(inputs[0]!));
      const base64 = await sdk(s).embeddings.create({ model: kind.model, input: inputs[0]!, encoding_format: 'base64' });
      const encoded = base64.data[0]!.embedding as unknown;
      expect(encoded).toBeTypeOf('string');
      expect(decode(encoded as string)).toEqual(fakeEmbedding(inputs[0]!));
    });

    it.runIf(kind.dimensions !== null)('passes dimensions on in the upstream\'s terms', async () => {
      const answer = await sdk(s).embeddings.create({ model: kind.model, input: inputs[0]!, dimensions: kind.dimensions!, encoding_format: 'float' });
      expect(answer.data[0]!.embedding).toEqual(fakeEmbedding(inputs[0]!, kind.dimensions!));
      expect(answer.data[0]!.embedding).toHaveLength(kind.dimensions!);
    });

    it('relays an upstream error as an OpenAI-shaped error', async () => {
      kind.fake().mode = { kind: 'error', status: 400, message: 'fake refusal' };
      const res = await call(`${s.url}/v1/embeddings`, { token: s.userToken, body: { model: kind.model, input: inputs[0] } });
      expect(res.status).toBe(400);
      expect(res.json.error).toMatchObject({ message: expect.stringContaining('fake refusal') });
    });

    it('records one usage event with prompt tokens only', async () => {
      const id = `emb-${kind.name.replace(' ', '-')}-${uniqueSuffix()}`;
      const res = await call(`${s.url}/v1/embeddings`, { token: s.userToken, body: { model: kind.model, input: inputs }, headers: { 'x-request-id': id } });
      expect(res.status, res.text).toBe(200);
      expect(res.json.data[0].embedding).toEqual(fakeEmbedding(inputs[0]!));
      const events = (await usageEvents(s)).filter((e) => e.request_id === id);
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({
        status: 200,
        model_requested: kind.model,
        model_routed: kind.model,
        prompt_tokens: expectedTokens,
        completion_tokens: 0,
        total_tokens: expectedTokens,
        usage_source: kind.reportsTokens ? 'upstream' : 'tokenizer',
        stream: false,
        attempts: 1,
      });
    });
  });

  it('refuses token arrays, several inputs for titan, and models served only by chat kinds', async () => {
    const refuse = async (body: unknown) => (await call(`${s.url}/v1/embeddings`, { token: s.userToken, body })).json.error;
    expect(await refuse({ model: 'text-embedding-3-small', input: [1, 2, 3] })).toMatchObject({ code: 'unsupported_parameter', param: 'input', type: 'invalid_request_error' });
    expect(await refuse({ model: 'text-embedding-3-small', input: [[1, 2], [3]] })).toMatchObject({ code: 'unsupported_parameter', param: 'input' });
    expect(await refuse({ model: 'amazon.titan-embed-text-v2:0', input: ['a', 'b'] })).toMatchObject({ code: 'unsupported_parameter', param: 'input' });
    expect(await refuse({ model: 'text-embedding-3-small', input: 'a', encoding_format: 'int8' })).toMatchObject({ code: 'invalid_request', param: 'encoding_format' });
    expect(await refuse({ model: 'claude-chat', input: 'a' })).toMatchObject({ code: 'no_available_channels' });
    expect(fakes.get('anthropic')!.requests).toHaveLength(0);
    // Names every plain object inherits are no model of anyone's (never a 500).
    for (const model of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) expect(await refuse({ model, input: 'a' }), model).toMatchObject({ code: 'model_not_found' });
  });

  it('tests a channel whose first model is an embedding model with an embeddings request', async () => {
    const channel = await createChannel(s, { type: 'openai', name: 'probe-embeddings', base_url: openai.baseUrl, models: ['text-embedding-3-large'] });
    const before = openai.requests.length;
    const tested = await call(`${s.url}/v1/admin/channels/${channel.id}/test`, { method: 'POST', token: s.adminToken });
    expect(tested.json).toMatchObject({ ok: true, status: 200 });
    expect(openai.requests.slice(before).map((r) => [r.path, (r.json as { model?: string }).model])).toEqual([['/v1/embeddings', 'text-embedding-3-large']]);
  });

  it('documents the endpoint in the OpenAPI document', async () => {
    const doc = (await dereferencedOpenapi(s.url));
    const operation = doc.paths['/v1/embeddings'].post;
    expect(Object.keys(operation.requestBody.content['application/json'].schema.properties).sort()).toEqual(['dimensions', 'encoding_format', 'input', 'model', 'user']);
    expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['200', '400', '403', '502', '503']));
    const models = doc.paths['/v1/models'].get.responses['200'].content['application/json'].schema;
    expect(JSON.stringify(models)).toContain('capabilities');
  });

  it('lists each model with its capabilities, and the SDK reads the list', async () => {
    const list = await sdk(s).models.list();
    const byId = new Map(list.data.map((m) => [m.id, (m as unknown as { capabilities: string[] }).capabilities]));
    for (const kind of kinds) expect(byId.get(kind.model)).toEqual(['embeddings']);
    expect(byId.get('claude-chat')).toEqual(['chat']);
    expect(list.data.every((m) => m.object === 'model' && typeof m.owned_by === 'string')).toBe(true);
  });
});


const MODES = appModes(services, urls, 'postgres');

describe.each(MODES.map((m) => [m.name, m] as const))('embeddings: keys, usage, billing, fallback (%s)', (_name, mode) => {
  let s: RunningApp;
  let openai: OpenAiFake;
  let ollama: FakeUpstream;
  let cleanup: () => Promise<void> = async () => undefined;
  let n = 0;

  beforeAll(async () => {
    if (!mode.enabled) return;
    [openai, ollama] = await Promise.all([startOpenAiFake(), startOllamaFake()]);
    const { env, cleanup: drop } = mode.env();
    cleanup = drop;
    s = await startApp({ ...env, HEALTH_CHECK_ENABLED: 'false', RELAY_MAX_RETRIES: '1', RELAY_BACKOFF_BASE: '1ms', CHANNEL_FAILURE_THRESHOLD: '1000' });
    // Models on two kinds: openai first, ollama as the fallback (nomic-embed-text is not priced).
    await createChannel(s, { type: 'openai', name: 'primary', base_url: openai.baseUrl, models: ['text-embedding-3-small', 'nomic-embed-text', 'gpt-4o-mini'], priority: 0 });
    await createChannel(s, { type: 'ollama', name: 'fallback', base_url: ollama.baseUrl, key: '', models: ['nomic-embed-text', 'bge-m3'], priority: 1, config: { embedding_models: ['nomic-embed-text', 'bge-m3'] } });
    // 1,000 credits per 1M prompt tokens (1,000 micro-credits a token); completion priced too, to show none is charged.
    const priced = await call(`${s.url}/v1/admin/pricing/models/text-embedding-3-small`, { method: 'PUT', token: s.adminToken, body: { input_price: 1000, output_price: 5000 } });
    expect(priced.status, priced.text).toBe(200);
  });
  afterAll(async () => {
    await s?.close();
    await openai?.close();
    await ollama?.close();
    await cleanup();
  });
  beforeEach((ctx) => {
    if (!mode.enabled) ctx.skip();
    openai.mode = { kind: 'reply' };
    ollama.mode = { kind: 'reply' };
  });

  async function apiKey(userId: string, body: Record<string, unknown> = {}): Promise<string> {
    const res = await call(`${s.url}/api/admin/keys`, { token: s.adminToken, body: { name: `k${++n}`, user_id: userId, ...body } });
    expect(res.status, res.text).toBe(201);
    await s.app.ctx.views.keys.waitFor(await s.app.ctx.store.headPosition());
    return res.json.key as string;
  }

  async function settled() {
    await s.app.ctx.usage.flush();
    const head = await s.app.ctx.store.headPosition();
    await Promise.all([s.app.ctx.runner.waitFor(head, { projections: ['billing'] }), s.app.ctx.views.billing.waitFor(head)]);
  }

  async function send(token: string, body: unknown): Promise<{ id: string; status: number; code: string | null }> {
    const id = `emb-${mode.name}-${++n}-${uniqueSuffix()}`;
    const res = await call(`${s.url}/v1/embeddings`, { token, body, headers: { 'x-request-id': id } });
    return { id, status: res.status, code: (res.json?.error?.code as string | undefined) ?? null };
  }

  it('applies key policies and records one usage event per request, billed on prompt tokens only', async () => {
    const user = await loggedInUser(s, 'user', 'default');
    const topup = await call(`${s.url}/v1/admin/credits/${user.userId}/topup`, { token: s.adminToken, body: { amount: '1', reason: 'embeddings test' } });
    expect(topup.status, topup.text).toBe(200);
    const narrow = await apiKey(user.userId, { model_restrictions: { allowed_models: ['gpt-4o-mini'] } });
    const open = await apiKey(user.userId);

    // The SDK with an API key, both encodings.
    const client = sdk(s, open);
    const decoded = await client.embeddings.create({ model: 'text-embedding-3-small', input: ['alpha', 'beta'] });
    expect(decoded.data.map((d) => d.embedding)).toEqual([fakeEmbedding('alpha'), fakeEmbedding('beta')]);
    expect(decoded.usage).toEqual({ prompt_tokens: FAKE_PROMPT_TOKENS, total_tokens: FAKE_PROMPT_TOKENS });
    const floats = await client.embeddings.create({ model: 'text-embedding-3-small', input: 'gamma', encoding_format: 'float' });
    expect(floats.data[0]!.embedding).toHaveLength(FAKE_EMBEDDING_DIMENSIONS);

    const sent = [
      await send(open, { model: 'text-embedding-3-small', input: 'delta' }),
      await send(narrow, { model: 'text-embedding-3-small', input: 'delta' }),
      await send(open, { model: 'text-embedding-3-small', input: [1, 2] }),
    ];
    expect(sent.map((r) => [r.status, r.code])).toEqual([
      [200, null],
      [403, 'model_not_allowed'],
      [400, 'unsupported_parameter'],
    ]);

    const events = await usageEvents(s);
    for (const r of sent) {
      const mine = events.filter((e) => e.request_id === r.id);
      expect(mine, r.id).toHaveLength(1);
      expect(mine[0]).toMatchObject({ status: r.status, error_code: r.code, user_id: user.userId, completion_tokens: 0 });
    }
    expect(events.find((e) => e.request_id === sent[0]!.id)).toMatchObject({ prompt_tokens: FAKE_PROMPT_TOKENS, total_tokens: FAKE_PROMPT_TOKENS, provider: 'openai', usage_source: 'upstream' });

    // Three answered requests, each charged 11 prompt tokens x 1,000 micro-credits, nothing for completion.
    await settled();
    const ledger = await call(`${s.url}/v1/admin/billing/ledger?user_id=${user.userId}`, { token: s.adminToken });
    expect(ledger.status, ledger.text).toBe(200);
    const charges = (ledger.json.data as Array<Record<string, unknown>>).filter((e) => e.type === 'charge');
    expect(charges.map((e) => [e.amount_micro, e.prompt_tokens, e.completion_tokens, e.model])).toEqual(Array.from({ length: 3 }, () => [-FAKE_PROMPT_TOKENS * 1000, FAKE_PROMPT_TOKENS, 0, 'text-embedding-3-small']));
  });

  it('falls back to the next channel when the first fails, and lists capabilities', async () => {
    openai.mode = { kind: 'error', status: 503, message: 'overloaded' };
    const r = await send(s.userToken, { model: 'nomic-embed-text', input: 'epsilon', encoding_format: 'float' });
    expect(r.status).toBe(200);
    const event = (await usageEvents(s)).find((e) => e.request_id === r.id);
    expect(event).toMatchObject({ provider: 'ollama', attempts: 2, status: 200, prompt_tokens: FAKE_PROMPT_TOKENS });
    expect(ollama.requests.at(-1)).toMatchObject({ path: '/api/embed', json: { model: 'nomic-embed-text', input: 'epsilon' } });

    const list = await sdk(s).models.list();
    const caps = Object.fromEntries(list.data.map((m) => [m.id, (m as unknown as { capabilities: string[] }).capabilities]));
    expect(caps).toEqual({ 'bge-m3': ['embeddings'], 'gpt-4o-mini': ['chat'], 'nomic-embed-text': ['embeddings'], 'text-embedding-3-small': ['embeddings'] });
  });
});

describe.each(['lean', 'node', 'fastify'])('POST /v1/embeddings on the %s front server', (front) => {
  let s: RunningApp;
  let openai: OpenAiFake;

  beforeAll(async () => {
    openai = await startOpenAiFake();
    s = await startApp({ HEALTH_CHECK_ENABLED: 'false', RELAY_MAX_RETRIES: '0', RELAY_HTTP_SERVER: front });
    await createChannel(s, { type: 'openai', base_url: openai.baseUrl, models: ['front-embed'] });
  });
  afterAll(async () => {
    await s.close();
    await openai.close();
  });

  it('answers the SDK, refuses what it cannot take, and records one usage event each', async () => {
    const usageBefore = (await usageEvents(s)).length;
    const answer = await sdk(s).embeddings.create({ model: 'front-embed', input: `front ${front}` });
    expect(answer.data[0]!.embedding).toEqual(fakeEmbedding(`front ${front}`));
    const refused = await call(`${s.url}/v1/embeddings`, { token: s.userToken, body: { model: 'front-embed', input: [[1, 2, 3]] } });
    expect(refused.status).toBe(400);
    expect(refused.json.error).toMatchObject({ code: 'unsupported_parameter', param: 'input' });
    expect(refused.headers.get('x-request-id')).toBeTruthy();
    const events = (await usageEvents(s)).slice(usageBefore);
    expect(events.map((e) => [e.status, e.model_requested, e.completion_tokens])).toEqual([
      [200, 'front-embed', 0],
      [400, 'front-embed', 0],
    ]);
  });
});
