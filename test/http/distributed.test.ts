/**
 * The distributed mode: two instances side by side on NATS JetStream + MariaDB + Redis. A command
 * on one instance reaches the other through the bus; the shared projection is applied once.
 */
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { call, login, startApp, TEST_USER_PASSWORD, type RunningApp } from '../support/app.js';
import { readModelConfig } from '../support/databases.js';
import { startOpenAiFake } from '../support/fake-upstreams/openai.js';
import { uniqueSuffix } from '../support/services.js';

const services = inject('services');
const urls = inject('serviceUrls');
const enabled = services.nats && services.mysql && services.redis;

describe.skipIf(!enabled)('two instances on NATS + MariaDB + Redis', () => {
  const suffix = uniqueSuffix();
  const stream = `SYTEST_${suffix}`;
  const { config: db, cleanup: dropDatabase } = readModelConfig('mysql', urls);
  const redis = new URL(urls.redis);
  const env = {
    NATS_URL: urls.nats,
    NATS_STREAM: stream,
    SQLDB_HOST: db.kind === 'mysql' ? db.host : '',
    SQLDB_PORT: db.kind === 'mysql' ? String(db.port) : '',
    SQLDB_USER: db.kind === 'mysql' ? db.user : '',
    SQLDB_PASSWORD: db.kind === 'mysql' ? db.password : '',
    SQLDB_NAME: db.kind === 'mysql' ? db.database : '',
    CACHE_HOST: redis.hostname,
    CACHE_PORT: redis.port || '6379',
    CACHE_PREFIX: `sytest:${suffix}:`,
  };
  let a: RunningApp;
  let b: RunningApp;

  beforeAll(async () => {
    a = await startApp(env);
    b = await startApp(env);
  });

  afterAll(async () => {
    await a?.close();
    await b?.close();
    await dropDatabase();
    const nc = await connect({ servers: urls.nats });
    await (await jetstreamManager(nc)).streams.delete(stream).catch(() => undefined);
    await nc.close();
  });

  it('reports the distributed mode and each server dependency', async () => {
    for (const instance of [a, b]) {
      const res = await call(`${instance.url}/health`);
      expect(res.status).toBe(200);
      expect(res.json).toMatchObject({
        mode: 'distributed',
        checks: { event_store: { status: 'up', kind: 'nats' }, read_models: { status: 'up', kind: 'mysql' }, counters: { status: 'up', kind: 'redis' } },
      });
    }
  });

  it('accepts a token from a login on the other instance at once, and refuses unknown sessions and logged-out ones there', async () => {
    // The login's session reaches B through the bus; B waits for its views before deciding.
    for (let i = 0; i < 5; i++) {
      const fresh = await login(a.url, a.userEmail, TEST_USER_PASSWORD);
      expect((await call(`${b.url}/v1/users/me`, { token: fresh.access_token })).status).toBe(200);
      expect((await call(`${a.url}/v1/auth/logout`, { token: fresh.access_token, body: {} })).json).toEqual({ revoked: true });
      // Revocation reaches B within one bus delivery.
      await expect.poll(async () => (await call(`${b.url}/v1/users/me`, { token: fresh.access_token })).status, { timeout: 3000, interval: 20 }).toBe(401);
    }
    const forged = await b.app.ctx.tokens.issueAccessToken({ userId: b.userId, tenantId: 'default', role: 'user', sessionId: 'ses_neverstarted000' });
    expect((await call(`${b.url}/v1/users/me`, { token: forged })).status).toBe(401);
  });

  it('applies maintenance mode on every instance', async () => {
    const on = await call(`${a.url}/v1/admin/maintenance`, { token: a.adminToken, body: { enabled: true, message: 'Cluster upgrade' } });
    expect(on.status).toBe(200);
    // Instance B learns it from the bus, not from a request: poll briefly.
    const deadline = Date.now() + 3000;
    let onB = await call(`${b.url}/v1/admin/maintenance`, { token: b.userToken });
    while (onB.status !== 503 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 25));
      onB = await call(`${b.url}/v1/admin/maintenance`, { token: b.userToken });
    }
    expect(onB.status).toBe(503);
    expect(onB.json.error).toMatchObject({ message: 'Cluster upgrade', code: 'maintenance' });
    const viaB = await call(`${b.url}/v1/admin/maintenance`, { token: b.adminToken });
    expect(viaB.json).toMatchObject({ enabled: true, message: 'Cluster upgrade', changed_by: 'admin-1' });
    const off = await call(`${b.url}/v1/admin/maintenance`, { token: b.adminToken, body: { enabled: false } });
    expect(off.json.enabled).toBe(false);
  });

  it('admits exactly N requests per minute for one API key across both instances, and revokes it everywhere', async () => {
    const upstream = await startOpenAiFake();
    try {
      const channel = await call(`${a.url}/v1/admin/channels`, { token: a.adminToken, body: { name: 'c', type: 'openai', base_url: upstream.baseUrl, key: 'test-key', models: ['gpt-x'] } });
      expect(channel.status).toBe(201);
      const created = await call(`${a.url}/api/admin/keys`, { token: a.adminToken, body: { name: 'shared', user_id: 'user-1', permissions: { rate_limits: { requests_per_minute: 5 } } } });
      expect(created.status).toBe(201);
      const key = created.json.key as string;
      // B learns of the channel and the key from the bus.
      await b.app.ctx.views.keys.waitFor(await a.app.ctx.store.headPosition());
      await b.app.ctx.views.channels.waitFor(await a.app.ctx.store.headPosition());
      const ask = (instance: RunningApp) => call(`${instance.url}/v1/chat/completions`, { token: key, body: { model: 'gpt-x', messages: [{ role: 'user', content: 'hi' }] } });
      const results = await Promise.all(Array.from({ length: 12 }, (_, i) => ask(i % 2 === 0 ? a : b)));
      expect(results.filter((r) => r.status === 200)).toHaveLength(5);
      expect(results.filter((r) => r.status === 429 && r.json.error.code === 'rate_limit_exceeded')).toHaveLength(7);

      const revoked = await call(`${a.url}/api/admin/keys/${created.json.id}`, { method: 'DELETE', token: a.adminToken });
      expect(revoked.status).toBe(200);
      const started = Date.now();
      let onB = await ask(b);
      while (onB.status !== 401 && Date.now() - started < 1000) onB = await ask(b);
      expect(onB.status).toBe(401);
      expect(Date.now() - started).toBeLessThan(1000);
    } finally {
      await upstream.close();
    }
  });

  it('bills every request exactly once under concurrent load on both instances', async () => {
    const upstream = await startOpenAiFake();
    try {
      await call(`${a.url}/v1/admin/channels`, { token: a.adminToken, body: { name: 'bill', type: 'openai', base_url: upstream.baseUrl, key: 'test-key', models: ['billed-model'] } });
      expect((await call(`${a.url}/v1/admin/pricing/models/billed-model`, { method: 'PUT', token: a.adminToken, body: { input_price: 1, output_price: 1 } })).status).toBe(200);
      expect((await call(`${a.url}/v1/admin/credits/user-1/topup`, { token: a.adminToken, body: { amount: 10, reason: 'load test' } })).status).toBe(200);
      const created = await call(`${a.url}/api/admin/keys`, { token: a.adminToken, body: { name: 'load', user_id: 'user-1' } });
      const head = await a.app.ctx.store.headPosition();
      for (const instance of [a, b]) {
        await Promise.all([instance.app.ctx.views.keys.waitFor(head), instance.app.ctx.views.channels.waitFor(head), instance.app.ctx.views.billing.waitFor(head)]);
      }
      const results = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          call(`${(i % 2 === 0 ? a : b).url}/v1/chat/completions`, { token: created.json.key, body: { model: 'billed-model', messages: [{ role: 'user', content: `load ${i}` }] } }),
        ),
      );
      expect(results.every((r) => r.status === 200)).toBe(true);
      const served = results.map((r) => r.headers.get('x-request-id')!).sort();
      await Promise.all([a.app.ctx.usage.flush(), b.app.ctx.usage.flush()]);
      const end = Math.max(await a.app.ctx.store.headPosition(), await b.app.ctx.store.headPosition());
      await a.app.ctx.runner.waitFor(end, { projections: ['billing'] });
      const charged = (await a.app.ctx.sql.db.selectFrom('billing_ledger').select('request_id').where('entry_type', '=', 'charge').where('request_id', 'in', served).execute())
        .map((r) => r.request_id!)
        .sort();
      expect(charged).toEqual(served); // each served request charged once: none missing, none twice
    } finally {
      await upstream.close();
    }
  });

  it('applies the shared projection exactly once and rebuilds it to the same state', async () => {
    const head = await a.app.ctx.store.headPosition();
    await a.app.ctx.runner.waitFor(head);
    await b.app.ctx.runner.waitFor(head);
    const live = await a.app.ctx.queries.maintenance();
    expect(live).toMatchObject({ enabled: false, changed_by: 'admin-1' });
    const [checkpoint] = await a.app.ctx.sql.db.selectFrom('projection_checkpoints').selectAll().where('name', '=', 'maintenance').execute();
    expect(checkpoint!.position).toBeGreaterThanOrEqual(head); // later usage commits may follow

    await b.app.ctx.runner.rebuild('maintenance');
    await a.app.ctx.runner.waitFor(head);
    expect(await a.app.ctx.queries.maintenance()).toEqual(live);
  });
});

