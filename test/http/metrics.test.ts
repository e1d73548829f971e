/**
 * The Prometheus listener on its own port: request counts, latency histograms, errors, process;
 * the relay series after real relayed requests through fake upstreams (both modes; two instances
 * on the distributed stores); and the Grafana dashboard and Prometheus rules naming only series
 * the server exposes.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { call, startApp, type RunningApp } from '../support/app.js';
import { startOpenAiFake, type OpenAiFake } from '../support/fake-upstreams/openai.js';
import { appModes } from '../support/modes.js';
import { createChannel, usageEvents } from '../support/relay.js';

const services = inject('services');
const urls = inject('serviceUrls');

function sample(body: string, name: string, labels: Record<string, string>): number | undefined {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of body.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    if (wanted.every((w) => line.includes(w))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

describe('metrics listener', () => {
  let s: RunningApp;
  beforeAll(async () => {
    s = await startApp();
  });
  afterAll(async () => {
    await s.close();
  });

  it('is served on METRICS_PORT, not on the API port', async () => {
    expect(s.metricsUrl).not.toBeNull();
    expect(new URL(s.metricsUrl!).port).not.toBe(new URL(s.url).port);
    expect((await call(`${s.url}/metrics`)).status).toBe(404);
    expect((await fetch(`${s.metricsUrl}/other`)).status).toBe(404);
  });

  it('counts requests, errors and latencies by route pattern and status', async () => {
    for (let i = 0; i < 3; i++) await call(`${s.url}/health/live`);
    await call(`${s.url}/v1/admin/maintenance`); // 401
    await call(`${s.url}/v1/admin/maintenance`, { token: s.userToken }); // 403
    await call(`${s.url}/v1/nothing/here`); // 404, unmatched
    await call(`${s.url}/v1/admin/maintenance`, { token: s.adminToken, body: { enabled: false } }); // 200, no change

    const res = await fetch(`${s.metricsUrl}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    const body = await res.text();

    expect(sample(body, 'switchyard_http_requests_total', { method: 'GET', route: '/health/live', status_code: '200' })).toBe(3);
    expect(sample(body, 'switchyard_http_requests_total', { route: '/v1/admin/maintenance', status_code: '401' })).toBe(1);
    expect(sample(body, 'switchyard_http_errors_total', { route: '/v1/admin/maintenance', status_code: '403' })).toBe(1);
    // /v1/nothing/here here, and /metrics on the API port in the test above.
    expect(sample(body, 'switchyard_http_errors_total', { route: 'unmatched', status_code: '404' })).toBe(2);
    expect(sample(body, 'switchyard_http_errors_total', { route: '/health/live' })).toBeUndefined();
    expect(sample(body, 'switchyard_http_request_duration_seconds_count', { route: '/health/live', status_code: '200' })).toBe(3);
    expect(sample(body, 'switchyard_http_request_duration_seconds_bucket', { route: '/health/live', le: '+Inf' })).toBe(3);
    expect(body).toContain('switchyard_process_cpu_user_seconds_total');
    expect(body).toContain('switchyard_nodejs_eventloop_lag_seconds');
    expect(sample(body, 'switchyard_projection_lag_commits', { projection: 'maintenance' })).toBe(0);
  });

  it('counts events appended by commands', async () => {
    await call(`${s.url}/v1/admin/maintenance`, { token: s.adminToken, body: { enabled: true, message: 'm' } });
    const body = await (await fetch(`${s.metricsUrl}/metrics`)).text();
    expect(sample(body, 'switchyard_events_appended_total', { category: 'maintenance' })).toBe(1);
  });
});

/** Every metric name a scrape exposes: the families its TYPE lines declare (a histogram's bucket, sum and count series too). */
function exposedNames(body: string): Set<string> {
  const names = new Set<string>();
  for (const line of body.split('\n')) {
    const m = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (!m) continue;
    const [, name, type] = m as unknown as [string, string, string];
    names.add(name);
    if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(name + suffix);
    if (type === 'summary') for (const suffix of ['_sum', '_count']) names.add(name + suffix);
  }
  return names;
}

/** The switchyard_* names a file mentions (rules, dashboard queries). */
function switchyardNamesIn(text: string): Set<string> {
  return new Set(text.match(/\bswitchyard_[a-zA-Z0-9_:]+/g) ?? []);
}

