/**
 * The fast-path HTTP/1.1 server with real clients: undici (keep-alive, pipelining), node's
 * http.request, and raw sockets (malformed input, pipelining a fast request and a node:http one in
 * one write). The fallback is a real node:http server: it must see every handed-over request
 * intact, in order, and keep the connection alive itself.
 */
import { createHash } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool, request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { createHttp1Server, type Http1Request, type Http1Response, type Http1Server, type Http1ServerOptions } from '../../src/api/http1/server.js';

interface FallbackSeen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  remotePort: number;
}

interface Harness {
  server: Http1Server;
  fallback: http.Server;
  port: number;
  origin: string;
  fallbackSeen: FallbackSeen[];
  errors: unknown[];
  /** Connections accepted by the net server. */
  connections: number;
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

/** Default handler: echoes what it received as JSON. */
async function echo(req: Http1Request, res: Http1Response): Promise<void> {
  const delay = /[?&]delay=(\d+)/.exec(req.url);
  if (delay) await sleep(Number(delay[1]));
  res.send(200, { 'Content-Type': 'application/json', 'X-Port': req.remotePort }, JSON.stringify({ from: 'fast', method: req.method, url: req.url, headers: req.headers, body: req.body.toString(), port: req.remotePort, version: req.httpVersion }));
}

async function start(options: Partial<Http1ServerOptions> = {}): Promise<Harness> {
  const fallbackSeen: FallbackSeen[] = [];
  const fallback = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const seen = { method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(parts).toString('latin1'), remotePort: req.socket.remotePort! };
      fallbackSeen.push(seen);
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ from: 'fallback', method: seen.method, url: seen.url, body: seen.body, port: seen.remotePort }));
    });
  });
  const errors: unknown[] = [];
  const server = createHttp1Server({
    accepts: (_method, path) => path.startsWith('/fast'),
    handle: echo,
    fallback,
    onError: (error) => errors.push(error),
    ...options,
  });
  const harness: Harness = { server, fallback, port: 0, origin: '', fallbackSeen, errors, connections: 0 };
  server.on('connection', () => harness.connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  harness.port = (server.address() as net.AddressInfo).port;
  harness.origin = `http://127.0.0.1:${harness.port}`;
  cleanups.push(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    fallback.close();
  });
  return harness;
}

/** A raw client socket collecting everything it receives. */
async function rawClient(port: number) {
  const socket = net.connect(port, '127.0.0.1');
  await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let received = '';
  let ended = false;
  const waiters: Array<() => void> = [];
  const notify = () => waiters.splice(0).forEach((w) => w());
  socket.on('data', (c: Buffer) => {
    received += c.toString('latin1');
    notify();
  });
  socket.on('error', () => {});
  socket.on('close', () => {
    ended = true;
    notify();
  });
  cleanups.push(async () => {
    socket.destroy();
  });
  const client = {
    socket,
    get text() {
      return received;
    },
    get closed() {
      return ended;
    },
    write: (data: string | Buffer) => new Promise<void>((resolve) => socket.write(data, () => resolve())),
    /** Waits until the received text satisfies `done` (or the socket closes). */
    async until(done: (text: string) => boolean, timeoutMs = 5000): Promise<string> {
      const deadline = Date.now() + timeoutMs;
      while (!done(client.text)) {
        if (ended) throw new Error(`socket closed; received: ${client.text}`);
        if (Date.now() > deadline) throw new Error(`timeout; received: ${client.text}`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 50);
        });
      }
      return client.text;
    },
    async untilClosed(timeoutMs = 5000): Promise<string> {
      const deadline = Date.now() + timeoutMs;
      while (!ended) {
        if (Date.now() > deadline) throw new Error(`socket still open; received: ${client.text}`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 50);
        });
      }
      return client.text;
    },
  };
  return client;
}

/** Splits raw HTTP/1.1 responses (Content-Length or chunked framing); complete ones only. */
function parseResponses(raw: string): Array<{ status: number; headers: Record<string, string>; body: string }> {
  const out: Array<{ status: number; headers: Record<string, string>; body: string }> = [];
  let rest = raw;
  for (;;) {
    const headEnd = rest.indexOf('\r\n\r\n');
    if (headEnd === -1) return out;
    const [statusLine, ...lines] = rest.slice(0, headEnd).split('\r\n');
    const status = Number(statusLine!.split(' ')[1]);
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
    }
    let at = headEnd + 4;
    let body = '';
    if (status !== 100 && headers['transfer-encoding'] === 'chunked') {
      for (;;) {
        const lineEnd = rest.indexOf('\r\n', at);
        if (lineEnd === -1) return out;
        const size = parseInt(rest.slice(at, lineEnd), 16);
        if (rest.length < lineEnd + 2 + size + 2) return out;
        body += rest.slice(lineEnd + 2, lineEnd + 2 + size);
        at = lineEnd + 2 + size + 2;
        if (size === 0) break;
      }
    } else if (status !== 100) {
      const length = Number(headers['content-length'] ?? 0);
      if (rest.length < at + length) return out;
      body = rest.slice(at, at + length);
      at += length;
    }
    out.push({ status, headers, body });
    rest = rest.slice(at);
  }
}

const fastPost = (path: string, body: string, extra = '') =>
  `POST ${path} HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}\r\n${body}`;

