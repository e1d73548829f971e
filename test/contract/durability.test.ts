/**
 * Killing the process mid-write loses no acknowledged event: a child appends as fast as it can
 * and prints every acknowledged commit; it is SIGKILLed mid-stream; every acknowledged commit
 * must then be in the log, whole (both events of each commit), at the position it was given.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { describe, expect, inject, it } from 'vitest';
import { SqliteEventStore } from '../../src/adapters/event-store/sqlite.js';
import type { EventStore } from '../../src/ports/event-store.js';
import { uniqueSuffix } from '../support/services.js';

const LOOP = join(process.cwd(), 'test', 'support', 'append-loop.ts');

function appendUntilKilled(args: string[], acks: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    // node itself (with tsx as a loader), not the tsx wrapper: SIGKILL must hit the writer, and a
    // wrapper cannot forward SIGKILL, which would leave the writer running forever.
    const child = spawn(process.execPath, ['--import', 'tsx', LOOP, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.split('\n').length > acks) child.kill('SIGKILL');
    });
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('exit', (_code, signal) => {
      if (signal !== 'SIGKILL') reject(new Error(`writer exited by itself: ${err}`));
      // The last line may be cut mid-write: only complete lines are acknowledgements.
      else resolve(out.split('\n').slice(0, -1));
    });
  });
}

async function expectAllAcknowledged(store: EventStore, acked: string[]) {
  expect(acked.length).toBeGreaterThan(100);
  const streams = new Map<string, Map<number, number>>();
  for (const name of ['dur-0', 'dur-1', 'dur-2', 'dur-3', 'dur-4']) {
    streams.set(name, new Map((await store.readStream(name)).map((e) => [e.version, e.position])));
  }
  for (const line of acked) {
    const [stream, version, position] = line.split(' ');
    const events = streams.get(stream!)!;
    expect(events.get(Number(version)), line).toBe(Number(position));
    expect(events.get(Number(version) - 1), `first event of ${line}`).toBe(Number(position));
  }
}

describe('durability under SIGKILL', () => {
  it('sqlite keeps every acknowledged commit', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sy-dur-'));
    try {
      const file = join(dir, 'events.db');
      const acked = await appendUntilKilled(['sqlite', file], 300);
      const store = new SqliteEventStore({ file });
      await expectAllAcknowledged(store, acked);
      await store.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.skipIf(!inject('services').nats)('nats keeps every acknowledged commit', async () => {
    const url = inject('serviceUrls').nats;
    const name = `SYDUR_${uniqueSuffix()}`;
    const prefix = `dur.${name}`;
    const acked = await appendUntilKilled(['nats', url, name, prefix], 300);
    const { NatsEventStore } = await import('../../src/adapters/event-store/nats.js');
    const store = await NatsEventStore.connect({ servers: url, streamName: name, subjectPrefix: prefix });
    try {
      await expectAllAcknowledged(store, acked);
    } finally {
      await store.close();
      const nc = await connect({ servers: url });
      await (await jetstreamManager(nc)).streams.delete(name).catch(() => undefined);
      await nc.close();
    }
  });
});
