/**
 * Where the projectors run: in a thread of their own by default (every other HTTP test uses it),
 * or on the serving thread with PROJECTORS_THREAD=false. Both serve the same reads: the admin
 * API's read-your-writes, the usage read model fed by relayed requests, /health's projection list.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startOpenAiFake, type OpenAiFake } from '../support/fake-upstreams/openai.js';
import { call, startApp, type RunningApp } from '../support/app.js';
import { createChannel } from '../support/relay.js';

describe.each([
  ['in their own thread (default)', {}],
  ['on the serving thread (PROJECTORS_THREAD=false)', { PROJECTORS_THREAD: 'false' }],
])('projectors %s', (_label, env: Record<string, string>) => {
  let s: RunningApp | undefined;
  let upstream: OpenAiFake | undefined;
  afterEach(async () => {
    await s?.close();
    await upstream?.close();
  });

  it('answers the admin API after its own writes, and folds relayed usage into the read models', async () => {
    upstream = await startOpenAiFake();
    s = await startApp({ HEALTH_CHECK_ENABLED: 'false', ...env });
    expect(s.app.ctx.runner.constructor.name).toBe(env.PROJECTORS_THREAD === 'false' ? 'ProjectionRunner' : 'ProjectorThread');
    const channel = await createChannel(s, { type: 'openai', base_url: upstream.baseUrl, models: ['gpt-x'] });
    const listed = await call(`${s.url}/v1/admin/channels`, { token: s.adminToken });
    expect((listed.json as { data: Array<{ id: string }> }).data.map((c) => c.id)).toContain(channel.id);

    for (let i = 0; i < 3; i++) {
      const res = await call(`${s.url}/v1/chat/completions`, { token: s.userToken, body: { model: 'gpt-x', messages: [{ role: 'user', content: 'hi' }] } });
      expect(res.status).toBe(200);
    }
    await expect
      .poll(async () => ((await call(`${s!.url}/v1/admin/usage/requests`, { token: s!.adminToken })).json as { data: unknown[] }).data.length, { timeout: 5000 })
      .toBe(3);

    const health = await call(`${s.url}/health`);
    const projections = (health.json as { projections: Array<{ name: string; lag: number }> }).projections;
    expect(projections.map((p) => p.name)).toEqual(expect.arrayContaining(['channels', 'usage', 'billing', 'key_usage']));
  });
});