describe('http1 server: answers on the fast path', () => {
  it('answers a POST with Content-Length, Date, keep-alive and the handler headers (undici)', async () => {
    const h = await start();
    const res = await request(`${h.origin}/fast/echo?x=1`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-test': 'A' }, body: '{"hello":"world"}' });
    const json = (await res.body.json()) as { from: string; method: string; url: string; headers: Record<string, string>; body: string };
    expect(res.statusCode).toBe(200);
    expect(json).toMatchObject({ from: 'fast', method: 'POST', url: '/fast/echo?x=1', body: '{"hello":"world"}' });
    expect(json.headers['x-test']).toBe('A');
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.headers['content-length']).toBe(String(Buffer.byteLength(JSON.stringify(json))));
    expect(res.headers.connection).toBe('keep-alive');
    expect(res.headers['keep-alive']).toBe('timeout=5');
    expect(new Date(res.headers.date as string).getTime()).toBeGreaterThan(Date.now() - 5000);
    expect(h.fallbackSeen).toHaveLength(0);
  });

  it('reuses one keep-alive connection for sequential requests (undici Pool)', async () => {
    const h = await start();
    const pool = new Pool(h.origin, { connections: 1 });
    cleanups.push(() => pool.close());
    const ports = new Set<string>();
    for (let i = 0; i < 5; i++) {
      const res = await pool.request({ path: `/fast/echo?i=${i}`, method: 'POST', body: `b${i}` });
      const json = (await res.body.json()) as { body: string };
      expect(json.body).toBe(`b${i}`);
      ports.add(res.headers['x-port'] as string);
    }
    expect(ports.size).toBe(1);
    expect(h.connections).toBe(1);
  });

  it('answers pipelined requests in order, one at a time (undici pipelining: 2)', async () => {
    let inFlight = 0;
    let maxInFlight = 0;
    const h = await start({
      handle: async (req, res) => {
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        // The first answers last if handled concurrently.
        await sleep(req.url.endsWith('0') ? 60 : 5);
        inFlight--;
        res.send(200, {}, req.url);
      },
    });
    const pool = new Pool(h.origin, { connections: 1, pipelining: 2 });
    cleanups.push(() => pool.close());
    const results = await Promise.all(
      [0, 1, 2, 3].map(async (i) => {
        const res = await pool.request({ path: `/fast/p${i}`, method: 'GET' });
        return res.body.text();
      }),
    );
    expect(results).toEqual(['/fast/p0', '/fast/p1', '/fast/p2', '/fast/p3']);
    expect(maxInFlight).toBe(1);
    expect(h.connections).toBe(1);
  });

  it('answers several pipelined requests sent in one write, in order', async () => {
    const h = await start();
    const client = await rawClient(h.port);
    await client.write(fastPost('/fast/a?delay=30', 'one') + fastPost('/fast/b', 'two') + fastPost('/fast/c', 'three'));
    await client.until((t) => parseResponses(t).length === 3);
    expect(parseResponses(client.text).map((r) => (JSON.parse(r.body) as { body: string }).body)).toEqual(['one', 'two', 'three']);
  });

  it('serves node http.request (keep-alive agent) and HTTP/1.0 (Connection: close)', async () => {
    const h = await start();
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    cleanups.push(async () => agent.destroy());
    const get = () =>
      new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>((resolve, reject) => {
        const req = http.request(`${h.origin}/fast/node`, { method: 'POST', agent, headers: { 'content-type': 'text/plain' } }, (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (body += c));
          res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
        });
        req.on('error', reject);
        req.end('from node');
      });
    const a = await get();
    const b = await get();
    expect(a.status).toBe(200);
    expect(JSON.parse(a.body)).toMatchObject({ from: 'fast', body: 'from node' });
    expect(a.headers['x-port']).toBe(b.headers['x-port']);

    const client = await rawClient(h.port);
    await client.write('GET /fast/old HTTP/1.0\r\n\r\n');
    const text = await client.untilClosed();
    const [res] = parseResponses(text);
    expect(res!.headers.connection).toBe('close');
    expect(JSON.parse(res!.body)).toMatchObject({ version: '1.0', url: '/fast/old' });
  });

  it('closes after answering an HTTP/1.1 request with Connection: close', async () => {
    const h = await start();
    const client = await rawClient(h.port);
    await client.write('GET /fast/1 HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n');
    const [res] = parseResponses(await client.untilClosed());
    expect(res!.headers.connection).toBe('close');
    expect(JSON.parse(res!.body)).toMatchObject({ url: '/fast/1' });
  });

  it('keeps an HTTP/1.0 keep-alive connection open', async () => {
    const h = await start();
    const client = await rawClient(h.port);
    await client.write('GET /fast/1 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n');
    await client.until((t) => parseResponses(t).length === 1);
    expect(parseResponses(client.text)[0]!.headers.connection).toBe('keep-alive');
    await client.write('GET /fast/2 HTTP/1.0\r\n\r\n');
    await client.untilClosed();
    expect(parseResponses(client.text).map((r) => (JSON.parse(r.body) as { url: string }).url)).toEqual(['/fast/1', '/fast/2']);
  });

  it('adds setHeader headers, lets send headers win, ignores framing headers, sends no body on 204', async () => {
    const h = await start({
      handle: (req, res) => {
        res.setHeader('X-Request-Id', 'early');
        res.setHeader('X-Overridden', 'early');
        res.setHeader('Set-Cookie', ['a=1', 'b=2']);
        if (req.url === '/fast/204') return res.send(204, {}, 'ignored');
        res.send(201, { 'x-overridden': 'late', 'Content-Length': 999, 'Transfer-Encoding': 'gzip', Connection: 'upgrade', 'X-Num': 7 }, 'héllo');
      },
    });
    const client = await rawClient(h.port);
    await client.write('GET /fast/x HTTP/1.1\r\nHost: t\r\n\r\nGET /fast/204 HTTP/1.1\r\nHost: t\r\n\r\n');
    await client.until((t) => parseResponses(t).length === 2);
    const head = client.text.slice(0, client.text.indexOf('\r\n\r\n'));
    expect(head).toMatch(/^HTTP\/1\.1 201 Created\r\n/);
    expect(head).toContain('\r\nX-Request-Id: early\r\n');
    expect(head).toContain('\r\nx-overridden: late\r\n');
    expect(head).not.toContain('X-Overridden: early');
    expect(head).toContain('\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\n');
    expect(head).toContain('\r\nX-Num: 7\r\n');
    expect(head).toContain('\r\nContent-Length: 6\r\n');
    expect(head).not.toMatch(/999|gzip|upgrade/);
    const [first, second] = parseResponses(client.text);
    expect(Buffer.from(first!.body, 'latin1').toString('utf8')).toBe('héllo');
    expect(second!.status).toBe(204);
    expect(second!.headers['content-length']).toBeUndefined();
    expect(client.text.endsWith('\r\n\r\n')).toBe(true);
  });

  it('refuses header names and values that would split the response (throws, nothing sent)', async () => {
    const thrown: string[] = [];
    const h = await start({
      handle: (_req, res) => {
        for (const attempt of [
          () => res.setHeader('X-A', 'a\r\nInjected: 1'),
          () => res.setHeader('X A', 'a'),
          () => res.send(200, { 'X-B': 'b\nInjected: 1' }, ''),
          () => res.send(200, { 'X-C\r\n': 'c' }, ''),
          () => res.send(200, { 'X-D': ['ok', 'd\r\n'] }, ''),
          () => res.start(200, { 'X-E': 'e\u0000' }),
          () => res.send(99, {}, ''),
        ]) {
          try {
            attempt();
          } catch (error) {
            thrown.push((error as Error).message);
          }
        }
        res.send(200, {}, 'clean');
      },
    });
    const res = await request(`${h.origin}/fast/x`);
    expect(await res.body.text()).toBe('clean');
    expect(res.headers.injected).toBeUndefined();
    expect(thrown).toHaveLength(7);
  });
});

