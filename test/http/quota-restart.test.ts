/** Quota counters are not durable (memory, or a Redis without persistence): a restart re-seeds them from the usage read model. */
import { afterAll, describe, expect, it } from 'vitest';
import { startOpenAiFake } from '../support/fake-upstreams/openai.js';
import { call, startApp, type RunningApp } from '../support/app.js';
import { createChannel } from '../support/relay.js';

describe('key quota across a restart', () => {
  let s: RunningApp;
  afterAll(async () => {
    await s?.close();
  });

  it('does not hand a key its used quota back', async () => {
    const upstream = await startOpenAiFake();
    try {
      s = await startApp({ HEALTH_CHECK_ENABLED: 'false', QUOTA_RESERVE_COMPLETION_TOKENS: '1' });
      await createChannel(s, { type: 'openai', base_url: upstream.baseUrl, models: ['m'] });
      // The quota counts the tenant's prices: 1,000 credits per 1M tokens = 1 credit per 1,000 tokens.
      expect((await call(`${s.url}/v1/admin/pricing/models/m`, { method: 'PUT', token: s.adminToken, body: { input_price: 1000, output_price: 1000 } })).status).toBe(200);
      expect((await call(`${s.url}/v1/admin/credits/user-1/topup`, { token: s.adminToken, body: { amount: 100, reason: 'test' } })).status).toBe(200);
      const created = await call(`${s.url}/api/admin/keys`, { token: s.adminToken, body: { name: 'q', user_id: 'user-1', permissions: { quota_limit: 0.12 } } }); // 120 tokens
      const key = created.json.key as string;
      const ask = () => call(`${s.url}/v1/chat/completions`, { token: key, body: { model: 'm', messages: [{ role: 'user', content: 'hi' }], max_tokens: 20 } });
      // Each request reserves 93 tokens (73 bytes of body + max_tokens 20) and uses 18.
      expect((await ask()).status).toBe(200); // 18 tokens used
      expect((await ask()).status).toBe(200); // 36 used; the next would reserve 93 more: over 120
      expect((await ask()).status).toBe(429);
      await s.app.ctx.usage.flush();
      await s.app.ctx.runner.waitFor(await s.app.ctx.store.headPosition(), { projections: ['key_usage', 'billing'] });

      const dataDir = s.dataDir;
      await s.app.close();
      s = await startApp({ HEALTH_CHECK_ENABLED: 'false', QUOTA_RESERVE_COMPLETION_TOKENS: '1' }, { keepDataDir: dataDir });
      expect(await s.app.ctx.counters.get(`quota:${created.json.id}`)).toBe(36 * 1000);
      const after = await ask();
      expect(after.status).toBe(429);
      expect(after.json.error.code).toBe('insufficient_quota');
    } finally {
      await upstream.close();
    }
  });
});
