/**
 * The log index (issue 19): search over 1,000,000 entries (target < 300 ms p50 on SQLite and on
 * MariaDB) and an export of all of them (a steady rate, flat RSS).
 *
 *   npx tsx bench/logs.ts [--db sqlite|mysql|all] [--entries N] [--requests R] [--no-export] [--no-http]
 *
 * A real Switchyard is started per database (embedded SQLite; or read models on MariaDB, MYSQL_URL,
 * default the local server, a fresh database dropped at the end) and N entries (default 1,000,000)
 * of a realistic mix are written into its index through the index's own insert (`insertLogRows`,
 * 1,000 rows a statement batch, in transactions of 10,000): 30 days, five categories, levels
 * mostly INFO, 16 components, 50 tenants (10 % system entries), 2,000 users, 20,000 addresses
 * (IPv4 and IPv6), messages of ~12 words from a 300-word vocabulary plus ids, details with a model,
 * a status, a latency and a host.
 *
 * Searches: R requests per kind (default 60, after 5 unmeasured), each with other words / tenants
 * / addresses, through the real query functions (findLogEntries, the route's query plan), first
 * page of 100:
 *   - text, operator: one word of the vocabulary, all tenants
 *   - text, 2 words, admin: two words, one tenant
 *   - text rare + filters: a word of ~1 % of entries, level >= WARNING, a 7-day range
 *   - filters: level >= ERROR, one component, 7 days
 *   - ip wildcard: `10.<n>.*`
 *   - user: one user's entries
 *   - list: level >= WARNING, last 24 h (GET /api/admin/logs)
 *   - page 5: the fifth page of a one-word text search, by cursor
 * Then the same text and wildcard searches once more over HTTP (POST /api/admin/logs/search, one
 * keep-alive connection), and an export of every entry (json) through the real export generator,
 * read as fast as it comes, with rows/s per second and RSS sampled every 250 ms; then the same
 * export over HTTP (csv), read by an HTTP client.
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Agent, request } from 'undici';
import type { LogCategory, LogEntry, LogLevel } from '../src/logs/entry.js';
import { exportChunks } from '../src/logs/index/export.js';
import { findLogEntries } from '../src/logs/index/queries.js';
import { ipPatternOf, textTermsOf, type LogQuery } from '../src/logs/index/search.js';
import { insertLogRows, rowOf } from '../src/logs/index/sql-index.js';
import { startApp, type RunningApp } from '../test/support/app.js';
import { readModelConfig } from '../test/support/databases.js';
import { percentile } from './stats.js';

const { values: args } = parseArgs({
  options: {
    db: { type: 'string', default: 'all' },
    entries: { type: 'string', default: '1000000' },
    requests: { type: 'string', default: '60' },
    'no-export': { type: 'boolean', default: false },
    'no-http': { type: 'boolean', default: false },
  },
});
const ENTRIES = Number(args.entries);
const REQUESTS = Number(args.requests);
const WARMUP = 5;
const urls = { mysql: process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test', postgres: '' };

// ---- A deterministic mix (a small PRNG: the same entries on every run and database).
let seed = 0x2f6b_1d3a;
const random = () => {
  seed ^= seed << 13;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  return (seed >>> 0) / 4_294_967_296;
};
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
const weighted = <T>(items: ReadonlyArray<readonly [T, number]>): T => {
  let r = random() * items.reduce((s, [, w]) => s + w, 0);
  for (const [item, w] of items) if ((r -= w) < 0) return item;
  return items[0]![0];
};
const VOCABULARY = Array.from({ length: 300 }, (_, i) => {
  const syllables = ['ka', 'lo', 'mi', 'ren', 'tu', 'vas', 'pe', 'dor', 'sin', 'gal', 'fe', 'rim', 'zo', 'nu', 'bel'];
  return `${syllables[i % 15]}${syllables[Math.floor(i / 15) % 15]}${syllables[(i * 7) % 15]}`;
});
/** Zipf-like: low indexes much more frequent (a few words in most messages, most words rare). */
const word = () => VOCABULARY[Math.min(VOCABULARY.length - 1, Math.floor(Math.pow(random(), 2.2) * VOCABULARY.length))]!;
const COMPONENTS = ['database', 'cache', 'bus', 'projections', 'http', 'relay', 'provider:openai', 'provider:anthropic', 'provider:gemini', 'auth', 'keys', 'files', 'jobs', 'resources', 'channels', 'alerts'];
const TENANTS = Array.from({ length: 50 }, (_, i) => `ten_${i.toString().padStart(3, '0')}`);
const USERS = Array.from({ length: 2000 }, (_, i) => `usr_${i.toString().padStart(5, '0')}`);
const IPS = Array.from({ length: 20_000 }, (_, i) => (i % 5 === 4 ? `2001:db8:${(i % 97).toString(16)}::${(i % 4093).toString(16)}` : `10.${i % 40}.${Math.floor(i / 40) % 256}.${i % 251}`));
const MODELS = ['gpt-4o', 'gpt-4o-mini', 'claude-sonnet', 'gemini-pro', 'llama-70b'];
const START = Date.parse('2026-10-01T00:00:00.000Z');
const SPAN = 30 * 86_400_000;