describe('http1 server: hands connections to node:http', () => {
  it('gives a connection whose first request is not accepted to the fallback, for good', async () => {
    const h = await start();
    const pool = new Pool(h.origin, { connections: 1 });
    cleanups.push(() => pool.close());
    const a = await pool.request({ path: '/other', method: 'POST', headers: { 'x-test': 'B' }, body: 'payload' });
    expect(await a.body.json()).toMatchObject({ from: 'fallback', method: 'POST', url: '/other', body: 'payload' });
    // Same connection, now node:http's: even a fast path goes there.
    const b = await pool.request({ path: '/fast/x', method: 'GET' });
    expect(await b.body.json()).toMatchObject({ from: 'fallback', url: '/fast/x' });
    expect(h.fallbackSeen.map((s) => s.headers['x-test'])).toEqual(['B', undefined]);
    expect(h.connections).toBe(1);
    expect(h.fallbackSeen[0]!.remotePort).toBe(h.fallbackSeen[1]!.remotePort);
  });

  it('hands over after a fast request; node:http sees method, url, headers, body, and keeps the connection alive', async () => {
    const h = await start();
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    cleanups.push(async () => agent.destroy());
    const call = (method: string, path: string, body: string) =>
      new Promise<{ json: { from: string; port: number }; socketPort: number }>((resolve, reject) => {
        const req = http.request(`${h.origin}${path}`, { method, agent, headers: { 'x-test': path } }, (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () => resolve({ json: JSON.parse(text) as { from: string; port: number }, socketPort: req.socket!.localPort! }));
        });
        req.on('error', reject);
        req.end(body);
      });
    const r1 = await call('POST', '/fast/1', 'one');
    const r2 = await call('PUT', '/admin/x?y=1', 'two');
    const r3 = await call('POST', '/fast/3', 'three');
    const r4 = await call('DELETE', '/admin/z', '');
    expect([r1.json.from, r2.json.from, r3.json.from, r4.json.from]).toEqual(['fast', 'fallback', 'fallback', 'fallback']);
    expect(new Set([r1.socketPort, r2.socketPort, r3.socketPort, r4.socketPort]).size).toBe(1);
    expect(h.fallbackSeen.map((s) => [s.method, s.url, s.body, s.headers['x-test']])).toEqual([
      ['PUT', '/admin/x?y=1', 'two', '/admin/x?y=1'],
      ['POST', '/fast/3', 'three', '/fast/3'],
      ['DELETE', '/admin/z', '', '/admin/z'],
    ]);
    expect(h.connections).toBe(1);
  });

  it('pipelines a fast request and a node:http request in ONE write: both answered, in order', async () => {
    const h = await start();
    const client = await rawClient(h.port);
    const fallbackRequest = 'POST /admin/thing HTTP/1.1\r\nHost: t\r\nX-Test: C\r\nContent-Length: 5\r\n\r\nhello';
    await client.write(fastPost('/fast/first?delay=50', 'fast-body') + fallbackRequest + 'GET /admin/again HTTP/1.1\r\nHost: t\r\n\r\n');
    await client.until((t) => parseResponses(t).length === 3);
    const responses = parseResponses(client.text).map((r) => JSON.parse(r.body) as { from: string; url: string; body: string });
    expect(responses.map((r) => [r.from, r.url, r.body])).toEqual([
      ['fast', '/fast/first?delay=50', 'fast-body'],
      ['fallback', '/admin/thing', 'hello'],
      ['fallback', '/admin/again', ''],
    ]);
    expect(h.fallbackSeen[0]!.headers['x-test']).toBe('C');
  });

  it('hands over a request with a large chunked body sent in many writes (bytes in order)', async () => {
    const h = await start();
    const client = await rawClient(h.port);
    const payload = Array.from({ length: 4000 }, (_, i) => `line ${i};`).join('');
    // The head in pieces (so the bytes handed over are ones the fast path buffered), its end with
    // a first chunk, then the rest in many small writes, some while the hand-over happens.
    await client.write('POST /upl');
    await sleep(5);
    await client.write('oad HTTP/1.1\r\nHost: t\r\nTransfer-Enc');
    await sleep(5);
    await client.write('oding: chunked\r\n\r\n' + `10\r\n${payload.slice(0, 16)}\r\n`);
    for (let i = 16; i < payload.length; i += 1000) {
      const part = payload.slice(i, i + 1000);
      const frame = `${part.length.toString(16)}\r\n${part}\r\n`;
      // Split frames at odd places too.
      await client.write(frame.slice(0, 3));
      await client.write(frame.slice(3));
      if (i % 5000 === 16) await sleep(5);
    }
    await client.write('0\r\n\r\n');
    await client.until((t) => parseResponses(t).length === 1);
    expect(h.fallbackSeen).toHaveLength(1);
    expect(h.fallbackSeen[0]!.body).toBe(payload);
  });

  it('keeps the order when a large pipelined request piles up behind a slow answer (socket paused), fast or handed over', async () => {
    const h = await start({
      handle: async (req, res) => {
        if (req.url.includes('slow')) await sleep(100);
        res.send(200, {}, `${req.url}:${req.body.length}:${createHash('sha1').update(req.body).digest('hex')}`);
      },
    });
    const big = Buffer.alloc(400_000);
    for (let i = 0; i < big.length; i++) big[i] = (i * 7919) % 251;
    const digest = createHash('sha1').update(big).digest('hex');
    const client = await rawClient(h.port);
    const post = (path: string) => Buffer.concat([Buffer.from(`POST ${path} HTTP/1.1\r\nHost: t\r\nContent-Length: ${big.length}\r\n\r\n`), big]);
    // slow fast request, a big fast one, a big one for node:http, then a small one for node:http.
    const wire = Buffer.concat([Buffer.from('GET /fast/slow HTTP/1.1\r\nHost: t\r\n\r\n'), post('/fast/big'), post('/admin/big'), Buffer.from('GET /admin/last HTTP/1.1\r\nHost: t\r\n\r\n')]);
    for (let i = 0; i < wire.length; i += 64 * 1024) await client.write(wire.subarray(i, i + 64 * 1024));
    await client.until((t) => parseResponses(t).length === 4, 10_000);
    const bodies = parseResponses(client.text).map((r) => r.body);
    expect(bodies.slice(0, 2)).toEqual([`/fast/slow:0:${createHash('sha1').update('').digest('hex')}`, `/fast/big:${big.length}:${digest}`]);
    expect(bodies.slice(2).map((b) => (JSON.parse(b) as { url: string }).url)).toEqual(['/admin/big', '/admin/last']);
    expect(h.fallbackSeen.map((s) => [s.url, s.body.length])).toEqual([
      ['/admin/big', big.length],
      ['/admin/last', 0],
    ]);
    expect(createHash('sha1').update(Buffer.from(h.fallbackSeen[0]!.body, 'latin1')).digest('hex')).toBe(digest);

    // Handed over while reading is paused: bytes in this server's parser, in the socket's buffer
    // and still in the kernel must reach node:http in that order.
    const second = await rawClient(h.port);
    const wire2 = Buffer.concat([Buffer.from('GET /fast/slow HTTP/1.1\r\nHost: t\r\n\r\n'), post('/admin/big2'), Buffer.from('GET /admin/last2 HTTP/1.1\r\nHost: t\r\n\r\n')]);
    for (let i = 0; i < wire2.length; i += 64 * 1024) await second.write(wire2.subarray(i, i + 64 * 1024));
    await second.until((t) => parseResponses(t).length === 3, 10_000);
    expect(parseResponses(second.text).map((r) => (r.body.startsWith('{') ? (JSON.parse(r.body) as { url: string }).url : r.body.split(':')[0]))).toEqual(['/fast/slow', '/admin/big2', '/admin/last2']);
    const seen = h.fallbackSeen.slice(2);
    expect(seen.map((s) => [s.url, s.body.length])).toEqual([
      ['/admin/big2', big.length],
      ['/admin/last2', 0],
    ]);
    expect(createHash('sha1').update(Buffer.from(seen[0]!.body, 'latin1')).digest('hex')).toBe(digest);
  });

  it('gives a first request that does not parse to node:http (which answers it)', async () => {
    const h = await start();
    const client = await rawClient(h.port);
    await client.write('GET /fast/x HTTP/1.1\r\nHost: t\r\nBad Header: 1\r\n\r\n');
    const text = await client.untilClosed();
    expect(text).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(text).not.toContain('invalid_request_error'); // node's answer, not ours
  });

  it('gives a first request that is not HTTP at all to node:http at once', async () => {
    const h = await start({ headersTimeoutMs: 10_000 });
    const client = await rawClient(h.port);
    await client.write(Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03]));
    const text = await client.untilClosed(2000);
    expect(text).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
  });

  it('gives CONNECT to node:http even if accepts would take it', async () => {
    const h = await start({ accepts: () => true });
    const connects: string[] = [];
    h.fallback.on('connect', (req: http.IncomingMessage, socket: net.Socket) => {
      connects.push(req.url!);
      socket.end('HTTP/1.1 200 Connection Established\r\n\r\n');
    });
    const client = await rawClient(h.port);
    await client.write('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
    await client.until((t) => t.includes('Established'));
    expect(connects).toEqual(['example.com:443']);
  });
});

