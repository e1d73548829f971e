/**
 * Streaming behaviour that clients feel: the first byte is not held back, a client that goes away
 * takes the upstream request with it, a dropped upstream ends the stream cleanly, and a channel
 * marked unhealthy comes back through the health probe.
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAiFake, type OpenAiFake } from '../support/fake-upstreams/openai.js';
import { call, startApp, type RunningApp } from '../support/app.js';
import { createChannel, usageEvents } from '../support/relay.js';

describe('relay streaming and recovery', () => {
  let s: RunningApp;
  let upstream: OpenAiFake;
  let channelId: string;

  beforeAll(async () => {
    upstream = await startOpenAiFake();
    s = await startApp({ HEALTH_CHECK_ENABLED: 'false', RELAY_MAX_RETRIES: '0', CHANNEL_FAILURE_THRESHOLD: '1', CHANNEL_COOLDOWN: '100ms' });
    channelId = (await createChannel(s, { type: 'openai', base_url: upstream.baseUrl, models: ['m'] })).id;
  });
  afterAll(async () => {
    await s.close();
    await upstream.close();
  });

  it('sends each upstream piece on as it arrives (no buffering)', async () => {
    upstream.mode = { kind: 'slow', delayMs: 150 };
    const started = Date.now();
    const res = await fetch(`${s.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.userToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'slowly please' }], stream: true }),
    });
    const reader = res.body!.getReader();
    const arrivals: Array<{ at: number; text: string }> = [];
    const decoder = new TextDecoder();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      arrivals.push({ at: Date.now() - started, text: decoder.decode(value) });
    }
    upstream.mode = { kind: 'reply' };
    const firstContent = arrivals.find((a) => a.text.includes('"content":"Hel'));
    const end = arrivals.at(-1)!;
    // The upstream spaces its pieces 150 ms apart: the first must reach the client long before the last.
    expect(end.at - firstContent!.at).toBeGreaterThan(250);
    expect(arrivals.length).toBeGreaterThan(3);
  });

  it('aborts the upstream request when the client disconnects', async () => {
    upstream.mode = { kind: 'slow', delayMs: 200 };
    const abortedBefore = upstream.aborted;
    const requestId = `disconnect-${Date.now()}`;
    await new Promise<void>((resolve, reject) => {
      const req = http.request(`${s.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${s.userToken}`, 'content-type': 'application/json', 'x-request-id': requestId },
      });
      req.on('response', (res) => {
        res.once('data', () => {
          req.destroy(); // the client goes away after the first bytes
          resolve();
        });
      });
      req.on('error', () => undefined);
      req.end(JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'bye' }], stream: true }));
      setTimeout(() => reject(new Error('no response')), 5000);
    });
    const deadline = Date.now() + 3000;
    while (upstream.aborted === abortedBefore && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    upstream.mode = { kind: 'reply' };
    expect(upstream.aborted).toBe(abortedBefore + 1);
    let event: Record<string, unknown> | undefined;
    while (!event && Date.now() < deadline) {
      event = (await usageEvents(s)).find((e) => e.request_id === requestId);
      if (!event) await new Promise((r) => setTimeout(r, 20));
    }
    expect(event).toMatchObject({ status: 499, error_code: 'client_disconnected', stream: true });
  });

  it('ends the stream with an error event when the upstream drops mid-stream, and a probe brings the channel back', async () => {
    upstream.mode = { kind: 'stream_error' };
    const res = await call(`${s.url}/v1/chat/completions`, { token: s.userToken, body: { model: 'm', messages: [{ role: 'user', content: 'drop' }], stream: true } });
    upstream.mode = { kind: 'reply' };
    expect(res.status).toBe(200);
    expect(res.text).toContain('"content":"Hel');
    expect(res.text).toContain('"code":"upstream_stream_interrupted"');
    expect(res.text.endsWith('data: [DONE]\n\n')).toBe(true);

    // Threshold 1: that failure marked the channel unhealthy.
    const deadline = Date.now() + 2000;
    while (s.app.ctx.views.channels.state.get(channelId)!.healthy && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(s.app.ctx.views.channels.state.get(channelId)!.healthy).toBe(false);
    await new Promise((r) => setTimeout(r, 150)); // cooldown (100 ms) ends
    const probed = await s.app.ctx.health.probeRound(s.app.ctx.pools, 5_000);
    expect(probed).toBe(1);
    // While the prober's lease is held, another round (another instance's) probes nothing, even
    // with an unhealthy channel due for a probe.
    const entry = s.app.ctx.views.channels.state.get(channelId)!;
    await s.app.ctx.health.setHealth(entry.channel, false, Date.now() - 1, 'test: due for a probe', null);
    await s.app.ctx.views.channels.waitFor(await s.app.ctx.store.headPosition());
    expect(await s.app.ctx.health.probeRound(s.app.ctx.pools, 5_000)).toBe(0);
    expect(s.app.ctx.views.channels.state.get(channelId)!.healthy).toBe(false);
    await s.app.ctx.counters.clear('health-prober');
    expect(await s.app.ctx.health.probeRound(s.app.ctx.pools, 5_000)).toBe(1);
    const head = await s.app.ctx.store.headPosition();
    await s.app.ctx.views.channels.waitFor(head);
    expect(s.app.ctx.views.channels.state.get(channelId)!.healthy).toBe(true);
    // The admin API reads the channels read model (the projector's), not the live view.
    await s.app.ctx.runner.waitFor(head, { projections: ['channels'] });
    const view = await call(`${s.url}/v1/admin/channels/${channelId}`, { token: s.adminToken });
    expect(view.json.health).toMatchObject({ healthy: true, reason: expect.stringContaining('probe succeeded') });
  });
});
