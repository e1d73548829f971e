import { describe, expect, it } from 'vitest';
import { loadConfig, parseDuration, parseSize } from '../../src/config.js';
import { ConfigError } from '../../src/errors.js';

const SECRET = 'a-secret-of-sufficient-length';

describe('config', () => {
  it('requires SECRET and names it', () => {
    expect(() => loadConfig({})).toThrow(ConfigError);
    expect(() => loadConfig({})).toThrow(/SECRET/);
    expect(() => loadConfig({ SECRET: 'short' })).toThrow(/SECRET must be at least 16/);
  });

  it('defaults to the embedded mode with the documented defaults', () => {
    const c = loadConfig({ SECRET });
    expect(c.server.port).toBe(8000);
    expect(c.metrics).toEqual({ enabled: true, port: 9090 });
    expect(c.eventStore).toEqual({ kind: 'sqlite', file: './data/events.db', readCacheBytes: 32 * 1024 * 1024, archiveDir: './data/archive' });
    expect(c.readModels).toEqual({ kind: 'sqlite', file: './data/readmodels.db' });
    expect(c.counters).toEqual({ kind: 'memory' });
    expect(c.dirs).toEqual({ data: './data', storage: './storage', logs: './logs' });
    expect(c.auth.jwtExpireMs).toBe(24 * 3600_000);
    expect(c.auth.jwtRefreshExpireMs).toBe(720 * 3600_000);
    expect(c.auth.session).toEqual({ secure: false, httpOnly: true, sameSite: 'lax' });
    expect(c.auth.rbacEnabled).toBe(true);
    expect(c.auth.mfaEnabled).toBe(false);
    expect(c.files.maxSize).toBe(20 * 1024 * 1024);
    expect(c.files.storage).toEqual({ kind: 'local', dir: './storage' });
    expect([c.projectorsThread, c.projectorsNice]).toEqual([true, 10]);
    // Scale defaults (docs/decisions/0040) and request bounds.
    expect(c.upstreamHttp).toEqual({ maxIdleConns: 100, maxConnsPerHost: 4096, idleConnTimeoutMs: 90_000, queueTimeoutMs: 5_000 });
    expect([c.server.listenBacklog, c.server.maxJsonDepth]).toEqual([4096, 128]);
  });

  it('switches each store to its server when configured', () => {
    const c = loadConfig({ SECRET, NATS_URL: 'nats://n:4222', SQLDB_HOST: 'db', SQLDB_PASSWORD: 'pw', CACHE_HOST: 'cache', CACHE_PORT: '6380' });
    expect(c.eventStore).toEqual({ kind: 'nats', url: 'nats://n:4222', stream: 'SWITCHYARD', archiveDir: './data/archive' });
    expect(c.readModels).toMatchObject({ kind: 'mysql', host: 'db', port: 3306, user: 'root', password: 'pw', database: 'switchyard', maxConnections: 25 });
    expect(c.counters).toMatchObject({ kind: 'redis', host: 'cache', port: 6380 });
    expect(loadConfig({ SECRET, SQLDB_HOST: 'pg', SQLDB_DIALECT: 'postgres' }).readModels).toMatchObject({ kind: 'postgres', port: 5432 });
    expect(loadConfig({ SECRET, NATS_URL: 'nats://x', EVENTSTORE_URL: 'esdb://e:2113' }).eventStore.kind).toBe('kurrentdb');
  });

  it('configures S3 storage and names what it misses', () => {
    const s3 = { SECRET, STORAGE_TYPE: 's3', S3_BUCKET: 'files', S3_ENDPOINT: 'http://minio:9000', S3_ACCESS_KEY_ID: 'id', S3_SECRET_ACCESS_KEY: 'key', S3_FORCE_PATH_STYLE: 'true' };
    expect(loadConfig(s3).files.storage).toEqual({
      kind: 's3',
      bucket: 'files',
      endpoint: 'http://minio:9000',
      region: 'us-east-1',
      credentials: { accessKeyId: 'id', secretAccessKey: 'key' },
      forcePathStyle: true,
    });
    expect(loadConfig({ SECRET, STORAGE_TYPE: 's3', S3_BUCKET: 'b', S3_REGION: 'eu-west-3' }).files.storage).toEqual({
      kind: 's3',
      bucket: 'b',
      endpoint: undefined,
      region: 'eu-west-3',
      credentials: undefined,
      forcePathStyle: false,
    });
    expect(() => loadConfig({ SECRET, STORAGE_TYPE: 's3' })).toThrow(/S3_BUCKET: is required when STORAGE_TYPE is s3/);
    expect(() => loadConfig({ ...s3, S3_SECRET_ACCESS_KEY: undefined })).toThrow(/S3_SECRET_ACCESS_KEY: .*set together/);
    expect(() => loadConfig({ SECRET, STORAGE_TYPE: 'gcs' })).toThrow(/STORAGE_TYPE/);
    expect(() => loadConfig({ ...s3, S3_ENDPOINT: 'not a url' })).toThrow(/S3_ENDPOINT/);
  });

  it('chooses the server of the public port with RELAY_HTTP_SERVER (RELAY_FAST_PATH=false still means fastify)', () => {
    const server = (env: Record<string, string>) => loadConfig({ SECRET, ...env }).server.httpServer;
    expect(server({})).toBe('lean');
    expect(server({ RELAY_HTTP_SERVER: 'node' })).toBe('node');
    expect(server({ RELAY_HTTP_SERVER: 'fastify' })).toBe('fastify');
    expect(server({ RELAY_FAST_PATH: 'false' })).toBe('fastify');
    expect(server({ RELAY_FAST_PATH: 'true' })).toBe('lean');
    expect(server({ RELAY_FAST_PATH: 'false', RELAY_HTTP_SERVER: 'lean' })).toBe('lean');
    expect(() => server({ RELAY_HTTP_SERVER: 'express' })).toThrow(/RELAY_HTTP_SERVER/);
  });

  it('names every malformed variable', () => {
    let message = '';
    try {
      loadConfig({ SECRET, SERVER_PORT: 'eighty', JWT_EXPIRE: '3 weeks', RBAC_ENABLED: 'maybe', MAX_FILE_SIZE: 'huge', SESSION_SAME_SITE: 'sometimes', PROJECTORS_NICE: '20' });
    } catch (e) {
      message = (e as Error).message;
    }
    for (const name of ['SERVER_PORT', 'JWT_EXPIRE', 'RBAC_ENABLED', 'MAX_FILE_SIZE', 'SESSION_SAME_SITE', 'PROJECTORS_NICE']) expect(message).toContain(name);
    expect(message).not.toContain('SECRET');
  });

  it('treats empty variables as unset', () => {
    expect(loadConfig({ SECRET, SERVER_PORT: '', NATS_URL: '' }).eventStore.kind).toBe('sqlite');
  });

  it('parses Go-style durations and sizes', () => {
    expect(parseDuration('720h')).toBe(720 * 3600_000);
    expect(parseDuration('1h30m')).toBe(5400_000);
    expect(parseDuration('500ms')).toBe(500);
    expect(parseDuration('90')).toBe(90_000);
    expect(() => parseDuration('5 minutes')).toThrow();
    expect(() => parseDuration('h')).toThrow();
    expect(parseSize('10MB')).toBe(10 * 1024 * 1024);
    expect(parseSize('512kb')).toBe(512 * 1024);
    expect(parseSize('1234')).toBe(1234);
    expect(() => parseSize('-1')).toThrow();
  });
});

describe('config: API_VERSION', () => {
  it('refuses an API version this build does not speak', () => {
    expect(() => loadConfig({ SECRET, API_VERSION: 'v9' })).toThrow(/API_VERSION/);
    expect(() => loadConfig({ SECRET, API_VERSION: 'latest' })).toThrow(/API_VERSION/);
    expect(() => loadConfig({ SECRET, API_VERSION: 'v3' })).toThrow(/API_VERSION: v3 is not a supported API version \(supported: v1, v2\)/);
    expect(loadConfig({ SECRET, API_VERSION: 'v1' }).api).toEqual({ version: 'v1', supportedVersions: ['v1', 'v2'] });
    expect(loadConfig({ SECRET }).api).toEqual({ version: 'v2', supportedVersions: ['v1', 'v2'] });
  });
});
