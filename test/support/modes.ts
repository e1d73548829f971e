/**
 * The two ways the app runs, for tests that must pass in both: embedded (SQLite files, memory
 * counters) and distributed (a NATS JetStream stream, a MariaDB or PostgreSQL database and a Redis
 * key prefix of the test's own, removed by `cleanup`).
 */
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { readModelConfig, type Dialect } from './databases.js';

/** The databases a distributed app can use. */
export type ServerDialect = Exclude<Dialect, 'sqlite'>;
import { uniqueSuffix, type ServiceAvailability, type ServiceName } from './services.js';

export interface ModeEnv {
  env: Record<string, string>;
  cleanup(): Promise<void>;
}

export interface Mode {
  name: 'embedded' | 'distributed';
  /** False when a service the mode needs is not running here (the suite is skipped). */
  enabled: boolean;
  /** A fresh set of stores (call once per app, or once for instances that share them). */
  env(): ModeEnv;
}

/** The environment of an app on NATS + `dialect` + Redis, with stores of its own. */
export function distributedEnv(urls: Record<ServiceName, string>, dialect: ServerDialect = 'mysql'): ModeEnv {
  const suffix = uniqueSuffix();
  const stream = `SYTEST_${suffix}`;
  const { config: db, cleanup: dropDatabase } = readModelConfig(dialect, urls);
  if (db.kind === 'sqlite') throw new Error(`expected a ${dialect} read model`);
  const redis = new URL(urls.redis);
  return {
    env: {
      NATS_URL: urls.nats,
      NATS_STREAM: stream,
      SQLDB_DIALECT: dialect,
      SQLDB_HOST: db.host,
      SQLDB_PORT: String(db.port),
      SQLDB_USER: db.user,
      SQLDB_PASSWORD: db.password,
      SQLDB_NAME: db.database,
      CACHE_HOST: redis.hostname,
      CACHE_PORT: redis.port || '6379',
      CACHE_PREFIX: `sytest:${suffix}:`,
    },
    cleanup: async () => {
      await dropDatabase();
      const nc = await connect({ servers: urls.nats });
      await (await jetstreamManager(nc)).streams.delete(stream).catch(() => undefined);
      await nc.close();
    },
  };
}

/** Both modes; the distributed one on `dialect`, enabled when NATS, that database and Redis run here. */
export function appModes(services: ServiceAvailability, urls: Record<ServiceName, string>, dialect: ServerDialect = 'mysql'): Mode[] {
  return [
    { name: 'embedded', enabled: true, env: () => ({ env: {}, cleanup: async () => undefined }) },
    { name: 'distributed', enabled: services.nats && services[dialect] && services.redis, env: () => distributedEnv(urls, dialect) },
  ];
}
