/**
 * Usage projections benchmark: what each relayed request's usage event costs Switchyard after the
 * response, per event, without a load generator or an upstream sharing the CPU.
 *
 *   npx tsx bench/usage-projections.ts [--events N] [--batch B] [--users U] [--priced] [--random-ids] [--db sqlite|mysql|postgres] [--runs R] [--json] [--profile FILE]
 *
 * Appends N UsageRecorded events (U users with an API key each, a few models, some failures) to
 * an embedded SQLite log in commits of B events, as the relay's usage publisher does under load
 * (through the log's writer thread: "append"). Event ids and request ids are time-ordered, as the
 * publisher and the relay make them (src/ids.ts); with --random-ids the request ids are random
 * UUIDs instead, as clients that send their own X-Request-Id may choose them. Then, on a second connection to
 * the log, as the serving thread does: reads the log back ("log read": rows and JSON parsing) and
 * folds every event into the billing live view ("billing live view": read and fold). Then runs the
 * real usage, billing and key_usage projections (ProjectionRunner, the same code as the projector
 * thread) from an empty read-model database until they reach the head: each alone, then the three
 * together. With --priced the tenant has a price for every model (every event is also charged: a
 * ledger row and a balance), as a tenant that bills its users would.
 *
 * Reported per phase: µs per event of wall clock and of CPU (process.cpuUsage: every thread of
 * this process, so the writer thread's share of an append is in it; a database server's is not).
 * CPU time is the steadier figure on a machine shared with other work. With --runs R every phase
 * runs R times and the lowest figures are kept.
 *
 * With --profile FILE, the first run's "all three" phase runs under V8's sampling profiler (this
 * thread: the projections' own work, not the log writer's) and writes FILE (a .cpuprofile, for
 * Chrome's DevTools); the functions with the most self time are printed too.
 *
 * Read-model databases: SQLite in a temp file (default), or MariaDB / PostgreSQL from
 * MYSQL_URL / POSTGRES_URL (defaults: the local test servers), each in a fresh database.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Session } from 'node:inspector/promises';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { SqliteEventStore } from '../src/adapters/event-store/sqlite.js';
import { timeOrderedUuid } from '../src/ids.js';
import type { UsageData } from '../src/commands/usage/events.js';
import { billingProjection } from '../src/projections/billing/projection.js';
import { billingLiveView } from '../src/views/billing.js';
import { keyUsageProjection } from '../src/projections/key-usage.js';
import type { Projection } from '../src/projections/runtime/projection.js';
import { ProjectionRunner } from '../src/projections/runtime/runner.js';
import { usageProjection } from '../src/projections/usage.js';
import { freshDatabase, type Dialect } from '../test/support/databases.js';

const { values: args } = parseArgs({
  options: {
    events: { type: 'string', default: '50000' },
    batch: { type: 'string', default: '250' },
    users: { type: 'string', default: '20' },
    priced: { type: 'boolean', default: false },
    'random-ids': { type: 'boolean', default: false },
    db: { type: 'string', default: 'sqlite' },
    runs: { type: 'string', default: '1' },
    json: { type: 'boolean', default: false },
    profile: { type: 'string' },
  },
});

const EVENTS = Number(args.events);
const BATCH = Number(args.batch);
const USERS = Number(args.users);
const RUNS = Math.max(1, Number(args.runs));
const TENANT = 'bench-tenant';
const MODELS = ['gpt-4o-mini', 'claude-3-5-haiku', 'gemini-2.0-flash', 'mistral-small'];

function usageEvent(i: number, startedAt: Date): UsageData {
  const user = i % USERS;
  const failed = i % 50 === 0;
  const prompt = failed ? 0 : 20 + (i % 400);
  const completion = failed ? 0 : 5 + (i % 300);
  return {
    request_id: args['random-ids'] ? randomUUID() : timeOrderedUuid(startedAt.getTime()),
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

interface Measure {
  wallUs: number;
  cpuUs: number;
}

/** Wall-clock and CPU time (every thread of the process) of `work`, in µs. */
async function measured<T>(work: () => Promise<T>): Promise<Measure & { value: T }> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  const value = await work();
  const wallUs = (performance.now() - started) * 1000;
  const used = process.cpuUsage(cpu);
  return { value, wallUs, cpuUs: used.user + used.system };
}

