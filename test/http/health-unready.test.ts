/** /health turns non-2xx when a dependency stops answering, while /health/live stays up. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startApp, type RunningApp } from '../support/app.js';

describe('readiness when a dependency is gone', () => {
  let s: RunningApp;
  beforeAll(async () => {
    s = await startApp();
  });
  afterAll(async () => {
    await s.close().catch(() => undefined);
  });

  it('answers 503 naming the dependency that is down', async () => {
    await s.app.ctx.counters.close(); // the counters store goes away under the running server
    const res = await call(`${s.url}/health`);
    expect(res.status).toBe(503);
    expect(res.json).toMatchObject({ status: 'unavailable', ready: false, live: true });
    // /health is public: our words, not the store's exception.
    expect(res.json.checks.counters).toMatchObject({ status: 'down', kind: 'memory', error: 'the memory check failed (details in the log)' });
    expect(res.json.checks.event_store.status).toBe('up');
    expect((await call(`${s.url}/health/ready`)).status).toBe(503);
    expect((await call(`${s.url}/health/live`)).status).toBe(200);
  });
});

describe('readiness when the projector thread is gone', () => {
  let s: RunningApp;
  beforeAll(async () => {
    s = await startApp();
  });
  afterAll(async () => {
    await s.close().catch(() => undefined);
  });

  it('answers 503 with the projectors check down', async () => {
    expect((await call(`${s.url}/health`)).json.checks.projectors).toMatchObject({ status: 'up', kind: 'thread' });
    await s.app.ctx.runner.stop();
    const res = await call(`${s.url}/health`);
    expect(res.status).toBe(503);
    expect(res.json.checks.projectors).toMatchObject({ status: 'down', kind: 'thread', error: expect.any(String) });
    expect(res.json.projections).toEqual([]);
  });
});
