/**
 * API keys end to end on the real server: creation shape, secret shown once and stored hashed,
 * and every enforcement rule on the relay with its documented answer. Runs on the embedded
 * memory counters and on Redis.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { startOpenAiFake, type OpenAiFake } from '../support/fake-upstreams/openai.js';
import { call, loggedInUser, startApp, type RunningApp } from '../support/app.js';
import { dereferencedOpenapi } from '../support/openapi.js';
import { createChannel } from '../support/relay.js';
import { uniqueSuffix } from '../support/services.js';

const services = inject('services');
const urls = inject('serviceUrls');
const redis = new URL(urls.redis);

const variants: Array<[string, Record<string, string>, boolean]> = [
  ['memory counters', {}, true],
  ['redis counters', { CACHE_HOST: redis.hostname, CACHE_PORT: redis.port || '6379', CACHE_PREFIX: `sytest:${uniqueSuffix()}:` }, services.redis],
];

describe.each(variants)('API keys (%s)', (_name, env, enabled) => {
  let s: RunningApp;
  let upstream: OpenAiFake;

  beforeAll(async () => {
    if (!enabled) return;
    upstream = await startOpenAiFake();
    s = await startApp({ ...env, QUOTA_RESERVE_COMPLETION_TOKENS: '1', HEALTH_CHECK_ENABLED: 'false', TRUSTED_PROXIES: '127.0.0.1/32, ::1', GEOIP_COUNTRY_HEADER: 'cf-ipcountry' });
    await createChannel(s, { type: 'openai', base_url: upstream.baseUrl, models: ['gpt-a', 'gpt-b', 'gpt-c'] });
  });
  afterAll(async () => {
    if (!enabled) return;
    await s.close();
    await upstream.close();
  });
  beforeEach((ctx) => {
    if (!enabled) ctx.skip();
  });

  async function newKey(body: Record<string, unknown>) {
    const res = await call(`${s.url}/api/admin/keys`, { token: s.adminToken, body: { name: 'k', user_id: 'user-1', ...body } });
    expect(res.status, res.text).toBe(201);
    return res.json as { id: string; key: string } & Record<string, unknown>;
  }
  const chat = (key: string, model = 'gpt-a', headers: Record<string, string> = {}, extra: Record<string, unknown> = {}) =>
    call(`${s.url}/v1/chat/completions`, { token: key, headers, body: { model, messages: [{ role: 'user', content: 'hi' }], ...extra } });

  it('creates a key with the spec shape, shows the secret once and stores only its hash', async () => {
    const created = await newKey({
      permissions: { models: ['gpt-a'], quota_limit: 100, rate_limits: { requests_per_minute: 60, tokens_per_hour: 100000 }, ip_whitelist: ['10.0.0.0/8'], expiry_date: '2099-01-01T00:00:00Z' },
      model_restrictions: { allowed_models: ['gpt-b'], blocked_models: ['gpt-c'], model_aliases: { fast: 'gpt-a' } },
      rate_limits: { requests_per_hour: 1000, concurrent_requests: 4, burst_allowance: { multiplier: 2, duration: 10 } },
      ip_restrictions: { allowed_ips: ['::1'], blocked_ips: ['10.0.0.9'], geographic_restrictions: { allowed_countries: ['de'], blocked_countries: [] } },
    });
    expect(created.key).toMatch(/^sk-[A-Za-z0-9_-]{43}$/);
    expect(created).toMatchObject({
      object: 'api_key',
      user_id: 'user-1',
      key_prefix: created.key.slice(0, 8),
      permissions: { models: ['gpt-a'], quota_limit: 100, rate_limits: { requests_per_minute: 60, tokens_per_hour: 100000 }, ip_whitelist: ['10.0.0.0/8', '::1'], expiry_date: '2099-01-01T00:00:00.000Z' },
      model_restrictions: { allowed_models: ['gpt-b'], blocked_models: ['gpt-c'], model_aliases: { fast: 'gpt-a' } },
      rate_limits: { requests_per_hour: 1000, concurrent_requests: 4, burst_allowance: { multiplier: 2, duration: 10 } },
      ip_restrictions: { blocked_ips: ['10.0.0.9'], geographic_restrictions: { allowed_countries: ['DE'] } },
      revoked: false,
    });
    const fetched = await call(`${s.url}/api/admin/keys/${created.id}`, { token: s.adminToken });
    expect(fetched.json).not.toHaveProperty('key');
    expect(fetched.text).not.toContain(created.key);
    const row = await s.app.ctx.sql.db.selectFrom('api_keys').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(created.key.slice(8));
    const events = await s.app.ctx.store.readStream(`apikey-${created.id}`);
    expect(JSON.stringify(events)).not.toContain(created.key.slice(8));
    const bad = await call(`${s.url}/api/admin/keys`, { token: s.adminToken, body: { name: 'x', user_id: 'user-1', ip_restrictions: { allowed_ips: ['999.1.1.1'] } } });
    expect(bad.status).toBe(422);
    expect(bad.json.error.code).toBe('invalid_ip_rule');
    const nobody = await call(`${s.url}/api/admin/keys`, { token: s.adminToken, body: { name: 'x', user_id: 'no-such-user' } });
    expect(nobody.status).toBe(404);
    expect(nobody.json.error.code).toBe('user_not_found');
  });

  it('relays with a valid key and answers 401 invalid_api_key for unknown and revoked keys', async () => {
    const { id, key } = await newKey({});
    expect((await chat(key)).status).toBe(200);
    expect((await chat('sk-not-a-real-key')).json.error).toMatchObject({ code: 'invalid_api_key', type: 'authentication_error', message: expect.stringMatching(/^Incorrect API key provided: sk-not\*\*\*-key\. /) });
    const revoked = await call(`${s.url}/api/admin/keys/${id}`, { method: 'DELETE', token: s.adminToken });
    expect(revoked.json).toEqual({ id, object: 'api_key', revoked: true });
    const after = await chat(key);
    expect(after.status).toBe(401);
    expect(after.json.error.code).toBe('invalid_api_key');
  });

  it('answers 401 key_expired after the expiry date', async () => {
    const { key } = await newKey({ permissions: { expiry_date: '2001-01-01T00:00:00Z' } });
    const res = await chat(key);
    expect(res.status).toBe(401);
    expect(res.json.error.code).toBe('key_expired');
  });

  it('answers 403 model_not_allowed, resolving aliases first', async () => {
    const { key } = await newKey({ permissions: { models: ['gpt-a', 'gpt-c'] }, model_restrictions: { blocked_models: ['gpt-c'], model_aliases: { fast: 'gpt-a', sneaky: 'gpt-c' } } });
    expect((await chat(key, 'gpt-a')).status).toBe(200);
    expect((await chat(key, 'fast')).status).toBe(200);
    expect(upstream.requests.at(-1)!.json).toMatchObject({ model: 'gpt-a' });
    for (const model of ['gpt-b', 'gpt-c', 'sneaky']) {
      const res = await chat(key, model);
      expect(res.status, model).toBe(403);
      expect(res.json.error.code).toBe('model_not_allowed');
    }
    // A request-level model_mapping cannot smuggle a blocked model under an allowed name.
    const smuggled = await chat(key, 'gpt-a', {}, { model_mapping: { 'gpt-a': { actual_model: 'gpt-c' } } });
    expect(smuggled.status).toBe(403);
    expect(smuggled.json.error.code).toBe('model_not_allowed');
  });

  it('lets a model through only when permissions.models and model_restrictions.allowed_models both allow it; GET /v1/models lists only those', async () => {
    const models = async (key: string) => ((await call(`${s.url}/v1/models`, { token: key })).json.data as Array<{ id: string }>).map((m) => m.id).sort();
    const both = await newKey({ permissions: { models: ['gpt-a', 'gpt-b'] }, model_restrictions: { allowed_models: ['gpt-b', 'gpt-c'] } });
    expect(both).toMatchObject({ permissions: { models: ['gpt-a', 'gpt-b'] }, model_restrictions: { allowed_models: ['gpt-b', 'gpt-c'] } });
    expect((await chat(both.key, 'gpt-b')).status).toBe(200);
    for (const model of ['gpt-a', 'gpt-c']) expect((await chat(both.key, model)).json.error?.code, model).toBe('model_not_allowed');
    expect(await models(both.key)).toEqual(['gpt-b']);

    // Either list alone narrows by itself; the block list wins over both.
    const permitted = await newKey({ permissions: { models: ['gpt-a', 'gpt-c'] }, model_restrictions: { blocked_models: ['gpt-c'] } });
    expect(await models(permitted.key)).toEqual(['gpt-a']);
    const restricted = await newKey({ model_restrictions: { allowed_models: ['gpt-b', 'gpt-c'] } });
    expect(await models(restricted.key)).toEqual(['gpt-b', 'gpt-c']);
    expect(await models((await newKey({})).key)).toEqual(['gpt-a', 'gpt-b', 'gpt-c']);

    // Lists with nothing in common allow nothing (not everything).
    const disjoint = await newKey({ permissions: { models: ['gpt-a'] }, model_restrictions: { allowed_models: ['gpt-b'] } });
    expect(await models(disjoint.key)).toEqual([]);
    expect((await chat(disjoint.key, 'gpt-a')).json.error?.code).toBe('model_not_allowed');

    // A change of one list keeps the other.
    const changed = await call(`${s.url}/api/admin/keys/${both.id}`, { method: 'PATCH', token: s.adminToken, body: { model_restrictions: { allowed_models: ['gpt-a', 'gpt-c'] } } });
    expect(changed.json).toMatchObject({ permissions: { models: ['gpt-a', 'gpt-b'] }, model_restrictions: { allowed_models: ['gpt-a', 'gpt-c'] } });
    expect(await models(both.key)).toEqual(['gpt-a']);
  });

  it('answers 403 ip_not_allowed by address, CIDR (v4 and v6), block list and country', async () => {
    const only10 = await newKey({ ip_restrictions: { allowed_ips: ['10.0.0.0/8'] } });
    expect((await chat(only10.key)).json.error?.code).toBe('ip_not_allowed'); // the socket is 127.0.0.1
    // Through a trusted proxy (127.0.0.1 is in TRUSTED_PROXIES) the forwarded address counts.
    expect((await chat(only10.key, 'gpt-a', { 'x-forwarded-for': '10.1.2.3' })).status).toBe(200);
    expect((await chat(only10.key, 'gpt-a', { 'x-forwarded-for': '11.1.2.3' })).status).toBe(403);
    const v6 = await newKey({ ip_restrictions: { allowed_ips: ['2001:db8::/32'], blocked_ips: ['2001:db8::bad'] } });
    expect((await chat(v6.key, 'gpt-a', { 'x-forwarded-for': '2001:db8::1' })).status).toBe(200);
    expect((await chat(v6.key, 'gpt-a', { 'x-forwarded-for': '2001:db8::bad' })).status).toBe(403);
    const geo = await newKey({ ip_restrictions: { geographic_restrictions: { allowed_countries: ['DE', 'FR'], blocked_countries: ['FR'] } } });
    expect((await chat(geo.key, 'gpt-a', { 'cf-ipcountry': 'DE' })).status).toBe(200);
    expect((await chat(geo.key, 'gpt-a', { 'cf-ipcountry': 'FR' })).json.error.code).toBe('ip_not_allowed');
    expect((await chat(geo.key, 'gpt-a', { 'cf-ipcountry': 'US' })).status).toBe(403);
    expect((await chat(geo.key)).status).toBe(403); // unknown country fails closed
  });

  it('answers 429 rate_limit_exceeded with Retry-After and rate-limit headers', async () => {
    const { key } = await newKey({ permissions: { rate_limits: { requests_per_minute: 3 } } });
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await chat(key));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 429]);
    expect(answers[0]!.headers.get('x-ratelimit-limit-requests')).toBe('3');
    expect(answers[0]!.headers.get('x-ratelimit-remaining-requests')).toBe('2');
    expect(answers[2]!.headers.get('x-ratelimit-remaining-requests')).toBe('0');
    const refused = answers[3]!;
    expect(refused.json.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limit_exceeded' });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.headers.get('x-ratelimit-remaining-requests')).toBe('0');
  });

  it('lets a burst allowance raise the rate for its duration', async () => {
    const { key } = await newKey({ rate_limits: { requests_per_minute: 6, burst_allowance: { multiplier: 2, duration: 30 } } });
    const statuses = [];
    for (let i = 0; i < 10; i++) statuses.push((await chat(key)).status);
    // 6/min plus the burst volume (2x for 30 s = 3 more) = 9 admitted, the 10th refused.
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 200, 429]);
  });

  it('takes the burst duration as a string ("30s") and applies it as that many seconds', async () => {
    const created = await newKey({ rate_limits: { requests_per_minute: 6, burst_allowance: { multiplier: 2, duration: '30s' } } });
    expect(created.rate_limits).toMatchObject({ burst_allowance: { multiplier: 2, duration: 30 } });
    const statuses = [];
    for (let i = 0; i < 10; i++) statuses.push((await chat(created.key)).status);
    // As with duration: 30 — 6/min plus 3 more for the burst.
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 200, 429]);

    const changed = await call(`${s.url}/api/admin/keys/${created.id}`, { method: 'PATCH', token: s.adminToken, body: { rate_limits: { burst_allowance: { multiplier: 3, duration: '1m30s' } } } });
    expect(changed.json.rate_limits.burst_allowance).toEqual({ multiplier: 3, duration: 90 });
    const events = await s.app.ctx.store.readStream(`apikey-${created.id}`);
    expect(events.map((e) => (e.data as { policy: { rate_limits: { burst_allowance: unknown } } }).policy.rate_limits.burst_allowance)).toEqual([
      { multiplier: 2, duration: 30 },
      { multiplier: 3, duration: 90 },
    ]);

    for (const duration of ['30', '30 s', '1.5m', '1500ms', '0s', '', 'soon']) {
      const bad = await call(`${s.url}/api/admin/keys`, { token: s.adminToken, body: { name: 'x', user_id: 'user-1', rate_limits: { burst_allowance: { multiplier: 2, duration } } } });
      expect(bad.status, duration).toBe(400);
      expect(bad.json.error, duration).toMatchObject({ type: 'invalid_request_error', code: 'invalid_request', param: 'rate_limits.burst_allowance.duration' });
      expect(bad.json.error.message, duration).toContain('rate_limits.burst_allowance.duration');
    }

    const openapi = (await dereferencedOpenapi(s.url));
    const body = openapi.paths['/api/admin/keys'].post.requestBody.content['application/json'].schema;
    const types = (body.properties.rate_limits.properties.burst_allowance.anyOf ?? [body.properties.rate_limits.properties.burst_allowance])
      .flatMap((b: { properties?: { duration?: { anyOf?: Array<{ type: string }> } } }) => b.properties?.duration?.anyOf ?? [])
      .map((d: { type: string }) => d.type);
    expect(types).toEqual(['integer', 'string']);
  });

  it('counts tokens per hour from real usage', async () => {
    const { key } = await newKey({ rate_limits: { tokens_per_hour: 30 } });
    const first = await chat(key);
    expect(first.status).toBe(200);
    expect(first.headers.get('x-ratelimit-limit-tokens')).toBe('30');
    expect((await chat(key)).status).toBe(200); // 18 tokens used: under 30
    const third = await chat(key); // 36 used: refused
    expect(third.status).toBe(429);
    expect(third.headers.get('x-ratelimit-remaining-tokens')).toBe('0');
  });

  it('caps concurrent requests', async () => {
    const { key } = await newKey({ rate_limits: { concurrent_requests: 2 } });
    upstream.mode = { kind: 'slow', delayMs: 300 };
    try {
      const results = await Promise.all([chat(key), chat(key), chat(key), chat(key)]);
      expect(results.filter((r) => r.status === 200)).toHaveLength(2);
      expect(results.filter((r) => r.status === 429 && r.json.error.code === 'rate_limit_exceeded')).toHaveLength(2);
    } finally {
      upstream.mode = { kind: 'reply' };
    }
    expect((await chat(key)).status).toBe(200); // slots came back
  });

  it('answers 429 insufficient_quota once the quota is used, never overshooting under concurrency', async () => {
    // The quota counts the tenant's prices: gpt-c costs 1,000 credits per 1M tokens (1 credit =
    // 1,000 tokens), and the key's user has credits. Each request reserves its bound (77 bytes of
    // body + max_tokens 20 = 97 tokens) before the upstream call and settles the real 18 tokens after.
    const price = await call(`${s.url}/v1/admin/pricing/models/gpt-c`, { method: 'PUT', token: s.adminToken, body: { input_price: '1000', output_price: '1000' } });
    expect(price.status, price.text).toBe(200);
    const topup = await call(`${s.url}/v1/admin/credits/user-1/topup`, { token: s.adminToken, body: { amount: '1000', reason: 'quota test' } });
    expect(topup.status, topup.text).toBe(200);
    const { key, id } = await newKey({ permissions: { quota_limit: 0.2 } }); // 200 tokens of gpt-c
    const results = await Promise.all(Array.from({ length: 12 }, () => chat(key, 'gpt-c', {}, { max_tokens: 20 })));
    const ok = results.filter((r) => r.status === 200).length;
    const refused = results.filter((r) => r.status === 429);
    expect(refused.length).toBeGreaterThan(0);
    for (const r of refused) expect(r.json.error).toMatchObject({ type: 'insufficient_quota', code: 'insufficient_quota' });
    const used = await s.app.ctx.counters.get(`quota:${id}`);
    expect(ok).toBeGreaterThan(0);
    expect(used).toBe(ok * 18 * 1000);
    expect(used).toBeLessThanOrEqual(200 * 1000);
  });

  it("lists each key with the credits it has spent and its latest request (the keys page's columns)", async () => {
    expect((await call(`${s.url}/v1/admin/pricing/models/gpt-c`, { method: 'PUT', token: s.adminToken, body: { input_price: '1000', output_price: '1000' } })).status).toBe(200);
    expect((await call(`${s.url}/v1/admin/credits/user-1/topup`, { token: s.adminToken, body: { amount: '10', reason: 'usage column test' } })).status).toBe(200);
    const used = await call(`${s.url}/v1/keys`, { token: s.userToken, body: { name: 'used' } });
    const idle = await call(`${s.url}/v1/keys`, { token: s.userToken, body: { name: 'idle' } });
    expect((await chat(used.json.key, 'gpt-c')).status).toBe(200);
    const row = async (id: string) => ((await call(`${s.url}/v1/keys`, { token: s.userToken })).json.data as Array<{ id: string; usage: unknown }>).find((k) => k.id === id)?.usage;
    await expect.poll(() => row(used.json.id)).toMatchObject({ quota_used: 0.018, last_used_at: expect.stringMatching(/^\d{4}-/) });
    expect(await row(idle.json.id)).toEqual({ quota_used: 0, last_used_at: null });
    const admin = (await call(`${s.url}/api/admin/keys`, { token: s.adminToken })).json.data as Array<{ id: string; usage: unknown }>;
    expect(admin.find((k) => k.id === used.json.id)?.usage).toMatchObject({ quota_used: 0.018 });
  });

  it('takes quota_limit as a decimal string or a number, and refuses malformed amounts (400)', async () => {
    expect((await newKey({ permissions: { quota_limit: '12.5' } })).permissions).toMatchObject({ quota_limit: 12.5 });
    expect((await newKey({ permissions: { quota_limit: '0.000001' } })).permissions).toMatchObject({ quota_limit: 0.000001 });
    expect((await newKey({ permissions: { quota_limit: 3 } })).permissions).toMatchObject({ quota_limit: 3 });
    for (const bad of ['abc', '1.2.3', '', '-1', '0.0000001', -2, 0.1234567]) {
      const res = await call(`${s.url}/api/admin/keys`, { token: s.adminToken, body: { name: 'k', user_id: 'user-1', permissions: { quota_limit: bad } } });
      expect(res.status, `${JSON.stringify(bad)}: ${res.text}`).toBe(400);
      expect(res.json.error.type).toBe('invalid_request_error');
    }
    const { id } = await newKey({ permissions: { quota_limit: '1' } });
    const changed = await call(`${s.url}/api/admin/keys/${id}`, { method: 'PATCH', token: s.adminToken, body: { permissions: { quota_limit: '2.25' } } });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.json.permissions.quota_limit).toBe(2.25);
  });

  it('lets users manage their own keys on /v1/keys and nobody else’s', async () => {
    const mine = await call(`${s.url}/v1/keys`, { token: s.userToken, body: { name: 'mine', rate_limits: { requests_per_minute: 5 } } });
    expect(mine.status).toBe(201);
    expect(mine.json.user_id).toBe('user-1');
    const list = await call(`${s.url}/v1/keys`, { token: s.userToken });
    expect(list.json.data.every((k: { user_id: string }) => k.user_id === 'user-1')).toBe(true);
    const other = (await loggedInUser(s, 'user', 'default')).token;
    for (const [method, body] of [
      ['GET', undefined],
      ['PATCH', { name: 'stolen' }],
      ['DELETE', undefined],
    ] as const) {
      expect((await call(`${s.url}/v1/keys/${mine.json.id}`, { method, token: other, body })).status, method).toBe(404);
    }
    const renamed = await call(`${s.url}/v1/keys/${mine.json.id}`, { method: 'PATCH', token: s.userToken, body: { name: 'renamed', rate_limits: { requests_per_minute: 7 } } });
    expect(renamed.json).toMatchObject({ name: 'renamed', rate_limits: { requests_per_minute: 7 } });
    expect((await call(`${s.url}/api/admin/keys`, { token: s.userToken })).status).toBe(403);
  });

  it('refuses a tenant_id naming another tenant on the key and billing endpoints instead of ignoring it', async () => {
    const other = await loggedInUser(s, 'admin');
    // Another tenant's admin naming the default tenant: 403, nothing created.
    const before = (await call(`${s.url}/api/admin/keys`, { token: s.adminToken })).json.data.length;
    const probes: Array<[string, string, unknown]> = [
      ['POST', '/api/admin/keys', { name: 'k', user_id: 'user-1', tenant_id: 'default' }],
      ['GET', '/api/admin/keys?tenant_id=default', undefined],
      ['GET', '/v1/admin/pricing?tenant_id=default', undefined],
      ['PUT', '/v1/admin/pricing/models/gpt-a', { input_price: '1', output_price: '1', tenant_id: 'default' }],
    ];
    for (const [method, path, body] of probes) {
      const res = await call(`${s.url}${path}`, { method, token: other.token, body });
      expect(res.status, `${method} ${path}: ${res.text}`).toBe(403);
      expect(res.json.error).toMatchObject({ type: 'permission_error', code: 'tenant_not_allowed' });
    }
    expect((await call(`${s.url}/api/admin/keys`, { token: s.adminToken })).json.data.length).toBe(before);
    // Naming their own tenant is fine; an operator naming another tenant is told these endpoints cannot (400).
    expect((await call(`${s.url}/api/admin/keys?tenant_id=${other.tenantId}`, { token: other.token })).status).toBe(200);
    const operator = await call(`${s.url}/api/admin/keys?tenant_id=${other.tenantId}`, { token: s.adminToken });
    expect(operator.status).toBe(400);
    expect(operator.json.error).toMatchObject({ code: 'tenant_not_supported', param: 'tenant_id' });
  });

  it("hides one tenant's keys from another tenant's admins (404)", async () => {
    const { id } = await newKey({});
    const otherAdmin = (await loggedInUser(s, 'admin')).token;
    for (const [method, body] of [
      ['GET', undefined],
      ['PATCH', { name: 'x' }],
      ['DELETE', undefined],
    ] as const) {
      expect((await call(`${s.url}/api/admin/keys/${id}`, { method, token: otherAdmin, body })).status, method).toBe(404);
    }
    expect((await call(`${s.url}/api/admin/keys`, { token: otherAdmin })).json.data).toEqual([]);
  });
});