describe('http1 server: refusals on the fast path', () => {
  const cases: Array<{ name: string; first?: boolean; input: string; status: number; code: string; options?: Partial<Http1ServerOptions> }> = [
    { name: 'both Transfer-Encoding and Content-Length', input: 'POST /fast/x HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n', status: 400, code: 'bad_request' },
    { name: 'Transfer-Encoding gzip, chunked', input: 'POST /fast/x HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: gzip, chunked\r\n\r\n', status: 501, code: 'not_implemented' },
    { name: 'a bad chunk size', input: 'POST /fast/x HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n', status: 400, code: 'bad_request' },
    { name: 'Content-Length over the limit', input: 'POST /fast/x HTTP/1.1\r\nHost: t\r\nContent-Length: 101\r\n\r\n', status: 413, code: 'request_too_large', options: { maxBodySize: 100 } },
    { name: 'chunks over the limit', input: `POST /fast/x HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n40\r\n${'a'.repeat(64)}\r\n40\r\n${'a'.repeat(64)}\r\n`, status: 413, code: 'request_too_large', options: { maxBodySize: 100 } },
    { name: 'missing Host', input: 'GET /fast/x HTTP/1.1\r\n\r\n', status: 400, code: 'bad_request' },
    // After a first request served here, head errors are this server's to answer.
    { name: 'a second request with a space before the colon', first: true, input: 'GET /fast/x HTTP/1.1\r\nHost: t\r\nContent-Length : 0\r\n\r\n', status: 400, code: 'bad_request' },
    { name: 'a second request with obs-fold', first: true, input: 'GET /fast/x HTTP/1.1\r\nHost: t\r\nX-A: 1\r\n 2\r\n\r\n', status: 400, code: 'bad_request' },
    { name: 'a second request with a bare LF', first: true, input: 'GET /fast/x HTTP/1.1\nHost: t\n\n', status: 400, code: 'bad_request' },
    { name: 'a second request with NUL in a value', first: true, input: 'GET /fast/x HTTP/1.1\r\nHost: t\r\nX-A: a\u0000\r\n\r\n', status: 400, code: 'bad_request' },
    { name: 'a second request in HTTP/2.0', first: true, input: 'GET /fast/x HTTP/2.0\r\nHost: t\r\n\r\n', status: 505, code: 'http_version_not_supported' },
    { name: 'a second request with a head over the limit', first: true, input: `GET /fast/x HTTP/1.1\r\nHost: t\r\nX-A: ${'a'.repeat(300)}\r\n\r\n`, status: 431, code: 'headers_too_large', options: { maxHeaderSize: 256 } },
  ];

  for (const c of cases) {
    it(`${c.name} -> ${c.status} JSON, Connection: close, closed`, async () => {
      const h = await start(c.options);
      const client = await rawClient(h.port);
      await client.write((c.first ? 'GET /fast/first HTTP/1.1\r\nHost: t\r\n\r\n' : '') + c.input);
      const responses = parseResponses(await client.untilClosed());
      const last = responses[responses.length - 1]!;
      expect(responses).toHaveLength(c.first ? 2 : 1);
      expect(last.status).toBe(c.status);
      expect(last.headers.connection).toBe('close');
      expect(last.headers['content-type']).toBe('application/json');
      expect(JSON.parse(last.body)).toEqual({ error: { message: expect.any(String), type: 'invalid_request_error', code: c.code, param: null } });
      expect(h.fallbackSeen).toHaveLength(0);
    });
  }

  it('leaves a framing error of a request it does not accept to node:http', async () => {
    const h = await start();
    const client = await rawClient(h.port);
    await client.write('POST /admin HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n');
    const text = await client.untilClosed();
    expect(text).toMatch(/^HTTP\/1\.1 400 Bad Request/);
    expect(text).not.toContain('invalid_request_error');
  });
});

