/**
 * Growth benchmark: bytes on disk per relayed request, by component, in both modes.
 *
 *   npx tsx bench/growth.ts [--requests N] [--batch B] [--mode embedded|distributed|all] [--archive]
 *
 * Appends N realistic UsageRecorded events (20 users with a key each, 3 models, time-ordered ids,
 * as the relay's usage publisher writes them, in commits of B) to the event log, runs the real
 * usage, billing and key_usage projections to the head, then measures:
 * - embedded: the SQLite log (events.db + WAL, split into the events table, its position index and
 *   the commits table with SQLite's dbstat) and the read models (readmodels.db, per table + index);
 * - distributed: the JetStream stream's bytes (server's count for the stream) and MariaDB's
 *   data_length / index_length per table (after ANALYZE TABLE, so InnoDB's figures are current).
 * With --archive (embedded): then archives everything (`archiveUsage`) and reports the archive
 * file's bytes per request and the log's free pages (reused by later appends).
 *
 * Environment: BENCH_NATS_URL (nats://127.0.0.1:4222), MYSQL_URL (mysql://root@127.0.0.1:3306).
 */
import { statSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { sql as rawSql } from 'kysely';
import { pino } from 'pino';
import { NatsEventStore } from '../src/adapters/event-store/nats.js';
import { SqliteEventStore } from '../src/adapters/event-store/sqlite.js';
import { openSqlDatabase, type SqlDatabase } from '../src/adapters/sql/database.js';
import { migrateToLatest } from '../src/adapters/sql/migrate.js';
import { archiveUsage } from '../src/archive/usage-archive.js';
import type { UsageData } from '../src/commands/usage/events.js';
import { timeOrderedUuid } from '../src/ids.js';
import type { EventStore } from '../src/ports/event-store.js';
import { projectionsOf } from '../src/projections/index.js';
import { ProjectionRunner } from '../src/projections/runtime/runner.js';

const { values: args } = parseArgs({
  options: {
    requests: { type: 'string', default: '20000' },
    batch: { type: 'string', default: '100' },
    mode: { type: 'string', default: 'all' },
    archive: { type: 'boolean', default: false },
  },
});
const N = Number(args.requests);
const BATCH = Number(args.batch);
const logger = pino({ level: 'silent' });
const MODELS = ['gpt-4o-mini', 'claude-3-5-sonnet', 'llama-3.1-70b'];

function usage(i: number): UsageData {
  const prompt = 50 + ((i * 7919) % 2000);
  const completion = 10 + ((i * 104729) % 800);
  return {
    request_id: timeOrderedUuid(),
    tenant_id: 'default',
    user_id: `usr_${(i % 20).toString().padStart(8, '0')}`,
    key_id: `key_${(i % 20).toString().padStart(8, '0')}`,
    channel_id: `ch_${i % 3}`,
    provider: 'openai',
    model_requested: MODELS[i % 3]!,
    model_served: MODELS[i % 3]!,
    model_routed: MODELS[i % 3]!,
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    usage_source: 'upstream',
    stream: i % 2 === 0,
    status: i % 50 === 0 ? 502 : 200,
    error_code: i % 50 === 0 ? 'upstream_error' : null,
    latency_ms: 200 + (i % 900),
    ttft_ms: i % 2 === 0 ? 80 + (i % 300) : null,
    attempts: 1,
    started_at: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(),
  };
}

async function seed(store: EventStore, sql: SqlDatabase): Promise<void> {
  let version = 0;
  for (let i = 0; i < N; i += BATCH) {
    const events = Array.from({ length: Math.min(BATCH, N - i) }, (_, j) => ({ id: timeOrderedUuid(), type: 'UsageRecorded', data: usage(i + j) }));
    version = (await store.append('usage-bench', events, { expectedVersion: version, tenantId: 'default' })).version;
  }
  const runner = new ProjectionRunner(store, sql.db, projectionsOf({ secret: 'bench: no conversations here' }), logger);
  await runner.start();
  await runner.waitFor(await store.headPosition(), { timeoutMs: 600_000 });
  await runner.stop();
}

const perRequest = (bytes: number) => `${(bytes / N).toFixed(0).padStart(6)} B/request`;
const print = (label: string, bytes: number) => console.log(`  ${label.padEnd(44)} ${(bytes / 1e6).toFixed(2).padStart(9)} MB ${perRequest(bytes)}`);
const fileSize = (file: string) => (existsSync(file) ? statSync(file).size : 0);

/** Bytes per table / index of a SQLite file (dbstat), largest first. */
function sqliteObjects(file: string): Array<{ name: string; bytes: number }> {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare<[], { name: string; bytes: number }>('SELECT name, sum(pgsize) AS bytes FROM dbstat GROUP BY name ORDER BY bytes DESC').all();
  } finally {
    db.close();
  }
}

