/**
 * Probes the real services once before the suite. A service that is down is started in a
 * container when Docker is available (testcontainers); otherwise its suites are skipped with one
 * loud summary line. Under CI=true nothing may be skipped: a missing service fails the run.
 */
import net from 'node:net';
import type { TestProject } from 'vitest/node';
import { compiledSourcesFolder, compileSourcesInto } from './compiled-sources.js';
import { serviceUrls, type ServiceAvailability, type ServiceName } from './services.js';

function reachable(url: string, timeoutMs = 1500): Promise<boolean> {
  if (!url) return Promise.resolve(false);
  const u = new URL(url);
  const defaults: Record<string, number> = { 'nats:': 4222, 'mysql:': 3306, 'postgres:': 5432, 'redis:': 6379, 'esdb:': 2113, 'kurrentdb:': 2113 };
  const port = Number(u.port || defaults[u.protocol] || 0);
  return new Promise((resolve) => {
    const socket = net.connect({ host: u.hostname, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

const containerImages: Partial<Record<ServiceName, { image: string; port: number; env?: Record<string, string>; cmd?: string[]; url: (host: string, port: number) => string }>> = {
  nats: { image: 'nats:2.10', port: 4222, cmd: ['-js'], url: (h, p) => `nats://${h}:${p}` },
  mysql: { image: 'mariadb:11', port: 3306, env: { MARIADB_ALLOW_EMPTY_ROOT_PASSWORD: '1', MARIADB_DATABASE: 'test' }, url: (h, p) => `mysql://root@${h}:${p}/test` },
  postgres: { image: 'postgres:16', port: 5432, env: { POSTGRES_HOST_AUTH_METHOD: 'trust', POSTGRES_USER: 'root', POSTGRES_DB: 'test' }, url: (h, p) => `postgres://root@${h}:${p}/test` },
  redis: { image: 'redis:7', port: 6379, url: (h, p) => `redis://${h}:${p}` },
};

const stoppers: Array<() => Promise<unknown>> = [];

async function tryContainer(name: ServiceName): Promise<string | null> {
  const spec = containerImages[name];
  if (!spec) return null;
  try {
    const { GenericContainer, Wait } = await import('testcontainers');
    let c = new GenericContainer(spec.image).withExposedPorts(spec.port).withWaitStrategy(Wait.forListeningPorts());
    if (spec.env) c = c.withEnvironment(spec.env);
    if (spec.cmd) c = c.withCommand(spec.cmd);
    const started = await c.start();
    stoppers.push(() => started.stop());
    return spec.url(started.getHost(), started.getMappedPort(spec.port));
  } catch {
    return null; // no Docker here
  }
}

export default async function setup(project: TestProject) {
  const urls = { ...serviceUrls } as Record<ServiceName, string>;
  const available = {} as ServiceAvailability;
  for (const name of Object.keys(urls) as ServiceName[]) {
    available[name] = await reachable(urls[name]);
    if (!available[name] && name !== 'kurrentdb') {
      const url = await tryContainer(name);
      if (url) {
        urls[name] = url;
        available[name] = true;
      }
    }
  }
  const missing = (Object.keys(available) as ServiceName[]).filter((n) => !available[n] && n !== 'kurrentdb');
  if (missing.length > 0) {
    if (process.env.CI === 'true') {
      throw new Error(`CI=true but these services are unreachable: ${missing.join(', ')} — nothing may be skipped under CI`);
    }
    console.warn(`\n!!! SKIPPING suites for unreachable services: ${missing.join(', ')} (start them, or install Docker for testcontainers) !!!\n`);
  }
  if (!available.kurrentdb) {
    console.warn('KurrentDB contract suite skipped: set EVENTSTORE_URL to run it (no server on these machines).');
  }
  project.provide('services', available);
  project.provide('serviceUrls', urls);
  // The test files' processes inherit it: their threads and the CLI they spawn load compiled code.
  const compiled = compiledSourcesFolder();
  await compileSourcesInto(compiled.dir);
  process.env.SWITCHYARD_COMPILED_SOURCES = compiled.dir;
  project.onTestsRerun(() => compileSourcesInto(compiled.dir)); // watch mode: the sources changed
  return async () => {
    compiled.remove();
    for (const stop of stoppers) await stop();
  };
}
