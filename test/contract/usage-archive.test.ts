/**
 * Archival of old usage events (src/archive/usage-archive.ts, docs/decisions/0090) on the embedded
 * log (SQLite file) and on NATS JetStream: the usage commits older than the cutoff leave the log
 * (each usage stream keeps its last commit), the archive files hold them (checked against the
 * manifest's sha256 and counts), the log read through `withArchive` is the log as it was, and a
 * rebuild of usage, billing and key_usage through it gives the tables it gave before archiving.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Kysely } from 'kysely';
import { pino } from 'pino';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { NatsEventStore } from '../../src/adapters/event-store/nats.js';
import { SqliteEventStore } from '../../src/adapters/event-store/sqlite.js';
import type { ReadModelTables } from '../../src/adapters/sql/schema.js';
import { archiveUsage, readArchivedCommits, readManifest, verifyArchive, withArchive } from '../../src/archive/usage-archive.js';
import { ArchivalNotSupportedError } from '../../src/errors.js';
import type { Commit, EventStore } from '../../src/ports/event-store.js';
import { billingProjection } from '../../src/projections/billing/projection.js';
import { keyUsageProjection } from '../../src/projections/key-usage.js';
import { ProjectionRunner } from '../../src/projections/runtime/runner.js';
import { usageProjection } from '../../src/projections/usage.js';
import { freshDatabase } from '../support/databases.js';
import { uniqueSuffix } from '../support/services.js';
import { appendVariedUsageLog } from '../support/usage-log.js';

const logger = pino({ level: 'silent' });
const services = inject('services');
const urls = inject('serviceUrls');

const TABLES: Array<[keyof ReadModelTables, string[]]> = [
  ['usage_requests', ['event_position', 'event_version']],
  ['usage_hourly', ['tenant_id', 'hour', 'user_id', 'key_id', 'channel_id', 'model']],
  ['billing_ledger', ['event_position', 'event_version', 'id']],
  ['billing_balances', ['user_id']],
  ['billing_key_spend', ['key_id']],
  ['key_usage', ['key_id']],
];

async function dump(db: Kysely<ReadModelTables>): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const [table, key] of TABLES) {
    let query = db.selectFrom(table).selectAll();
    for (const column of key) query = query.orderBy(column as never);
    out[table] = (await query.execute()) as unknown[];
  }
  return out;
}

async function wholeLog(store: EventStore): Promise<Commit[]> {
  const out: Commit[] = [];
  for (let after = 0; ; ) {
    const commits = await store.readAll({ after, limit: 7 }); // small batches: merging across batch ends
    if (commits.length === 0) return out;
    out.push(...commits);
    after = commits.at(-1)!.position;
  }
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function projectedTables(store: EventStore): Promise<Record<string, unknown[]>> {
  const { sql, cleanup } = await freshDatabase('sqlite', urls);
  const runner = new ProjectionRunner(store, sql.db, [usageProjection, billingProjection, keyUsageProjection], logger);
  await runner.start();
  await runner.waitFor(await store.headPosition(), { timeoutMs: 30_000 });
  const tables = await dump(sql.db);
  await runner.stop();
  await cleanup();
  return tables;
}

const openers: Array<[string, boolean, () => Promise<EventStore>]> = [
  [
    'sqlite',
    true,
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'sy-archive-log-'));
      const store = new SqliteEventStore({ file: join(dir, 'events.db'), pollIntervalMs: 20 });
      cleanups.push(async () => {
        await store.close();
        rmSync(dir, { recursive: true, force: true });
      });
      return store;
    },
  ],
  [
    'nats',
    services.nats,
    async () => {
      const suffix = uniqueSuffix();
      const store = await NatsEventStore.connect({ servers: urls.nats, streamName: `SY_ARCH_${suffix}`, subjectPrefix: `syarch.${suffix}` });
      cleanups.push(async () => {
        await store.deleteStream();
        await store.close();
      });
      return store;
    },
  ],
];

describe.each(openers)('usage archival on %s', (name, available, open) => {
  it.skipIf(!available)('moves old usage commits to verified files; the merged log and a rebuild are as before', async () => {
    const store = await open();
    const dir = mkdtempSync(join(tmpdir(), 'sy-archive-'));
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));

    await appendVariedUsageLog(store);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const cutoff = new Date();
    await new Promise((resolve) => setTimeout(resolve, 20));
    // Recent usage, after the cutoff: stays.
    const recent = { request_id: 'recent-1', tenant_id: 'tb', user_id: 'u-1', key_id: 'k-1', channel_id: 'ch-0', provider: 'openai', model_requested: 'm-a', model_served: 'm-a', model_routed: 'm-a', prompt_tokens: 5, completion_tokens: 5, total_tokens: 10, status: 200, error_code: null, latency_ms: 3, ttft_ms: null, attempts: 1, started_at: new Date().toISOString(), stream: false, usage_source: 'upstream' };
    const last = (await store.readStream('usage-one')).at(-1)!.version;
    await store.append('usage-one', [{ type: 'UsageRecorded', data: recent }], { expectedVersion: last, tenantId: 'tb' });
    await store.append('usage-two', [{ type: 'UsageRecorded', data: { ...recent, request_id: 'recent-2' } }], { expectedVersion: 0, tenantId: 'tb' });

    const original = await wholeLog(store);
    // The projections are run over the SQLite log (on JetStream the merged log's equality stands for it).
    const tablesBefore = name === 'sqlite' ? await projectedTables(store) : null;

    const result = await archiveUsage(store, dir, cutoff);
    expect(result.entry).not.toBeNull();
    expect(result.removed).toBe(result.entry!.commits);
    const oldUsage = original.filter((c) => c.stream === 'usage-one' && c.events[0]!.occurred_at < cutoff.toISOString());
    expect(result.entry!.commits).toBe(oldUsage.length);
    expect(oldUsage.length).toBeGreaterThan(5);

    // The log itself no longer has them; everything else is there.
    const remaining = await wholeLog(store);
    const archivedPositions = new Set(oldUsage.map((c) => c.position));
    expect(remaining.map((c) => c.position)).toEqual(original.map((c) => c.position).filter((p) => !archivedPositions.has(p)));
    expect(remaining.filter((c) => c.stream === 'usage-two')).toHaveLength(1);
    // The stream's version is intact: the next append at it succeeds.
    const version = (await store.readStream('usage-one')).at(-1)!.version;
    expect(version).toBe(last + 1);
    await expect(store.append('usage-one', [{ type: 'Noted', data: {} }], { expectedVersion: version, tenantId: 'tb' })).resolves.toMatchObject({ version: version + 1 });
    const merged = withArchive(store, dir);
    const originalAndNote = [...original, ...(await store.readAll({ after: original.at(-1)!.position }))];

    // Read through the archive, the log is as it was.
    expect(await wholeLog(merged)).toEqual(originalAndNote);
    const archived: Commit[] = [];
    for await (const commit of readArchivedCommits(dir)) archived.push(commit);
    expect(archived).toEqual(oldUsage);
    const window: Commit[] = [];
    for await (const commit of readArchivedCommits(dir, { from: oldUsage[2]!.position, to: oldUsage[4]!.position })) window.push(commit);
    expect(window).toEqual(oldUsage.slice(2, 5));

    // A rebuild through it gives the tables of before.
    if (tablesBefore) expect(await projectedTables(merged)).toEqual(tablesBefore);

    // Nothing old is left: a second run archives nothing.
    expect((await archiveUsage(store, dir, cutoff)).entry).toBeNull();

    // Integrity: the files match the manifest; a changed byte is found.
    expect(await verifyArchive(dir)).toEqual([{ file: result.entry!.file, ok: true }]);
    const file = join(dir, readManifest(dir).entries[0]!.file);
    const bytes = readFileSync(file);
    bytes[bytes.length >> 1] = bytes[bytes.length >> 1]! ^ 0xff;
    writeFileSync(file, bytes);
    expect((await verifyArchive(dir))[0]).toMatchObject({ ok: false, problem: 'sha256 differs from the manifest' });
  });
});

describe.skipIf(!services.nats)('usage archival on a JetStream stream created with deny_purge', () => {
  it('is refused with a clear error, and nothing is removed', async () => {
    const suffix = uniqueSuffix();
    const streamName = `SY_ARCH_DENY_${suffix}`;
    const subjectPrefix = `syarchdeny.${suffix}`;
    const nc = await connect({ servers: urls.nats });
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: streamName, subjects: [`${subjectPrefix}.>`], deny_purge: true, deny_delete: true });
    const store = await NatsEventStore.connect({ servers: urls.nats, streamName, subjectPrefix });
    const dir = mkdtempSync(join(tmpdir(), 'sy-archive-'));
    try {
      await store.append('usage-a', [{ type: 'UsageRecorded', data: {} }], { expectedVersion: 0, tenantId: 't' });
      await store.append('usage-a', [{ type: 'UsageRecorded', data: {} }], { expectedVersion: 1, tenantId: 't' });
      await expect(archiveUsage(store, dir, new Date(Date.now() + 60_000))).rejects.toThrow(ArchivalNotSupportedError);
      expect(await store.readAll({ after: 0 })).toHaveLength(2);
    } finally {
      await store.deleteStream();
      await store.close();
      await nc.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
