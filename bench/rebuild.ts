/**
 * Rebuild benchmark: `switchyard projections rebuild --all` on a long log, and the start that
 * follows it.
 *
 *   npx tsx bench/rebuild.ts [--events N] [--batch B] [--users U] [--dist] [--compare] [--dir PATH] [--json]
 *
 * Seeds an installation: starts Switchyard in this process (embedded, or with --dist on NATS
 * JetStream + MariaDB + Redis, in a fresh stream, database and key prefix), makes U users through
 * the admin API, an API key and a credit top-up for each, and a default price (so every usage
 * event is charged: a ledger row and a balance), then stops it and appends N UsageRecorded events
 * of those users and keys straight to the log in commits of B events, as the relay's usage
 * publisher writes them. Then, each in a process of its own (so that its peak RSS is its own):
 *
 *   separate rebuilds   (--compare) `projections rebuild <name>` for each projection in turn:
 *                       one read of the log per projection, as `rebuild all` did before
 *   rebuild all         `projections rebuild all` (the same as `--all`; this spelling also runs
 *                       on the code before the shared rebuild, for a before/after comparison)
 *   start after rebuild `createApp` (what `switchyard serve` runs) until every projection and
 *                       every live view has reached the head: what a restart after a rebuild costs
 *   start again         the same once more: a restart with nothing to catch up, the baseline
 *
 * Reported: wall time of each (for the CLI, the time it prints itself, and the process's), peak
 * RSS of its process (getrusage maxrss: every thread, the projector thread included), and for the
 * starts the lowest checkpoint before the start (where the catch-up began) against the head.
 * Compare the phases of one run; figures go to docs/benchmarks.md with the machine and command.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { openEventStore } from '../src/adapters/index.js';
import { openSqlDatabase } from '../src/adapters/sql/database.js';
import { createApp } from '../src/app.js';
import type { UsageData } from '../src/commands/usage/events.js';
import { loadConfig, type Config } from '../src/config.js';
import { timeOrderedUuid } from '../src/ids.js';
import { createLogger } from '../src/logger.js';
import { projectionsOf } from '../src/projections/index.js';

const { values: args } = parseArgs({
  options: {
    events: { type: 'string', default: '100000' },
    batch: { type: 'string', default: '200' },
    users: { type: 'string', default: '50' },
    dist: { type: 'boolean', default: false },
    compare: { type: 'boolean', default: false },
    dir: { type: 'string' },
    json: { type: 'boolean', default: false },
    phase: { type: 'string' },
  },
});

const ADMIN = { email: 'bench-admin@switchyard.bench', password: 'bench-admin-password' };
const MODELS = ['gpt-4o-mini', 'claude-3-5-haiku', 'gemini-2.0-flash', 'mistral-small'];
/** Printed by every child process at exit (stderr): its peak resident set. */
const RSS_HOOK = `data:text/javascript,process.on('exit',()=>process.stderr.write('\\nBENCH_MAXRSS_KB '+process.resourceUsage().maxRSS+'\\n'))`;

function benchEnv(dataDir: string, suffix: string): Record<string, string> {
  const env: Record<string, string> = {
    SECRET: 'bench-secret-0123456789-abcdefghij',
    HOST: '127.0.0.1',
    SERVER_PORT: '0',
    METRICS_PORT: '0',
    LOG_LEVEL: 'warn',
    DATA_DIR: dataDir,
    ADMIN_EMAIL: ADMIN.email,
    ADMIN_PASSWORD: ADMIN.password,
    HEALTH_CHECK_ENABLED: 'false',
  };
  if (args.dist) {
    Object.assign(env, {
      NATS_URL: process.env.BENCH_NATS_URL ?? 'nats://127.0.0.1:4222',
      NATS_STREAM: `SYBENCH_${suffix}`,
      SQLDB_HOST: process.env.BENCH_MYSQL_HOST ?? '127.0.0.1',
      SQLDB_DIALECT: 'mysql',
      SQLDB_NAME: `sy_bench_${suffix}`,
      CACHE_HOST: process.env.BENCH_REDIS_HOST ?? '127.0.0.1',
      CACHE_PREFIX: `sybench-${suffix}:`,
    });
  }
  return env;
}

// ---------------------------------------------------------------------------------------------
// Seeding
// ---------------------------------------------------------------------------------------------

