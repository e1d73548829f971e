/**
 * The command bus's state cache (src/commands/decider.ts, decision 0310) on SQLite and on
 * JetStream, with two buses on one log as two instances would be: a bus decides on the state it
 * cached without reading the stream again, but never on a stale one — what the other bus appended
 * meanwhile is always taken into account, for decisions that append and for those that do not.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { z } from 'zod';
import { NatsEventStore } from '../../src/adapters/event-store/nats.js';
import { SqliteEventStore } from '../../src/adapters/event-store/sqlite.js';
import { Metrics } from '../../src/api/metrics.js';
import { CommandBus } from '../../src/commands/bus.js';
import type { Decider } from '../../src/commands/decider.js';
import { ConflictError } from '../../src/errors.js';
import type { EventStore } from '../../src/ports/event-store.js';
import { uniqueSuffix } from '../support/services.js';

/** Tickets, at most 3 out at once; taking one twice is a retry (nothing appended); a returned one may be taken again. */
const Event = z.discriminatedUnion('type', [
  z.object({ type: z.literal('TicketTaken'), data: z.object({ ticket: z.string() }) }),
  z.object({ type: z.literal('TicketReturned'), data: z.object({ ticket: z.string() }) }),
]);
type Event = z.infer<typeof Event>;
type State = { tickets: string[] };
type Command = { ticket: string; give?: boolean };
const tickets: Decider<Command, State, Event> = {
  category: 'tickets',
  initialState: { tickets: [] },
  events: Event,
  decide(command, state) {
    if (command.give) return state.tickets.includes(command.ticket) ? [{ type: 'TicketReturned', data: { ticket: command.ticket } }] : [];
    if (state.tickets.includes(command.ticket)) return [];
    if (state.tickets.length >= 3) throw new ConflictError('sold out', 'sold_out');
    return [{ type: 'TicketTaken', data: { ticket: command.ticket } }];
  },
  evolve: (state, event) => ({ tickets: event.type === 'TicketTaken' ? [...state.tickets, event.data.ticket] : state.tickets.filter((t) => t !== event.data.ticket) }),
};

/** Counts the stream reads a store serves. */
function counting(store: EventStore): { store: EventStore; reads: () => number } {
  let reads = 0;
  const counted = new Proxy(store, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver) as unknown;
      if (key === 'readStream') return (...args: Parameters<EventStore['readStream']>) => (reads++, target.readStream(...args));
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { store: counted, reads: () => reads };
}

const natsEnabled = inject('services').nats;
const natsServers = inject('serviceUrls').nats;

const stores: Array<{ name: string; enabled: boolean; open(): Promise<{ a: EventStore; b: EventStore; close(): Promise<void> }> }> = [
  {
    name: 'sqlite',
    enabled: true,
    async open() {
      const dir = mkdtempSync(join(tmpdir(), 'sy-cache-'));
      const file = join(dir, 'events.db');
      // Two stores on one file: two processes' worth of state.
      const [a, b] = [new SqliteEventStore({ file, pollIntervalMs: 50 }), new SqliteEventStore({ file, pollIntervalMs: 50 })];
      return {
        a,
        b,
        close: async () => {
          await Promise.all([a.close(), b.close()]);
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  },
  {
    name: 'nats',
    enabled: natsEnabled,
    async open() {
      const suffix = uniqueSuffix();
      const options = { servers: natsServers, streamName: `SY_TEST_${suffix}`, subjectPrefix: `sytest.${suffix}` };
      const a = await NatsEventStore.connect(options);
      const b = await NatsEventStore.connect(options);
      return {
        a,
        b,
        close: async () => {
          await a.deleteStream();
          await Promise.all([a.close(), b.close()]);
        },
      };
    },
  },
];

describe.each(stores)('command state cache ($name)', ({ enabled, open }) => {
  let close: () => Promise<void> = async () => undefined;
  afterEach(async () => close());
  const context = { tenantId: 'default' };

  it.runIf(enabled)('decides on the cached state without reading the stream again', async () => {
    const opened = await open();
    close = opened.close;
    const a = counting(opened.a);
    const bus = new CommandBus(a.store, new Metrics());
    await bus.execute(tickets, 't1', { ticket: 'x' }, context);
    const readsAfterFirst = a.reads();
    const second = await bus.execute(tickets, 't1', { ticket: 'y' }, context);
    expect(a.reads()).toBe(readsAfterFirst);
    expect([second.version, second.state.tickets]).toEqual([2, ['x', 'y']]);
    expect((await opened.a.readStream('tickets-t1')).map((e) => e.data.ticket)).toEqual(['x', 'y']);
  });

  it.runIf(enabled)("takes the other instance's appends into account: for an append, a decision of nothing, and a refusal", async () => {
    const opened = await open();
    close = opened.close;
    const [busA, busB] = [new CommandBus(opened.a, new Metrics()), new CommandBus(opened.b, new Metrics())];
    await busA.execute(tickets, 't2', { ticket: 'x' }, context); // A caches [x]
    await busB.execute(tickets, 't2', { ticket: 'y' }, context); // B appends behind A's back
    // An append decided on A's stale state is refused by the log; A decides again on the stream.
    const appended = await busA.execute(tickets, 't2', { ticket: 'z' }, context);
    expect([appended.version, appended.state.tickets]).toEqual([3, ['x', 'y', 'z']]);

    await busA.execute(tickets, 't3', { ticket: 'x' }, context); // A caches [x]
    await busB.execute(tickets, 't3', { ticket: 'x', give: true }, context); // B returns x
    // "Already taken" on A's cache is decided again on the stream: x is free, so it is taken.
    const retaken = await busA.execute(tickets, 't3', { ticket: 'x' }, context);
    expect([retaken.events, retaken.version, retaken.state.tickets]).toEqual([[{ type: 'TicketTaken', data: { ticket: 'x' } }], 3, ['x']]);

    for (const ticket of ['a', 'b', 'c']) await busA.execute(tickets, 't4', { ticket }, context); // A caches [a, b, c]: sold out
    await busB.execute(tickets, 't4', { ticket: 'a', give: true }, context);
    // "Sold out" on A's cache is decided again on the stream: a came back, d is taken.
    expect((await busA.execute(tickets, 't4', { ticket: 'd' }, context)).state.tickets).toEqual(['b', 'c', 'd']);
    // A refusal that stands on the stream is given.
    await expect(busA.execute(tickets, 't4', { ticket: 'e' }, context)).rejects.toMatchObject({ code: 'sold_out' });
    expect((await opened.b.readStream('tickets-t4')).map((e) => [e.type, e.data.ticket])).toEqual([
      ['TicketTaken', 'a'],
      ['TicketTaken', 'b'],
      ['TicketTaken', 'c'],
      ['TicketReturned', 'a'],
      ['TicketTaken', 'd'],
    ]);
    // Another tenant still finds nothing there, cache or not.
    await expect(busA.execute(tickets, 't4', { ticket: 'e' }, { tenantId: 'other' })).rejects.toMatchObject({ code: 'tickets_not_found' });
  });
});
