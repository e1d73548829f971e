/**
 * The bus (NATS) and the cache (Redis) going away and coming back are system entries: the server
 * runs with both behind TCP proxies that the test cuts and restores, as a network outage would.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { LogEntry } from '../../src/logs/entry.js';
import { createLogger, logHubOf } from '../../src/logger.js';
import { startApp, type RunningApp } from '../support/app.js';
import { distributedEnv, type ModeEnv } from '../support/modes.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';

const services = inject('services');
const urls = inject('serviceUrls');
const enabled = services.nats && services.mysql && services.redis;

describe.skipIf(!enabled)('dependency entries (NATS and Redis behind proxies)', () => {
  let s: RunningApp;
  let env: ModeEnv;
  let bus: TcpProxy;
  let cache: TcpProxy;
  const entries: LogEntry[] = [];

  beforeAll(async () => {
    env = distributedEnv(urls);
    const nats = new URL(urls.nats);
    bus = await startTcpProxy(nats.hostname, Number(nats.port || 4222));
    cache = await startTcpProxy(env.env.CACHE_HOST!, Number(env.env.CACHE_PORT));
    const logger = createLogger('info', { write: () => undefined });
    logHubOf(logger).subscribe((entry) => void entries.push(entry));
    s = await startApp({ ...env.env, NATS_URL: `nats://127.0.0.1:${bus.port}`, CACHE_HOST: '127.0.0.1', CACHE_PORT: String(cache.port), HEALTH_CHECK_ENABLED: 'false' }, { logger });
  });

  afterAll(async () => {
    await s?.close();
    await bus?.close();
    await cache?.close();
    await env?.cleanup();
  });

  const seen = (component: string, event: string) => entries.filter((e) => e.component === component && e.event === event);

  it('logs the cache connection lost and back', async () => {
    await cache.cut();
    await expect.poll(() => seen('cache', 'dependency_down').length, { timeout: 10_000, interval: 50 }).toBe(1);
    expect(seen('cache', 'dependency_down')[0]).toMatchObject({ category: 'system', level: 'ERROR', details: { kind: 'redis' } });
    await cache.restore();
    await expect.poll(() => seen('cache', 'dependency_up').length, { timeout: 15_000, interval: 50 }).toBe(1);
    expect(seen('cache', 'dependency_up')[0]).toMatchObject({ category: 'system', level: 'WARNING' });
    expect(seen('cache', 'dependency_down')).toHaveLength(1); // one entry per outage, not one per retry
  });

  it('logs the bus connection lost and back', async () => {
    await bus.cut();
    await expect.poll(() => seen('bus', 'dependency_down').length, { timeout: 10_000, interval: 50 }).toBe(1);
    expect(seen('bus', 'dependency_down')[0]).toMatchObject({ category: 'system', level: 'ERROR', details: { kind: 'nats' } });
    await bus.restore();
    await expect.poll(() => seen('bus', 'dependency_up').length, { timeout: 20_000, interval: 50 }).toBe(1);
  });
});
