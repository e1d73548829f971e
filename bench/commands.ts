/**
 * Command handling benchmark: the time and CPU one command takes through `handleCommand`, with and
 * without the command bus's state cache (decision 0310), on each event store.
 *
 *   npx tsx bench/commands.ts [--adapter sqlite|nats|all] [--commands N] [--streams S] [--rounds R]
 *
 * N commands (default 600), one event each, spread round-robin over S streams (default 30), so
 * every stream grows to N/S events as the run goes; the two variants alternate R times (default 2)
 * on streams of their own. nats: BENCH_NATS_URL (default nats://127.0.0.1:4222), on a JetStream
 * stream of its own that is deleted afterwards. Prints a markdown table; figures go to
 * docs/benchmarks.md.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { NatsEventStore } from '../src/adapters/event-store/nats.js';
import { SqliteEventStore } from '../src/adapters/event-store/sqlite.js';
import { handleCommand, StateCache, type Decider } from '../src/commands/decider.js';
import type { EventStore } from '../src/ports/event-store.js';

const { values: args } = parseArgs({
  options: {
    adapter: { type: 'string', default: 'all' },
    commands: { type: 'string', default: '600' },
    streams: { type: 'string', default: '30' },
    rounds: { type: 'string', default: '2' },
  },
});
const COMMANDS = Number(args.commands);
const STREAMS = Number(args.streams);
const ROUNDS = Number(args.rounds);

const Added = z.object({ type: z.literal('Added'), data: z.object({ n: z.number() }) });
const counter: Decider<{ n: number }, { total: number }, z.infer<typeof Added>> = {
  category: 'benchcounter',
  initialState: { total: 0 },
  events: Added,
  decide: (command) => [{ type: 'Added', data: { n: command.n } }],
  evolve: (state, event) => ({ total: state.total + event.data.n }),
};

async function openStore(adapter: string): Promise<{ store: EventStore; close(): Promise<void> }> {
  if (adapter === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'sy-bench-commands-'));
    const store = new SqliteEventStore({ file: join(dir, 'events.db') });
    return { store, close: async () => (await store.close(), rmSync(dir, { recursive: true, force: true })) };
  }
  const suffix = `${Date.now().toString(36)}${process.pid}`;
  const store = await NatsEventStore.connect({ servers: process.env.BENCH_NATS_URL ?? 'nats://127.0.0.1:4222', streamName: `SY_BENCH_${suffix}`, subjectPrefix: `sybench.${suffix}` });
  return { store, close: async () => (await store.deleteStream(), await store.close()) };
}

async function run(store: EventStore, label: string, cache: StateCache | undefined): Promise<{ ms: number; cpuMs: number }> {
  const started = performance.now();
  const cpu = process.cpuUsage();
  for (let i = 0; i < COMMANDS; i++) await handleCommand(store, counter, `${label}-${i % STREAMS}`, { n: 1 }, { tenantId: 'default' }, {}, cache);
  const used = process.cpuUsage(cpu);
  return { ms: (performance.now() - started) / COMMANDS, cpuMs: (used.user + used.system) / 1000 / COMMANDS };
}

const rows: string[] = [];
for (const adapter of args.adapter === 'all' ? ['sqlite', 'nats'] : [args.adapter]) {
  const { store, close } = await openStore(adapter);
  try {
    const totals = { without: { ms: 0, cpuMs: 0 }, with: { ms: 0, cpuMs: 0 } };
    for (let round = 0; round < ROUNDS; round++) {
      const a = await run(store, `plain${round}`, undefined);
      const b = await run(store, `cached${round}`, new StateCache());
      totals.without.ms += a.ms / ROUNDS;
      totals.without.cpuMs += a.cpuMs / ROUNDS;
      totals.with.ms += b.ms / ROUNDS;
      totals.with.cpuMs += b.cpuMs / ROUNDS;
    }
    const f = (x: number) => x.toFixed(2);
    rows.push(`| ${adapter} | ${f(totals.without.ms)} | ${f(totals.with.ms)} | ${f(totals.without.cpuMs)} | ${f(totals.with.cpuMs)} | ${(totals.without.ms / totals.with.ms).toFixed(1)}x |`);
  } finally {
    await close();
  }
}
console.log(`${COMMANDS} commands over ${STREAMS} streams, ${ROUNDS} rounds\n`);
console.log('| store | ms/command, no cache | ms/command, cache | CPU ms, no cache | CPU ms, cache | faster |');
console.log('|---|---|---|---|---|---|');
for (const row of rows) console.log(row);
