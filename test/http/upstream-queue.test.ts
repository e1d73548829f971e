/**
 * The upstream pool's bounded queue: with every connection to an origin busy
 * (HTTP_MAX_CONNS_PER_HOST), a request waits at most UPSTREAM_QUEUE_TIMEOUT, then fails fast with
 * 503 upstream_busy and Retry-After (its usage event says so); the queue shows in the metrics. And
 * the public port listens with HTTP_LISTEN_BACKLOG, on either server.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { call, startApp, type RunningApp } from '../support/app.js';
import { createChannel, usageEvents } from '../support/relay.js';
import { appModes } from '../support/modes.js';

const services = inject('services');
const urls = inject('serviceUrls');

/** Embedded, and distributed (NATS, MariaDB, Redis) where those run: the usage event travels differently. */
const MODES = appModes(services, urls);

const COMPLETION = JSON.stringify({
  id: 'c1',
  object: 'chat.completion',
  created: 1,
  model: 'm',
  choices: [{ index: 0, message: { role: 'assistant', content: 'held' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
});

/** An upstream that answers nothing until `release()`: each request holds its connection. */
async function startHoldingUpstream() {
  const held: ServerResponse[] = [];
  let received = 0;
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received++;
      held.push(res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    get received() {
      return received;
    },
    release() {
      for (const res of held.splice(0)) res.writeHead(200, { 'content-type': 'application/json' }).end(COMPLETION);
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

async function until<T>(read: () => Promise<T> | T, ok: (value: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const value = await read();
    if (ok(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last: ${String(value)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe.each(MODES.map((m) => [m.name, m] as const))('upstream pool queue: fail fast past UPSTREAM_QUEUE_TIMEOUT (%s)', (_name, mode) => {
  let s: RunningApp;
  let upstream: Awaited<ReturnType<typeof startHoldingUpstream>>;
  let cleanup: () => Promise<void> = async () => undefined;

  beforeAll(async () => {
    if (!mode.enabled) return;
    upstream = await startHoldingUpstream();
    const { env, cleanup: drop } = mode.env();
    cleanup = drop;
    s = await startApp({ ...env, HEALTH_CHECK_ENABLED: 'false', HTTP_MAX_CONNS_PER_HOST: '2', UPSTREAM_QUEUE_TIMEOUT: '1500ms', RELAY_MAX_RETRIES: '2', RELAY_BACKOFF_BASE: '1ms' });
    await createChannel(s, { type: 'openai', name: 'held', base_url: upstream.origin, models: ['m'] });
  });
  afterAll(async () => {
    if (!mode.enabled) return;
    await s.close();
    await upstream.close();
    await cleanup();
  });

  const chat = (id: string) =>
    call(`${s.url}/v1/chat/completions`, { token: s.userToken, headers: { 'x-request-id': id }, body: { model: 'm', messages: [{ role: 'user', content: 'hold' }] } });
  const metrics = async () => (await fetch(`${s.metricsUrl}/metrics`)).text();
  const sample = (text: string, name: string) => Number(new RegExp(`^${name}\\{origin="${upstream.origin}"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? NaN);

  it.skipIf(!mode.enabled)('N+1 concurrent requests: the extra one waits in the queue (metric), then gets 503 upstream_busy with Retry-After', async () => {
    const first = [chat('held-1'), chat('held-2')];
    await until(() => upstream.received, (n) => n === 2, 'two held upstream requests');

    const extra = chat('queued-1');
    const queued = await until(metrics, (text) => sample(text, 'switchyard_upstream_queued_requests') === 1, 'the queue metric');
    expect(sample(queued, 'switchyard_upstream_active_requests')).toBe(2);
    expect(sample(queued, 'switchyard_upstream_connected_sockets')).toBe(2);

    const busy = await extra;
    expect(busy.status).toBe(503);
    expect(busy.headers.get('retry-after')).toBe('2');
    expect(busy.json).toEqual({
      error: { message: 'every connection to the upstream is in use and none came free within 1.5 s; retry after 2 s', type: 'upstream_error', code: 'upstream_busy', param: null },
    });
    // Never sent, not retried, not counted against the channel.
    expect(upstream.received).toBe(2);

    const after = await metrics();
    expect(sample(after, 'switchyard_upstream_queued_requests')).toBe(0);
    expect(sample(after, 'switchyard_upstream_busy_total')).toBe(1);

    upstream.release();
    for (const res of await Promise.all(first)) expect(res.status).toBe(200);
    const usage = await usageEvents(s);
    expect(usage.find((e) => e.request_id === 'queued-1')).toMatchObject({ status: 503, error_code: 'upstream_busy', attempts: 1 });
    expect(usage.find((e) => e.request_id === 'held-1')).toMatchObject({ status: 200 });
  });

  it.skipIf(!mode.enabled)('a request queued behind busy connections gets the next free one (FIFO), without an error', async () => {
    const first = [chat('fifo-1'), chat('fifo-2')];
    await until(() => upstream.received, (n) => n === 4, 'two more held upstream requests');
    const third = chat('fifo-3');
    await until(metrics, (text) => sample(text, 'switchyard_upstream_queued_requests') === 1, 'the queue metric');
    upstream.release(); // frees both: the queued one is sent on one of them
    await until(() => upstream.received, (n) => n === 5, 'the queued request upstream');
    upstream.release();
    for (const res of await Promise.all([...first, third])) expect(res.status).toBe(200);
  });
});
