/**
 * The one upstream HTTP client: an undici Pool per origin (keep-alive, no fetch/web-streams
 * layer on the hot path). HTTP_MAX_CONNS_PER_HOST caps connections per origin,
 * HTTP_IDLE_CONN_TIMEOUT closes idle ones, and at most HTTP_MAX_IDLE_CONNS origins keep a pool
 * (the least recently used pool beyond that is closed).
 */
import { Pool, type Dispatcher } from 'undici';
import type { Config } from '../config.js';
import type { UpstreamRequest } from './providers/provider.js';

/** Upstream URLs parsed per distinct URL string (they are per channel, so few). */
const MAX_PARSED_URLS = 1_000;

export class UpstreamPools {
  private readonly pools = new Map<string, Pool>();
  /** URL -> origin and path: parsing a URL on every request showed in profiles. */
  private readonly parsed = new Map<string, { origin: string; path: string }>();
  /** The most recently used pool: already last in `pools`, so no recency update is needed. */
  private last: { origin: string; pool: Pool } | null = null;

  constructor(
    private readonly http: Config['upstreamHttp'],
    private readonly timeouts: { firstByteTimeoutMs: number; timeoutMs: number },
  ) {}

  private poolFor(origin: string): Pool {
    if (this.last?.origin === origin) return this.last.pool;
    let pool = this.pools.get(origin);
    if (pool) {
      // Map order = recency: move to the end.
      this.pools.delete(origin);
      this.pools.set(origin, pool);
      this.last = { origin, pool };
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
    this.last = { origin, pool };
    while (this.pools.size > this.http.maxIdleConns) {
      const [oldest, evicted] = this.pools.entries().next().value as [string, Pool];
      this.pools.delete(oldest);
      void evicted.close().catch(() => undefined);
    }
    return pool;
  }

  /**
   * Sends one upstream request. The body is a stream: nothing is buffered here. `signal` is an
   * AbortSignal or anything else undici accepts as one (the relay's ClientGone emitter).
   */
  request(upstream: UpstreamRequest, signal: Dispatcher.RequestOptions['signal']): Promise<Dispatcher.ResponseData> {
    let target = this.parsed.get(upstream.url);
    if (!target) {
      const url = new URL(upstream.url);
      target = { origin: url.origin, path: url.pathname + url.search };
      if (this.parsed.size >= MAX_PARSED_URLS) this.parsed.clear();
      this.parsed.set(upstream.url, target);
    }
    return this.poolFor(target.origin).request({
      path: target.path,
      method: upstream.method,
      headers: upstream.headers,
      body: upstream.body,
      signal,
    });
  }

  async close(): Promise<void> {
    await Promise.all([...this.pools.values()].map((p) => p.close().catch(() => undefined)));
    this.pools.clear();
    this.last = null;
  }
}
