/**
 * Usage projections benchmark: what folding the relay's usage events into the read models costs,
 * per event, without a load generator or an upstream sharing the CPU.
 *
 *   npx tsx bench/usage-projections.ts [--events N] [--batch B] [--users U] [--priced] [--db sqlite|mysql|postgres] [--json]
 *
 * Writes N UsageRecorded events (random request ids, U users with an API key each, a few models,
 * some failures) to an embedded SQLite log in commits of B events, as the relay's usage publisher
 * does under load; then runs the real usage, billing and key_usage projections (ProjectionRunner,
 * the same code as the projector thread) from an empty read-model database until they reach the
 * head, and reports events/s and µs per event for each projection alone and for the three
 * together. With --priced the tenant has a price for every model (every event is also charged:
 * a ledger row and a balance), as a tenant that bills its users would.
 *
 * Read-model databases: SQLite in a temp file (default), or MariaDB / PostgreSQL from
 * MYSQL_URL / POSTGRES_URL (defaults: the local test servers), each in a fresh database.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { SqliteEventStore } from '../src/adapters/event-store/sqlite.js';
import type { UsageData } from '../src/commands/usage/events.js';
import { billingProjection } from '../src/projections/billing.js';
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
    db: { type: 'string', default: 'sqlite' },
    json: { type: 'boolean', default: false },
  },
});

const EVENTS = Number(args.events);
const BATCH = Number(args.batch);
const USERS = Number(args.users);
const TENANT = 'bench-tenant';
const MODELS = ['gpt-4o-mini', 'claude-3-5-haiku', 'gemini-2.0-flash', 'mistral-small'];

function usageEvent(i: number, startedAt: Date): UsageData {
  const user = i % USERS;
  const failed = i % 50 === 0;
  const prompt = failed ? 0 : 20 + (i % 400);
  const completion = failed ? 0 : 5 + (i % 300);
  return {
    request_id: randomUUID(),
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

async function fillLog(store: SqliteEventStore): Promise<number> {
  if (args.priced) {
    const prices = MODELS.map((model, i) => ({ type: 'ModelPriceSet', data: { model, input_per_1m_micro: 150_000 * (i + 1), output_per_1m_micro: 600_000 * (i + 1), per_request_micro: 0, by: null } }));
    await store.append(`pricing-${TENANT}`, prices, { expectedVersion: 0, tenantId: TENANT });
  }
  const start = Date.parse('2026-11-20T00:00:00Z');
  let version = 0;
  for (let i = 0; i < EVENTS; i += BATCH) {
    const events = [];
    for (let j = i; j < Math.min(EVENTS, i + BATCH); j++) events.push({ type: 'UsageRecorded', data: usageEvent(j, new Date(start + j * 20)) });
    version = (await store.append(`usage-bench`, events, { expectedVersion: version, tenantId: TENANT })).version;
  }
  return store.headPosition();
}

async function project(store: SqliteEventStore, head: number, projections: Projection[]): Promise<{ seconds: number }> {
  const { sql, cleanup } = await freshDatabase(args.db as Dialect, {
    mysql: process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test',
    postgres: process.env.POSTGRES_URL ?? 'postgres://root@127.0.0.1:5432/test',
  });
  try {
    const runner = new ProjectionRunner(store, sql.db, projections, pino({ level: 'warn' }));
    const started = performance.now();
    await runner.start();
    await runner.waitFor(head, { timeoutMs: 600_000 });
    const seconds = (performance.now() - started) / 1000;
    await runner.stop();
    return { seconds };
  } finally {
    await cleanup();
  }
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'sy-bench-usage-'));
  const store = new SqliteEventStore({ file: join(dir, 'events.db') });
  try {
    const head = await fillLog(store);
    console.log(`log: ${EVENTS} usage events in commits of ${BATCH}, ${USERS} users/keys, ${args.priced ? 'priced' : 'unpriced'}; read models: ${args.db}`);
    const rows: Array<{ projections: string; seconds: number; eventsPerSecond: number; usPerEvent: number }> = [];
    const sets: Array<[string, Projection[]]> = [
      ['usage', [usageProjection]],
      ['billing', [billingProjection]],
      ['key_usage', [keyUsageProjection]],
      ['all three', [usageProjection, billingProjection, keyUsageProjection]],
    ];
    for (const [name, projections] of sets) {
      const { seconds } = await project(store, head, projections);
      const row = { projections: name, seconds, eventsPerSecond: EVENTS / seconds, usPerEvent: (seconds * 1e6) / EVENTS };
      rows.push(row);
      console.log(`${name.padEnd(10)} ${seconds.toFixed(2)} s  ${Math.round(row.eventsPerSecond)} events/s  ${row.usPerEvent.toFixed(1)} µs/event`);
    }
    console.log('\n| projections | events/s | µs per event |\n|---|---:|---:|');
    for (const r of rows) console.log(`| ${r.projections} | ${Math.round(r.eventsPerSecond)} | ${r.usPerEvent.toFixed(1)} |`);
    if (args.json) {
      const out = join(import.meta.dirname, 'results');
      mkdirSync(out, { recursive: true });
      writeFileSync(join(out, `usage-projections-${new Date().toISOString().replace(/[:.]/g, '-')}.json`), JSON.stringify({ events: EVENTS, batch: BATCH, users: USERS, priced: args.priced, db: args.db, rows }, null, 2));
    }
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

void main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