/** A server whose handler streams 'data: one', waits for `release()`, then writes the rest with `finish`. */
async function gatedStream(finish: (res: Http1Response) => void) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const h = await start({
    handle: async (_req, res) => {
      res.start(200, { 'Content-Type': 'text/event-stream' });
      res.write('data: one\n\n');
      await released;
      finish(res);
    },
  });
  return { h, release };
}

describe('http1 server: streaming, back-pressure, disconnects', () => {
  it('streams chunks as they are written (the first arrives before the end)', async () => {
    const { h, release } = await gatedStream((res) => {
      res.write(Buffer.from('data: two\n\n'));
      res.end('data: [DONE]\n\n');
    });
    const res = await request(`${h.origin}/fast/stream`, { method: 'POST', body: '{}' });
    expect(res.headers['transfer-encoding']).toBe('chunked');
    expect(res.headers['content-type']).toBe('text/event-stream');
    const chunks: string[] = [];
    for await (const chunk of res.body) {
      chunks.push((chunk as Buffer).toString());
      if (chunks.length === 1) {
        expect(chunks[0]).toBe('data: one\n\n');
        release();
      }
    }
    expect(chunks.join('')).toBe('data: one\n\ndata: two\n\ndata: [DONE]\n\n');
  });

  it('sends what a stream writes in one tick as one write: head + first event, and last events + end', async () => {
    const { h, release } = await gatedStream((res) => {
      res.write('data: two\n\n');
      res.write(Buffer.from('data: three\n\n'));
      res.end('data: [DONE]\n\n');
    });
    // Count the flushes of the server side of the connection (each is one write system call).
    let flushes = 0;
    h.server.on('connection', (socket: net.Socket) => {
      const wrapped = socket as net.Socket & { _write: (...a: unknown[]) => void; _writev: (...a: unknown[]) => void };
      const write = wrapped._write.bind(socket);
      const writev = wrapped._writev.bind(socket);
      wrapped._write = (...a) => (flushes++, write(...a));
      wrapped._writev = (...a) => (flushes++, writev(...a));
    });
    const client = await rawClient(h.port);
    await client.write('POST /fast/stream HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}');
    await client.until((t) => t.includes('data: one'));
    expect(flushes).toBe(1);
    release();
    const text = await client.until((t) => t.endsWith('0\r\n\r\n'));
    expect(flushes).toBe(2);
    expect(text).toContain('data: two\n\n\r\n');
    expect(text).toContain('data: three\n\n\r\n');
  });

  it('streams close-delimited to an HTTP/1.0 client', async () => {
    const h = await start({
      handle: (_req, res) => {
        res.start(200, { 'Content-Type': 'text/plain' });
        res.write('a');
        res.write(Buffer.from('b'));
        res.end('c');
      },
    });
    const client = await rawClient(h.port);
    await client.write('GET /fast/s HTTP/1.0\r\nConnection: keep-alive\r\n\r\n');
    const text = await client.untilClosed();
    expect(text).toMatch(/Connection: close\r\n/);
    expect(text).not.toMatch(/Transfer-Encoding|Content-Length/);
    expect(text.endsWith('\r\n\r\nabc')).toBe(true);
  });

  it('applies back-pressure: write() turns false, drained() waits for the slow reader, nothing is lost', async () => {
    const sawFalse: boolean[] = [];
    const chunk = Buffer.alloc(64 * 1024, 'z');
    const total = 64; // 4 MiB
    const h = await start({
      handle: async (_req, res) => {
        res.start(200, { 'Content-Type': 'application/octet-stream' });
        for (let i = 0; i < total; i++) {
          if (!res.write(chunk)) {
            sawFalse.push(true);
            await res.drained();
          }
        }
        res.end();
      },
    });
    const client = await rawClient(h.port);
    client.socket.pause();
    await client.write('GET /fast/big HTTP/1.1\r\nHost: t\r\n\r\n');
    await sleep(200); // the server fills the socket buffers, then waits
    expect(sawFalse.length).toBeGreaterThan(0);
    const stalledAt = sawFalse.length;
    await sleep(100);
    expect(sawFalse.length).toBe(stalledAt); // still waiting, not spinning
    client.socket.resume();
    await client.until((t) => t.endsWith('\r\n0\r\n\r\n'), 10_000);
    const [res] = parseResponses(client.text);
    expect(res!.body.length).toBe(total * chunk.length);
  });

  it('makes no more answers while earlier ones are not read (pipelining client that does not read)', async () => {
    let handled = 0;
    const answer = Buffer.alloc(256 * 1024, 'r');
    const h = await start({
      handle: (_req, res) => {
        handled++;
        res.send(200, {}, answer);
      },
    });
    const client = await rawClient(h.port);
    client.socket.pause();
    const count = 40; // 10 MiB of answers
    await client.write('GET /fast/x HTTP/1.1\r\nHost: t\r\n\r\n'.repeat(count));
    await sleep(200);
    expect(handled).toBeGreaterThan(0);
    expect(handled).toBeLessThan(count / 2);
    client.socket.resume();
    await client.until((t) => parseResponses(t).length === count, 10_000);
    expect(handled).toBe(count);
    expect(parseResponses(client.text).map((r) => r.body.length)).toEqual(Array(count).fill(answer.length));
  });

  it('fires onClose exactly once when the client aborts mid-stream; writes after that are harmless', async () => {
    let response!: Http1Response;
    let closes = 0;
    let lateListener = 0;
    let handlerDone!: () => void;
    const done = new Promise<void>((resolve) => (handlerDone = resolve));
    const h = await start({
      handle: async (_req, res) => {
        response = res;
        res.onClose(() => closes++);
        const removed = () => closes++;
        res.onClose(removed);
        res.offClose(removed);
        res.start(200, {});
        while (!res.closed) {
          if (!res.write('tick\n')) await res.drained();
          await sleep(10);
        }
        expect(res.write('after')).toBe(true);
        await res.drained();
        res.onClose(() => lateListener++);
        res.end('bye');
        handlerDone();
      },
    });
    const controller = new AbortController();
    const res = await request(`${h.origin}/fast/stream`, { signal: controller.signal });
    const iterator = res.body[Symbol.asyncIterator]();
    await iterator.next();
    controller.abort();
    await done;
    await sleep(20);
    expect(closes).toBe(1);
    expect(lateListener).toBe(1);
    expect(response.closed).toBe(true);
    expect(response.finished).toBe(true);
    expect(h.errors).toEqual([]);
  });

  it('fires onClose when the client leaves before the answer starts (e.g. while waiting upstream)', async () => {
    let closedSeen!: () => void;
    const seen = new Promise<void>((resolve) => (closedSeen = resolve));
    const h = await start({
      handle: (_req, res) => {
        res.onClose(closedSeen);
      },
    });
    const client = await rawClient(h.port);
    await client.write(fastPost('/fast/wait', '{}'));
    await sleep(50);
    client.socket.destroy();
    await seen;
    expect(h.server.listening).toBe(true);
  });

  it('forgets a connection whose client leaves in the middle of a body (handler never called)', async () => {
    let called = 0;
    const h = await start({
      handle: (_req, res) => {
        called++;
        res.send(200, {}, '');
      },
    });
    const client = await rawClient(h.port);
    await client.write('POST /fast/x HTTP/1.1\r\nHost: t\r\nContent-Length: 1000\r\n\r\n0123456789');
    await sleep(30);
    client.socket.destroy();
    for (let i = 0; i < 50; i++) {
      const open = await new Promise<number>((resolve) => h.server.getConnections((_e, n) => resolve(n)));
      if (open === 0) break;
      await sleep(10);
    }
    expect(await new Promise<number>((resolve) => h.server.getConnections((_e, n) => resolve(n)))).toBe(0);
    expect(called).toBe(0);
  });

  it('does not fire onClose for a finished answer, and drops its listeners', async () => {
    let fired = 0;
    let response!: Http1Response;
    const h = await start({
      handle: (_req, res) => {
        response = res;
        res.onClose(() => fired++);
        res.send(200, {}, 'ok');
      },
    });
    const client = await rawClient(h.port);
    await client.write('GET /fast/x HTTP/1.1\r\nHost: t\r\n\r\n');
    await client.until((t) => parseResponses(t).length === 1);
    client.socket.destroy();
    await sleep(50);
    expect(fired).toBe(0);
    expect(response.closed).toBe(false);
  });
});

