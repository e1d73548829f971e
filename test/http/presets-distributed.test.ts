/**
 * Presets on the distributed stores: two instances on NATS JetStream with the read models in
 * MariaDB, then in PostgreSQL. Built-ins published concurrently by both instances land once per
 * version; a preset written on one instance is read, searched and synced on the other.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { publishBuiltinPresets } from '../../src/presets/builtin.js';
import { call, startApp, type RunningApp } from '../support/app.js';
import { readModelConfig } from '../support/databases.js';
import { uniqueSuffix } from '../support/services.js';
import { builtinFile, writeBuiltin } from '../support/presets.js';

const services = inject('services');
const urls = inject('serviceUrls');

describe.each(['mysql', 'postgres'] as const)('presets on two instances (NATS + %s)', (dialect) => {
  const enabled = services.nats && services[dialect];
  const suffix = uniqueSuffix();
  const stream = `SYTEST_PRESETS_${suffix}`;
  const { config: db, cleanup: dropDatabase } = readModelConfig(dialect, urls);
  const builtinDir = mkdtempSync(join(tmpdir(), 'sy-builtin-dist-'));
  const env: Record<string, string> =
    db.kind === 'sqlite'
      ? {}
      : {
          NATS_URL: urls.nats,
          NATS_STREAM: stream,
          SQLDB_HOST: db.host,
          SQLDB_PORT: String(db.port),
          SQLDB_USER: db.user,
          SQLDB_PASSWORD: db.password,
          SQLDB_NAME: db.database,
          SQLDB_DIALECT: dialect,
          HEALTH_CHECK_ENABLED: 'false',
          PRESETS_BUILTIN_DIR: builtinDir,
        };
  let a: RunningApp;
  let b: RunningApp;

  beforeAll(async () => {
    if (!enabled) return;
    writeBuiltin(builtinDir, 'en', builtinFile('dist-one', 1, { category: 'Healthcare', tags: ['Care Plan'] }));
    a = await startApp(env);
    b = await startApp(env);
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    rmSync(builtinDir, { recursive: true, force: true });
    if (!enabled) return;
    await dropDatabase();
    const nc = await connect({ servers: urls.nats });
    await (await jetstreamManager(nc)).streams.delete(stream).catch(() => undefined);
    await nc.close();
  });

  it.skipIf(!enabled)('publishes each built-in version once when instances publish together', async () => {
    writeBuiltin(builtinDir, 'en', builtinFile('dist-one', 2, { category: 'Healthcare', tags: ['Care Plan'] }));
    writeBuiltin(builtinDir, 'cn', builtinFile('dist-two', 1, { lang: 'cn', name: '分布式' }));
    const instances = [a, b, a, b];
    const reports = await Promise.all(instances.map((s) => publishBuiltinPresets(s.app.ctx.commands, builtinDir, s.app.ctx.logger)));
    expect(reports.flatMap((r) => r.published).sort()).toEqual(['dist-one', 'dist-two']);
    const events = (await a.app.ctx.store.readStream('builtinpresets-catalog')).map((e) => `${e.data.preset_id as string}@${e.data.version as string}`);
    expect(events).toEqual(['dist-one@1', 'dist-two@1', 'dist-one@2']); // files are read in path order: cn/ before en/
    const position = Math.max(...reports.map((r) => r.position ?? 0));
    await b.app.ctx.runner.waitFor(position, { projections: ['presets'] });
    expect((await call(`${b.url}/api/presets/dist-one`, { token: b.userToken })).json).toMatchObject({ version: '2', revision: 2, builtin: true });
    expect((await call(`${b.url}/api/presets/dist-two`, { token: b.userToken })).json).toMatchObject({ name: '分布式' });
  });

  it.skipIf(!enabled)('reads, searches and syncs on one instance what the other wrote', async () => {
    const word = `dist${suffix}`;
    const created = await call(`${a.url}/api/presets`, { token: a.userToken, body: { name: `${word} planner`, category: 'business', tags: ['Plan_A'], description: '100% useful', visibility: 'team' } });
    expect(created.status, created.text).toBe(201);
    const other = await call(`${a.url}/api/presets`, { token: a.userToken, body: { name: 'Other', context: [{ role: 'user', content: `mentions ${word}` }], visibility: 'private' } });
    expect((await call(`${b.url}/api/presets/${created.json.id}`, { token: b.userToken })).status).toBe(200);

    const search = await call(`${b.url}/api/presets/search?q=${word.toUpperCase()}&limit=1`, { token: b.adminToken });
    expect(search.json).toMatchObject({ total: 1, next_offset: null });
    expect(search.json.data[0].id).toBe(created.json.id);
    const own = await call(`${b.url}/api/presets/search?q=${word}`, { token: b.userToken });
    expect(own.json.data.map((p: { id: string }) => p.id)).toEqual([created.json.id, other.json.id]);
    expect((await call(`${b.url}/api/presets/search?q=${word}&category=Business&tags=plan_a`, { token: b.userToken })).json.total).toBe(1);
    expect((await call(`${b.url}/api/presets/search?q=${word}&tags=plan%25`, { token: b.userToken })).json.total).toBe(0);
    expect((await call(`${b.url}/api/presets/search?q=100%25`, { token: b.userToken })).json.total).toBe(1);
    expect((await call(`${b.url}/api/presets/search?q=10%25%25`, { token: b.userToken })).json.total).toBe(0);
    expect((await call(`${b.url}/api/presets?scope=builtin&category=healthcare&tags=care plan`, { token: b.userToken })).json.data.map((p: { id: string }) => p.id)).toEqual(['dist-one']);

    const first = await call(`${b.url}/api/presets/sync`, { token: b.userToken });
    expect(first.json.changes.map((c: { id: string }) => c.id)).toEqual([created.json.id, other.json.id]);
    await call(`${a.url}/api/presets/${other.json.id}`, { method: 'DELETE', token: a.userToken });
    const next = await call(`${b.url}/api/presets/sync?since=${first.json.cursor as string}`, { token: b.userToken });
    expect(next.json.changes).toEqual([{ op: 'deleted', id: other.json.id, preset: null, deleted_at: expect.any(String) }]);

    // The largest context allowed, in three-byte UTF-8 characters, fits the read model.
    const big = '字'.repeat(99_000);
    const large = await call(`${a.url}/api/presets`, { token: a.userToken, body: { name: '大', context: [{ role: 'user', content: big }] } });
    expect(large.status, large.text.slice(0, 300)).toBe(201);
    expect((await call(`${b.url}/api/presets/${large.json.id}`, { token: b.userToken })).json.context[0].content).toBe(big);
  });
});