describe.skipIf(!services.postgres || !services.nats)('an instance with PostgreSQL read models', () => {
  const stream = `SYTEST_PG_${uniqueSuffix()}`;
  const { config: db, cleanup: dropDatabase } = readModelConfig('postgres', urls);
  let s: RunningApp;

  beforeAll(async () => {
    if (db.kind !== 'postgres') throw new Error('expected a postgres config');
    s = await startApp({
      NATS_URL: urls.nats,
      NATS_STREAM: stream,
      SQLDB_DIALECT: 'postgres',
      SQLDB_HOST: db.host,
      SQLDB_PORT: String(db.port),
      SQLDB_USER: db.user,
      SQLDB_PASSWORD: db.password,
      SQLDB_NAME: db.database,
    });
  });

  afterAll(async () => {
    await s?.close();
    await dropDatabase();
    const nc = await connect({ servers: urls.nats });
    await (await jetstreamManager(nc)).streams.delete(stream).catch(() => undefined);
    await nc.close();
  });

  it('migrates, projects and serves maintenance mode', async () => {
    const health = await call(`${s.url}/health`);
    expect(health.json).toMatchObject({ mode: 'mixed', checks: { read_models: { status: 'up', kind: 'postgres' } } });
    const on = await call(`${s.url}/v1/admin/maintenance`, { token: s.adminToken, body: { enabled: true, message: 'pg' } });
    expect(on.json).toMatchObject({ enabled: true, message: 'pg' });
    expect((await call(`${s.url}/v1/admin/maintenance`, { token: s.userToken })).status).toBe(503);
  });
});
