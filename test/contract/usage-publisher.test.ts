/**
 * Usage publishing never loses an event: each is durable in the local journal before publish
 * resolves (group-committed); batches go to the log as single commits; while the store is failing
 * they wait in the journal and go once it answers again, or are replayed, exactly once, by the
 * next process.
 */
import { randomUUID } from 'node:crypto';
import { appendFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { SqliteEventStore } from '../../src/adapters/event-store/sqlite.js';
import type { UsageData } from '../../src/commands/usage/events.js';
import type { EventStore } from '../../src/ports/event-store.js';
import { UsagePublisher } from '../../src/relay/usage-publisher.js';
import { uniqueSuffix } from '../support/services.js';

const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });

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

/** The lines in every journal segment under `dir`. */
function journaled(dir: string): string[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.jsonl') && f !== 'dead-letter.jsonl')
    .flatMap((f) => readFileSync(join(dir, f), 'utf8').split('\n').filter(Boolean));
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
    const publisher = new UsagePublisher(store, logger, { journalDir: join(dir, 'journal'), flushIntervalMs: 50 });
    for (let i = 0; i < 120; i++) void publisher.publish(usage(i));
    await publisher.close();
    const commits = await store.readAll({ after: 0 });
    expect(commits.length).toBeLessThanOrEqual(2);
    expect(await recorded(store)).toEqual(Array.from({ length: 120 }, (_, i) => `req-${i}`));
    expect(commits[0]!.events[0]).toMatchObject({ type: 'UsageRecorded', tenant_id: 't1', stream: publisher.stream });
  });

  it('keeps events in the journal while the store fails and appends them, in order, once it is back', async () => {
    const flaky = switchable(store);
    const journalDir = join(dir, 'journal');
    const publisher = new UsagePublisher(flaky, logger, { journalDir, flushIntervalMs: 5, retryIntervalMs: 50 });
    flaky.online = false;
    await Promise.all(Array.from({ length: 5 }, (_, i) => publisher.publish(usage(i))));
    expect(journaled(journalDir)).toHaveLength(5);
    expect(publisher.depth).toBe(5);
    await new Promise((r) => setTimeout(r, 100));
    expect(await recorded(store)).toEqual([]);

    flaky.online = true;
    await publisher.publish(usage(5));
    await eventually(async () => (await recorded(store)).length === 6);
    expect(await recorded(store)).toEqual(['req-0', 'req-1', 'req-2', 'req-3', 'req-4', 'req-5']);
    await eventually(async () => publisher.depth === 0);
    await publisher.close();
    expect(readdirSync(journalDir).filter((f) => f !== 'dead-letter.jsonl')).toEqual([]);
  });

  it('replays the journal a dead process left, exactly once: events the log already has are not appended again', async () => {
    const journalDir = join(dir, 'journal');
    const flaky = switchable(store);
    const first = new UsagePublisher(flaky, logger, { journalDir, flushIntervalMs: 5, retryIntervalMs: 60_000 });
    await Promise.all(Array.from({ length: 3 }, (_, i) => first.publish(usage(i))));
    await eventually(async () => (await recorded(store)).length === 3); // in the log, still in the journal segment
    flaky.online = false;
    await Promise.all(Array.from({ length: 3 }, (_, i) => first.publish(usage(i + 3))));
    // The process "dies" here: its lock names a pid that is not running.
    first.abandon();
    for (const name of readdirSync(journalDir).filter((f) => f.endsWith('.lock'))) writeFileSync(join(journalDir, name), JSON.stringify({ pid: 2 ** 22 + 7, host: hostname() }));
    expect(journaled(journalDir)).toHaveLength(6);

    const second = new UsagePublisher(store, logger, { journalDir, retryIntervalMs: 50 });
    second.start();
    await eventually(async () => (await recorded(store)).length === 6);
    await eventually(async () => journaled(journalDir).length === 0);
    expect(await recorded(store)).toEqual(['req-0', 'req-1', 'req-2', 'req-3', 'req-4', 'req-5']);
    const events = (await store.readAll({ after: 0 })).flatMap((c) => c.events);
    expect(new Set(events.map((e) => e.stream))).toEqual(new Set([first.stream])); // its own stream, in its order
    expect(events.map((e) => e.version)).toEqual([1, 2, 3, 4, 5, 6]);
    await second.close();
  });

  it('leaves the journal of a live process alone', async () => {
    const journalDir = join(dir, 'journal');
    const flaky = switchable(store);
    flaky.online = false;
    const live = new UsagePublisher(flaky, logger, { journalDir, retryIntervalMs: 60_000 });
    await live.publish(usage(1));
    const other = new UsagePublisher(store, logger, { journalDir, retryIntervalMs: 50 });
    other.start();
    await new Promise((r) => setTimeout(r, 200));
    expect(await recorded(store)).toEqual([]);
    expect(journaled(journalDir)).toHaveLength(1);
    await other.close();
    flaky.online = true;
    await live.close();
    expect(await recorded(store)).toEqual(['req-1']);
  });

  it('skips a torn last line left by a crash mid-write', async () => {
    const journalDir = join(dir, 'journal');
    const flaky = switchable(store);
    flaky.online = false;
    const first = new UsagePublisher(flaky, logger, { journalDir, retryIntervalMs: 60_000 });
    await Promise.all([first.publish(usage(0)), first.publish(usage(1))]);
    const segment = readdirSync(journalDir).find((f) => f.endsWith('.jsonl'))!;
    first.abandon();
    appendFileSync(join(journalDir, segment), '{"id":"0190-torn","s":"usage-x","v":3,"d":{"request_');
    for (const name of readdirSync(journalDir).filter((f) => f.endsWith('.lock'))) unlinkSync(join(journalDir, name));

    const second = new UsagePublisher(store, logger, { journalDir, retryIntervalMs: 50 });
    second.start();
    await eventually(async () => (await recorded(store)).length === 2);
    await eventually(async () => journaled(journalDir).length === 0);
    expect(await recorded(store)).toEqual(['req-0', 'req-1']);
    await second.close();
  });

  it.each(['write', 'fsync'] as const)('group-commits (wait %s): many events published together share a few journal writes', async (wait) => {
    const journalDir = join(dir, 'journal');
    const publisher = new UsagePublisher(store, logger, { journalDir, journalWait: wait, journalFsyncMs: 20, flushIntervalMs: 1000, minCommitIntervalMs: 1000 });
    await Promise.all(Array.from({ length: 200 }, (_, i) => publisher.publish(usage(i))));
    expect(journaled(journalDir)).toHaveLength(200);
    expect(publisher.journalCommits).toBeLessThanOrEqual(2);
    await publisher.close();
    expect(await recorded(store)).toHaveLength(200);
  });

  it('rotates segments and removes each one once the log has all of its events', async () => {
    const journalDir = join(dir, 'journal');
    const publisher = new UsagePublisher(store, logger, { journalDir, journalWait: 'fsync', journalFsyncMs: 0, journalSegmentBytes: 2000, flushIntervalMs: 1, minCommitIntervalMs: 1 });
    const segments = new Set<string>();
    for (let i = 0; i < 40; i++) {
      await publisher.publish(usage(i));
      for (const f of readdirSync(journalDir)) if (f.endsWith('.jsonl')) segments.add(f);
    }
    expect(segments.size).toBeGreaterThan(3);
    await eventually(async () => publisher.depth === 0);
    // Only the segment being written remains.
    await eventually(async () => readdirSync(journalDir).filter((f) => f.endsWith('.jsonl')).length <= 1);
    await publisher.close();
    expect(await recorded(store)).toHaveLength(40);
  });

  it('sends an invalid event to the dead-letter file, never to the log', async () => {
    const journalDir = join(dir, 'journal');
    let counted = 0;
    const publisher = new UsagePublisher(store, logger, { journalDir, onDeadLetter: () => counted++ });
    const bad = { ...usage(1), model_routed: {} } as unknown as UsageData;
    await publisher.publish(bad);
    await publisher.publish(usage(2));
    await publisher.close();
    expect(await recorded(store)).toEqual(['req-2']);
    expect(counted).toBe(1);
    const dead = readFileSync(join(journalDir, 'dead-letter.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { data: UsageData; issues: string[] });
    expect(dead).toHaveLength(1);
    expect(dead[0]!.data.request_id).toBe('req-1');
    expect(dead[0]!.issues.join()).toMatch(/model_routed/);
  });

  it('takes the spool of an earlier version into the log once', async () => {
    const spoolDir = join(dir, 'spool');
    mkdirSync(spoolDir);
    writeFileSync(join(spoolDir, 'usage.jsonl'), [usage(7), usage(8)].map((d) => JSON.stringify({ id: randomUUID(), data: d })).join('\n') + '\n');
    const publisher = new UsagePublisher(store, logger, { journalDir: join(dir, 'journal'), legacySpoolDir: spoolDir, flushIntervalMs: 5 });
    publisher.start();
    await eventually(async () => (await recorded(store)).length === 2);
    await eventually(async () => readdirSync(spoolDir).length === 0);
    await publisher.close();
    expect(await recorded(store)).toEqual(['req-7', 'req-8']);
  });

  it('shows every event to its sinks as it is published, before the store has it, even while the store fails', async () => {
    const flaky = switchable(store);
    const seen: Array<{ id: string; inStore: number }> = [];
    const publisher: UsagePublisher = new UsagePublisher(flaky, logger, {
      journalDir: join(dir, 'journal'),
      flushIntervalMs: 5,
      retryIntervalMs: 60_000,
    });
    publisher.addSink('test', (data) => seen.push({ id: data.request_id, inStore: publisher.published }));
    void publisher.publish(usage(0));
    expect(seen).toEqual([{ id: 'req-0', inStore: 0 }]); // at once, not at the flush
    await publisher.flush();
    flaky.online = false;
    await publisher.publish(usage(1)); // journaled: seen all the same
    expect(seen.map((e) => e.id)).toEqual(['req-0', 'req-1']);
    expect(await recorded(store)).toEqual(['req-0']);
    await publisher.close();
  });

  it('logs a failing sink under its name and still journals, appends and hands the event to the other sinks', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const capture = pino({ level: 'error' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
    const publisher = new UsagePublisher(store, capture, { journalDir: join(dir, 'journal'), flushIntervalMs: 5 });
    const seen: string[] = [];
    publisher.addSink('broken', () => {
      throw new Error('sink down');
    });
    publisher.addSink('working', (data) => seen.push(data.request_id));
    await publisher.publish(usage(0));
    await publisher.close();
    expect(seen).toEqual(['req-0']);
    expect(await recorded(store)).toEqual(['req-0']);
    expect(lines).toEqual([expect.objectContaining({ sink: 'broken', request_id: 'req-0', msg: 'usage sink failed' })]);
  });

  it.skipIf(!inject('services').nats)('publishes batches on JetStream', async () => {
    const { NatsEventStore } = await import('../../src/adapters/event-store/nats.js');
    const name = `SYUSAGE_${uniqueSuffix()}`;
    const nats = await NatsEventStore.connect({ servers: inject('serviceUrls').nats, streamName: name, subjectPrefix: `u.${name}` });
    try {
      const publisher = new UsagePublisher(nats, logger, { journalDir: join(dir, 'journal-nats'), flushIntervalMs: 5 });
      for (let i = 0; i < 50; i++) void publisher.publish(usage(i));
      await publisher.flush();
      for (let i = 50; i < 60; i++) void publisher.publish(usage(i));
      await publisher.close();
      expect(await recorded(nats)).toEqual(Array.from({ length: 60 }, (_, i) => `req-${i}`));
    } finally {
      await nats.deleteStream();
      await nats.close();
    }
  });
});
