/**
 * An API key's quota under a burst of 200 concurrent requests that claim to be tiny
 * (`max_tokens: 1`) while the upstream reports more than that (the fake answers 11 prompt + 7
 * completion tokens whatever max_tokens says). The reservation must not trust the client: spend
 * stays within the quota, on the memory counters and on Redis.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { startOpenAiFake, type OpenAiFake } from '../support/fake-upstreams/openai.js';
import { FAKE_COMPLETION_TOKENS, FAKE_PROMPT_TOKENS } from '../support/fake-upstreams/fake.js';
import { call, startApp, type RunningApp } from '../support/app.js';
import { createChannel } from '../support/relay.js';
import { uniqueSuffix } from '../support/services.js';

const services = inject('services');
const urls = inject('serviceUrls');
const redis = new URL(urls.redis);

const variants: Array<[string, Record<string, string>, boolean]> = [
  ['memory counters', {}, true],
  ['redis counters', { CACHE_HOST: redis.hostname, CACHE_PORT: redis.port || '6379', CACHE_PREFIX: `sytest:${uniqueSuffix()}:` }, services.redis],
];

/** 1,000 credits per 1M tokens: one token costs 1,000 micro-credits. */
const MICRO_PER_TOKEN = 1000;
const TOKENS_PER_REQUEST = FAKE_PROMPT_TOKENS + FAKE_COMPLETION_TOKENS;

describe.each(variants)('API key quota under 200 concurrent requests (%s)', (_name, env, enabled) => {
  let s: RunningApp;
  let upstream: OpenAiFake;

  beforeAll(async () => {
    if (!enabled) return;
    upstream = await startOpenAiFake();
    s = await startApp({ ...env, HEALTH_CHECK_ENABLED: 'false', QUOTA_RESERVE_COMPLETION_TOKENS: '64' });
    await createChannel(s, { type: 'openai', base_url: upstream.baseUrl, models: ['gpt-q'] });
    const price = await call(`${s.url}/v1/admin/pricing/models/gpt-q`, { method: 'PUT', token: s.adminToken, body: { input_price: '1000', output_price: '1000' } });
    expect(price.status, price.text).toBe(200);
    const topup = await call(`${s.url}/v1/admin/credits/user-1/topup`, { token: s.adminToken, body: { amount: '1000', reason: 'quota test' } });
    expect(topup.status, topup.text).toBe(200);
  });
  afterAll(async () => {
    if (!enabled) return;
    await s.close();
    await upstream.close();
  });
  beforeEach((ctx) => {
    if (!enabled) ctx.skip();
  });

  it('spends no more than quota_limit when every request claims max_tokens: 1', async () => {
    const created = await call(`${s.url}/api/admin/keys`, { token: s.adminToken, body: { name: 'burst', user_id: 'user-1', permissions: { quota_limit: '1' } } });
    expect(created.status, created.text).toBe(201);
    const { key, id } = created.json as { key: string; id: string };
    const limitMicro = 1000 * MICRO_PER_TOKEN; // 1 credit = 1,000 tokens of gpt-q

    const results = await Promise.all(
      Array.from({ length: 200 }, () => call(`${s.url}/v1/chat/completions`, { token: key, body: { model: 'gpt-q', messages: [{ role: 'user', content: 'hi' }], max_tokens: 1 } })),
    );
    const ok = results.filter((r) => r.status === 200).length;
    const refused = results.filter((r) => r.status === 429);
    expect(ok + refused.length).toBe(200);
    for (const r of refused) expect(r.json.error).toMatchObject({ type: 'insufficient_quota', code: 'insufficient_quota' });
    expect(ok).toBeGreaterThan(0);

    // Every admitted request settled to what the upstream reported; the total stays within the quota.
    const used = await s.app.ctx.counters.get(`quota:${id}`);
    expect(used).toBe(ok * TOKENS_PER_REQUEST * MICRO_PER_TOKEN);
    expect(used).toBeLessThanOrEqual(limitMicro);

    // What is left is usable, one request at a time, until less than one reservation (76 bytes of
    // body + 64 completion tokens = 140 tokens) remains: the bound costs at most that much quota.
    const ask = () => call(`${s.url}/v1/chat/completions`, { token: key, body: { model: 'gpt-q', messages: [{ role: 'user', content: 'hi' }], max_tokens: 1 } });
    for (let i = 0; i < 100 && (await ask()).status === 200; i++);
    const final = await s.app.ctx.counters.get(`quota:${id}`);
    expect(final).toBeLessThanOrEqual(limitMicro);
    expect(limitMicro - final).toBeLessThan((76 + 64) * MICRO_PER_TOKEN);
  });
});
