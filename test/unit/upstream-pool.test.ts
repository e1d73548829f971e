/**
 * The upstream client against a real local HTTP server: bodies as text and as chunks that arrive
 * unbuffered, backpressure that stops reading the socket, and the ways a request fails (signal,
 * timeouts, refused connection) before and after the headers.
 */
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { errors as undiciErrors } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ClientGone } from '../../src/relay/client-gone.js';
import { UpstreamPools, type UpstreamResponse } from '../../src/relay/upstream-pool.js';
import type { UpstreamRequest } from '../../src/relay/providers/provider.js';

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void | Promise<void>;

const HTTP = { maxIdleConns: 10, maxConnsPerHost: 4, idleConnTimeoutMs: 5_000, queueTimeoutMs: 0 };

function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** Resolves on the response's 'drain' or 'close', whichever comes first, leaving no listener behind. */
function drainedOrClosed(res: http.ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/** A little longer than one event-loop turn. */
const settle = () => new Promise((r) => setTimeout(r, 10));

async function until(condition: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('upstream pool', () => {
  let server: http.Server;
  let base: string;
  let handle: Handler;
  /**
   * Per request the server saw: its client port, whether the client went away before the response
   * finished, and whether the connection has closed since.
   */
  let seen: Array<{ path: string; port: number; closedEarly: boolean; socketClosed: boolean }>;
  let pools: UpstreamPools;

  const post = (path: string, body = '{}'): UpstreamRequest => ({ url: `${base}${path}`, method: 'POST', headers: { 'content-type': 'application/json' }, body });

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const entry = { path: req.url ?? '', port: req.socket.remotePort ?? 0, closedEarly: false, socketClosed: req.socket.destroyed };
      seen.push(entry);
      req.socket.once('close', () => (entry.socketClosed = true));
      res.on('close', () => {
        if (!res.writableFinished) entry.closedEarly = true;
      });
      // Read the request body first, as a real upstream would.
      req.resume();
      req.on('end', () => void handle(req, res));
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    server.close();
  });

  function freshPools(timeouts = { firstByteTimeoutMs: 5_000, timeoutMs: 5_000 }) {
    seen = [];
    pools = new UpstreamPools(HTTP, timeouts);
    return pools;
  }
  afterEach(async () => {
    await pools?.close();
    server.closeAllConnections();
  });

  async function readAll(response: UpstreamResponse): Promise<string> {
    const parts: Buffer[] = [];
    for await (const chunk of response.body) parts.push(chunk);
    return Buffer.concat(parts).toString();
  }

  it('answers status, lower-case headers and the body as text, and keeps the connection', async () => {
    freshPools();
    handle = (_req, res) => {
      res.setHeader('X-Rate', ['a', 'b']);
      res.setHeader('Content-Type', 'application/json');
      res.statusCode = 201;
      res.end(JSON.stringify({ ok: 'héllo ✓' }));
    };
    const first = await pools.request(post('/one'));
    expect(first.statusCode).toBe(201);
    expect(first.headers['content-type']).toBe('application/json');
    expect(first.headers['x-rate']).toEqual(['a', 'b']);
    expect(JSON.parse(await first.body.text())).toEqual({ ok: 'héllo ✓' });
    await expect(first.body.text()).rejects.toThrow(TypeError); // read once

    await settle(); // undici reuses a connection one event-loop turn after its response ends
    const second = await pools.request(post('/two'));
    expect(await second.body.text()).toContain('héllo');
    expect(seen.map((s) => s.path)).toEqual(['/one', '/two']);
    expect(seen[1]!.port).toBe(seen[0]!.port); // keep-alive: same connection
  });

  it('refuses a body longer than maxBodyBytes while it arrives, and stops the upstream sending it', async () => {
    seen = [];
    pools = new UpstreamPools(HTTP, { firstByteTimeoutMs: 5_000, timeoutMs: 5_000, maxBodyBytes: 100_000 });
    const piece = Buffer.alloc(16 * 1024, 'a');
    let written = 0;
    handle = async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      // Up to 64 MB, as fast as the socket takes it, until the relay hangs up.
      while (written < 64 * 1024 * 1024 && !res.destroyed) {
        written += piece.length;
        if (!res.write(piece)) await drainedOrClosed(res);
      }
      res.end();
    };
    const response = await pools.request(post('/huge'));
    await expect(response.body.text()).rejects.toMatchObject({ status: 502, code: 'upstream_response_too_large' });
    await until(() => seen[0]!.closedEarly, 'the upstream to see the request aborted');
    expect(written).toBeLessThan(8 * 1024 * 1024);
    // A body within the limit is still read whole.
    handle = (_req, res) => void res.end('x'.repeat(99_000));
    expect(await (await pools.request(post('/fits'))).body.text()).toHaveLength(99_000);
  });

  it('collects a multi-chunk body into one string, a UTF-8 character split across chunks included, BOM dropped', async () => {
    freshPools();
    const bytes = Buffer.from('\uFEFF{"text":"€uro"}');
    const split = bytes.indexOf(0xe2) + 1; // inside the three bytes of "€"
    handle = async (_req, res) => {
      res.write(bytes.subarray(0, split));
      await new Promise((r) => setTimeout(r, 20));
      res.end(bytes.subarray(split));
    };
    const response = await pools.request(post('/split'));
    expect(await response.body.text()).toBe('{"text":"€uro"}');
  });

  it('yields streamed chunks in order, the first one before the server has finished', async () => {
    freshPools();
    const firstReceived = deferred();
    let serverEnded = false;
    handle = async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: one\n\n');
      await firstReceived.promise; // nothing more until the client has the first chunk
      res.write('data: two\n\n');
      await new Promise((r) => setTimeout(r, 20));
      serverEnded = true;
      res.end('data: [DONE]\n\n');
    };
    const response = await pools.request(post('/stream'));
    const received: string[] = [];
    for await (const chunk of response.body) {
      received.push(chunk.toString());
      if (received.length === 1) {
        expect(serverEnded).toBe(false);
        firstReceived.resolve();
      }
    }
    expect(received.join('')).toBe('data: one\n\ndata: two\n\ndata: [DONE]\n\n');
    expect(received[0]).toBe('data: one\n\n');
    expect(serverEnded).toBe(true);
  });

  it('stops reading the socket while the consumer is slow, and loses nothing when it reads on', async () => {
    freshPools();
    const total = 64 * 1024 * 1024; // far more than the socket buffers on both sides hold
    const piece = Buffer.alloc(64 * 1024, 'x');
    const server_ = { written: 0, waitingForDrain: false, finished: false };
    handle = async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      while (server_.written < total) {
        server_.written += piece.length;
        if (!res.write(piece)) {
          server_.waitingForDrain = true;
          await drainedOrClosed(res);
          server_.waitingForDrain = false;
          if (res.destroyed) return;
        }
      }
      server_.finished = true;
      res.end();
    };
    const response = await pools.request(post('/big'));
    const iterator = response.body[Symbol.asyncIterator]();
    const first = await iterator.next();
    expect(first.done).toBe(false);
    let received = first.value!.length;

    // The consumer now does nothing. Wait until the server is stuck on 'drain' (or, if the
    // client kept reading into memory, until the server has written everything).
    let lastWritten = -1;
    let stableSince = Date.now();
    await until(() => {
      if (server_.written !== lastWritten) {
        lastWritten = server_.written;
        stableSince = Date.now();
      }
      return server_.finished || (server_.waitingForDrain && Date.now() - stableSince > 300);
    }, 'the server to block or finish', 15_000);
    expect(server_.finished).toBe(false);
    expect(server_.waitingForDrain).toBe(true);
    expect(server_.written).toBeLessThan(total / 2);

    // Reading on drains everything, in full.
    for (;;) {
      const next = await iterator.next();
      if (next.done) break;
      received += next.value.length;
    }
    expect(received).toBe(total);
    expect(server_.finished).toBe(true);
  });

  it('rejects with the signal reason when aborted before the headers, and closes the connection', async () => {
    freshPools();
    const arrived = deferred();
    handle = () => arrived.resolve(); // never answers
    const gone = new ClientGone();
    const pending = pools.request(post('/hang'), gone);
    await arrived.promise;
    const reason = new Error('client disconnected');
    gone.abort(reason);
    await expect(pending).rejects.toBe(reason);
    await until(() => seen[0]!.closedEarly, 'the upstream connection to close');
    expect(gone.listenerCount('abort')).toBe(0);
  });

  it('sends nothing when the signal is already aborted, and takes AbortSignals too', async () => {
    freshPools();
    handle = (_req, res) => {
      res.end('late');
    };
    const controller = new AbortController();
    const reason = new Error('already gone');
    controller.abort(reason);
    await expect(pools.request(post('/never'), controller.signal)).rejects.toBe(reason);

    const later = new AbortController();
    const arrived = deferred();
    handle = () => arrived.resolve();
    const pending = pools.request(post('/hang'), later.signal);
    await arrived.promise;
    later.abort(); // no reason given: an AbortError
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    expect(seen.map((s) => s.path)).toEqual(['/hang']);
  });

  it('aborts a request still waiting for a connection once it gets one', async () => {
    seen = [];
    pools = new UpstreamPools({ ...HTTP, maxConnsPerHost: 1 }, { firstByteTimeoutMs: 5_000, timeoutMs: 5_000 });
    const release = deferred();
    handle = async (req, res) => {
      if (req.url === '/busy') await release.promise;
      res.end(req.url);
    };
    const busy = pools.request(post('/busy'));
    await until(() => seen.length === 1, 'the first request');
    const gone = new ClientGone();
    const queued = pools.request(post('/queued'), gone);
    queued.catch(() => undefined); // asserted below, after the busy one is read
    const reason = new Error('gone while queued');
    gone.abort(reason);
    release.resolve();
    expect(await (await busy).body.text()).toBe('/busy');
    await expect(queued).rejects.toBe(reason);
    const after = await pools.request(post('/after'));
    expect(await after.body.text()).toBe('/after');
    expect(seen.map((s) => s.path)).toEqual(['/busy', '/after']); // the queued one was never sent
  });

  it('fails a request that waited UPSTREAM_QUEUE_TIMEOUT for a connection with UpstreamBusyError; the gate serves in order', async () => {
    seen = [];
    const timedOut: string[] = [];
    pools = new UpstreamPools({ ...HTTP, maxConnsPerHost: 1, queueTimeoutMs: 100 }, { firstByteTimeoutMs: 5_000, timeoutMs: 5_000 }, { queueTimedOut: (origin) => timedOut.push(origin) });
    const release = deferred();
    handle = async (req, res) => {
      if (req.url === '/busy') await release.promise;
      res.end(req.url);
    };
    const busy = pools.request(post('/busy'));
    await until(() => seen.length === 1, 'the first request');
    const late = pools.request(post('/late'));
    expect(pools.stats()).toEqual([{ origin: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/), queued: 1, active: 1, connected: 1 }]);
    await expect(late).rejects.toMatchObject({ status: 503, code: 'upstream_busy', headers: { 'retry-after': '1' } });
    expect(timedOut).toHaveLength(1);
    expect(pools.stats()[0]).toMatchObject({ queued: 0, active: 1 });
    // Two more wait; the connection comes free: they go in order, one at a time.
    const second = pools.request(post('/second'));
    const third = pools.request(post('/third'));
    release.resolve();
    expect(await (await busy).body.text()).toBe('/busy');
    expect(await (await second).body.text()).toBe('/second');
    expect(await (await third).body.text()).toBe('/third');
    expect(seen.map((s) => s.path)).toEqual(['/busy', '/second', '/third']);
    expect(pools.stats()[0]).toMatchObject({ queued: 0, active: 0 });
  });

  it('throws the signal reason from the iteration and from text() when aborted mid-body', async () => {
    freshPools();
    handle = (_req, res) => {
      res.writeHead(200);
      res.write('first');
    };
    const gone = new ClientGone();
    const response = await pools.request(post('/mid'), gone);
    const iterator = response.body[Symbol.asyncIterator]();
    expect((await iterator.next()).value?.toString()).toBe('first');
    const waiting = iterator.next();
    const reason = new Error('client disconnected');
    gone.abort(reason);
    await expect(waiting).rejects.toBe(reason);
    expect(await iterator.next()).toEqual({ done: true, value: undefined });
    await until(() => seen[0]!.closedEarly, 'the upstream connection to close');

    const gone2 = new ClientGone();
    const response2 = await pools.request(post('/mid-text'), gone2);
    const text = response2.body.text();
    await new Promise((r) => setTimeout(r, 20));
    gone2.abort(reason);
    await expect(text).rejects.toBe(reason);
    await until(() => seen[1]!.closedEarly, 'the second upstream connection to close');
    expect(gone2.listenerCount('abort')).toBe(0);
  });

  it('aborts the upstream request when the consumer stops iterating early', async () => {
    freshPools();
    handle = (_req, res) => {
      res.writeHead(200);
      res.write('a');
    };
    const gone = new ClientGone();
    const response = await pools.request(post('/break'), gone);
    for await (const chunk of response.body) {
      expect(chunk.toString()).toBe('a');
      break;
    }
    await until(() => seen[0]!.closedEarly, 'the upstream connection to close');
    expect(gone.listenerCount('abort')).toBe(0);
  });

  it('surfaces a headers timeout as an error before the headers', async () => {
    freshPools({ firstByteTimeoutMs: 200, timeoutMs: 5_000 });
    handle = () => undefined; // never answers
    const error = await pools.request(post('/slow-headers')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(undiciErrors.HeadersTimeoutError);
  });

  it('throws a body timeout from the iteration after the first chunk', async () => {
    freshPools({ firstByteTimeoutMs: 5_000, timeoutMs: 200 });
    handle = (_req, res) => {
      res.writeHead(200);
      res.write('only this');
    };
    const response = await pools.request(post('/stall'));
    const received: string[] = [];
    const error = await (async () => {
      for await (const chunk of response.body) received.push(chunk.toString());
    })().catch((e: unknown) => e);
    expect(received).toEqual(['only this']);
    expect(error).toBeInstanceOf(undiciErrors.BodyTimeoutError);
  });

  it('rejects when the connection is refused', async () => {
    freshPools();
    const probe = http.createServer();
    probe.listen(0, '127.0.0.1');
    await once(probe, 'listening');
    const port = (probe.address() as AddressInfo).port;
    probe.close();
    await once(probe, 'close');
    const error = await pools.request({ url: `http://127.0.0.1:${port}/x`, method: 'GET', headers: {} }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'ECONNREFUSED' });
  });

  it('reads a body fully before text() is called (headers first, read later)', async () => {
    freshPools();
    handle = (_req, res) => {
      res.end('early body');
    };
    const response = await pools.request(post('/early'));
    await new Promise((r) => setTimeout(r, 50)); // the whole body has arrived meanwhile
    expect(await readAll(response)).toBe('early body');
  });
});
