/**
 * Event store benchmark: append throughput and projection lag, per adapter.
 *
 *   npx tsx bench/event-store.ts [--adapter sqlite|nats|all] [--seconds N] [--rate R]
 *                                [--backlog N] [--concurrency C] [--dir PATH] [--json]
 *
 * Adapters:
 *   sqlite  the embedded SqliteEventStore on a fresh file in a temp directory (--dir, default the
 *           OS temp dir; it must be on the disk you care about: the store fsyncs every commit)
 *   nats    NatsEventStore against BENCH_NATS_URL (default nats://127.0.0.1:4222), on a JetStream
 *           stream of its own that is deleted afterwards
 *
 * Phases (each on a fresh event store, so one phase's log never slows the next):
 *   append, sequential, distinct streams  one writer, one event per commit, each commit to a new
 *                                         stream (expectedVersion 0)
 *   append, sequential, same stream       one writer, one stream, expectedVersion = current version
 *   append, concurrent, distinct streams  C appends in flight (default 32), new stream each
 *   projection lag, fixed rate            one writer at R commits/s (default 200) while a
 *                                         ProjectionRunner runs the real maintenance projection
 *                                         into a SQLite read-model DB; lag = time from the append's
 *                                         ack to the projection checkpoint reaching its position
 *   projection lag, full speed            the same with the writer going as fast as it can (one
 *                                         append per event-loop turn, like request handlers)
 *   catch-up                              N commits (default 5000) appended first, then a runner
 *                                         starts on an empty read-model DB (subscription path,
 *                                         what a starting instance does), then `rebuild` replays
 *                                         them again through readAll (what the CLI does)
 *
 * Throughput phases run for --seconds each (default 4). Results print as a markdown table; with
 * --json they are also written to bench/results/. Performance figures belong in
 * docs/benchmarks.md, never in timed tests.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, release, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { openSqlDatabase, type SqlDatabase } from '../src/adapters/sql/database.js';
import { migrateToLatest } from '../src/adapters/sql/migrate.js';
import { createLogger } from '../src/logger.js';
import type { EventStore, NewEvent } from '../src/ports/event-store.js';
import { maintenanceProjection } from '../src/projections/maintenance.js';
import { ProjectionRunner, readCheckpoint } from '../src/projections/runtime/runner.js';
import { percentile } from './stats.js';

// ---------------------------------------------------------------------------------------------
// Options
// ---------------------------------------------------------------------------------------------

const { values: args } = parseArgs({
  options: {
    adapter: { type: 'string', default: 'all' },
    seconds: { type: 'string', default: '4' },
    rate: { type: 'string', default: '200' },
    backlog: { type: 'string', default: '5000' },
    concurrency: { type: 'string', default: '32' },
    dir: { type: 'string' },
    json: { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
});

if (args.help) {
  console.log('usage: npx tsx bench/event-store.ts [--adapter sqlite|nats|all] [--seconds N] [--rate R] [--backlog N] [--concurrency C] [--dir PATH] [--json]');
  process.exit(0);
}

function positiveNumber(name: string, text: string): number {
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0) {
    console.error(`--${name} must be a positive number, got ${JSON.stringify(text)}`);
    process.exit(2);
  }
  return value;
}

type AdapterName = 'sqlite' | 'nats';
const ADAPTERS: readonly AdapterName[] = ['sqlite', 'nats'];
if (args.adapter !== 'all' && !ADAPTERS.includes(args.adapter as AdapterName)) {
  console.error(`--adapter must be sqlite, nats or all, got ${JSON.stringify(args.adapter)}`);
  process.exit(2);
}
const adapters: AdapterName[] = args.adapter === 'all' ? [...ADAPTERS] : [args.adapter as AdapterName];
const seconds = positiveNumber('seconds', args.seconds);
const rate = positiveNumber('rate', args.rate);
const backlog = Math.round(positiveNumber('backlog', args.backlog));
const concurrency = Math.round(positiveNumber('concurrency', args.concurrency));
const natsUrl = process.env.BENCH_NATS_URL ?? 'nats://127.0.0.1:4222';
const workDir = mkdtempSync(join(args.dir ?? tmpdir(), 'sy-bench-'));
const logger = createLogger('warn');

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

const suffix = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
let storeCounter = 0;

interface OpenedStore {
  store: EventStore;
  dispose(): Promise<void>;
}

/** A fresh, empty event store of the given adapter. */
async function openStore(adapter: AdapterName): Promise<OpenedStore> {
  const n = ++storeCounter;
  if (adapter === 'sqlite') {
    const { SqliteEventStore } = await import('../src/adapters/event-store/sqlite.js');
    const store = new SqliteEventStore({ file: join(workDir, `events-${n}.db`) });
    return { store, dispose: () => store.close() };
  }
  const { NatsEventStore } = await import('../src/adapters/event-store/nats.js');
  const store = await NatsEventStore.connect({ servers: natsUrl, streamName: `SY_BENCH_${suffix}_${n}`, subjectPrefix: `sybench.${suffix}.${n}` });
  return {
    store,
    dispose: async () => {
      try {
        await store.deleteStream();
      } finally {
        await store.close();
      }
    },
  };
}

