/**
 * Upstreams that misbehave, through the real relay and server, in both modes: answers over the
 * size limits, a connection reset in the middle of a body, a stream request answered with no
 * stream (JSON, gzip, no events), chunks of the wrong shape, and failures whose internals must
 * not reach the caller. Each is a clear upstream error for the client (a 502 JSON error before
 * any byte went out, an in-band error event then `[DONE]` after) and in the usage event.
 */
import { createServer, type AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { call, startApp, type RunningApp } from '../support/app.js';
import { startOpenAiFake, type OpenAiFake } from '../support/fake-upstreams/openai.js';
import { createChannel, usageEvents } from '../support/relay.js';
import { appModes } from '../support/modes.js';

const services = inject('services');
const urls = inject('serviceUrls');

const CHUNK = (content: string) => `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"${content}"},"finish_reason":null}]}\n\n`;
const COMPLETION = '{"id":"c1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}';

/** A local port nothing listens on (connections to it are refused). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}


const MODES = appModes(services, urls);

describe.each(MODES.map((m) => [m.name, m] as const))('upstream faults (%s)', (_name, mode) => {
  let s: RunningApp;
  let upstream: OpenAiFake;
  let healthy: OpenAiFake;
  let cleanup: () => Promise<void> = async () => undefined;
  let n = 0;
  let refusedChannel: { id: string };
  let probedChannel: { id: string };

  beforeAll(async () => {
    if (!mode.enabled) return;
    upstream = await startOpenAiFake();
    healthy = await startOpenAiFake();
    const { env, cleanup: drop } = mode.env();
    cleanup = drop;
    s = await startApp({
      ...env,
      HEALTH_CHECK_ENABLED: 'false',
      RELAY_MAX_RETRIES: '1',
      RELAY_BACKOFF_BASE: '1ms',
      CHANNEL_FAILURE_THRESHOLD: '1000',
      RELAY_FIRST_BYTE_TIMEOUT: '400ms',
      UPSTREAM_MAX_EVENT_SIZE: '256KB',
      UPSTREAM_MAX_BODY_SIZE: '256KB',
    });
    await createChannel(s, { type: 'openai', name: 'faulty', base_url: upstream.baseUrl, models: ['m'] });
    await createChannel(s, { type: 'openai', name: 'healthy', base_url: healthy.baseUrl, models: ['small'] });
    refusedChannel = await createChannel(s, { type: 'openai', name: 'refused', base_url: `http://127.0.0.1:${await closedPort()}`, models: ['refused'] });
    probedChannel = await createChannel(s, { type: 'openai', name: 'probed', base_url: upstream.baseUrl, models: ['probed'] });
  });
  afterAll(async () => {
    if (!mode.enabled) return;
    await s.close();
    await upstream.close();
    await healthy.close();
    await cleanup();
  });

  /** One chat request; returns the answer, how many upstream requests it made, and its usage event. */
  async function chat(body: Record<string, unknown>) {
    const requestId = `fault-${_name}-${++n}`;
    const before = upstream.requests.length;
    const res = await call(`${s.url}/v1/chat/completions`, { token: s.userToken, headers: { 'x-request-id': requestId }, body: { model: 'm', messages: [{ role: 'user', content: 'hi' }], ...body } });
    const attempts = upstream.requests.length - before;
    const deadline = Date.now() + 5_000;
    let usage: Record<string, unknown> | undefined;
    while (!usage && Date.now() < deadline) {
      usage = (await usageEvents(s)).find((e) => e.request_id === requestId);
      if (!usage) await new Promise((r) => setTimeout(r, 20));
    }
    upstream.mode = { kind: 'reply' };
    return { ...res, attempts, usage: usage! };
  }

  /** A 502 JSON error with `code` (nothing streamed), recorded as such. */
  function expectJsonError(res: Awaited<ReturnType<typeof chat>>, code: string, status = 502) {
    expect(res.status).toBe(status);
    expect(res.headers.get('content-type')).toContain('application/json');
    expect(res.json.error).toMatchObject({ code, type: 'upstream_error' });
    expect(res.usage).toMatchObject({ status, error_code: code });
  }

  /** A stream that went out, then an in-band error event with `code` and `[DONE]`; recorded as a 502. */
  function expectInBandError(res: Awaited<ReturnType<typeof chat>>, code: string) {
    expect(res.status).toBe(200);
    expect(res.text).toContain('"content":"Hel"');
    expect(res.text).toContain(`"code":"${code}"`);
    expect(res.text.endsWith('data: [DONE]\n\n')).toBe(true);
    expect(res.usage).toMatchObject({ status: 502, error_code: code, stream: true });
  }

  it.skipIf(!mode.enabled)('a first stream event over UPSTREAM_MAX_EVENT_SIZE: 502 upstream_response_too_large, not retried', async () => {
    upstream.mode = { kind: 'huge', bytes: 10 * 1024 * 1024 };
    const res = await chat({ stream: true });
    expectJsonError(res, 'upstream_response_too_large');
    expect(res.attempts).toBe(1);
    // The fake sees the hang-up when its socket closes, which may come after the relay has answered.
    await expect.poll(() => upstream.aborted).toBeGreaterThan(0);
  });

  it.skipIf(!mode.enabled)('an event over the limit after chunks went out: in-band error, then [DONE]', async () => {
    upstream.mode = { kind: 'huge', bytes: 10 * 1024 * 1024, prefix: CHUNK('Hel') };
    expectInBandError(await chat({ stream: true }), 'upstream_response_too_large');
  });

  it.skipIf(!mode.enabled)('a completion body over UPSTREAM_MAX_BODY_SIZE: 502 upstream_response_too_large, not retried', async () => {
    upstream.mode = { kind: 'huge', bytes: 10 * 1024 * 1024 };
    const res = await chat({});
    expectJsonError(res, 'upstream_response_too_large');
    expect(res.attempts).toBe(1);
  });

  it.skipIf(!mode.enabled)('serves other requests while a huge line is streaming in', async () => {
    const hold = deferred();
    const started = deferred();
    upstream.mode = { kind: 'huge', bytes: 10 * 1024 * 1024, prefix: CHUNK('Hel'), started: started.resolve, hold: hold.promise };
    let hugeDone = false;
    const huge = chat({ stream: true }).then((res) => {
      hugeDone = true;
      return res;
    });
    await started.promise;
    const small = await call(`${s.url}/v1/chat/completions`, { token: s.userToken, body: { model: 'small', messages: [{ role: 'user', content: 'quick' }], stream: true } });
    expect(small.status).toBe(200);
    expect(small.text).toContain('data: [DONE]');
    expect(hugeDone).toBe(false); // the huge answer is still coming in
    hold.resolve();
    expectInBandError(await huge, 'upstream_response_too_large');
  });

  it.skipIf(!mode.enabled)('a reset in the middle of a completion body: 502 upstream_connection_lost, retried', async () => {
    upstream.mode = { kind: 'reset', prefix: '{"choices":[{"index":0,"message":{"content":"par' };
    const res = await chat({});
    expectJsonError(res, 'upstream_connection_lost');
    expect(res.attempts).toBe(2);
    expect(res.json.error.message).not.toMatch(/ECONNRESET|other side closed|socket/i);
  });

  it.skipIf(!mode.enabled)('a reset before the first stream event: 502 upstream_connection_lost, retried', async () => {
    upstream.mode = { kind: 'reset', prefix: 'data: {"choices":[{"index":0,"delta":{"content":"par' };
    const res = await chat({ stream: true });
    expectJsonError(res, 'upstream_connection_lost');
    expect(res.attempts).toBe(2);
  });

  it.skipIf(!mode.enabled)('a reset after stream events: in-band upstream_stream_interrupted, recorded as a 502', async () => {
    upstream.mode = { kind: 'reset', prefix: CHUNK('Hel') };
    expectInBandError(await chat({ stream: true }), 'upstream_stream_interrupted');
  });

  it.skipIf(!mode.enabled)('a JSON answer to a stream request: 502 bad_upstream_response, never a 200 with only [DONE]', async () => {
    upstream.mode = { kind: 'raw', headers: { 'content-type': 'application/json' }, body: COMPLETION };
    const res = await chat({ stream: true });
    expectJsonError(res, 'bad_upstream_response');
    expect(res.json.error.message).toContain('application/json');
  });

  it.skipIf(!mode.enabled)('a gzip-encoded stream the relay did not ask for: 502 bad_upstream_response', async () => {
    upstream.mode = { kind: 'raw', headers: { 'content-type': 'text/event-stream', 'content-encoding': 'gzip' }, body: gzipSync(CHUNK('Hel') + 'data: [DONE]\n\n') };
    expectJsonError(await chat({ stream: true }), 'bad_upstream_response');
  });

  it.skipIf(!mode.enabled)('an event stream without a single chunk in it: 502 bad_upstream_response', async () => {
    upstream.mode = { kind: 'raw', headers: { 'content-type': 'text/event-stream' }, body: `${COMPLETION}\n` };
    expectJsonError(await chat({ stream: true }), 'bad_upstream_response');
  });

  it.skipIf(!mode.enabled)('a malformed chunk: 502 bad_upstream_response first, in-band after chunks went out, never forwarded', async () => {
    const bad = 'data: {"choices":[{"delta":{"content":5}}]}\n\n';
    upstream.mode = { kind: 'raw', headers: { 'content-type': 'text/event-stream' }, body: `${bad}data: [DONE]\n\n` };
    expectJsonError(await chat({ stream: true }), 'bad_upstream_response');

    upstream.mode = { kind: 'raw', headers: { 'content-type': 'text/event-stream' }, body: `${CHUNK('Hel')}${bad}data: [DONE]\n\n` };
    const res = await chat({ stream: true });
    expectInBandError(res, 'bad_upstream_response');
    expect(res.text).not.toContain('"content":5');
  });

  it.skipIf(!mode.enabled)('errors are written for callers: no client exception names, no conversion exceptions', async () => {
    upstream.mode = { kind: 'slow', delayMs: 1_500 };
    const timeout = await chat({});
    expectJsonError(timeout, 'upstream_timeout', 504);
    expect(timeout.json.error.message).toBe('the upstream did not answer in time');

    upstream.mode = { kind: 'raw', headers: { 'content-type': 'application/json' }, body: '{"choices":"x"}' };
    const unreadable = await chat({});
    expectJsonError(unreadable, 'bad_upstream_response');
    expect(unreadable.json.error.message).toBe('the upstream sent a response that could not be read');
  });

  /** Client exception names and socket details that must not reach a caller. */
  const RAW = /Headers Timeout Error|fetch failed|ECONNREFUSED|ECONNRESET|UND_ERR|127\.0\.0\.1|is not a function|other side closed/i;

  it.skipIf(!mode.enabled)('a refused connection: 502 upstream_unavailable, written for callers', async () => {
    const res = await call(`${s.url}/v1/chat/completions`, { token: s.userToken, headers: { 'x-request-id': `refused-${_name}` }, body: { model: 'refused', messages: [{ role: 'user', content: 'hi' }] } });
    expect(res.status).toBe(502);
    expect(res.json.error).toEqual({ message: 'upstream unreachable: the relay could not connect to it', type: 'upstream_error', code: 'upstream_unavailable', param: null });
    expect(res.text).not.toMatch(RAW);
    const usage = (await usageEvents(s)).find((e) => e.request_id === `refused-${_name}`);
    expect(usage).toMatchObject({ status: 502, error_code: 'upstream_unavailable' });
  });

  it.skipIf(!mode.enabled)('a refused connection names the channel to a signed-in admin only, never to an API key (even an admin\'s)', async () => {
    const ask = (token: string) => call(`${s.url}/v1/chat/completions`, { token, body: { model: 'refused', messages: [{ role: 'user', content: 'hi' }] } });
    const asAdmin = await ask(s.adminToken);
    expect(asAdmin.status).toBe(502);
    expect(asAdmin.json.error).toEqual({ message: 'upstream unreachable: the relay could not connect to it (channel "refused")', type: 'upstream_error', code: 'upstream_unavailable', param: null });
    expect(asAdmin.text).not.toMatch(RAW);

    const adminsKey = await call(`${s.url}/api/admin/keys`, { token: s.adminToken, body: { name: 'admin key', user_id: s.adminUserId } });
    expect(adminsKey.status).toBe(201);
    const viaKey = await ask(adminsKey.json.key as string);
    expect(viaKey.status).toBe(502);
    expect(viaKey.json.error.message).toBe('upstream unreachable: the relay could not connect to it');
    expect(viaKey.text).not.toContain('refused"');
    expect(viaKey.text).not.toMatch(RAW);
  });

  it.skipIf(!mode.enabled)('the channel test endpoint: a hanging or refusing upstream is described for people, not by its exception', async () => {
    upstream.mode = { kind: 'slow', delayMs: 1_500 };
    const hanging = await call(`${s.url}/v1/admin/channels/${probedChannel.id}/test`, { method: 'POST', token: s.adminToken });
    upstream.mode = { kind: 'reply' };
    expect(hanging.status).toBe(200);
    expect(hanging.json).toMatchObject({ ok: false, status: null, error: 'the upstream did not answer in time' });

    const refused = await call(`${s.url}/v1/admin/channels/${refusedChannel.id}/test`, { method: 'POST', token: s.adminToken });
    expect(refused.json).toMatchObject({ ok: false, status: null, error: 'upstream unreachable: the relay could not connect to it' });
    for (const res of [hanging, refused]) {
      expect(res.json.error).not.toMatch(RAW);
      expect(JSON.stringify(res.json.channel)).not.toMatch(/Headers Timeout Error|ECONNREFUSED/);
    }
  });
});
