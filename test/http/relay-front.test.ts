/**
 * The public port's front server and fastify behind it (src/api/relay-server.ts), with either
 * front (RELAY_HTTP_SERVER lean: the relay's own HTTP/1.1 server; node: a plain node:http server):
 * chat completions answered by the front, everything else by fastify, on one port and on one
 * keep-alive connection; the same answers, headers, errors, metrics and usage events either way.
 *
 * Which server answered is observed on fastify's node:http server: a 'request' listener added by
 * the test counts the requests that reached fastify's handler.
 */
import { connect } from 'node:net';
import OpenAI from 'openai';
import { Agent, Client } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeEmbedding } from '../support/fake-upstreams/fake.js';
import { startOpenAiFake, type OpenAiFake } from '../support/fake-upstreams/openai.js';
import { call, startApp, type RunningApp } from '../support/app.js';
import { createChannel, sdk, usageEvents } from '../support/relay.js';

const CHAT = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'hello front' }] };

/** Counts requests that reached fastify's node:http server. */
function countFastifyRequests(s: RunningApp) {
  const seen: string[] = [];
  s.app.server.server.on('request', (req: { method?: string; url?: string }) => seen.push(`${req.method} ${req.url}`));
  return seen;
}

/** One raw HTTP/1.1 exchange on a new connection: what the server wrote until it closed or `until` matched. */
function raw(url: string, bytes: string, until?: RegExp): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(bytes));
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      received += chunk;
      if (until?.test(received)) {
        socket.destroy();
        resolve(received);
      }
    });
    socket.on('end', () => resolve(received));
    socket.on('error', reject);
    socket.setTimeout(10_000, () => {
      socket.destroy();
      reject(new Error(`timed out; received so far: ${received}`));
    });
  });
}