describe('http1 server: Expect: 100-continue', () => {
  it('sends 100 Continue before the body, then the answer (raw socket)', async () => {
    const h = await start();
    const client = await rawClient(h.port);
    await client.write('POST /fast/upload HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n');
    await client.until((t) => t.includes('\r\n\r\n'));
    expect(client.text).toBe('HTTP/1.1 100 Continue\r\n\r\n');
    await client.write('body');
    await client.until((t) => parseResponses(t).length === 2);
    expect(JSON.parse(parseResponses(client.text)[1]!.body)).toMatchObject({ body: 'body' });
  });

  it('works with node http.request waiting for "continue"', async () => {
    const h = await start();
    const result = await new Promise<string>((resolve, reject) => {
      const req = http.request(`${h.origin}/fast/upload`, { method: 'POST', headers: { expect: '100-continue', 'content-length': 5 } }, (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve(text));
      });
      req.on('continue', () => req.end('12345'));
      req.on('error', reject);
    });
    expect(JSON.parse(result)).toMatchObject({ body: '12345' });
  });

  it('refuses a too large body without 100 Continue', async () => {
    const h = await start({ maxBodySize: 3 });
    const client = await rawClient(h.port);
    await client.write('POST /fast/upload HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n');
    const text = await client.untilClosed();
    expect(text).toMatch(/^HTTP\/1\.1 413 Payload Too Large\r\n/);
  });
});