function entryAt(i: number): LogEntry {
  const level = weighted<LogLevel>([
    ['INFO', 70],
    ['WARNING', 18],
    ['ERROR', 10],
    ['CRITICAL', 1],
    ['DEBUG', 1],
  ]);
  const category = weighted<LogCategory>([
    ['application', 30],
    ['user_activity', 30],
    ['system', 15],
    ['performance', 15],
    ['security', 10],
  ]);
  const words = Array.from({ length: 8 + Math.floor(random() * 8) }, word).join(' ');
  const entry: LogEntry = {
    id: `bench-${i.toString().padStart(8, '0')}`,
    timestamp: new Date(START + Math.floor((i / ENTRIES) * SPAN)).toISOString(),
    level,
    category,
    component: pick(COMPONENTS),
    event: `${pick(['request', 'login', 'key', 'sync', 'check'])}_${pick(['done', 'failed', 'slow', 'changed'])}`,
    message: `${words} req_${Math.floor(random() * 1e9).toString(36)}`,
    details: { model: pick(MODELS), status: pick([200, 200, 200, 400, 429, 500, 502]), latency_ms: Math.floor(random() * 5000), host: `node-${Math.floor(random() * 12)}` },
    instance: `i-${i % 3}`,
  };
  if (random() >= 0.1) entry.tenant_id = pick(TENANTS);
  if (random() < 0.8) entry.user_id = pick(USERS);
  if (random() < 0.7) entry.ip_address = pick(IPS);
  if (random() < 0.5) entry.request_id = `req_${i.toString(36)}`;
  return entry;
}

async function load(s: RunningApp): Promise<number> {
  const db = s.app.ctx.sql.db;
  const started = performance.now();
  const PER_TRANSACTION = 10_000;
  for (let first = 0; first < ENTRIES; first += PER_TRANSACTION) {
    const rows: ReturnType<typeof rowOf>[] = [];
    for (let i = first; i < Math.min(ENTRIES, first + PER_TRANSACTION); i++) rows.push(rowOf(entryAt(i), 'process'));
    await db.transaction().execute((trx) => insertLogRows(trx, rows));
    if ((first / PER_TRANSACTION) % 20 === 19) process.stdout.write(`  loaded ${first + PER_TRANSACTION} (${((performance.now() - started) / 1000).toFixed(0)} s)\n`);
  }
  return (performance.now() - started) / 1000;
}

type Kind = { name: string; query: (n: number) => LogQuery };
const day = (d: number) => new Date(START + d * 86_400_000).toISOString();
const KINDS: Kind[] = [
  { name: 'text, operator, 1 word', query: (n) => ({ tenantId: null, words: textTermsOf(VOCABULARY[n % 40]), order: 'newest', limit: 100 }) },
  { name: 'text, admin, 2 words', query: (n) => ({ tenantId: TENANTS[n % 50]!, words: textTermsOf(`${VOCABULARY[n % 20]} ${VOCABULARY[(n * 3) % 60]}`), order: 'newest', limit: 100 }) },
  { name: 'text rare + level + 7 days', query: (n) => ({ tenantId: null, words: textTermsOf(VOCABULARY[200 + (n % 90)]), minRank: 2, since: day(n % 23), until: day((n % 23) + 7), order: 'newest', limit: 100 }) },
  { name: 'filters: ERROR+, component, 7 days', query: (n) => ({ tenantId: null, minRank: 3, components: [COMPONENTS[n % 16]!], since: day(n % 23), until: day((n % 23) + 7), order: 'newest', limit: 100 }) },
  { name: 'ip wildcard 10.<n>.*', query: (n) => ({ tenantId: null, ip: ipPatternOf(`10.${n % 40}.*`), order: 'newest', limit: 100 }) },
  { name: 'ip wildcard, admin', query: (n) => ({ tenantId: TENANTS[n % 50]!, ip: ipPatternOf(`2001:db8:${(n % 97).toString(16)}:*`), order: 'newest', limit: 100 }) },
  { name: 'user', query: (n) => ({ tenantId: null, userId: USERS[(n * 37) % 2000]!, order: 'newest', limit: 100 }) },
  { name: 'list: WARNING+, last 24 h', query: () => ({ tenantId: null, minRank: 2, since: day(29), order: 'newest', limit: 100 }) },
];