describe.each(appModes(services, urls))('relay series ($name)', (mode) => {
  let a: RunningApp;
  /** A second instance on the same stores (distributed), else `a`. */
  let b: RunningApp;
  let good: OpenAiFake;
  let broken: OpenAiFake;
  let goodChannel: string;
  let brokenChannel: string;
  let cleanup = async () => undefined as void;

  const chat = (s: RunningApp, model: string, stream = false) =>
    call(`${s.url}/v1/chat/completions`, { token: s.userToken, body: { model, stream, ...(stream && { stream_options: { include_usage: true } }), messages: [{ role: 'user', content: 'hi' }] } });
  const scrape = async (s: RunningApp) => (await fetch(`${s.metricsUrl}/metrics`)).text();

  beforeAll(async () => {
    if (!mode.enabled) return;
    [good, broken] = await Promise.all([startOpenAiFake(), startOpenAiFake()]);
    broken.mode = { kind: 'error', status: 500, message: 'the upstream broke' };
    const env = mode.env();
    cleanup = env.cleanup;
    // One failure marks a channel unhealthy; no retry, so a failure is the client's answer.
    const settings = { ...env.env, HEALTH_CHECK_ENABLED: 'false', RELAY_MAX_RETRIES: '0', CHANNEL_FAILURE_THRESHOLD: '1', CHANNEL_COOLDOWN: '600s' };
    a = await startApp(settings);
    b = mode.name === 'distributed' ? await startApp(settings) : a;
    goodChannel = (await createChannel(a, { type: 'openai', name: 'good', base_url: good.baseUrl, models: ['gpt-a'], model_mapping: { fast: 'gpt-a-mini' } })).id;
    brokenChannel = (await createChannel(a, { type: 'deepseek', name: 'broken', base_url: broken.baseUrl, models: ['deep-b'] })).id;
    const head = await a.app.ctx.store.headPosition();
    await Promise.all([a.app.ctx.views.channels.waitFor(head), b.app.ctx.views.channels.waitFor(head)]);

    expect((await chat(a, 'gpt-a')).status).toBe(200);
    expect((await chat(a, 'gpt-a')).status).toBe(200);
    expect((await chat(a, 'fast')).status).toBe(200);
    const streamed = await chat(a, 'gpt-a', true);
    expect(streamed.status).toBe(200);
    expect(streamed.text).toContain('[DONE]');
    const failed = await chat(a, 'deep-b');
    expect(failed.status).toBeGreaterThanOrEqual(500);
    expect((await chat(a, 'no-such-model')).status).toBe(404); // model_not_found
    // The broken channel's unhealthy mark, on both instances.
    await a.app.ctx.health.settled();
    const after = await a.app.ctx.store.headPosition();
    await Promise.all([a.app.ctx.views.channels.waitFor(after), b.app.ctx.views.channels.waitFor(after)]);
  });
  afterAll(async () => {
    if (b && b !== a) await b.close();
    await a?.close();
    await good?.close();
    await broken?.close();
    await cleanup();
  });

  it.skipIf(!mode.enabled)('counts relayed requests by provider, model and status, and their tokens', async () => {
    const body = await scrape(a);
    const failedStatus = (await usageEvents(a)).find((u) => u.model_requested === 'deep-b')!.status as number;
    expect(sample(body, 'switchyard_relay_requests_total', { provider: 'openai', model: 'gpt-a', status: '200' })).toBe(3);
    // An alias is counted under the model it served (a model_mapping target).
    expect(sample(body, 'switchyard_relay_requests_total', { provider: 'openai', model: 'gpt-a-mini', status: '200' })).toBe(1);
    expect(sample(body, 'switchyard_relay_requests_total', { provider: 'deepseek', model: 'deep-b', status: String(failedStatus) })).toBe(1);
    // No channel serves it: no provider, and the client's model name never becomes a label.
    expect(sample(body, 'switchyard_relay_requests_total', { provider: 'none', model: 'other', status: '404' })).toBe(1);
    expect(body).not.toContain('no-such-model');

    // Tokens: what the usage events in the log say, per provider / model / type.
    const events = await usageEvents(a);
    const sum = (model: string, field: string) => events.filter((u) => u.model_served === model).reduce((n, u) => n + (u[field] as number), 0);
    expect(sum('gpt-a', 'prompt_tokens')).toBeGreaterThan(0);
    expect(sample(body, 'switchyard_relay_tokens_total', { provider: 'openai', model: 'gpt-a', type: 'prompt' })).toBe(sum('gpt-a', 'prompt_tokens'));
    expect(sample(body, 'switchyard_relay_tokens_total', { provider: 'openai', model: 'gpt-a', type: 'completion' })).toBe(sum('gpt-a', 'completion_tokens'));
    expect(sample(body, 'switchyard_relay_tokens_total', { provider: 'openai', model: 'gpt-a-mini', type: 'prompt' })).toBe(sum('gpt-a-mini', 'prompt_tokens'));
  });

  it.skipIf(!mode.enabled)('observes request, upstream and first-byte latencies per provider in seconds', async () => {
    const body = await scrape(a);
    // Four answers from the good upstream (one streamed), one from the broken one, one refused before any upstream.
    expect(sample(body, 'switchyard_relay_request_duration_seconds_count', { provider: 'openai' })).toBe(4);
    expect(sample(body, 'switchyard_relay_request_duration_seconds_bucket', { provider: 'openai', le: '+Inf' })).toBe(4);
    expect(sample(body, 'switchyard_relay_request_duration_seconds_count', { provider: 'none' })).toBe(1);
    expect(sample(body, 'switchyard_relay_upstream_latency_seconds_count', { provider: 'openai' })).toBe(4);
    expect(sample(body, 'switchyard_relay_upstream_latency_seconds_count', { provider: 'deepseek' })).toBe(1);
    expect(sample(body, 'switchyard_relay_upstream_latency_seconds_count', { provider: 'none' })).toBeUndefined();
    expect(sample(body, 'switchyard_relay_time_to_first_byte_seconds_count', { provider: 'openai' })).toBe(1);
    // Buckets are cumulative and end at 120 s; the sum is in seconds (a local fake answers in well under one).
    const buckets = body.split('\n').filter((l) => l.startsWith('switchyard_relay_upstream_latency_seconds_bucket{') && l.includes('provider="openai"'));
    expect(buckets.map((l) => /le="([^"]+)"/.exec(l)![1])).toEqual(['0.05', '0.1', '0.25', '0.5', '1', '2.5', '5', '10', '20', '30', '60', '120', '+Inf']);
    const counts = buckets.map((l) => Number(l.slice(l.lastIndexOf(' ') + 1)));
    expect(counts).toEqual([...counts].sort((x, y) => x - y));
    const events = (await usageEvents(a)).filter((u) => u.provider === 'openai');
    expect(sample(body, 'switchyard_relay_upstream_latency_seconds_sum', { provider: 'openai' })).toBeCloseTo(events.reduce((n, u) => n + (u.upstream_ms as number), 0) / 1000, 6);
    expect(sample(body, 'switchyard_relay_request_duration_seconds_sum', { provider: 'openai' })).toBeCloseTo(events.reduce((n, u) => n + (u.latency_ms as number), 0) / 1000, 6);
  });

  it.skipIf(!mode.enabled)('samples every enabled channel\'s health at scrape, the same on every instance', async () => {
    for (const instance of [a, b]) {
      const body = await scrape(instance);
      expect(sample(body, 'switchyard_channel_healthy', { channel: goodChannel, provider: 'openai' })).toBe(1);
      expect(sample(body, 'switchyard_channel_healthy', { channel: brokenChannel, provider: 'deepseek' })).toBe(0);
    }
    // Relay counters are the instance's own: B relayed nothing.
    if (b !== a) expect(sample(await scrape(b), 'switchyard_relay_requests_total', { provider: 'openai' })).toBeUndefined();
    // A disabled channel leaves the series at the next scrape.
    const off = await call(`${a.url}/v1/admin/channels/${brokenChannel}`, { method: 'PATCH', token: a.adminToken, body: { enabled: false } });
    expect(off.status, off.text).toBe(200);
    await a.app.ctx.views.channels.waitFor(await a.app.ctx.store.headPosition());
    expect(sample(await scrape(a), 'switchyard_channel_healthy', { channel: brokenChannel })).toBeUndefined();
  });

  it.skipIf(!mode.enabled)('exposes every series the Grafana dashboard and the Prometheus rules query', async () => {
    const exposed = exposedNames(await scrape(a));
    const dashboard = readFileSync(new URL('../../infra/grafana/switchyard-dashboard.json', import.meta.url), 'utf8');
    const rules = readFileSync(new URL('../../infra/prometheus/alerts.yml', import.meta.url), 'utf8');
    for (const [file, text] of [['dashboard', dashboard], ['alerts.yml', rules]] as const) {
      const named = [...switchyardNamesIn(text)];
      expect(named.length, file).toBeGreaterThan(5);
      expect(named.filter((n) => !exposed.has(n)), `${file} names series the server does not expose`).toEqual([]);
    }
  });
});