/** Appends the usage events (the pricing commit first, with --priced) to a fresh log; measures the usage commits. */
async function fillLog(store: SqliteEventStore): Promise<{ head: number; append: Measure }> {
  // Starts the log's writer thread (loading its modules is no part of an append's cost).
  await store.append('bench-warmup', [{ type: 'BenchStarted', data: {} }], { expectedVersion: 0, tenantId: TENANT });
  if (args.priced) {
    const prices = MODELS.map((model, i) => ({ type: 'ModelPriceSet', data: { model, input_per_1m_micro: 150_000 * (i + 1), output_per_1m_micro: 600_000 * (i + 1), per_request_micro: 0, by: null } }));
    await store.append(`pricing-${TENANT}`, prices, { expectedVersion: 0, tenantId: TENANT });
  }
  const start = Date.parse('2026-11-20T00:00:00Z');
  const commits: Array<Array<{ id: string; type: string; data: UsageData }>> = [];
  for (let i = 0; i < EVENTS; i += BATCH) {
    const events = [];
    for (let j = i; j < Math.min(EVENTS, i + BATCH); j++) events.push({ id: timeOrderedUuid(), type: 'UsageRecorded', data: usageEvent(j, new Date(start + j * 20)) });
    commits.push(events);
  }
  const append = await measured(async () => {
    let version = 0;
    for (const events of commits) version = (await store.append(`usage-bench`, events, { expectedVersion: version, tenantId: TENANT })).version;
  });
  return { head: await store.headPosition(), append };
}

/** Reads the whole log back, as a subscriber on the serving thread does (rows, JSON parsing), optionally folding every event into the billing live view. */
async function readBack(file: string, fold: boolean): Promise<Measure> {
  const store = new SqliteEventStore({ file });
  const { sql, cleanup } = await freshDatabase('sqlite', { mysql: '', postgres: '' });
  try {
    const view = await billingLiveView.load(sql.db);
    const relevant = new Set(billingLiveView.projection.eventTypes);
    return await measured(async () => {
      let state = view;
      for (let after = 0; ; ) {
        const commits = await store.readAll({ after, limit: 500 });
        if (commits.length === 0) break;
        for (const commit of commits) {
          if (fold) for (const event of commit.events) if (relevant.has(event.type)) state = billingLiveView.evolve(state, event);
          after = commit.position;
        }
      }
    });
  } finally {
    await cleanup();
    await store.close();
  }
}

interface CpuProfile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }>;
  samples: number[];
  timeDeltas: number[];
}

