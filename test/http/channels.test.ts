/** Channel admin API: CRUD, masking and encryption of keys, tenant isolation, test probe, health. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAiFake, type OpenAiFake } from '../support/fake-upstreams/openai.js';
import { call, loggedInUser, startApp, type RunningApp } from '../support/app.js';
import { createChannel, sdk } from '../support/relay.js';

const SECRET_KEY = 'sk-live-THIS-MUST-NEVER-LEAK-1234';

describe('channel admin API', () => {
  let s: RunningApp;
  let upstream: OpenAiFake;
  let otherTenantAdmin: string;
  let otherTenantId: string;

  beforeAll(async () => {
    upstream = await startOpenAiFake();
    s = await startApp({ HEALTH_CHECK_ENABLED: 'false', CHANNEL_FAILURE_THRESHOLD: '2', CHANNEL_COOLDOWN: '60s', RELAY_MAX_RETRIES: '0' });
    const adminB = await loggedInUser(s, 'admin');
    otherTenantAdmin = adminB.token;
    otherTenantId = adminB.tenantId;
  });
  afterAll(async () => {
    await s.close();
    await upstream.close();
  });

  it('creates, reads, lists, changes and deletes a channel; the key is only ever masked', async () => {
    const created = await call(`${s.url}/v1/admin/channels`, {
      token: s.adminToken,
      body: { name: 'crud', type: 'openai', base_url: upstream.baseUrl, key: SECRET_KEY, models: ['gpt-x'], config: { organization: 'org-1' } },
    });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({
      object: 'channel',
      name: 'crud',
      type: 'openai',
      key: 'sk-****1234',
      models: ['gpt-x'],
      model_mapping: {},
      priority: 0,
      weight: 1,
      enabled: true,
      base_url: upstream.baseUrl,
      effective_base_url: upstream.baseUrl,
      health: { healthy: true, cooldown_until: null },
      last_test: null,
    });
    const id = created.json.id as string;
    expect(created.text).not.toContain('THIS-MUST-NEVER-LEAK');

    const list = await call(`${s.url}/v1/admin/channels`, { token: s.adminToken });
    expect(list.json.data.map((c: { id: string }) => c.id)).toContain(id);
    expect(list.text).not.toContain('THIS-MUST-NEVER-LEAK');

    const patched = await call(`${s.url}/v1/admin/channels/${id}`, { method: 'PATCH', token: s.adminToken, body: { priority: 3, weight: 5, key: 'sk-new-key-abcd-9999' } });
    expect(patched.status).toBe(200);
    expect(patched.json).toMatchObject({ priority: 3, weight: 5, key: 'sk-****9999', name: 'crud' });

    // At rest: sealed in the read model and in the event log.
    const row = await s.app.ctx.sql.db.selectFrom('channels').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    expect(row.key_sealed).toMatch(/^v1\./);
    expect(JSON.stringify(row)).not.toContain('THIS-MUST-NEVER-LEAK');
    const events = await s.app.ctx.store.readStream(`channel-${id}`);
    expect(events.map((e) => e.type)).toEqual(['ChannelCreated', 'ChannelUpdated']);
    expect(JSON.stringify(events)).not.toContain('THIS-MUST-NEVER-LEAK');
    expect(JSON.stringify(events)).not.toContain('sk-new-key-abcd');
    // ...while the relay's in-memory directory holds the usable key.
    expect(s.app.ctx.views.channels.state.get(id)!.channel.apiKey).toBe('sk-new-key-abcd-9999');

    const deleted = await call(`${s.url}/v1/admin/channels/${id}`, { method: 'DELETE', token: s.adminToken });
    expect(deleted.json).toEqual({ id, object: 'channel', deleted: true });
    expect((await call(`${s.url}/v1/admin/channels/${id}`, { token: s.adminToken })).status).toBe(404);
    expect(s.app.ctx.views.channels.state.has(id)).toBe(false);
  });

  it('validates input with 400s and refuses non-admins', async () => {
    const bad = await call(`${s.url}/v1/admin/channels`, { token: s.adminToken, body: { name: 'x', type: 'nonsense', models: ['m'] } });
    expect(bad.status).toBe(400);
    expect(bad.json.error.param).toBe('type');
    const noModels = await call(`${s.url}/v1/admin/channels`, { token: s.adminToken, body: { name: 'x', type: 'openai', models: [] } });
    expect(noModels.json.error.param).toBe('models');
    const custom = await call(`${s.url}/v1/admin/channels`, { token: s.adminToken, body: { name: 'x', type: 'custom', key: 'k', models: ['m'] } });
    expect(custom.status).toBe(422);
    expect(custom.json.error.message).toContain('needs base_url');
    expect((await call(`${s.url}/v1/admin/channels`, { token: s.userToken })).status).toBe(403);
  });

  it("hides one tenant's channels from another (404, not 403)", async () => {
    const mine = await createChannel(s, { type: 'openai', base_url: upstream.baseUrl, models: ['tenant-a-model'] });
    for (const [method, path, body] of [
      ['GET', `/v1/admin/channels/${mine.id}`, undefined],
      ['PATCH', `/v1/admin/channels/${mine.id}`, { priority: 1 }],
      ['DELETE', `/v1/admin/channels/${mine.id}`, undefined],
      ['POST', `/v1/admin/channels/${mine.id}/test`, undefined],
    ] as const) {
      const res = await call(`${s.url}${path}`, { method, token: otherTenantAdmin, body });
      expect(res.status, `${method} ${path}`).toBe(404);
    }
    const theirs = await call(`${s.url}/v1/admin/channels`, { token: otherTenantAdmin });
    expect(theirs.json.data).toEqual([]);
    // Tenant B's users cannot route to tenant A's channels either.
    const userB = (await loggedInUser(s, 'user', otherTenantId)).token;
    const res = await call(`${s.url}/v1/chat/completions`, { token: userB, body: { model: 'tenant-a-model', messages: [{ role: 'user', content: 'x' }] } });
    // As for a model nobody serves: tenant A's channels are not even hinted at.
    expect(res.status).toBe(404);
    expect(res.json.error.code).toBe('model_not_found');
    expect(res.json.error.message).not.toContain('tenant-a-model,');
  });

  it('tests a channel with one real probe and records the result and health', async () => {
    const ch = await createChannel(s, { type: 'openai', base_url: upstream.baseUrl, models: ['probe-model'] });
    upstream.requests.length = 0;
    const ok = await call(`${s.url}/v1/admin/channels/${ch.id}/test`, { method: 'POST', token: s.adminToken });
    expect(ok.status).toBe(200);
    expect(ok.json).toMatchObject({ ok: true, status: 200, error: null, channel: { last_test: { ok: true, status: 200 }, health: { healthy: true } } });
    expect(upstream.requests).toHaveLength(1);
    expect(upstream.requests[0]!.json).toMatchObject({ model: 'probe-model', max_tokens: 1 });

    upstream.mode = { kind: 'error', status: 401, message: 'Incorrect API key provided' };
    const failed = await call(`${s.url}/v1/admin/channels/${ch.id}/test`, { method: 'POST', token: s.adminToken });
    upstream.mode = { kind: 'reply' };
    expect(failed.json).toMatchObject({ ok: false, status: 401, error: 'Incorrect API key provided', channel: { last_test: { ok: false, status: 401 }, health: { healthy: false } } });
    expect(failed.json.channel.health.cooldown_until).toBeTruthy();
    // Unhealthy and cooling down: the router skips it.
    const res = await call(`${s.url}/v1/chat/completions`, { token: s.userToken, body: { model: 'probe-model', messages: [{ role: 'user', content: 'x' }] } });
    expect(res.status).toBe(503);
    expect(res.json.error.code).toBe('no_available_channels');
  });

  it('marks a channel unhealthy after N failures within the window, visible on the channel and on every instance', async () => {
    const ch = await createChannel(s, { type: 'openai', base_url: upstream.baseUrl, models: ['flaky-model'] });
    upstream.mode = { kind: 'error', status: 500, message: 'down' };
    const ask = () => call(`${s.url}/v1/chat/completions`, { token: s.userToken, body: { model: 'flaky-model', messages: [{ role: 'user', content: 'x' }] } });
    expect((await ask()).status).toBe(502); // failure 1: still healthy
    expect((await call(`${s.url}/v1/admin/channels/${ch.id}`, { token: s.adminToken })).json.health.healthy).toBe(true);
    expect((await ask()).status).toBe(502); // failure 2 = threshold
    upstream.mode = { kind: 'reply' };
    const deadline = Date.now() + 2000;
    let view = await call(`${s.url}/v1/admin/channels/${ch.id}`, { token: s.adminToken });
    while (view.json.health.healthy && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
      view = await call(`${s.url}/v1/admin/channels/${ch.id}`, { token: s.adminToken });
    }
    expect(view.json.health).toMatchObject({ healthy: false, reason: expect.stringContaining('2 failures') });
    expect((await ask()).status).toBe(503); // cooling down
    const events = await s.app.ctx.store.readStream(`channel-${ch.id}`);
    expect(events.filter((e) => e.type === 'ChannelHealthChanged')).toHaveLength(1);
  });

  it('cools a channel down for the Retry-After of a 429', async () => {
    const ch = await createChannel(s, { type: 'openai', base_url: upstream.baseUrl, models: ['limited-model'] });
    upstream.mode = { kind: 'error', status: 429, message: 'slow down', retryAfterSeconds: 30 };
    const res = await call(`${s.url}/v1/chat/completions`, { token: s.userToken, body: { model: 'limited-model', messages: [{ role: 'user', content: 'x' }] } });
    upstream.mode = { kind: 'reply' };
    expect(res.status).toBe(429);
    expect(res.json.error.code).toBe('upstream_rate_limited');
    expect(res.headers.get('retry-after')).toBe('30');
    const deadline = Date.now() + 2000;
    while (s.app.ctx.views.channels.state.get(ch.id)!.cooldownUntil === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    const cooldown = s.app.ctx.views.channels.state.get(ch.id)!.cooldownUntil;
    expect(cooldown - Date.now()).toBeGreaterThan(25_000);
    expect(cooldown - Date.now()).toBeLessThanOrEqual(30_000);
    // The admin view reads the channels table, which the projector thread updates on its own time.
    await s.app.ctx.runner.waitFor(await s.app.ctx.store.headPosition());
    const view = await call(`${s.url}/v1/admin/channels/${ch.id}`, { token: s.adminToken });
    expect(view.json.health.healthy).toBe(true); // rate limited, not broken
    expect(view.json.health.reason).toContain('rate limited');
    await expect(sdk(s).chat.completions.create({ model: 'limited-model', messages: [{ role: 'user', content: 'x' }] })).rejects.toMatchObject({ status: 503 });
  });

  it('cools a channel down when the upstream says no requests remain', async () => {
    const ch = await createChannel(s, { type: 'openai', base_url: upstream.baseUrl, models: ['quota-model'] });
    upstream.extraHeaders['x-ratelimit-remaining-requests'] = '0';
    upstream.extraHeaders['x-ratelimit-reset-requests'] = '20s';
    try {
      const res = await call(`${s.url}/v1/chat/completions`, { token: s.userToken, body: { model: 'quota-model', messages: [{ role: 'user', content: 'x' }] } });
      expect(res.status).toBe(200); // this request was served...
    } finally {
      delete upstream.extraHeaders['x-ratelimit-remaining-requests'];
      delete upstream.extraHeaders['x-ratelimit-reset-requests'];
    }
    const deadline = Date.now() + 2000;
    while (s.app.ctx.views.channels.state.get(ch.id)!.cooldownUntil === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    const left = s.app.ctx.views.channels.state.get(ch.id)!.cooldownUntil - Date.now();
    expect(left).toBeGreaterThan(15_000); // ...and the next ones wait for the window to reset
    expect(left).toBeLessThanOrEqual(20_000);
  });
});
