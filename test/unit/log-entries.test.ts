import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { LogEntry } from '../../src/logs/entry.js';
import { entryOfRecord } from '../../src/logs/process-entries.js';
import { LogHub } from '../../src/logs/hub.js';
import { createLogger, logHubOf } from '../../src/logger.js';
import { Thread } from '../../src/threads.js';

/** A logger whose stdout lines are kept, with every entry its hub publishes. */
function capturing(level = 'debug') {
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger(level, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
  const entries: LogEntry[] = [];
  logHubOf(logger).subscribe((entry) => entries.push(entry));
  return { logger, lines, entries };
}

describe('entryOfRecord', () => {
  it('takes the named fields from the record and the rest into details', () => {
    const entry = entryOfRecord(
      { level: 40, time: Date.parse('2026-03-04T05:06:07.089Z'), pid: 1, hostname: 'h', service: 'switchyard', msg: 'login failed', category: 'security', component: 'auth', event: 'login_failed', user_id: 'u-1', tenant_id: 't-1', reqId: 'req-1', ip_address: '10.0.0.1', session_id: 's-1', email: 'a@b.test', reason: 'wrong password' },
      { id: 'id-1', instance: 'i-1' },
    );
    expect(entry).toEqual({
      id: 'id-1',
      timestamp: '2026-03-04T05:06:07.089Z',
      level: 'WARNING',
      category: 'security',
      component: 'auth',
      event: 'login_failed',
      user_id: 'u-1',
      session_id: 's-1',
      tenant_id: 't-1',
      request_id: 'req-1',
      ip_address: '10.0.0.1',
      message: 'login failed',
      details: { email: 'a@b.test', reason: 'wrong password' },
      instance: 'i-1',
    });
    expect(LogEntry.safeParse(entry).success).toBe(true);
  });

  it.each([
    [10, 'DEBUG'],
    [20, 'DEBUG'],
    [30, 'INFO'],
    [40, 'WARNING'],
    [50, 'ERROR'],
    [60, 'CRITICAL'],
  ] as const)('pino level %i is %s', (level, expected) => {
    expect(entryOfRecord({ level, time: 0, msg: 'x' }).level).toBe(expected);
  });

  it('defaults: component app (http with a request id), event log, category system; application for warnings of http, relay and providers', () => {
    const plain = entryOfRecord({ level: 50, time: 0, msg: 'x' });
    expect([plain.category, plain.component, plain.event]).toEqual(['system', 'app', 'log']);
    expect(entryOfRecord({ level: 50, time: 0, msg: 'x', reqId: 'r' })).toMatchObject({ category: 'application', component: 'http', request_id: 'r' });
    expect(entryOfRecord({ level: 30, time: 0, msg: 'x', reqId: 'r' }).category).toBe('system');
    expect(entryOfRecord({ level: 40, time: 0, msg: 'x', component: 'relay' }).category).toBe('application');
    expect(entryOfRecord({ level: 40, time: 0, msg: 'x', component: 'provider:openai' }).category).toBe('application');
    expect(entryOfRecord({ level: 40, time: 0, msg: 'x', component: 'database' }).category).toBe('system');
    // An unknown category is not one: the default applies.
    expect(entryOfRecord({ level: 30, time: 0, msg: 'x', category: 'nonsense' }).category).toBe('system');
  });

  it('scrubs message and details', () => {
    const entry = entryOfRecord({ level: 30, time: 0, msg: 'key sk-abcdefghijklmnop', headers: { authorization: 'Bearer abcdefghijkl' }, messages: [{ content: 'hi' }] });
    expect(JSON.stringify(entry)).not.toMatch(/sk-abcdefghijklmnop|abcdefghijkl"|"hi"/);
  });
});

describe('the process logger publishes entries on its hub', () => {
  it('every record it writes reaches the hub once, as an entry; stdout keeps its pino lines', () => {
    const { logger, lines, entries } = capturing();
    logger.info({ component: 'database', event: 'startup', tables: 3 }, 'opened');
    logger.debug('a debug line');
    logger.trace('below the level: nowhere');
    expect(lines.map((l) => l.msg)).toEqual(['opened', 'a debug line']);
    expect(lines[0]).toMatchObject({ level: 30, component: 'database', tables: 3, service: 'switchyard' });
    expect(entries.map((e) => [e.level, e.category, e.component, e.event, e.message])).toEqual([
      ['INFO', 'system', 'database', 'startup', 'opened'],
      ['DEBUG', 'system', 'app', 'log', 'a debug line'],
    ]);
    expect(entries[0]!.details).toEqual({ tables: 3 });
    for (const entry of entries) expect(LogEntry.safeParse(entry).success).toBe(true);
  });

  it('child loggers share the root hub and their bound fields become the entry fields', () => {
    const { logger, entries } = capturing();
    const security = logger.child({ category: 'security', component: 'auth' });
    expect(logHubOf(security)).toBe(logHubOf(logger));
    security.child({ tenant_id: 't-9' }).warn({ event: 'forbidden', user_id: 'u-2', ip_address: '::1' }, 'no');
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ level: 'WARNING', category: 'security', component: 'auth', event: 'forbidden', tenant_id: 't-9', user_id: 'u-2', ip_address: '::1', message: 'no' });
  });

  it('a silent logger publishes nothing; a logger made elsewhere gets a hub of its own', () => {
    const { logger, entries } = capturing('silent');
    logger.error('nothing');
    expect(entries).toHaveLength(0);
    const foreign = pino({ level: 'silent' });
    expect(logHubOf(foreign)).toBeInstanceOf(LogHub);
    expect(logHubOf(foreign.child({ a: 1 }))).toBe(logHubOf(foreign));
  });

  it('the hub scrubs entries published by others (entries from events) before any sink', () => {
    const hub = new LogHub();
    const seen: LogEntry[] = [];
    hub.subscribe((entry) => seen.push(entry));
    hub.publish({ id: '1', timestamp: new Date(0).toISOString(), level: 'INFO', category: 'user_activity', component: 'keys', event: 'key_created', message: 'created sk-abcdefghijkl0123', details: { secret: 'x', name: 'mine' } });
    expect(seen[0]!.message).not.toContain('sk-abcdefghijkl0123');
    expect(seen[0]!.details).toEqual({ secret: '[redacted]', name: 'mine' });
  });

  it("a worker thread's lines reach the main thread's hub", async () => {
    const { logger, entries } = capturing('info');
    // The projector thread's way: its owner logs again each line the thread wrote (ProjectorThread.relog).
    const thread = new Thread(new URL('../support/threads/echo-thread.js', import.meta.url), { greeting: 'hi' }, {
      onLog: (record) => logger.child({ component: 'projections' }).warn({ ...record, thread: 'echo' }, typeof record.msg === 'string' ? record.msg : ''),
    });
    await thread.start();
    try {
      await thread.call('log', 'from the thread');
    } finally {
      await thread.stop();
    }
    const entry = entries.find((e) => e.message === 'from the thread');
    expect(entry).toMatchObject({ level: 'WARNING', category: 'system', component: 'projections', details: { thread: 'echo', detail: 42 } });
    expect(JSON.stringify(entries)).not.toContain('hunter2');
  });
});