/** Runs `work` under V8's sampling profiler; writes the profile to `file` and prints the top functions by self time. */
async function profiled<T>(file: string, work: () => Promise<T>): Promise<T> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  const value = await work();
  const { profile } = (await session.post('Profiler.stop')) as unknown as { profile: CpuProfile };
  session.disconnect();
  writeFileSync(file, JSON.stringify(profile));
  const frames = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  const parents = new Map(profile.nodes.flatMap((node) => (node.children ?? []).map((child) => [child, node.id] as const)));
  // Samples inside the inspector's own calls (Profiler.stop building the profile) are the profiler's cost.
  const isProfiler = (id: number | undefined): boolean => id !== undefined && (frames.get(id)!.url === 'node:inspector' || isProfiler(parents.get(id)));
  const selfUs = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    if (isProfiler(id)) return;
    const frame = frames.get(id)!;
    const name = `${frame.functionName || '(anonymous)'} ${frame.url.replace(/^.*\/node_modules\//, '').replace(/^.*\/(src|bench)\//, '$1/')}`;
    selfUs.set(name, (selfUs.get(name) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  const total = [...selfUs.values()].reduce((a, b) => a + b, 0);
  console.log(`profile of "all three": ${file}; self time, µs per event:`);
  for (const [name, us] of [...selfUs].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(`  ${(us / EVENTS).toFixed(2).padStart(6)}  ${((100 * us) / total).toFixed(1).padStart(5)} %  ${name}`);
  return value;
}

/** Replays `projections` from an empty read-model database to `head`; with `profileTo`, under the profiler (the replay only). */
async function project(store: SqliteEventStore, head: number, projections: Projection[], profileTo?: string): Promise<Measure> {
  const { sql, cleanup } = await freshDatabase(args.db as Dialect, {
    mysql: process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test',
    postgres: process.env.POSTGRES_URL ?? 'postgres://root@127.0.0.1:5432/test',
  });
  try {
    const runner = new ProjectionRunner(store, sql.db, projections, pino({ level: 'warn' }));
    const replay = () =>
      measured(async () => {
        await runner.start();
        await runner.waitFor(head, { timeoutMs: 600_000 });
      });
    const result = await (profileTo ? profiled(profileTo, replay) : replay());
    await runner.stop();
    return result;
  } finally {
    await cleanup();
  }
}

interface Row {
  phase: string;
  usPerEvent: number;
  cpuUsPerEvent: number;
  eventsPerSecond: number;
}

const perEvent = (phase: string, m: Measure): Row => ({ phase, usPerEvent: m.wallUs / EVENTS, cpuUsPerEvent: m.cpuUs / EVENTS, eventsPerSecond: (EVENTS * 1e6) / m.wallUs });

/** The lowest wall and CPU figures of several runs of one phase. */
const best = (rows: Row[]): Row => ({
  phase: rows[0]!.phase,
  usPerEvent: Math.min(...rows.map((r) => r.usPerEvent)),
  cpuUsPerEvent: Math.min(...rows.map((r) => r.cpuUsPerEvent)),
  eventsPerSecond: Math.max(...rows.map((r) => r.eventsPerSecond)),
});

function print(row: Row) {
  console.log(`${row.phase.padEnd(18)} ${Math.round(row.eventsPerSecond).toString().padStart(7)} events/s  ${row.usPerEvent.toFixed(1).padStart(6)} µs/event  ${row.cpuUsPerEvent.toFixed(1).padStart(6)} µs CPU/event`);
}

async function main() {
  const runs: Row[][] = [];
  const sets: Array<[string, Projection[]]> = [
    ['usage', [usageProjection]],
    ['billing', [billingProjection]],
    ['key_usage', [keyUsageProjection]],
    ['all three', [usageProjection, billingProjection, keyUsageProjection]],
  ];
  console.log(`log: ${EVENTS} usage events in commits of ${BATCH}, ${USERS} users/keys, ${args.priced ? 'priced' : 'unpriced'}, ${args['random-ids'] ? 'random' : 'time-ordered'} request ids; read models: ${args.db}; ${RUNS} run(s)`);
  for (let run = 0; run < RUNS; run++) {
    const dir = mkdtempSync(join(tmpdir(), 'sy-bench-usage-'));
    const file = join(dir, 'events.db');
    const store = new SqliteEventStore({ file });
    try {
      const rows: Row[] = [];
      const { head, append } = await fillLog(store);
      rows.push(perEvent('append', append));
      rows.push(perEvent('log read', await readBack(file, false)));
      rows.push(perEvent('billing live view', await readBack(file, true)));
      for (const [name, projections] of sets) rows.push(perEvent(name, await project(store, head, projections, run === 0 && name === 'all three' ? args.profile : undefined)));
      for (const row of rows) print(row);
      runs.push(rows);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const rows = runs[0]!.map((_, i) => best(runs.map((r) => r[i]!)));
  console.log(`\n| phase | events/s | µs per event | µs CPU per event |\n|---|---:|---:|---:|`);
  for (const r of rows) console.log(`| ${r.phase} | ${Math.round(r.eventsPerSecond)} | ${r.usPerEvent.toFixed(1)} | ${r.cpuUsPerEvent.toFixed(1)} |`);
  if (args.json) {
    const out = join(import.meta.dirname, 'results');
    mkdirSync(out, { recursive: true });
    writeFileSync(join(out, `usage-projections-${new Date().toISOString().replace(/[:.]/g, '-')}.json`), JSON.stringify({ events: EVENTS, batch: BATCH, users: USERS, priced: args.priced, randomIds: args['random-ids'], db: args.db, runs: RUNS, rows }, null, 2));
  }
}

void main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
