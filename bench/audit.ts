/**
 * Audit benchmark: `switchyard audit replay` on a large log, as an operator runs it (the CLI, a
 * process of its own), timed and measured for its peak memory.
 *
 *   npx tsx bench/audit.ts [--events N] [--batch B] [--users U] [--more M] [--log sqlite|nats] [--db sqlite|mysql|postgres] [--page P] [--keep] [--tsx] [--heap MB]
 *
 * Seeds a log with N UsageRecorded events (commits of B, U users each with a key, four models,
 * every model priced, every user topped up: each event is a usage row, a rated request and a
 * ledger charge), runs the real usage and billing projections into the live read-model database
 * until they reach the head, then runs the compiled CLI (built first into dist/, as `npm run build`
 * does; --tsx: through tsx from the sources, which adds tsx's own memory), each run a child
 * process under /usr/bin/time -v (AUDIT_SNAPSHOT_EVERY = N/2; --heap MB: node's
 * --max-old-space-size for it, to show what the audit retains rather than how far V8 lets
 * garbage grow):
 *
 *   1. `audit replay` over the whole period, with no snapshot (it replays the whole log and saves one);
 *   2. M more events appended and projected (default N/100), then `audit replay` of the last
 *      minute: it continues from that snapshot (replays M events) and compares one minute;
 *   3. the same window with the snapshots moved away: from the log's beginning.
 *
 * Reported per run: wall time, peak RSS (Maximum resident set size), events replayed, rows
 * compared, differences (must be 0). Log: embedded SQLite (default) or NATS JetStream
 * (BENCH_NATS_URL, default nats://127.0.0.1:4222; a stream of its own, deleted at the end). Read
 * models: SQLite in the data directory, or MariaDB / PostgreSQL (MYSQL_URL / POSTGRES_URL,
 * default the local test servers; a fresh database, dropped at the end).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, renameSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { openSqlDatabase, type ReadModelConfig } from '../src/adapters/sql/database.js';
import { migrateToLatest } from '../src/adapters/sql/migrate.js';
import { SqliteEventStore } from '../src/adapters/event-store/sqlite.js';
import type { UsageData } from '../src/commands/usage/events.js';
import { timeOrderedUuid } from '../src/ids.js';
import type { EventStore } from '../src/ports/event-store.js';
import { billingProjection } from '../src/projections/billing/projection.js';
import { ProjectionRunner } from '../src/projections/runtime/runner.js';
import { usageProjection } from '../src/projections/usage.js';
import { readModelConfig, type Dialect } from '../test/support/databases.js';

const { values: args } = parseArgs({
  options: {
    events: { type: 'string', default: '1000000' },
    batch: { type: 'string', default: '250' },
    users: { type: 'string', default: '200' },
    more: { type: 'string' },
    log: { type: 'string', default: 'sqlite' },
    db: { type: 'string', default: 'sqlite' },
    page: { type: 'string' },
    keep: { type: 'boolean', default: false },
    tsx: { type: 'boolean', default: false },
    heap: { type: 'string' },
  },
});
const EVENTS = Number(args.events);
const BATCH = Number(args.batch);
const USERS = Number(args.users);
const MORE = args.more !== undefined ? Number(args.more) : Math.max(1, Math.floor(EVENTS / 100));
const TENANT = 'default';
const MODELS = ['gpt-4o-mini', 'claude-3-5-haiku', 'gemini-2.0-flash', 'mistral-small'];
const START = Date.parse('2026-11-20T00:00:00Z');
const SPACING_MS = 20;
const SECRET = 'bench-audit-secret-0123456789';
const run = promisify(execFile);
/** The CLI as operators run it: compiled (`npm run build`, done first); --tsx: from the sources (tsx's own memory counts then). */
const CLI = args.tsx ? ['--import', 'tsx', join(process.cwd(), 'src', 'cli.ts')] : [join(process.cwd(), 'dist', 'src', 'cli.js')];