async function api(url: string, token: string, body: unknown, method = 'POST'): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(url, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

function expectStatus(what: string, res: { status: number; json: unknown }, status: number) {
  if (res.status !== status) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.json)}`);
}

/** Users with a key and credits each, and a default price, through the admin API. */
async function seedAccounts(config: Config): Promise<Array<{ userId: string; keyId: string }>> {
  const app = await createApp(config, createLogger('warn'));
  try {
    const { url } = await app.listen();
    const login = await fetch(`${url}/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) });
    const token = ((await login.json()) as { access_token: string }).access_token;
    expectStatus('price', await api(`${url}/v1/admin/pricing/default`, token, { input_price: '0.15', output_price: '0.6' }, 'PUT'), 200);
    const accounts: Array<{ userId: string; keyId: string }> = [];
    for (let i = 0; i < Number(args.users); i++) {
      const user = await api(`${url}/v1/admin/users`, token, { email: `bench-${i}@switchyard.bench`, password: 'bench-user-password' });
      expectStatus('user', user, 201);
      const userId = user.json.id as string;
      const key = await api(`${url}/api/admin/keys`, token, { name: `bench-${i}`, user_id: userId });
      expectStatus('key', key, 201);
      expectStatus('top-up', await api(`${url}/v1/admin/credits/${userId}/topup`, token, { amount: '1000000', reason: 'bench' }), 200);
      accounts.push({ userId, keyId: key.json.id as string });
    }
    return accounts;
  } finally {
    await app.close();
  }
}

function usageEvent(i: number, account: { userId: string; keyId: string }, startedAt: number): UsageData {
  const failed = i % 50 === 0;
  const prompt = failed ? 0 : 20 + (i % 400);
  const completion = failed ? 0 : 5 + (i % 300);
  const model = MODELS[i % MODELS.length]!;
  return {
    request_id: timeOrderedUuid(startedAt),
    tenant_id: 'default',
    user_id: account.userId,
    key_id: account.keyId,
    channel_id: 'bench-channel',
    provider: 'openai',
    model_requested: model,
    model_served: model,
    model_routed: model,
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
    started_at: new Date(startedAt).toISOString(),
  };
}

/** N usage events appended to the log in commits of B, several commits in flight. */
async function seedUsage(config: Config, accounts: Array<{ userId: string; keyId: string }>): Promise<number> {
  const store = await openEventStore(config.eventStore);
  try {
    const events = Number(args.events);
    const batch = Number(args.batch);
    const start = Date.now() - events * 20;
    const streams = 8; // as several instances' publishers would: appends to different streams overlap
    const versions = new Array<number>(streams).fill(0);
    let next = 0;
    const worker = async (s: number) => {
      for (;;) {
        const from = next;
        if (from >= events) return;
        next += batch;
        const commit = [];
        for (let i = from; i < Math.min(events, from + batch); i++) commit.push({ id: timeOrderedUuid(), type: 'UsageRecorded', data: usageEvent(i, accounts[i % accounts.length]!, start + i * 20) });
        versions[s] = (await store.append(`usage-bench${s}`, commit, { expectedVersion: versions[s]!, tenantId: 'default' })).version;
      }
    };
    await Promise.all(Array.from({ length: streams }, (_, s) => worker(s)));
    return await store.headPosition();
  } finally {
    await store.close();
  }
}

// ---------------------------------------------------------------------------------------------
// Phases (child processes)
// ---------------------------------------------------------------------------------------------

interface PhaseResult {
  wallMs: number;
  maxRssMb: number;
  stdout: string;
}

