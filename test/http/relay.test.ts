/**
 * The relay end to end: the official OpenAI SDK as the client, the real server, channels created
 * through the admin API, and fake upstreams speaking the real wire format.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FAKE_COMPLETION_TOKENS, FAKE_PROMPT_TOKENS } from '../support/fake-upstreams/fake.js';
import { startOpenAiFake, type OpenAiFake } from '../support/fake-upstreams/openai.js';
import { call, startApp, type RunningApp } from '../support/app.js';
import { createChannel, sdk, usageEvents } from '../support/relay.js';

describe('relay with an OpenAI upstream', () => {
  let s: RunningApp;
  let upstream: OpenAiFake;
  let backup: OpenAiFake;
  let primaryId: string;

  beforeAll(async () => {
    upstream = await startOpenAiFake();
    backup = await startOpenAiFake();
    s = await startApp({ RELAY_BACKOFF_BASE: '5ms', CHANNEL_FAILURE_THRESHOLD: '3', HEALTH_CHECK_ENABLED: 'false' });
    primaryId = (await createChannel(s, { name: 'primary', type: 'openai', base_url: upstream.baseUrl, models: ['gpt-4o-mini'], model_mapping: { fast: 'gpt-4o-mini' } })).id;
    await createChannel(s, { name: 'backup', type: 'openai', base_url: backup.baseUrl, models: ['gpt-4o-mini'], priority: 10 });
  });
  afterAll(async () => {
    await s.close();
    await upstream.close();
    await backup.close();
  });
  beforeEach(async () => {
    // Each test starts with both channels healthy and no failures counted (after the health
    // writes the previous test's requests started have landed, so none of them lands later).
    await s.app.ctx.health.settled();
    await s.app.ctx.counters.clear('chfail:');
    for (const entry of s.app.ctx.views.channels.state.values()) await s.app.ctx.health.setHealth(entry.channel, true, null, 'test reset', null);
    await s.app.ctx.views.channels.waitFor(await s.app.ctx.store.headPosition());
    upstream.mode = { kind: 'reply' };
    backup.mode = { kind: 'reply' };
    upstream.requests.length = 0;
    backup.requests.length = 0;
  });

  it('answers a non-streaming completion in the standard shape', async () => {
    const completion = await sdk(s).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi there' }], temperature: 0.3 });
    expect(completion.object).toBe('chat.completion');
    expect(completion.choices[0]!.message).toMatchObject({ role: 'assistant', content: 'Hello! You said: hi there' });
    expect(completion.choices[0]!.finish_reason).toBe('stop');
    expect(completion.usage).toEqual({ prompt_tokens: FAKE_PROMPT_TOKENS, completion_tokens: FAKE_COMPLETION_TOKENS, total_tokens: FAKE_PROMPT_TOKENS + FAKE_COMPLETION_TOKENS });
    const sent = upstream.requests[0]!;
    expect(sent.headers.authorization).toBe('Bearer test-key');
    expect(sent.json).toMatchObject({ model: 'gpt-4o-mini', temperature: 0.3, messages: [{ role: 'user', content: 'hi there' }] });
    expect(backup.requests).toHaveLength(0);
  });

  it('streams chat.completion.chunk events ending in [DONE], with a usage chunk only when asked', async () => {
    const stream = await sdk(s).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'stream me' }], stream: true });
    let text = '';
    let usageChunks = 0;
    let finish: string | null = null;
    for await (const chunk of stream) {
      expect(chunk.object).toBe('chat.completion.chunk');
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usageChunks++;
    }
    expect(text).toBe('Hello! You said: stream me');
    expect(finish).toBe('stop');
    expect(usageChunks).toBe(0);
    // The relay asked upstream for usage anyway, to record it.
    expect(upstream.requests[0]!.json).toMatchObject({ stream: true, stream_options: { include_usage: true } });

    const withUsage = await sdk(s).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }], stream: true, stream_options: { include_usage: true } });
    let last: { usage?: unknown; choices: unknown[] } | undefined;
    for await (const chunk of withUsage) last = chunk;
    expect(last).toMatchObject({ choices: [], usage: { prompt_tokens: FAKE_PROMPT_TOKENS, completion_tokens: FAKE_COMPLETION_TOKENS } });
  });

  it('ends a raw stream with data: [DONE]', async () => {
    const res = await call(`${s.url}/v1/chat/completions`, { token: s.userToken, body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'raw' }], stream: true } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    expect(res.text.endsWith('data: [DONE]\n\n')).toBe(true);
    expect(res.text.match(/data: \[DONE\]/g)).toHaveLength(1);
  });

  it('maps tool calls and finish reasons back', async () => {
    upstream.mode = { kind: 'tool_call' };
    const tools = [{ type: 'function' as const, function: { name: 'lookup', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
    const completion = await sdk(s).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'weather?' }], tools });
    expect(completion.choices[0]!.finish_reason).toBe('tool_calls');
    expect(completion.choices[0]!.message.tool_calls).toEqual([{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"city":"Paris"}' } }]);
    upstream.mode = { kind: 'length' };
    expect((await sdk(s).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] })).choices[0]!.finish_reason).toBe('length');
  });

  it('serves the same handler on /api/v1 and a deprecated /v1/chat alias', async () => {
    const viaApi = await sdk(s, s.userToken, '/api/v1').chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'api' }] });
    expect(viaApi.choices[0]!.message.content).toBe('Hello! You said: api');
    const alias = await call(`${s.url}/v1/chat`, { token: s.userToken, body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'old' }] } });
    expect(alias.status).toBe(200);
    expect(alias.headers.get('deprecation')).toBeTruthy();
    expect(alias.json.choices[0].message.content).toBe('Hello! You said: old');
  });

  it('resolves channel aliases and lists the models the caller may use', async () => {
    await sdk(s).chat.completions.create({ model: 'fast', messages: [{ role: 'user', content: 'alias' }] });
    expect(upstream.requests[0]!.json).toMatchObject({ model: 'gpt-4o-mini' });
    const models = await sdk(s).models.list();
    expect(models.data.map((m) => m.id)).toEqual(['fast', 'gpt-4o-mini']);
  });

  it('applies a per-request model_mapping and provider_config', async () => {
    const res = await call(`${s.url}/v1/chat/completions`, {
      token: s.userToken,
      body: { model: 'my-alias', messages: [{ role: 'user', content: 'm' }], model_mapping: { 'my-alias': { provider: 'backup', actual_model: 'gpt-4o-mini', parameters: { temperature: 0.9 } } } },
    });
    expect(res.status).toBe(200);
    expect(upstream.requests).toHaveLength(0);
    expect(backup.requests[0]!.json).toMatchObject({ model: 'gpt-4o-mini', temperature: 0.9 });
    expect(backup.requests[0]!.json).not.toHaveProperty('model_mapping');
  });

  it('answers 404 model_not_found, naming the models served, for a model no channel lists (SDKs do not retry it)', async () => {
    const res = await call(`${s.url}/v1/chat/completions`, { token: s.userToken, body: { model: 'nope-1', messages: [{ role: 'user', content: 'x' }] } });
    expect(res.status).toBe(404);
    expect(res.json.error).toMatchObject({ type: 'invalid_request_error', code: 'model_not_found', param: 'model' });
    expect(res.json.error.message).toMatch(/^no available channels for model nope-1: no channel serves it\. Models served: .*gpt-4o-mini/);
    const before = upstream.requests.length;
    await expect(sdk(s).chat.completions.create({ model: 'gpt-4o-mnii', messages: [{ role: 'user', content: 'x' }] })).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    expect(upstream.requests.length).toBe(before);
  });

  it('forwards fields it does not know to an OpenAI-compatible upstream (providers add fields faster than the relay)', async () => {
    const res = await call(`${s.url}/v1/chat/completions`, { token: s.userToken, body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }], brand_new_option: { level: 3 }, verbosity: 'low' } });
    expect(res.status).toBe(200);
    expect(upstream.requests.at(-1)!.json).toMatchObject({ brand_new_option: { level: 3 }, verbosity: 'low' });
  });

  it('GET /v1/models/{model}: the SDK retrieves a model the caller may use (ids with a slash too); 404 model_not_found otherwise', async () => {
    await createChannel(s, { type: 'openrouter', name: 'router', base_url: upstream.baseUrl, models: ['vendor/model-x'] });
    const model = await sdk(s).models.retrieve('gpt-4o-mini');
    expect(model).toMatchObject({ id: 'gpt-4o-mini', object: 'model', owned_by: 'switchyard', capabilities: ['chat'] });
    expect((await sdk(s).models.retrieve('vendor/model-x')).id).toBe('vendor/model-x');
    const raw = await call(`${s.url}/v1/models/vendor/model-x`, { token: s.userToken });
    expect(raw.json.id).toBe('vendor/model-x');
    await expect(sdk(s).models.retrieve('gpt-4o-mnii')).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    const missing = await call(`${s.url}/v1/models/gpt-4o-mnii`, { token: s.userToken });
    expect(missing.json.error).toMatchObject({ code: 'model_not_found', type: 'invalid_request_error', param: 'model' });
  });

  it('answers 503 no_available_channels with Retry-After when the channels listing the model are disabled', async () => {
    const created = await call(`${s.url}/v1/admin/channels`, { token: s.adminToken, body: { name: 'switched-off', type: 'openai', base_url: upstream.baseUrl, key: 'test-key', models: ['off-model'], enabled: false } });
    expect(created.status).toBe(201);
    const res = await call(`${s.url}/v1/chat/completions`, { token: s.userToken, body: { model: 'off-model', messages: [{ role: 'user', content: 'x' }] } });
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('60');
    expect(res.json).toEqual({ error: { message: 'no available channels for model off-model', type: 'service_unavailable', code: 'no_available_channels', param: null } });
  });

  it('answers a bad body with a 400 naming the field', async () => {
    const res = await call(`${s.url}/v1/chat/completions`, { token: s.userToken, body: { model: 'gpt-4o-mini', messages: [{ role: 'wizard', content: 'x' }] } });
    expect(res.status).toBe(400);
    expect(res.json.error).toMatchObject({ type: 'invalid_request_error', param: 'messages.0.role' });
    const noAuth = await call(`${s.url}/v1/chat/completions`, { body: { model: 'gpt-4o-mini', messages: [] } });
    expect(noAuth.status).toBe(401);
  });

  it('falls back to the next channel on a retryable failure', async () => {
    upstream.mode = { kind: 'error', status: 503, message: 'overloaded' };
    const completion = await sdk(s).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'fallback' }] });
    expect(completion.choices[0]!.message.content).toBe('Hello! You said: fallback');
    expect(upstream.requests).toHaveLength(1);
    expect(backup.requests).toHaveLength(1);
  });

  it('marks a channel unhealthy after CHANNEL_FAILURE_THRESHOLD failures; settled() waits for that write', async () => {
    upstream.mode = { kind: 'error', status: 500, message: 'boom' };
    const once = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }], provider_config: { retry_strategy: 'none' } };
    for (let i = 0; i < 3; i++) expect((await call(`${s.url}/v1/chat/completions`, { token: s.userToken, body: once })).status).toBe(502);
    // The failures' health write is not awaited by the requests: once settled, it is in the log.
    await s.app.ctx.health.settled();
    await s.app.ctx.views.channels.waitFor(await s.app.ctx.store.headPosition());
    expect(s.app.ctx.views.channels.state.get(primaryId)).toMatchObject({ healthy: false });
  });

  it('passes a client error through without retrying', async () => {
    upstream.mode = { kind: 'error', status: 400, message: 'context too long' };
    const res = await call(`${s.url}/v1/chat/completions`, { token: s.userToken, body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] } });
    expect(res.status).toBe(400);
    expect(res.json.error).toMatchObject({ message: 'context too long', type: 'invalid_request_error' });
    expect(backup.requests).toHaveLength(0);
  });

  it('answers the last failure when every attempt fails, and honours retry_strategy none', async () => {
    upstream.mode = { kind: 'error', status: 500, message: 'boom' };
    backup.mode = { kind: 'error', status: 502, message: 'bad gateway' };
    const res = await call(`${s.url}/v1/chat/completions`, { token: s.userToken, body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] } });
    expect(res.status).toBe(502);
    expect(res.json.error).toMatchObject({ type: 'upstream_error', code: 'upstream_error' });
    expect(upstream.requests.length + backup.requests.length).toBe(3); // 1 + RELAY_MAX_RETRIES (2)

    upstream.requests.length = 0;
    backup.requests.length = 0;
    const once = await call(`${s.url}/v1/chat/completions`, {
      token: s.userToken,
      body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }], provider_config: { retry_strategy: 'none' } },
    });
    expect(once.status).toBe(502);
    expect(upstream.requests.length + backup.requests.length).toBe(1);
  });

  it('publishes exactly one usage event per request, success or failure', async () => {
    const ids: string[] = [];
    for (const [model, content] of [
      ['gpt-4o-mini', 'usage one'],
      ['nope-2', 'no channel'],
    ]) {
      const res = await call(`${s.url}/v1/chat/completions`, { token: s.userToken, body: { model, messages: [{ role: 'user', content }] } });
      ids.push(res.headers.get('x-request-id')!);
    }
    const invalid = await call(`${s.url}/v1/chat/completions`, { token: s.userToken, body: { model: 'gpt-4o-mini' } });
    ids.push(invalid.headers.get('x-request-id')!);
    const events = await usageEvents(s);
    for (const id of ids) expect(events.filter((e) => e.request_id === id)).toHaveLength(1);
    const [ok, none, bad] = ids.map((id) => events.find((e) => e.request_id === id)!);
    expect(ok).toMatchObject({
      tenant_id: 'default',
      user_id: 'user-1',
      channel_id: primaryId,
      provider: 'openai',
      model_requested: 'gpt-4o-mini',
      model_served: 'gpt-4o-mini',
      prompt_tokens: FAKE_PROMPT_TOKENS,
      completion_tokens: FAKE_COMPLETION_TOKENS,
      usage_source: 'upstream',
      status: 200,
      error_code: null,
      attempts: 1,
      stream: false,
    });
    expect(ok!.latency_ms).toBeGreaterThan(0);
    expect(none).toMatchObject({ status: 404, error_code: 'model_not_found', channel_id: null, attempts: 0 });
    expect(bad).toMatchObject({ status: 400, error_code: 'invalid_request' });
  });

  it('counts tokens with a tokenizer when the upstream reports none', async () => {
    upstream.mode = { kind: 'no_usage' };
    const res = await call(`${s.url}/v1/chat/completions`, { token: s.userToken, body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'count these tokens please' }] } });
    expect(res.json.usage.completion_tokens).toBeGreaterThan(3);
    expect(res.json.usage.prompt_tokens).toBeGreaterThan(5);
    const event = (await usageEvents(s)).find((e) => e.request_id === res.headers.get('x-request-id'));
    expect(event).toMatchObject({ usage_source: 'tokenizer', prompt_tokens: res.json.usage.prompt_tokens, completion_tokens: res.json.usage.completion_tokens });
  });
});