function usageEvent(i: number): UsageData {
  const user = i % USERS;
  const failed = i % 50 === 0;
  const prompt = failed ? 0 : 20 + (i % 400);
  const completion = failed ? 0 : 5 + (i % 300);
  const startedAt = new Date(START + i * SPACING_MS);
  return {
    request_id: timeOrderedUuid(startedAt.getTime()),
    tenant_id: TENANT,
    user_id: `user-${user}`,
    key_id: `key-${user}`,
    channel_id: 'channel-1',
    provider: 'openai',
    model_requested: MODELS[i % MODELS.length]!,
    model_served: MODELS[i % MODELS.length]!,
    model_routed: MODELS[i % MODELS.length]!,
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    usage_source: 'upstream',
    stream: i % 3 === 0,
    status: failed ? 502 : 200,
    error_code: failed ? 'upstream_error' : null,
    latency_ms: 120 + (i % 900),
    ttft_ms: i % 3 === 0 ? 80 : null,
    attempts: 1,
    started_at: startedAt.toISOString(),
  };
}

/** Prices for every model and credits for every user, then usage events [from, to) in commits of BATCH. */
async function appendUsage(store: EventStore, from: number, to: number, version: number): Promise<number> {
  for (let i = from; i < to; i += BATCH) {
    const events = [];
    for (let j = i; j < Math.min(to, i + BATCH); j++) events.push({ id: timeOrderedUuid(), type: 'UsageRecorded', data: usageEvent(j) as unknown as Record<string, unknown> });
    version = (await store.append('usage-bench', events, { expectedVersion: version, tenantId: TENANT })).version;
    if ((i / BATCH) % 400 === 0) process.stderr.write(`\rappended ${Math.min(to, i + BATCH)} / ${to}`);
  }
  process.stderr.write('\n');
  return version;
}

async function seedBilling(store: EventStore): Promise<void> {
  const prices = MODELS.map((model, i) => ({ type: 'ModelPriceSet', data: { model, input_per_1m_micro: 150_000 * (i + 1), output_per_1m_micro: 600_000 * (i + 1), per_request_micro: 0, by: null } }));
  await store.append(`pricing-${TENANT}`, prices, { expectedVersion: 0, tenantId: TENANT });
  for (let u = 0; u < USERS; u++) {
    await store.append(`credits-user-${u}`, [{ type: 'CreditsToppedUp', data: { user_id: `user-${u}`, amount_micro: 1_000_000_000_000, reason: 'bench', by: null } }], { expectedVersion: 0, tenantId: TENANT });
  }
}

async function project(store: EventStore, readModels: ReadModelConfig): Promise<number> {
  const sql = await openSqlDatabase(readModels);
  try {
    await migrateToLatest(sql.db);
    const runner = new ProjectionRunner(store, sql.db, [usageProjection, billingProjection], pino({ level: 'warn' }));
    const head = await store.headPosition();
    const started = performance.now();
    await runner.start();
    await runner.waitFor(head, { timeoutMs: 3_600_000 });
    await runner.stop();
    return (performance.now() - started) / 1000;
  } finally {
    await sql.close();
  }
}

interface AuditRun {
  name: string;
  seconds: number;
  maxRssMb: number;
  eventsReplayed: number;
  rowsCompared: number;
  differences: number;
  fromSnapshot: boolean;
}