async function embedded(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'sy-growth-'));
  try {
    const store = new SqliteEventStore({ file: join(dir, 'events.db') });
    const sql = await openSqlDatabase({ kind: 'sqlite', file: join(dir, 'readmodels.db') });
    await migrateToLatest(sql.db);
    await seed(store, sql);
    await sql.close();
    const wal = fileSize(join(dir, 'events.db-wal'));
    await store.close(); // checkpoints the WAL into the file
    console.log(`embedded (SQLite), ${N} requests in commits of ${BATCH}:`);
    print('event log events.db', fileSize(join(dir, 'events.db')));
    print('  (its WAL before the checkpoint at close)', wal);
    for (const o of sqliteObjects(join(dir, 'events.db')).slice(0, 4)) print(`  ${o.name}`, o.bytes);
    print('read models readmodels.db', fileSize(join(dir, 'readmodels.db')));
    for (const o of sqliteObjects(join(dir, 'readmodels.db')).slice(0, 10)) print(`  ${o.name}`, o.bytes);
    if (args.archive) {
      const reopened = new SqliteEventStore({ file: join(dir, 'events.db') });
      // Keep going: the one stream's last commit stays in the log.
      const result = await archiveUsage(reopened, join(dir, 'archive'), new Date(Date.now() + 60_000));
      await reopened.close();
      const db = new Database(join(dir, 'events.db'), { readonly: true });
      const free = (db.pragma('freelist_count', { simple: true }) as number) * (db.pragma('page_size', { simple: true }) as number);
      db.close();
      console.log(`  archived ${result.entry?.events ?? 0} events:`);
      print('  archive file (gzip JSON lines)', result.entry?.bytes ?? 0);
      print('  log pages freed (reused by later appends)', free);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function distributed(): Promise<void> {
  const natsUrl = process.env.BENCH_NATS_URL ?? 'nats://127.0.0.1:4222';
  const mysql = new URL(process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306');
  const suffix = `${Date.now().toString(36)}${Math.floor(Math.random() * 1e6).toString(36)}`;
  const store = await NatsEventStore.connect({ servers: natsUrl, streamName: `SY_GROWTH_${suffix}`, subjectPrefix: `sygrowth.${suffix}` });
  const database = `sy_growth_${suffix}`;
  const admin = await openSqlDatabase({ kind: 'mysql', host: mysql.hostname, port: Number(mysql.port || 3306), user: mysql.username || 'root', password: mysql.password, database: 'mysql', maxConnections: 2, maxIdle: 1, connMaxLifetimeMs: 60_000 });
  await rawSql`CREATE DATABASE ${rawSql.raw(database)}`.execute(admin.db);
  const sql = await openSqlDatabase({ kind: 'mysql', host: mysql.hostname, port: Number(mysql.port || 3306), user: mysql.username || 'root', password: mysql.password, database, maxConnections: 4, maxIdle: 1, connMaxLifetimeMs: 60_000 });
  try {
    await migrateToLatest(sql.db);
    await seed(store, sql);
    const streamBytes = await store.streamBytes();
    console.log(`distributed (NATS JetStream + MariaDB), ${N} requests in commits of ${BATCH}:`);
    print('JetStream stream (message bytes)', streamBytes);
    const tables = await rawSql<{ name: string; data: number; indexes: number }>`SELECT table_name AS name, data_length AS data, index_length AS indexes FROM information_schema.tables WHERE table_schema = ${database}`.execute(sql.db);
    for (const t of tables.rows) await rawSql`ANALYZE TABLE ${rawSql.raw(t.name)}`.execute(sql.db);
    const analyzed = await rawSql<{ name: string; data: number; indexes: number }>`SELECT table_name AS name, data_length AS data, index_length AS indexes FROM information_schema.tables WHERE table_schema = ${database} ORDER BY data_length + index_length DESC`.execute(sql.db);
    const total = analyzed.rows.reduce((sum, t) => sum + Number(t.data) + Number(t.indexes), 0);
    print('MariaDB read models (data + indexes)', total);
    for (const t of analyzed.rows.slice(0, 6)) {
      print(`  ${t.name} data`, Number(t.data));
      print(`  ${t.name} indexes`, Number(t.indexes));
    }
  } finally {
    await sql.close();
    await rawSql`DROP DATABASE ${rawSql.raw(database)}`.execute(admin.db);
    await admin.close();
    await store.deleteStream();
    await store.close();
  }
}

if (args.mode === 'embedded' || args.mode === 'all') await embedded();
if (args.mode === 'distributed' || args.mode === 'all') await distributed();