describe.each([
  // The lean front hands a connection over for good at its first other request.
  { front: 'lean', fastifyAfterHandOver: ['GET /v1/usage', 'POST /api/v1/chat/completions'] },
  // The node:http front decides each request by itself.
  { front: 'node', fastifyAfterHandOver: ['GET /v1/usage'] },
])('the $front front server before fastify', ({ front, fastifyAfterHandOver }) => {
  let s: RunningApp;
  let upstream: OpenAiFake;
  let fastifySaw: string[];

  beforeAll(async () => {
    upstream = await startOpenAiFake();
    s = await startApp({ HEALTH_CHECK_ENABLED: 'false', RELAY_HTTP_SERVER: front });
    await createChannel(s, { name: 'front', type: 'openai', base_url: upstream.baseUrl, models: ['gpt-4o-mini'] });
    fastifySaw = countFastifyRequests(s);
  });
  afterAll(async () => {
    await s.close();
    await upstream.close();
  });

  it('answers what an SDK client calls itself: models, then completions streaming or not', async () => {
    fastifySaw.length = 0;
    // Connections of its own: the shared fetch pool holds connections fastify already took over.
    const dispatcher = new Agent();
    try {
      const client = new OpenAI({ apiKey: s.userToken, baseURL: `${s.url}/v1`, maxRetries: 0, fetchOptions: { dispatcher } as never });
      expect((await client.models.list()).data.map((m) => m.id)).toEqual(['gpt-4o-mini']);
      const completion = await client.chat.completions.create(CHAT);
      expect(completion.choices[0]!.message.content).toBe('Hello! You said: hello front');
      let text = '';
      for await (const chunk of await client.chat.completions.create({ ...CHAT, stream: true })) text += chunk.choices[0]?.delta.content ?? '';
      expect(text).toBe('Hello! You said: hello front');
      const embedded = await client.embeddings.create({ model: 'gpt-4o-mini', input: 'hello front', encoding_format: 'float' });
      expect(embedded.data[0]!.embedding).toEqual(fakeEmbedding('hello front'));
    } finally {
      await dispatcher.close();
    }
    expect(fastifySaw).toEqual([]);
  });

  it('hands other requests of a keep-alive connection to fastify, in order', async () => {
    fastifySaw.length = 0;
    const client = new Client(s.url, { pipelining: 1 });
    try {
      const post = (path: string) =>
        client.request({ method: 'POST', path, headers: { authorization: `Bearer ${s.userToken}`, 'content-type': 'application/json' }, body: JSON.stringify(CHAT) });
      const first = await post('/v1/chat/completions');
      expect(first.statusCode).toBe(200);
      expect(((await first.body.json()) as { object: string }).object).toBe('chat.completion');
      const usage = await client.request({ method: 'GET', path: '/v1/usage', headers: { authorization: `Bearer ${s.userToken}` } });
      expect(usage.statusCode).toBe(200);
      await usage.body.dump();
      // After it, the chat request is answered just the same (by fastify, on the lean front: the
      // connection is fastify's now).
      const after = await post('/api/v1/chat/completions');
      expect(after.statusCode).toBe(200);
      expect(((await after.body.json()) as { object: string }).object).toBe('chat.completion');
    } finally {
      await client.close();
    }
    expect(fastifySaw).toEqual(fastifyAfterHandOver);
  });

  it('answers pipelined requests in order across the hand-over', async () => {
    const body = JSON.stringify(CHAT);
    const chat = `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${s.userToken}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    const health = 'GET /health/live HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n';
    const answer = await raw(s.url, chat + health);
    const statuses = [...answer.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => m[1]);
    expect(statuses).toEqual(['200', '200']);
    expect(answer.indexOf('chat.completion')).toBeLessThan(answer.lastIndexOf('HTTP/1.1 200'));
  });

  it('keeps the response headers: x-request-id, Deprecation on /v1/chat, rate limits', async () => {
    const traced = await call(`${s.url}/v1/chat/completions`, { token: s.userToken, body: CHAT, headers: { 'x-request-id': 'front-trace-1' } });
    expect(traced.status).toBe(200);
    expect(traced.headers.get('x-request-id')).toBe('front-trace-1');
    expect((await usageEvents(s)).some((e) => e.request_id === 'front-trace-1' && e.status === 200)).toBe(true);
    const generated = await call(`${s.url}/v1/chat/completions`, { token: s.userToken, body: CHAT, headers: { 'x-request-id': 'not a valid id' } });
    expect(generated.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const alias = await call(`${s.url}/v1/chat`, { token: s.userToken, body: CHAT });
    expect(alias.status).toBe(200);
    expect(alias.headers.get('deprecation')).toBe('@1711929600');
    expect(alias.headers.get('sunset')).toBe('Wed, 30 Jun 2027 23:59:59 GMT');
    expect(alias.headers.get('link')).toContain('/v1/chat/completions');
  });

  it('answers bad requests with the same OpenAI-style errors as fastify', async () => {
    const badJson = await call(`${s.url}/v1/chat/completions`, { token: s.userToken, body: '{"model": "gpt-4o-mini", "messages": [' });
    expect(badJson.status).toBe(400);
    expect(badJson.json.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_json' });
    const poisoned = await call(`${s.url}/v1/chat/completions`, { token: s.userToken, body: '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"x"}],"__proto__":{"admin":true}}' });
    expect(poisoned.status).toBe(400);
    expect(poisoned.json.error.code).toBe('invalid_json');
    const invalid = await call(`${s.url}/v1/chat/completions`, { token: s.userToken, body: { model: 'gpt-4o-mini', messages: [{ role: 'robot', content: 'x' }] } });
    expect(invalid.status).toBe(400);
    expect(invalid.json.error).toMatchObject({ code: 'invalid_request', param: 'messages.0.role' });
    const anonymous = await call(`${s.url}/v1/chat/completions`, { body: CHAT });
    expect(anonymous.status).toBe(401);
    expect(anonymous.json.error.type).toBeTruthy();
    // A content type fastify has no parser for: its 415, on the same port.
    const xml = await call(`${s.url}/v1/chat/completions`, { token: s.userToken, body: '<chat/>', headers: { 'content-type': 'application/xml' } });
    expect(xml.status).toBe(415);
    expect(xml.json.error.code).toBe('unsupported_media_type');
  });

  it('refuses a body over the limit from its Content-Length, before reading it', async () => {
    const answer = await raw(
      s.url,
      `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${s.userToken}\r\nContent-Type: application/json\r\nContent-Length: ${64 * 1024 * 1024}\r\n\r\n{`,
      /\r\n\r\n[\s\S]*\}\}/,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(answer).toContain('"code":"request_too_large"');
    // The limit and the setting that moves it, on the relay front and on fastify's routes alike.
    expect(answer).toContain('request body is larger than the 32 MiB limit (MAX_REQUEST_BODY_SIZE)');
    const other = await raw(
      s.url,
      `POST /api/presets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${s.userToken}\r\nContent-Type: application/json\r\nContent-Length: ${64 * 1024 * 1024}\r\n\r\n{`,
      /\r\n\r\n[\s\S]*\}\}/,
    );
    expect(other).toMatch(/^HTTP\/1\.1 413 /);
    expect(other).toContain('request body is larger than the 32 MiB limit (MAX_REQUEST_BODY_SIZE)');
  });

  it('records metrics for the requests it answers, labelled by route', async () => {
    await call(`${s.url}/v1/chat/completions`, { token: s.userToken, body: CHAT });
    const metrics = await (await fetch(`${s.metricsUrl}/metrics`)).text();
    expect(metrics).toMatch(/switchyard_http_requests_total\{method="POST",route="\/v1\/chat\/completions",status_code="200"\} [1-9]/);
    expect(metrics).toMatch(/switchyard_http_errors_total\{method="POST",route="\/v1\/chat\/completions",status_code="400"\} [1-9]/);
  });

  it('lets fastify answer chat requests in maintenance mode (admins pass, others get 503)', async () => {
    const on = await call(`${s.url}/v1/admin/maintenance`, { token: s.adminToken, body: { enabled: true, message: 'back soon' } });
    expect(on.status).toBe(200);
    await s.app.ctx.views.maintenance.waitFor(await s.app.ctx.store.headPosition());
    try {
      const refused = await call(`${s.url}/v1/chat/completions`, { token: s.userToken, body: CHAT });
      expect(refused.status).toBe(503);
      expect(refused.json.error.code).toBe('maintenance');
      const admin = await call(`${s.url}/v1/chat/completions`, { token: s.adminToken, body: CHAT });
      expect(admin.status).toBe(200);
    } finally {
      await call(`${s.url}/v1/admin/maintenance`, { token: s.adminToken, body: { enabled: false } });
      await s.app.ctx.views.maintenance.waitFor(await s.app.ctx.store.headPosition());
    }
  });
});

describe.each<Record<string, string>>([{ RELAY_HTTP_SERVER: 'fastify' }, { RELAY_FAST_PATH: 'false' }])('%o', (env) => {
  it('leaves every request to fastify', async () => {
    const upstream = await startOpenAiFake();
    const s = await startApp({ HEALTH_CHECK_ENABLED: 'false', ...env });
    try {
      await createChannel(s, { name: 'plain', type: 'openai', base_url: upstream.baseUrl, models: ['gpt-4o-mini'] });
      const seen = countFastifyRequests(s);
      const completion = await sdk(s).chat.completions.create(CHAT);
      expect(completion.choices[0]!.message.content).toBe('Hello! You said: hello front');
      expect(seen).toEqual(['POST /v1/chat/completions']);
    } finally {
      await s.close();
      await upstream.close();
    }
  });
});
