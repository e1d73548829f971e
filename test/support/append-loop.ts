/**
 * Child process for the durability test: appends commits as fast as it can and prints each
 * acknowledged one ("stream version position") until it is killed.
 * usage: tsx append-loop.ts sqlite <file> | nats <url> <streamName> <subjectPrefix>
 */
import type { EventStore } from '../../src/ports/event-store.js';

async function open(): Promise<EventStore> {
  const [kind, a, b, c] = process.argv.slice(2);
  if (kind === 'sqlite') {
    const { SqliteEventStore } = await import('../../src/adapters/event-store/sqlite.js');
    return new SqliteEventStore({ file: a! });
  }
  const { NatsEventStore } = await import('../../src/adapters/event-store/nats.js');
  return NatsEventStore.connect({ servers: a!, streamName: b!, subjectPrefix: c! });
}

const store = await open();
for (let i = 0; ; i++) {
  const stream = `dur-${i % 5}`;
  const events = [{ type: 'Written', data: { i, payload: 'p'.repeat(100) } }, { type: 'Written', data: { i, second: true } }];
  const r = await store.append(stream, events, { expectedVersion: 'any', tenantId: 't' });
  process.stdout.write(`${stream} ${r.version} ${r.position}\n`);
}