describe('http1 server: large uploads', () => {
  it('reads a large chunked body written in many pieces', async () => {
    const h = await start({
      handle: (req, res) => res.send(200, {}, `${req.body.length}:${req.body.subarray(0, 8).toString()}:${req.body.subarray(-8).toString()}`),
    });
    const client = await rawClient(h.port);
    const size = 3 * 1024 * 1024;
    await client.write('POST /fast/up HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n');
    const piece = Buffer.alloc(50_000, 'm');
    piece.write('BEGINNIN', 0);
    let sent = 0;
    while (sent < size) {
      const part = size - sent >= piece.length ? piece : piece.subarray(0, size - sent);
      const frame = Buffer.concat([Buffer.from(`${part.length.toString(16)}\r\n`), part, Buffer.from('\r\n')]);
      await client.write(frame.subarray(0, 7));
      await client.write(frame.subarray(7));
      sent += part.length;
      if (sent === piece.length) piece.write('mmmmmmmm', 0);
    }
    await client.write('0\r\nTrailer: x\r\n\r\n');
    await client.until((t) => parseResponses(t).length === 1, 10_000);
    expect(parseResponses(client.text)[0]!.body).toBe(`${size}:BEGINNIN:mmmmmmmm`);
  });

  it('reads a large Content-Length body through undici', async () => {
    const h = await start({ handle: (req, res) => res.send(200, {}, String(req.body.length)) });
    const body = Buffer.alloc(5 * 1024 * 1024, 'q');
    const res = await request(`${h.origin}/fast/up`, { method: 'POST', body });
    expect(await res.body.text()).toBe(String(body.length));
  });
});

