/**
 * Requests refused the same way on every HTTP path: the front servers that answer chat
 * completions (RELAY_HTTP_SERVER lean: the relay's own HTTP/1.1 server; node: node:http) and
 * fastify (RELAY_HTTP_SERVER=fastify, and the admin routes).
 *  - Bodies nested deeper than MAX_JSON_DEPTH: 400 json_too_deep before parsing (~5,000 levels in
 *    10 KB used to overflow the stack while the upstream request was built: 500).
 *  - Two Authorization fields: 400 duplicate_authorization (the fast path said 401, fastify 200).
 * And all listen with HTTP_LISTEN_BACKLOG (Node's default, 511, overflowed at 5,000 connections).
 */
import { execFileSync } from 'node:child_process';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startApp, type RunningApp } from '../support/app.js';
import { startOpenAiFake, type OpenAiFake } from '../support/fake-upstreams/openai.js';
import { createChannel } from '../support/relay.js';

/** A chat request with an unknown field nested `levels` deep (arrays, one object inside). */
function nestedChat(levels: number): string {
  const nested = `${'['.repeat(levels - 1)}{"a":0}${']'.repeat(levels - 1)}`;
  return `{"model":"m","messages":[{"role":"user","content":"deep"}],"x_extra":${nested}}`;
}

/** Raw bytes on one connection; resolves with what came back once `count` answers are in (or the server closed). */
function rawExchange(url: string, bytes: string, count: number): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => socket.write(bytes));
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      received += chunk;
      if ((received.match(/"error"|"object"|"choices"/g) ?? []).length >= count) {
        socket.destroy();
        resolve(received);
      }
    });
    socket.on('close', () => resolve(received));
    socket.on('error', reject);
  });
}

/** The backlog of a listening TCP socket, as the kernel reports it (ss: Send-Q of a LISTEN socket); null without ss. */
function backlogOf(url: string): number | null {
  try {
    const out = execFileSync('ss', ['-ltnH', `sport = :${new URL(url).port}`], { encoding: 'utf8' });
    return Number(out.trim().split(/\s+/)[2]);
  } catch {
    return null;
  }
}

describe.each([
  ['relay HTTP/1.1 server', 'lean'],
  ['node:http front', 'node'],
  ['fastify', 'fastify'],
] as const)('request hardening on the %s', (_name, httpServer) => {
  let s: RunningApp;
  let upstream: OpenAiFake;

  beforeAll(async () => {
    upstream = await startOpenAiFake();
    s = await startApp({ HEALTH_CHECK_ENABLED: 'false', RELAY_HTTP_SERVER: httpServer, MAX_JSON_DEPTH: '64', HTTP_LISTEN_BACKLOG: '1234' });
    await createChannel(s, { type: 'openai', name: 'deep', base_url: upstream.baseUrl, models: ['m'] });
  });
  afterAll(async () => {
    await s.close();
    await upstream.close();
  });

  it('refuses ~5,000 levels (10 KB) with 400 json_too_deep, OpenAI-shaped, nothing sent upstream', async () => {
    const before = upstream.requests.length;
    const body = nestedChat(5_000);
    expect(body.length).toBeLessThan(16 * 1024);
    const res = await call(`${s.url}/v1/chat/completions`, { token: s.userToken, body });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({
      error: { message: 'request body is nested too deeply (more than 64 levels of objects and arrays)', type: 'invalid_request_error', code: 'json_too_deep', param: null },
    });
    expect(upstream.requests.length).toBe(before);
  });

  it('counts brackets in strings as text: a deep-looking string and the limit itself pass', async () => {
    // 63 levels of x_extra + the body object = 64: at the limit, relayed.
    const atLimit = await call(`${s.url}/v1/chat/completions`, { token: s.userToken, body: nestedChat(63) });
    expect(atLimit.status).toBe(200);
    const over = await call(`${s.url}/v1/chat/completions`, { token: s.userToken, body: nestedChat(64) });
    expect(over.json.error.code).toBe('json_too_deep');
    const brackets = '[{'.repeat(2_000) + '\\"' + '[{'.repeat(100);
    const text = await call(`${s.url}/v1/chat/completions`, { token: s.userToken, body: { model: 'm', messages: [{ role: 'user', content: brackets }] } });
    expect(text.status).toBe(200);
  });

  it('applies to fastify routes too (an admin JSON body)', async () => {
    const res = await call(`${s.url}/v1/keys`, { token: s.userToken, body: `{"name":"k","x":${'['.repeat(3_000)}${']'.repeat(3_000)}}` });
    expect(res.status).toBe(400);
    expect(res.json.error).toMatchObject({ code: 'json_too_deep', param: null });
  });

  it('two Authorization fields: 400 duplicate_authorization, as the first request of a connection and after another', async () => {
    const chat = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'twice' }] });
    const request = (auth: string) =>
      `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(chat)}\r\n\r\n${chat}`;
    const twice = request(`Authorization: Bearer ${s.userToken}\r\nAuthorization: Bearer someone-else\r\n`);
    for (const bytes of [twice, request(`Authorization: Bearer ${s.userToken}\r\n`) + twice]) {
      const answer = await rawExchange(s.url, bytes, bytes === twice ? 1 : 2);
      const last = answer.slice(answer.lastIndexOf('HTTP/1.1 '));
      expect(last).toMatch(/^HTTP\/1\.1 400 /);
      const body = JSON.parse(last.slice(last.indexOf('\r\n\r\n') + 4)) as Record<string, unknown>;
      expect(body).toEqual({ error: { message: 'the request has more than one Authorization header; send one', type: 'invalid_request_error', code: 'duplicate_authorization', param: null } });
    }
    // On an admin route too (always fastify).
    const admin = await rawExchange(s.url, `GET /v1/keys HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${s.userToken}\r\nAuthorization: Bearer ${s.userToken}\r\n\r\n`, 1);
    expect(admin).toMatch(/^HTTP\/1\.1 400 [\s\S]*"code":"duplicate_authorization"/);
  });

  it('listens with HTTP_LISTEN_BACKLOG', () => {
    const backlog = backlogOf(s.url);
    if (backlog === null) return; // no ss here: nothing to observe
    expect(backlog).toBe(1234);
  });

  it('documents the new error codes in the OpenAPI document', async () => {
    const spec = (await call(`${s.url}/openapi.json`)).text;
    for (const code of ['json_too_deep', 'duplicate_authorization', 'upstream_busy', 'upstream_timeout']) expect(spec).toContain(code);
  });
});
