/**
 * The usage journal as an operator sees it: /health shows its depth, the metrics listener its
 * depth, size and the usage events appended; a relayed request's events go through it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startApp, type RunningApp } from '../support/app.js';
import { startOpenAiFake, type OpenAiFake } from '../support/fake-upstreams/openai.js';
import { createChannel, sdk } from '../support/relay.js';

function value(body: string, name: string): number | undefined {
  const line = body.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
}

describe('usage journal: health and metrics', () => {
  let s: RunningApp;
  let upstream: OpenAiFake;
  beforeAll(async () => {
    upstream = await startOpenAiFake();
    s = await startApp({ HEALTH_CHECK_ENABLED: 'false' });
    await createChannel(s, { type: 'openai', base_url: upstream.baseUrl, models: ['m'] });
  });
  afterAll(async () => {
    await s.close();
    await upstream.close();
  });

  it('reports depth, bytes and appended events', async () => {
    for (let i = 0; i < 3; i++) await sdk(s).chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
    await s.app.ctx.usage.flush();
    const health = await call(`${s.url}/health`);
    expect(health.status).toBe(200);
    expect(health.json.usage_journal).toMatchObject({ depth: 0, dead_lettered: 0 });
    expect(health.json.usage_journal.bytes).toBeGreaterThan(0); // the current segment stays until it rotates

    const metrics = await (await fetch(`${s.metricsUrl}/metrics`)).text();
    expect(value(metrics, 'switchyard_usage_journal_depth')).toBe(0);
    expect(value(metrics, 'switchyard_usage_journal_bytes')).toBeGreaterThan(0);
    expect(value(metrics, 'switchyard_usage_events_appended_total')).toBeGreaterThanOrEqual(3);
    expect(value(metrics, 'switchyard_usage_dead_lettered_total')).toBe(0);
  });
});