describe('http1 server: handler failures', () => {
  it('answers 500 JSON when the handler throws or rejects before answering, and reports it', async () => {
    const h = await start({
      handle: async (req, res) => {
        res.setHeader('X-Secret', 'not leaked');
        if (req.url === '/fast/sync') throw new Error('sync boom');
        await sleep(1);
        throw new Error('async boom');
      },
    });
    for (const path of ['/fast/sync', '/fast/async']) {
      const res = await request(`${h.origin}${path}`);
      expect(res.statusCode).toBe(500);
      expect(res.headers['x-secret']).toBeUndefined();
      expect(await res.body.json()).toEqual({ error: { message: 'internal error', type: 'server_error', code: 'internal_error' } });
    }
    expect((h.errors as Error[]).map((e) => e.message)).toEqual(['sync boom', 'async boom']);
  });

  it('destroys the socket when the handler fails after the headers were sent', async () => {
    const h = await start({
      handle: async (_req, res) => {
        res.start(200, {});
        res.write('partial');
        await sleep(10);
        throw new Error('mid-stream');
      },
    });
    const client = await rawClient(h.port);
    await client.write('GET /fast/x HTTP/1.1\r\nHost: t\r\n\r\n');
    const text = await client.untilClosed();
    expect(text).toContain('partial');
    expect(text).not.toContain('0\r\n\r\n');
    expect((h.errors as Error[]).map((e) => e.message)).toEqual(['mid-stream']);
  });

  it('reports a handler that fails after it answered, and the connection goes on', async () => {
    const h = await start({
      handle: (_req, res) => {
        res.send(200, {}, 'ok');
        throw new Error('after');
      },
    });
    const pool = new Pool(h.origin, { connections: 1 });
    cleanups.push(() => pool.close());
    for (let i = 0; i < 2; i++) expect(await (await pool.request({ path: '/fast/x', method: 'GET' })).body.text()).toBe('ok');
    expect(h.errors).toHaveLength(2);
    expect(h.connections).toBe(1);
  });

  it('treats an accepts() that throws as a refusal (fallback) and reports it', async () => {
    const h = await start({
      accepts: () => {
        throw new Error('accepts broke');
      },
    });
    const res = await request(`${h.origin}/fast/x`);
    expect(await res.body.json()).toMatchObject({ from: 'fallback' });
    expect((h.errors as Error[]).map((e) => e.message)).toEqual(['accepts broke']);
  });
});

describe('http1 server: timeouts and closing', () => {
  it('answers 408 and closes when a head is not complete in time (slowloris)', async () => {
    const h = await start({ headersTimeoutMs: 200 });
    const client = await rawClient(h.port);
    const started = Date.now();
    await client.write('GET /fast/x HTTP/1.1\r\n');
    for (let i = 0; i < 10 && !client.closed; i++) {
      await client.write('X-Slow: 1\r\n'); // trickles in: activity must not extend the deadline
      await sleep(50);
    }
    const text = await client.untilClosed();
    expect(Date.now() - started).toBeLessThan(1000);
    expect(text).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    expect(JSON.parse(parseResponses(text)[0]!.body)).toMatchObject({ error: { code: 'request_timeout' } });
  });

  it('answers 408 when the body does not arrive in time', async () => {
    const h = await start({ requestTimeoutMs: 200 });
    const client = await rawClient(h.port);
    await client.write(fastPost('/fast/x', '{"a":1}').slice(0, -3));
    const text = await client.untilClosed();
    expect(text).toMatch(/^HTTP\/1\.1 408 /);
  });

  it('closes an idle keep-alive connection after the keep-alive timeout, not before', async () => {
    const h = await start({ keepAliveTimeoutMs: 300 });
    const client = await rawClient(h.port);
    await client.write('GET /fast/x HTTP/1.1\r\nHost: t\r\n\r\n');
    await client.until((t) => parseResponses(t).length === 1);
    // Under a second: no Keep-Alive hint (it is in whole seconds, and must not promise more).
    expect(parseResponses(client.text)[0]!.headers['keep-alive']).toBeUndefined();
    expect(parseResponses(client.text)[0]!.headers.connection).toBe('keep-alive');
    const answered = Date.now();
    await sleep(150);
    expect(client.closed).toBe(false);
    await client.untilClosed(2000);
    expect(Date.now() - answered).toBeGreaterThanOrEqual(290);
  });

  it('close(): stops listening, closes idle connections (fast and handed over), ends in-flight answers with Connection: close', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let started!: () => void;
    const handling = new Promise<void>((resolve) => (started = resolve));
    const h = await start({
      handle: async (req, res) => {
        if (req.url === '/fast/slow') {
          started();
          await released;
        }
        res.send(200, {}, req.url);
      },
    });
    const idleFast = await rawClient(h.port);
    await idleFast.write('GET /fast/idle HTTP/1.1\r\nHost: t\r\n\r\n');
    await idleFast.until((t) => parseResponses(t).length === 1);
    const idleFallback = await rawClient(h.port);
    await idleFallback.write('GET /admin HTTP/1.1\r\nHost: t\r\n\r\n');
    await idleFallback.until((t) => parseResponses(t).length === 1);
    const busy = await rawClient(h.port);
    await busy.write('GET /fast/slow HTTP/1.1\r\nHost: t\r\n\r\n');
    await handling;

    let closedCallback = false;
    h.server.close(() => (closedCallback = true));
    await idleFast.untilClosed(1000);
    await idleFallback.untilClosed(1000);
    expect(busy.closed).toBe(false);
    release();
    const text = await busy.untilClosed(1000);
    expect(parseResponses(text)[0]!.headers.connection).toBe('close');
    await sleep(20);
    expect(closedCallback).toBe(true);
    await expect(new Promise((resolve, reject) => net.connect(h.port, '127.0.0.1').on('connect', resolve).on('error', reject))).rejects.toThrow(/ECONNREFUSED/);
  });

  it('closeAllConnections() destroys every connection, busy or handed over', async () => {
    const h = await start({ handle: () => {} });
    const busy = await rawClient(h.port);
    await busy.write('GET /fast/never HTTP/1.1\r\nHost: t\r\n\r\n');
    const other = await rawClient(h.port);
    await other.write('GET /admin HTTP/1.1\r\nHost: t\r\n\r\n');
    await other.until((t) => parseResponses(t).length === 1);
    h.server.closeAllConnections();
    await busy.untilClosed(1000);
    await other.untilClosed(1000);
  });
});
