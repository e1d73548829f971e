/**
 * Where the projectors run: in a thread of their own by default (every other HTTP test uses it),
 * or on the serving thread with PROJECTORS_THREAD=false. Both serve the same reads: the admin
 * API's read-your-writes, the usage read model fed by relayed requests, /health's projection list.
 * The thread runs at a lower scheduling priority (PROJECTORS_NICE) where the OS gives threads one.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ProjectorThread } from '../../src/projections/runtime/projectors.js';
import { startOpenAiFake, type OpenAiFake } from '../support/fake-upstreams/openai.js';
import { call, startApp, type RunningApp } from '../support/app.js';
import { createChannel } from '../support/relay.js';
import { niceOf } from '../support/scheduling.js';

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

describe.skipIf(process.platform !== 'linux')('the projector thread priority', () => {
  let s: RunningApp | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  it.each([
    ['by default', {}, 10],
    ['with PROJECTORS_NICE=19', { PROJECTORS_NICE: '19' }, 19],
  ])('is lowered %s, for that thread alone', async (_label, env: Record<string, string>, nice: number) => {
    const serving = niceOf(process.pid);
    s = await startApp({ HEALTH_CHECK_ENABLED: 'false', ...env });
    const runner = s.app.ctx.runner;
    if (!(runner instanceof ProjectorThread)) throw new Error('expected the projectors in their own thread');
    const priority = await runner.priority();
    expect(priority).toEqual({ tid: expect.any(Number), nice });
    expect(niceOf(priority!.tid)).toBe(nice);
    expect(niceOf(process.pid)).toBe(serving); // the serving thread keeps its priority
  });

  it('is left alone with PROJECTORS_NICE=0', async () => {
    s = await startApp({ HEALTH_CHECK_ENABLED: 'false', PROJECTORS_NICE: '0' });
    expect(await (s.app.ctx.runner as ProjectorThread).priority()).toBeNull();
  });
});