const fmt = (ms: number) => (ms < 10 ? ms.toFixed(1) : ms.toFixed(0));

async function searches(s: RunningApp): Promise<Array<{ name: string; p50: number; p95: number; rows: number }>> {
  const db = s.app.ctx.sql.db;
  const out = [];
  for (const kind of KINDS) {
    const times: number[] = [];
    let rows = 0;
    for (let n = 0; n < WARMUP + REQUESTS; n++) {
      const t = performance.now();
      const page = await findLogEntries(db, kind.query(n));
      if (n >= WARMUP) {
        times.push(performance.now() - t);
        rows += page.rows.length;
      }
    }
    times.sort((x, y) => x - y);
    out.push({ name: kind.name, p50: percentile(times, 50), p95: percentile(times, 95), rows: rows / REQUESTS });
    console.log(`  ${kind.name}: p50 ${fmt(percentile(times, 50))} ms, p95 ${fmt(percentile(times, 95))} ms, ${(rows / REQUESTS).toFixed(0)} rows`);
  }
  // The fifth page of a one-word search, through the cursor.
  const times: number[] = [];
  for (let n = 0; n < WARMUP + Math.min(REQUESTS, 20); n++) {
    let page = await findLogEntries(db, KINDS[0]!.query(n));
    const t = performance.now();
    for (let p = 2; p <= 5 && page.next; p++) page = await findLogEntries(db, { ...KINDS[0]!.query(n), after: page.next });
    if (n >= WARMUP) times.push((performance.now() - t) / 4);
  }
  times.sort((x, y) => x - y);
  out.push({ name: 'pages 2-5 by cursor (per page)', p50: percentile(times, 50), p95: percentile(times, 95), rows: 100 });
  console.log(`  pages 2-5 by cursor: p50 ${fmt(percentile(times, 50))} ms per page, p95 ${fmt(percentile(times, 95))} ms`);
  return out;
}

async function httpSearches(s: RunningApp): Promise<Array<{ name: string; p50: number; p95: number }>> {
  const agent = new Agent({ connections: 1 });
  const out = [];
  const bodies: Array<[string, (n: number) => unknown]> = [
    ['HTTP text, operator, 1 word', (n) => ({ query: VOCABULARY[n % 40] })],
    ['HTTP text, 2 words, WARNING+', (n) => ({ query: `${VOCABULARY[n % 20]} ${VOCABULARY[(n * 3) % 60]}`, filters: { level: 'WARNING' } })],
    ['HTTP ip wildcard', (n) => ({ filters: { ip_address: `10.${n % 40}.*` } })],
  ];
  for (const [name, body] of bodies) {
    const times: number[] = [];
    for (let n = 0; n < WARMUP + REQUESTS; n++) {
      const t = performance.now();
      const res = await request(`${s.url}/api/admin/logs/search`, { dispatcher: agent, method: 'POST', headers: { authorization: `Bearer ${s.adminToken}`, 'content-type': 'application/json' }, body: JSON.stringify(body(n)) });
      const text = await res.body.text();
      if (res.statusCode !== 200) throw new Error(`search answered ${res.statusCode}: ${text}`);
      if (n >= WARMUP) times.push(performance.now() - t);
    }
    times.sort((x, y) => x - y);
    out.push({ name, p50: percentile(times, 50), p95: percentile(times, 95) });
    console.log(`  ${name}: p50 ${fmt(percentile(times, 50))} ms, p95 ${fmt(percentile(times, 95))} ms`);
  }
  await agent.close();
  return out;
}

interface ExportFigures {
  how: string;
  seconds: number;
  rows: number;
  bytes: number;
  rate: { min: number; median: number; max: number };
  rssMb: { start: number; min: number; max: number };
}