async function withStore<T>(adapter: AdapterName, work: (store: EventStore) => Promise<T>): Promise<T> {
  const opened = await openStore(adapter);
  try {
    return await work(opened.store);
  } finally {
    await opened.dispose();
  }
}

let readModelCounter = 0;
/** A fresh SQLite read-model database, migrated. */
async function openReadModels(): Promise<SqlDatabase> {
  const sql = await openSqlDatabase({ kind: 'sqlite', file: join(workDir, `readmodels-${++readModelCounter}.db`) });
  await migrateToLatest(sql.db);
  return sql;
}

const benchEvent = (i: number): NewEvent => ({ type: 'BenchAppended', data: { i, note: 'switchyard event-store benchmark payload' } });
/** Relevant to the maintenance projection, so each commit costs it a real read-model write. */
const maintenanceEvent = (i: number): NewEvent => ({ type: 'MaintenanceEnabled', data: { message: `bench message ${i}`, by: 'bench' } });

const APPEND = { tenantId: 'bench' } as const;

interface Distribution {
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

function distribution(samples: number[]): Distribution {
  const sorted = [...samples].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p95: percentile(sorted, 95), p99: percentile(sorted, 99), max: sorted.at(-1) ?? NaN };
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

// ---------------------------------------------------------------------------------------------
// Results
// ---------------------------------------------------------------------------------------------

interface Row {
  adapter: AdapterName;
  phase: string;
  commits: number;
  seconds: number;
  /** Commits per second (for lag phases: the rate the writer achieved). */
  throughput: number;
  /** Append latency (ms), or projection lag (ms) for lag phases. */
  latency: Distribution | null;
  latencyKind: 'append' | 'lag' | null;
  note: string;
}

const rows: Row[] = [];

function record(row: Row) {
  rows.push(row);
  const lat = row.latency ? `  ${row.latencyKind} p50 ${fmt(row.latency.p50)} p95 ${fmt(row.latency.p95)} p99 ${fmt(row.latency.p99)} max ${fmt(row.latency.max)} ms` : '';
  console.log(`[${row.adapter}] ${row.phase}: ${row.commits} commits in ${row.seconds.toFixed(2)} s = ${Math.round(row.throughput)} commits/s${lat}${row.note ? `  (${row.note})` : ''}`);
}

function fmt(ms: number): string {
  if (!Number.isFinite(ms)) return '-';
  return ms >= 100 ? ms.toFixed(0) : ms >= 10 ? ms.toFixed(1) : ms.toFixed(2);
}

// ---------------------------------------------------------------------------------------------
// Append throughput
// ---------------------------------------------------------------------------------------------

async function sequentialDistinct(adapter: AdapterName) {
  await withStore(adapter, async (store) => {
    const latencies: number[] = [];
    const started = performance.now();
    const until = started + seconds * 1000;
    let i = 0;
    while (performance.now() < until) {
      const t = performance.now();
      await store.append(`bench-d${i}`, [benchEvent(i)], { ...APPEND, expectedVersion: 0 });
      latencies.push(performance.now() - t);
      i++;
    }
    const elapsed = (performance.now() - started) / 1000;
    record({ adapter, phase: 'append, sequential, distinct streams', commits: i, seconds: elapsed, throughput: i / elapsed, latency: distribution(latencies), latencyKind: 'append', note: '1 writer, expectedVersion 0' });
  });
}

async function sequentialSameStream(adapter: AdapterName) {
  await withStore(adapter, async (store) => {
    const latencies: number[] = [];
    const started = performance.now();
    const until = started + seconds * 1000;
    let version = 0;
    while (performance.now() < until) {
      const t = performance.now();
      const result = await store.append('bench-same', [benchEvent(version)], { ...APPEND, expectedVersion: version });
      latencies.push(performance.now() - t);
      version = result.version;
    }
    const elapsed = (performance.now() - started) / 1000;
    record({ adapter, phase: 'append, sequential, same stream', commits: version, seconds: elapsed, throughput: version / elapsed, latency: distribution(latencies), latencyKind: 'append', note: '1 writer, expectedVersion = n' });
  });
}

/** `workers` loops appending one-event commits to new streams until `stop()` says so. */
async function concurrentAppends(store: EventStore, workers: number, stop: (done: number) => boolean, event: (i: number) => NewEvent, latencies?: number[]): Promise<number> {
  let next = 0;
  const worker = async () => {
    while (!stop(next)) {
      const i = next++;
      const t = performance.now();
      await store.append(`bench-c${i}`, [event(i)], { ...APPEND, expectedVersion: 0 });
      latencies?.push(performance.now() - t);
    }
  };
  await Promise.all(Array.from({ length: workers }, worker));
  return next;
}

async function concurrentDistinct(adapter: AdapterName) {
  await withStore(adapter, async (store) => {
    const latencies: number[] = [];
    const started = performance.now();
    const until = started + seconds * 1000;
    const commits = await concurrentAppends(store, concurrency, () => performance.now() >= until, benchEvent, latencies);
    const elapsed = (performance.now() - started) / 1000;
    record({ adapter, phase: `append, ${concurrency} concurrent, distinct streams`, commits, seconds: elapsed, throughput: commits / elapsed, latency: distribution(latencies), latencyKind: 'append', note: `${concurrency} in flight, expectedVersion 0` });
  });
}

// ---------------------------------------------------------------------------------------------
// Projection lag
// ---------------------------------------------------------------------------------------------

/**
 * Measures, for every acknowledged append, how long until the projection checkpoint reaches its
 * position. Checkpoints only move forward, so one waiter on the oldest pending position settles
 * every pending append at or below the checkpoint it then reads.
 */
class LagProbe {
  private readonly pending: Array<{ position: number; ackedAt: number }> = [];
  private head = 0;
  private wake: (() => void) | null = null;
  private stopped = false;
  readonly lags: number[] = [];
  private readonly loop: Promise<void>;