async function audit(name: string, env: NodeJS.ProcessEnv, from: string, to: string): Promise<AuditRun> {
  const started = performance.now();
  const { stdout, stderr } = await run(
    '/usr/bin/time',
    ['-v', process.execPath, ...(args.heap ? [`--max-old-space-size=${args.heap}`] : []), ...CLI, 'audit', 'replay', '--tenant', TENANT, '--from', from, '--to', to],
    { env: { ...process.env, ...env }, maxBuffer: 256 * 1024 * 1024 },
  ).catch((error: { stdout: string; stderr: string }) => error);
  const seconds = (performance.now() - started) / 1000;
  const rss = /Maximum resident set size \(kbytes\): (\d+)/.exec(stderr);
  let report: { differences: number; tables: Array<{ live_rows: number; replayed_rows: number }>; replay: { events_replayed: number; from_snapshot: unknown } };
  try {
    report = JSON.parse(stdout) as typeof report;
  } catch {
    throw new Error(`${name}: no report\n${stderr.slice(-4000)}`);
  }
  return {
    name,
    seconds,
    maxRssMb: rss ? Number(rss[1]) / 1024 : NaN,
    eventsReplayed: report.replay.events_replayed,
    rowsCompared: report.tables.reduce((sum, t) => sum + Math.max(t.live_rows, t.replayed_rows), 0),
    differences: report.differences,
    fromSnapshot: report.replay.from_snapshot !== null,
  };
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'sy-bench-audit-'));
  if (!args.tsx) {
    console.log('building the CLI (npm run build) ...');
    await run(process.execPath, [join(process.cwd(), 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json']);
  }
  // A snapshot once half the log has been replayed: the first audit saves one.
  const env: NodeJS.ProcessEnv = { SECRET, DATA_DIR: dir, LOG_LEVEL: 'info', AUDIT_SNAPSHOT_EVERY: String(Math.floor(EVENTS / 2)) };
  if (args.page) env.AUDIT_PAGE_SIZE = args.page;
  const urls = { mysql: process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test', postgres: process.env.POSTGRES_URL ?? 'postgres://root@127.0.0.1:5432/test' };
  const dialect = args.db as Dialect;
  const rm = dialect === 'sqlite' ? { config: { kind: 'sqlite', file: join(dir, 'readmodels.db') } as ReadModelConfig, cleanup: async () => undefined } : readModelConfig(dialect, urls);
  if (rm.config.kind !== 'sqlite') Object.assign(env, { SQLDB_HOST: rm.config.host, SQLDB_PORT: String(rm.config.port), SQLDB_USER: rm.config.user, SQLDB_PASSWORD: rm.config.password, SQLDB_NAME: rm.config.database, SQLDB_DIALECT: rm.config.kind });
  let store: EventStore;
  let deleteStream = async () => undefined as void;
  const natsStream = `SY_BENCH_AUDIT_${Date.now()}`;
  if (args.log === 'nats') {
    const { NatsEventStore } = await import('../src/adapters/event-store/nats.js');
    const url = process.env.BENCH_NATS_URL ?? 'nats://127.0.0.1:4222';
    const nats = await NatsEventStore.connect({ servers: url, streamName: natsStream, subjectPrefix: `ev.${natsStream}` });
    deleteStream = () => nats.deleteStream();
    store = nats;
    Object.assign(env, { NATS_URL: url, NATS_STREAM: natsStream });
  } else {
    store = new SqliteEventStore({ file: join(dir, 'events.db') });
  }
  console.log(`log: ${args.log}, ${EVENTS} usage events in commits of ${BATCH}, ${USERS} users, all priced; read models: ${dialect}; data dir ${dir}`);
  try {
    let t = performance.now();
    await seedBilling(store);
    const version = await appendUsage(store, 0, EVENTS, 0);
    console.log(`seeded the log in ${((performance.now() - t) / 1000).toFixed(1)} s`);
    console.log(`projected usage and billing in ${(await project(store, rm.config)).toFixed(1)} s`);

    const runs: AuditRun[] = [];
    runs.push(await audit('whole period, no snapshot', env, '1970-01-01T00:00:00Z', '2100-01-01T00:00:00Z'));
    console.log(runs.at(-1));
    t = performance.now();
    await appendUsage(store, EVENTS, EVENTS + MORE, version);
    await project(store, rm.config);
    console.log(`appended and projected ${MORE} more events in ${((performance.now() - t) / 1000).toFixed(1)} s`);
    const end = START + (EVENTS + MORE) * SPACING_MS;
    const window = [new Date(end - 60_000).toISOString(), new Date(end).toISOString()] as const;
    runs.push(await audit('last minute, from the snapshot', env, ...window));
    console.log(runs.at(-1));
    const snapshots = join(dir, 'audit', 'snapshots');
    if (existsSync(snapshots)) renameSync(snapshots, `${snapshots}.away`);
    runs.push(await audit('last minute, no snapshot', { ...env, AUDIT_SNAPSHOT_EVERY: '0' }, ...window));
    console.log(runs.at(-1));

    console.log('\n| run | wall s | peak RSS MB | events replayed | rows compared | differences |');
    console.log('|---|---:|---:|---:|---:|---:|');
    for (const r of runs) console.log(`| ${r.name} | ${r.seconds.toFixed(1)} | ${Math.round(r.maxRssMb)} | ${r.eventsReplayed} | ${r.rowsCompared} | ${r.differences} |`);
  } finally {
    await deleteStream().catch(() => undefined);
    await store.close();
    await rm.cleanup();
    if (!args.keep) rmSync(dir, { recursive: true, force: true });
  }
}

await main();