/** Reads an export, counting rows (one per page of 1,000 from the generator; lines over HTTP) per second and sampling RSS. */
async function measureExport(how: string, chunks: AsyncIterable<string | Uint8Array>, rowsOf: (chunk: string | Uint8Array) => number): Promise<ExportFigures> {
  const rss: number[] = [];
  const rssStart = process.memoryUsage.rss() / 1e6;
  const sampler = setInterval(() => rss.push(process.memoryUsage.rss() / 1e6), 250);
  const perSecond: number[] = [];
  let rows = 0;
  let bytes = 0;
  let windowStart = performance.now();
  let windowRows = 0;
  const started = performance.now();
  let lastSample = performance.now();
  for await (const chunk of chunks) {
    // Sampled here too: with SQLite the queries are synchronous and the export's awaits are
    // microtasks only, so the interval never fires while it runs.
    if (performance.now() - lastSample >= 250) {
      rss.push(process.memoryUsage.rss() / 1e6);
      lastSample = performance.now();
    }
    const n = rowsOf(chunk);
    rows += n;
    windowRows += n;
    bytes += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length;
    const now = performance.now();
    if (now - windowStart >= 1000) {
      perSecond.push((windowRows * 1000) / (now - windowStart));
      windowStart = now;
      windowRows = 0;
    }
  }
  clearInterval(sampler);
  const seconds = (performance.now() - started) / 1000;
  const sorted = [...perSecond].sort((x, y) => x - y);
  const figures = {
    how,
    seconds,
    rows,
    bytes,
    rate: { min: sorted[0] ?? NaN, median: percentile(sorted, 50), max: sorted.at(-1) ?? NaN },
    rssMb: { start: rssStart, min: Math.min(...rss), max: Math.max(...rss) },
  };
  console.log(
    `  export ${how}: ${rows} rows, ${(bytes / 1e6).toFixed(0)} MB in ${seconds.toFixed(1)} s; rows/s per second min ${figures.rate.min.toFixed(0)}, median ${figures.rate.median.toFixed(0)}, max ${figures.rate.max.toFixed(0)}; RSS ${rssStart.toFixed(0)} MB at start, ${figures.rssMb.min.toFixed(0)}–${figures.rssMb.max.toFixed(0)} MB during (${rss.length} samples)`,
  );
  return figures;
}

async function exports(s: RunningApp, http: boolean): Promise<ExportFigures[]> {
  const db = s.app.ctx.sql.db;
  const range = { since: day(0), until: day(31) };
  const out = [await measureExport('json, export generator', exportChunks(db, { tenantId: null, ...range }, 'json'), (chunk) => (chunk.length > 100 ? 1000 : 0))];
  if (http) {
    const res = await request(`${s.url}/api/admin/logs/export`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ date_range: { start: range.since, end: range.until }, format: 'csv' }),
    });
    if (res.statusCode !== 200) throw new Error(`export answered ${res.statusCode}: ${await res.body.text()}`);
    let lines = 0;
    out.push(
      await measureExport('csv over HTTP', res.body, (chunk) => {
        const buffer = chunk as Uint8Array;
        let n = 0;
        for (let i = buffer.indexOf(10); i !== -1; i = buffer.indexOf(10, i + 1)) n++;
        lines += n;
        return n;
      }),
    );
    void lines;
  }
  return out;
}

async function run(dialect: 'sqlite' | 'mysql'): Promise<void> {
  console.log(`\n## ${dialect}: ${ENTRIES.toLocaleString('en')} entries`);
  let env: Record<string, string> = { LOG_LEVEL: 'silent' };
  let cleanup = async () => undefined as void;
  if (dialect === 'mysql') {
    const { config, cleanup: drop } = readModelConfig('mysql', urls);
    if (config.kind !== 'mysql') throw new Error('expected a MySQL read model');
    env = { ...env, SQLDB_DIALECT: 'mysql', SQLDB_HOST: config.host, SQLDB_PORT: String(config.port), SQLDB_USER: config.user, SQLDB_PASSWORD: config.password, SQLDB_NAME: config.database };
    cleanup = drop;
  }
  const s = await startApp(env);
  try {
    const seconds = await load(s);
    console.log(`  load: ${seconds.toFixed(0)} s (${(ENTRIES / seconds).toFixed(0)} entries/s)`);
    await searches(s);
    if (!args['no-http']) await httpSearches(s);
    if (!args['no-export']) await exports(s, !args['no-http']);
  } finally {
    await s.close();
    await cleanup();
  }
}

const which = args.db === 'all' ? (['sqlite', 'mysql'] as const) : [args.db as 'sqlite' | 'mysql'];
for (const dialect of which) await run(dialect);
