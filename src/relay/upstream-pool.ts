/**
 * The one upstream HTTP client: an undici Pool per origin (keep-alive, no fetch/web-streams
 * layer on the hot path). HTTP_MAX_CONNS_PER_HOST caps connections per origin,
 * HTTP_IDLE_CONN_TIMEOUT closes idle ones, and at most HTTP_MAX_IDLE_CONNS origins keep a pool
 * (the least recently used pool beyond that is closed).
 */
import { Pool, type Dispatcher } from 'undici';
import type { Config } from '../config.js';
import type { UpstreamRequest } from './providers/provider.js';

export class UpstreamPools {
  private readonly pools = new Map<string, Pool>();

  constructor(
    private readonly http: Config['upstreamHttp'],
    private readonly timeouts: { firstByteTimeoutMs: number; timeoutMs: number },
  ) {}

  private poolFor(origin: string): Pool {
    let pool = this.pools.get(origin);
    if (pool) {
      // Map order = recency: move to the end.
      this.pools.delete(origin);
      this.pools.set(origin, pool);
      return pool;
    }
    pool = new Pool(origin, {
      connections: this.http.maxConnsPerHost,
      keepAliveTimeout: this.http.idleConnTimeoutMs,
      keepAliveMaxTimeout: Math.max(this.http.idleConnTimeoutMs, 1000),
      headersTimeout: this.timeouts.firstByteTimeoutMs,
      bodyTimeout: this.timeouts.timeoutMs,
      connect: { timeout: 10_000 },
    });
    this.pools.set(origin, pool);
    while (this.pools.size > this.http.maxIdleConns) {
      const [oldest, evicted] = this.pools.entries().next().value as [string, Pool];
      this.pools.delete(oldest);
      void evicted.close().catch(() => undefined);
    }
    return pool;
  }

  /** Sends one upstream request. The body is a stream: nothing is buffered here. */
  request(upstream: UpstreamRequest, signal: AbortSignal): Promise<Dispatcher.ResponseData> {
    const url = new URL(upstream.url);
    return this.poolFor(url.origin).request({
      path: url.pathname + url.search,
      method: upstream.method,
      headers: upstream.headers,
      body: upstream.body,
      signal,
    });
  }

  async close(): Promise<void> {
    await Promise.all([...this.pools.values()].map((p) => p.close().catch(() => undefined)));
    this.pools.clear();
  }
}
