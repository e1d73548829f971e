/**
 * Where the tests find the real services. URLs come from env vars, defaulting to the services
 * every development machine runs locally.
 */
export const serviceUrls = {
  nats: process.env.TEST_NATS_URL ?? 'nats://127.0.0.1:4222',
  mysql: process.env.TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test',
  postgres: process.env.TEST_POSTGRES_URL ?? 'postgres://root@127.0.0.1:5432/test',
  redis: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
  /** No KurrentDB server exists on the project's machines: set this to run its contract suite. */
  kurrentdb: process.env.EVENTSTORE_URL ?? '',
} as const;

export type ServiceName = keyof typeof serviceUrls;
export type ServiceAvailability = Record<ServiceName, boolean>;

declare module 'vitest' {
  export interface ProvidedContext {
    services: ServiceAvailability;
    serviceUrls: Record<ServiceName, string>;
  }
}

/** A short random suffix so parallel test files never share a stream, database or key. */
export function uniqueSuffix(): string {
  return `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
}
