/** The Prometheus listener on its own port: request counts, latency histograms, errors, process. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startApp, type RunningApp } from '../support/app.js';

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