  constructor(
    private readonly runner: ProjectionRunner,
    private readonly sql: SqlDatabase,
    private readonly name: string,
  ) {
    this.loop = this.run();
  }

  acked(position: number, ackedAt: number) {
    this.pending.push({ position, ackedAt });
    this.wake?.();
  }

  /** Waits until every acknowledged append has been projected. */
  async drain(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.loop;
  }

  private async run() {
    for (;;) {
      if (this.head >= this.pending.length) {
        if (this.stopped) return;
        await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = null;
        continue;
      }
      const oldest = this.pending[this.head]!;
      await this.runner.waitFor(oldest.position, { timeoutMs: 120_000, projections: [this.name] });
      const reachedAt = performance.now();
      const checkpoint = Math.max(oldest.position, await readCheckpoint(this.sql.db, this.name));
      while (this.head < this.pending.length && this.pending[this.head]!.position <= checkpoint) {
        this.lags.push(reachedAt - this.pending[this.head]!.ackedAt);
        this.head++;
      }
    }
  }
}

async function projectionLag(adapter: AdapterName, mode: 'fixed' | 'full') {
  await withStore(adapter, async (store) => {
    const sql = await openReadModels();
    const runner = new ProjectionRunner(store, sql.db, [maintenanceProjection], logger);
    try {
      await runner.start();
      // Warm-up: the subscription (a JetStream durable consumer) is live once this is projected.
      const warm = await store.append('maintenance-warmup', [maintenanceEvent(0)], { ...APPEND, expectedVersion: 0 });
      await runner.waitFor(warm.position, { timeoutMs: 30_000 });

      const probe = new LagProbe(runner, sql, maintenanceProjection.name);
      const started = performance.now();
      const until = started + seconds * 1000;
      let i = 0;
      while (performance.now() < until) {
        if (mode === 'fixed') {
          // Open loop: commit i is due at started + i/rate, whatever happened before.
          const due = started + (i * 1000) / rate;
          if (due >= until) break;
          const wait = due - performance.now();
          if (wait > 1) await sleep(wait);
        }
        const result = await store.append(`maintenance-b${i}`, [maintenanceEvent(i)], { ...APPEND, expectedVersion: 0 });
        probe.acked(result.position, performance.now());
        i++;
        // Each append in its own event-loop turn, as HTTP handlers do. A tight `await` loop would
        // run the synchronous SQLite appends back to back in microtasks and starve the projector
        // running in the same process, which no request-driven server does.
        if (mode === 'full') await yieldToEventLoop();
      }
      const writerDone = performance.now();
      const elapsed = (writerDone - started) / 1000;
      await probe.drain();
      const drainMs = performance.now() - writerDone;
      const phase = mode === 'fixed' ? `projection lag, ${rate} commits/s` : 'projection lag, full speed';
      record({
        adapter,
        phase,
        commits: i,
        seconds: elapsed,
        throughput: i / elapsed,
        latency: distribution(probe.lags),
        latencyKind: 'lag',
        note: `maintenance projection on SQLite read models; last commit projected ${fmt(drainMs)} ms after the writer stopped`,
      });
    } finally {
      await runner.stop();
      await sql.close();
    }
  });
}

async function catchUp(adapter: AdapterName) {
  await withStore(adapter, async (store) => {
    // The backlog: appended as fast as possible before any projector runs.
    await concurrentAppends(store, concurrency, (done) => done >= backlog, maintenanceEvent);
    const head = await store.headPosition();
    const sql = await openReadModels();
    const runner = new ProjectionRunner(store, sql.db, [maintenanceProjection], logger);
    try {
      let started = performance.now();
      await runner.start();
      await runner.waitFor(head, { timeoutMs: 600_000 });
      let elapsed = (performance.now() - started) / 1000;
      record({ adapter, phase: 'catch-up, runner start (subscription)', commits: backlog, seconds: elapsed, throughput: backlog / elapsed, latency: null, latencyKind: null, note: `backlog of ${backlog} commits, empty read-model DB` });
      await runner.stop();

      started = performance.now();
      await runner.rebuild(maintenanceProjection.name);
      elapsed = (performance.now() - started) / 1000;
      if ((await readCheckpoint(sql.db, maintenanceProjection.name)) < head) throw new Error('rebuild did not reach the head');
      record({ adapter, phase: 'catch-up, rebuild (readAll batches)', commits: backlog, seconds: elapsed, throughput: backlog / elapsed, latency: null, latencyKind: null, note: '`switchyard projections rebuild` path' });
    } finally {
      await runner.stop();
      await sql.close();
    }
  });
}

// ---------------------------------------------------------------------------------------------
// Main
// ---------------------------------------------------------------------------------------------

async function natsServerVersion(): Promise<string | null> {
  const { connect } = await import('@nats-io/transport-node');
  const nc = await connect({ servers: natsUrl, name: 'switchyard-bench-probe' });
  try {
    return nc.info?.version ?? null;
  } finally {
    await nc.close();
  }
}

function table(): string {
  const lines = [
    '| adapter | phase | commits | s | commits/s | measure | p50 ms | p95 ms | p99 ms | max ms |',
    '|---|---|---:|---:|---:|---|---:|---:|---:|---:|',
  ];
  for (const r of rows) {
    const l = r.latency;
    lines.push(
      `| ${r.adapter} | ${r.phase} | ${r.commits} | ${r.seconds.toFixed(2)} | ${Math.round(r.throughput)} | ${r.latencyKind ?? '-'} | ${l ? fmt(l.p50) : '-'} | ${l ? fmt(l.p95) : '-'} | ${l ? fmt(l.p99) : '-'} | ${l ? fmt(l.max) : '-'} |`,
    );
  }
  return lines.join('\n');
}

async function main() {
  const machine = {
    date: new Date().toISOString(),
    node: process.version,
    os: `${process.platform} ${release()}`,
    cpu: `${cpus().length} x ${cpus()[0]?.model ?? 'unknown'}`,
    memory_gb: Math.round(totalmem() / 1024 ** 3),
    work_dir: workDir,
    nats_url: adapters.includes('nats') ? natsUrl : null,
    nats_server: adapters.includes('nats') ? await natsServerVersion() : null,
    options: { seconds, rate, backlog, concurrency },
  };
  console.log(`Switchyard event-store benchmark  ${JSON.stringify(machine)}`);

  for (const adapter of adapters) {
    const started = performance.now();
    console.log(`\n## ${adapter}`);
    await sequentialDistinct(adapter);
    await sequentialSameStream(adapter);
    await concurrentDistinct(adapter);
    await projectionLag(adapter, 'fixed');
    await projectionLag(adapter, 'full');
    await catchUp(adapter);
    console.log(`[${adapter}] done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  }

  console.log(`\n${table()}\n`);
  if (args.json) {
    const dir = join(import.meta.dirname, 'results');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, `event-store-${machine.date.replace(/[:.]/g, '-')}.json`);
    writeFileSync(file, JSON.stringify({ machine, rows }, null, 2));
    console.log(`results written to ${file}`);
  }
}

void main()
  .then(
    () => 0,
    (error: unknown) => {
      console.error(error);
      return 1;
    },
  )
  .then((code) => {
    rmSync(workDir, { recursive: true, force: true });
    process.exit(code);
  });