/** Runs `script` with tsx in a child process and the RSS hook; its wall time and peak RSS. */
async function child(script: string, scriptArgs: string[], env: Record<string, string>): Promise<PhaseResult> {
  const started = performance.now();
  const proc = spawn(process.execPath, ['--import', 'tsx', '--import', RSS_HOOK, script, ...scriptArgs], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((resolve) => proc.on('close', resolve));
  const wallMs = performance.now() - started;
  if (code !== 0) throw new Error(`${script} ${scriptArgs.join(' ')} exited ${code}:\n${stderr.slice(-4000)}`);
  const rss = /BENCH_MAXRSS_KB (\d+)/.exec(stderr);
  return { wallMs, maxRssMb: rss ? Number(rss[1]) / 1024 : NaN, stdout };
}

/** The start phase, run in a child: createApp until every projection and live view is at the head. */
async function startPhase(): Promise<void> {
  const config = loadConfig(process.env);
  const sql = await openSqlDatabase(config.readModels);
  const checkpoints = await sql.db.selectFrom('projection_checkpoints').select(['name', 'position']).execute();
  await sql.close();
  const lowest = Math.min(...checkpoints.map((c) => c.position));
  const started = performance.now();
  const app = await createApp(config, createLogger('warn'));
  const createdMs = performance.now() - started;
  const head = await app.ctx.store.headPosition();
  await Promise.all([app.ctx.runner.waitFor(head, { timeoutMs: 3_600_000 }), app.ctx.views.waitFor(head, 3_600_000)]);
  const caughtUpMs = performance.now() - started;
  await app.close();
  console.log(JSON.stringify({ createdMs, caughtUpMs, lowestCheckpoint: lowest, head }));
}

// ---------------------------------------------------------------------------------------------

const mb = (n: number) => `${n.toFixed(0)} MB`;
const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

async function main() {
  if (args.phase === 'start') return startPhase();
  const suffix = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  const root = args.dir ?? tmpdir();
  mkdirSync(root, { recursive: true });
  const dataDir = mkdtempSync(join(root, 'sy-bench-rebuild-'));
  const env = benchEnv(dataDir, suffix);
  const config = loadConfig(env);
  const rows: Array<{ phase: string; wall: string; inner: string; rss: string; note: string }> = [];
  const results: Record<string, unknown> = { events: Number(args.events), batch: Number(args.batch), users: Number(args.users), mode: args.dist ? 'distributed' : 'embedded' };
  try {
    let t = performance.now();
    const accounts = await seedAccounts(config);
    const head = await seedUsage(config, accounts);
    console.log(`seeded ${args.events} usage events (${accounts.length} users with a key and credits), head ${head}, in ${s(performance.now() - t)}`);
    const cli = join(process.cwd(), 'src', 'cli.ts');
    const names = projectionsOf(config).map((p) => p.name);

    if (args.compare) {
      let wallMs = 0;
      let inner = 0;
      let rss = 0;
      for (const name of names) {
        const r = await child(cli, ['projections', 'rebuild', name], env);
        wallMs += r.wallMs;
        inner += Number(/in (\d+) ms/.exec(r.stdout)?.[1] ?? NaN);
        rss = Math.max(rss, r.maxRssMb);
        console.log(`  rebuild ${name}: ${r.stdout.trim()} (process ${s(r.wallMs)}, ${mb(r.maxRssMb)})`);
      }
      rows.push({ phase: `separate rebuilds (${names.length} processes)`, wall: s(wallMs), inner: s(inner), rss: mb(rss), note: 'one read of the log per projection' });
      results.separate = { wallMs, innerMs: inner, maxRssMb: rss };
    }

    t = performance.now();
    const all = await child(cli, ['projections', 'rebuild', 'all'], env);
    const allInner = Number(/in (\d+) ms/.exec(all.stdout)?.[1] ?? NaN);
    console.log(`  ${all.stdout.trim()}`);
    rows.push({ phase: 'rebuild all', wall: s(all.wallMs), inner: s(allInner), rss: mb(all.maxRssMb), note: 'one read of the log' });
    results.rebuildAll = { wallMs: all.wallMs, innerMs: allInner, maxRssMb: all.maxRssMb };

    for (const phase of ['start after rebuild', 'start again']) {
      const r = await child(join(process.cwd(), 'bench', 'rebuild.ts'), ['--phase', 'start'], env);
      const inner = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { createdMs: number; caughtUpMs: number; lowestCheckpoint: number; head: number };
      rows.push({ phase, wall: s(r.wallMs), inner: s(inner.caughtUpMs), rss: mb(r.maxRssMb), note: `catch-up from ${inner.lowestCheckpoint} of ${inner.head}` });
      results[phase === 'start again' ? 'startAgain' : 'startAfterRebuild'] = { wallMs: r.wallMs, ...inner, maxRssMb: r.maxRssMb };
    }

    console.log(`\n${results.mode}, ${args.events} usage events in commits of ${args.batch}, ${args.users} users\n`);
    console.log('| phase | process wall | own figure | peak RSS | |');
    console.log('|---|---|---|---|---|');
    for (const r of rows) console.log(`| ${r.phase} | ${r.wall} | ${r.inner} | ${r.rss} | ${r.note} |`);
    if (args.json) {
      mkdirSync(join('bench', 'results'), { recursive: true });
      const file = join('bench', 'results', `rebuild-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
      writeFileSync(file, JSON.stringify(results, null, 2));
      console.log(`\nwritten to ${file}`);
    }
  } finally {
    await cleanup(config).catch((error: unknown) => console.error('cleanup failed:', error));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Removes the JetStream stream and the database a --dist run made (embedded: the temp dir goes). */
async function cleanup(config: Config) {
  if (!args.dist) return;
  if (config.eventStore.kind === 'nats') {
    const { NatsEventStore } = await import('../src/adapters/event-store/nats.js');
    const store = await NatsEventStore.connect({ servers: config.eventStore.url, streamName: config.eventStore.stream, subjectPrefix: `ev.${config.eventStore.stream}` });
    await store.deleteStream();
    await store.close();
  }
  if (config.readModels.kind === 'mysql') {
    const admin = await openSqlDatabase({ ...config.readModels, database: 'mysql' });
    const { sql } = await import('kysely');
    await sql.raw(`DROP DATABASE IF EXISTS \`${config.readModels.database}\``).execute(admin.db);
    await admin.close();
  }
}

await main();
