/**
 * The relay gate's promise, in both modes: every request that gets as far as a known caller
 * publishes exactly one usage event — answered, streamed, refused at any step of the gate, or
 * failed upstream — with the status and error code the client got; a request without a known
 * caller publishes none. Real server, real stores, a fake upstream speaking OpenAI's format.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { call, startApp, type RunningApp } from '../support/app.js';
import { startOpenAiFake, type OpenAiFake } from '../support/fake-upstreams/openai.js';
import { createChannel, usageEvents } from '../support/relay.js';
import { appModes } from '../support/modes.js';

const services = inject('services');
const urls = inject('serviceUrls');


const MODES = appModes(services, urls);

const hello = [{ role: 'user', content: 'hi' }];

describe.each(MODES.map((m) => [m.name, m] as const))('relay gate: one usage event per request (%s)', (_name, mode) => {
  let s: RunningApp;
  let upstream: OpenAiFake;
  let cleanup: () => Promise<void> = async () => undefined;
  let n = 0;

  beforeAll(async () => {
    if (!mode.enabled) return;
    upstream = await startOpenAiFake();
    const { env, cleanup: drop } = mode.env();
    cleanup = drop;
    s = await startApp({ ...env, HEALTH_CHECK_ENABLED: 'false', RELAY_MAX_RETRIES: '0' });
    await createChannel(s, { type: 'openai', name: 'm', base_url: upstream.baseUrl, models: ['m'] });
  });
  afterAll(async () => {
    await s?.close();
    await upstream?.close();
    await cleanup();
  });

  async function apiKey(body: Record<string, unknown>): Promise<string> {
    const res = await call(`${s.url}/api/admin/keys`, { token: s.adminToken, body: { name: `k${++n}`, user_id: s.userId, ...body } });
    expect(res.status).toBe(201);
    const key = res.json.key as string;
    await s.app.ctx.views.keys.waitFor(await s.app.ctx.store.headPosition());
    return key;
  }

  /** Sends one chat request with its own request id; returns the id and the status. */
  async function send(token: string, body: unknown): Promise<{ id: string; status: number; code: string | null }> {
    const id = `gate-${mode.name}-${++n}`;
    const res = await call(`${s.url}/v1/chat/completions`, { token, body, headers: { 'x-request-id': id } });
    return { id, status: res.status, code: (res.json?.error?.code as string | undefined) ?? null };
  }

  it.runIf(mode.enabled)('records every outcome once, with the answer the client got', async () => {
    const narrowKey = await apiKey({ model_restrictions: { allowed_models: ['m'] } });
    const limitedKey = await apiKey({ rate_limits: { requests_per_minute: 1 } });
    upstream.mode = { kind: 'reply' };
    const sent = [
      await send(s.userToken, { model: 'm', messages: hello }),
      await send(s.userToken, { model: 'm', messages: hello, stream: true }),
      await send(s.userToken, { model: 'm' }),
      await send(s.userToken, { preset_id: 'no-such-preset', messages: hello }),
      await send(s.userToken, { model: 'unserved', messages: hello }),
      await send(narrowKey, { model: 'other', messages: hello }),
      await send(narrowKey, { model: 'm', messages: hello }),
      await send(limitedKey, { model: 'm', messages: hello }),
      await send(limitedKey, { model: 'm', messages: hello }),
    ];
    upstream.mode = { kind: 'error', status: 500 };
    sent.push(await send(s.userToken, { model: 'm', messages: hello }));
    upstream.mode = { kind: 'reply' };

    expect(sent.map((r) => [r.status, r.code])).toEqual([
      [200, null],
      [200, null],
      [400, 'invalid_request'],
      [404, 'preset_not_found'],
      [404, 'model_not_found'],
      [403, 'model_not_allowed'],
      [200, null],
      [200, null],
      [429, 'rate_limit_exceeded'],
      [502, 'upstream_error'],
    ]);

    // Without a known caller there is no usage event.
    const anonymous = await call(`${s.url}/v1/chat/completions`, { body: { model: 'm', messages: hello }, headers: { 'x-request-id': `gate-${mode.name}-anonymous` } });
    expect(anonymous.status).toBe(401);

    const events = (await usageEvents(s)).filter((e) => String(e.request_id).startsWith(`gate-${mode.name}-`));
    expect(events.map((e) => e.request_id).sort()).toEqual(sent.map((r) => r.id).sort());
    for (const r of sent) {
      const event = events.find((e) => e.request_id === r.id)!;
      expect([event.status, event.error_code], r.id).toEqual([r.status, r.code]);
      expect(event.latency_ms, r.id).toBeGreaterThan(0);
    }
    // What the client asked for is recorded even when the request was refused.
    expect(events.find((e) => e.request_id === sent[5]!.id)).toMatchObject({ model_requested: 'other', key_id: expect.any(String) });
    expect(events.find((e) => e.request_id === sent[1]!.id)).toMatchObject({ stream: true, usage_source: 'upstream', attempts: 1 });
  });
});
