/**
 * Usage publishing never loses an event: batches go to the log as single commits; while the store
 * is failing they spool to disk and are published once it answers again, also by the next process.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { SqliteEventStore } from '../../src/adapters/event-store/sqlite.js';
import type { UsageData } from '../../src/commands/usage/events.js';
import type { EventStore } from '../../src/ports/event-store.js';
import { UsagePublisher } from '../../src/relay/usage-publisher.js';
import { uniqueSuffix } from '../support/services.js';

const logger = pino({ level: 'silent' });

function usage(i: number): UsageData {
  return {
    request_id: `req-${i}`,
    tenant_id: 't1',
    user_id: 'u1',
    key_id: null,
    channel_id: 'ch_1',
    provider: 'openai',
    model_requested: 'm',
    model_served: 'm',
    prompt_tokens: i,
    completion_tokens: 1,
    total_tokens: i + 1,
    usage_source: 'upstream',
    stream: false,
    status: 200,
    error_code: null,
    latency_ms: 1,
    ttft_ms: null,
    attempts: 1,
    started_at: new Date().toISOString(),
  };
}

/** The real store behind a switch that makes appends fail, as a bus outage would. */
function switchable(store: EventStore) {
  const wrapper = Object.create(store) as EventStore & { online: boolean };
  wrapper.online = true;
  wrapper.append = (...args) => (wrapper.online ? store.append(...args) : Promise.reject(new Error('bus unreachable')));
  return wrapper;
}

async function recorded(store: EventStore) {
  return (await store.readAll({ after: 0, limit: 10_000 })).flatMap((c) => c.events).map((e) => (e.data as UsageData).request_id);
}

async function eventually(check: () => Promise<boolean>, ms = 5000) {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('usage publisher', () => {
  let dir: string;
  let store: SqliteEventStore;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'sy-usage-'));
    store = new SqliteEventStore({ file: join(dir, 'events.db') });
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('appends many requests as few commits, in order', async () => {
    const publisher = new UsagePublisher(store, logger, { spoolDir: join(dir, 'spool'), flushIntervalMs: 50 });
    for (let i = 0; i < 120; i++) publisher.publish(usage(i));
    await publisher.close();
    const commits = await store.readAll({ after: 0 });
    expect(commits.length).toBeLessThanOrEqual(2);
    expect(await recorded(store)).toEqual(Array.from({ length: 120 }, (_, i) => `req-${i}`));
    expect(commits[0]!.events[0]).toMatchObject({ type: 'UsageRecorded', tenant_id: 't1', stream: publisher.stream });
  });

  it('spools while the store fails and publishes the spool when it is back', async () => {
    const flaky = switchable(store);
    const spoolDir = join(dir, 'spool');
    const publisher = new UsagePublisher(flaky, logger, { spoolDir, flushIntervalMs: 5, retryIntervalMs: 50 });
    flaky.online = false;
    for (let i = 0; i < 5; i++) publisher.publish(usage(i));
    await publisher.flush();
    const spooled = readdirSync(spoolDir).map((f) => readFileSync(join(spoolDir, f), 'utf8')).join('');
    expect(spooled.trim().split('\n')).toHaveLength(5);
    expect(await recorded(store)).toEqual([]);

    flaky.online = true;
    publisher.publish(usage(5));
    await eventually(async () => (await recorded(store)).length === 6);
    expect((await recorded(store)).sort()).toEqual(['req-0', 'req-1', 'req-2', 'req-3', 'req-4', 'req-5']);
    await eventually(async () => readdirSync(spoolDir).length === 0);
    await publisher.close();
  });

  it('publishes a spool a crashed process left behind when the next one starts, showing it to beforeAppend (a failing observer loses nothing)', async () => {
    const spoolDir = join(dir, 'spool');
    const flaky = switchable(store);
    flaky.online = false;
    const first = new UsagePublisher(flaky, logger, { spoolDir, flushIntervalMs: 5, retryIntervalMs: 60_000 });
    for (let i = 0; i < 3; i++) first.publish(usage(i));
    await first.flush(); // spooled; the process "dies" here
    expect(existsSync(join(spoolDir, 'usage.jsonl'))).toBe(true);

    const seen: string[] = [];
    const beforeAppend = (data: UsageData) => {
      seen.push(data.request_id);
      if (data.request_id === 'req-1') throw new Error('observer bug');
    };
    const second = new UsagePublisher(store, logger, { spoolDir, retryIntervalMs: 50, beforeAppend });
    second.start();
    await eventually(async () => (await recorded(store)).length === 3);
    // The file goes once the append is acknowledged, which can be just after the log shows it.
    await eventually(async () => readdirSync(spoolDir).length === 0);
    expect(seen).toEqual(['req-0', 'req-1', 'req-2']);
    await second.close();
  });

  it('shows every event to beforeAppend as it is published, before the store has it, even while the store fails', async () => {
    const flaky = switchable(store);
    const seen: Array<{ id: string; inStore: number }> = [];
    const publisher: UsagePublisher = new UsagePublisher(flaky, logger, {
      spoolDir: join(dir, 'spool'),
      flushIntervalMs: 5,
      retryIntervalMs: 60_000,
      beforeAppend: (data) => seen.push({ id: data.request_id, inStore: publisher.published }),
    });
    publisher.publish(usage(0));
    expect(seen).toEqual([{ id: 'req-0', inStore: 0 }]); // at once, not at the flush
    await publisher.flush();
    flaky.online = false;
    publisher.publish(usage(1)); // spooled at the flush: seen all the same
    await publisher.flush();
    expect(seen.map((e) => e.id)).toEqual(['req-0', 'req-1']);
    expect(await recorded(store)).toEqual(['req-0']);
    await publisher.close();
  });

  it.skipIf(!inject('services').nats)('publishes batches on JetStream', async () => {
    const { NatsEventStore } = await import('../../src/adapters/event-store/nats.js');
    const name = `SYUSAGE_${uniqueSuffix()}`;
    const nats = await NatsEventStore.connect({ servers: inject('serviceUrls').nats, streamName: name, subjectPrefix: `u.${name}` });
    try {
      const publisher = new UsagePublisher(nats, logger, { spoolDir: join(dir, 'spool-nats'), flushIntervalMs: 5 });
      for (let i = 0; i < 50; i++) publisher.publish(usage(i));
      await publisher.flush();
      for (let i = 50; i < 60; i++) publisher.publish(usage(i));
      await publisher.close();
      expect(await recorded(nats)).toEqual(Array.from({ length: 60 }, (_, i) => `req-${i}`));
    } finally {
      await nats.deleteStream();
      await nats.close();
    }
  });
});
