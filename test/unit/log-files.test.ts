/** The log file writer on a real directory, with a clock the tests move by days. */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LogCategory, LogEntry, LogLevel } from '../../src/logs/entry.js';
import { startLogFiles, type LogFiles } from '../../src/logs/files/log-files.js';
import { LogHub } from '../../src/logs/hub.js';

const DAY_MS = 86_400_000;
const RETENTION = { system: 90, application: 90, user_activity: 365, security: 2555, performance: 30, debug: 7 };

let dir: string;
let now: number;
let hub: LogHub;
let files: LogFiles | null;
let seq = 0;

const start = (maxFileBytes = 1_000_000) => {
  files = startLogFiles({ hub, dir, config: { maxFileBytes, retentionDays: RETENTION, retentionIntervalMs: 3_600_000 }, clock: () => now });
  return files;
};

function entry(category: LogCategory, at: number, level: LogLevel = 'INFO', message = `entry ${seq}`): LogEntry {
  seq += 1;
  return { id: `e-${seq}`, timestamp: new Date(at).toISOString(), level, category, component: 'test', event: 'test', message, details: { seq } };
}

const linesOf = (text: string) => text.split('\n').filter(Boolean).map((line) => JSON.parse(line) as LogEntry);
const read = (path: string) => linesOf(path.endsWith('.gz') ? gunzipSync(readFileSync(path)).toString() : readFileSync(path, 'utf8'));
const ls = (path: string) => (existsSync(path) ? readdirSync(path).sort() : []);

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'sy-logfiles-'));
  now = Date.parse('2026-05-10T12:00:00.000Z');
  hub = new LogHub();
  files = null;
});

afterEach(async () => {
  await files?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('log files', () => {
  it("writes each entry as a JSON line to its UTC day's category file; DEBUG entries to debug.log", async () => {
    const f = start();
    // The startup retention run first (else it would archive the late entry's day at once, as it should).
    await f.flush();
    const late = Date.parse('2026-05-09T23:59:59.999Z');
    const published = [entry('security', now), entry('system', now), entry('security', now, 'DEBUG'), entry('system', late), entry('security', now)];
    for (const e of published) hub.publish(e);
    await f.flush();
    expect(ls(dir)).toEqual(['2026-05-09', '2026-05-10']);
    expect(ls(join(dir, '2026-05-10'))).toEqual(['debug.log', 'security.log', 'system.log']);
    expect(read(join(dir, '2026-05-10', 'security.log'))).toEqual([published[0], published[4]]);
    expect(read(join(dir, '2026-05-10', 'debug.log'))).toEqual([published[2]]);
    expect(read(join(dir, '2026-05-09', 'system.log'))).toEqual([published[3]]);
  });

  it('nothing published before close is lost', async () => {
    const f = start();
    for (let i = 0; i < 500; i++) hub.publish(entry('application', now));
    await f.close();
    files = null;
    expect(read(join(dir, '2026-05-10', 'application.log'))).toHaveLength(500);
  });

  it('a file past the size limit rotates: numbered in order, gzip-compressed, the live one stays <name>.log', async () => {
    const f = start(1000);
    const published: LogEntry[] = [];
    for (let batch = 0; batch < 3; batch++) {
      for (let i = 0; i < 10; i++) {
        const e = entry('system', now);
        published.push(e);
        hub.publish(e);
      }
      await f.flush();
    }
    const day = join(dir, '2026-05-10');
    const names = ls(day);
    expect(names).toContain('system.log');
    const rotated = names.filter((n) => n !== 'system.log');
    expect(rotated.length).toBeGreaterThanOrEqual(2);
    rotated.forEach((name, i) => expect(name).toBe(`system.${i + 1}.log.gz`));
    // Every part within the limit (each line is well under it), and together every entry once, in order.
    const parts = [...rotated.map((n) => join(day, n)), join(day, 'system.log')];
    for (const part of parts.slice(0, -1)) expect(gunzipSync(readFileSync(part)).length).toBeLessThanOrEqual(1000);
    expect(parts.flatMap(read)).toEqual(published);
  });

  it('rotation numbers continue after a restart', async () => {
    let f = start(600);
    for (let i = 0; i < 12; i++) hub.publish(entry('system', now));
    await f.close();
    const before = ls(join(dir, '2026-05-10')).filter((n) => n.endsWith('.gz')).length;
    expect(before).toBeGreaterThan(0);
    f = start(600);
    for (let i = 0; i < 12; i++) hub.publish(entry('system', now));
    await f.flush();
    const gz = ls(join(dir, '2026-05-10')).filter((n) => n.endsWith('.gz'));
    expect(gz.length).toBeGreaterThan(before);
    expect(new Set(gz.map((n) => n.split('.')[1])).size).toBe(gz.length);
  });

  it('the day after: the past day is compressed and moved to archive/<YYYY-MM>/<YYYY-MM-DD>; today stays live', async () => {
    const f = start();
    const first = [entry('system', now), entry('security', now), entry('performance', now)];
    for (const e of first) hub.publish(e);
    await f.flush();
    now += DAY_MS;
    const today = entry('system', now);
    hub.publish(today);
    const report = await f.runRetention();
    expect(report).toEqual({ compressed: 3, archived: 1, deleted: 0 });
    expect(ls(dir)).toEqual(['2026-05-11', 'archive']);
    const archived = join(dir, 'archive', '2026-05', '2026-05-10');
    expect(ls(archived)).toEqual(['performance.log.gz', 'security.log.gz', 'system.log.gz']);
    expect(read(join(archived, 'security.log.gz'))).toEqual([first[1]]);
    expect(read(join(dir, '2026-05-11', 'system.log'))).toEqual([today]);
    // Nothing more to do on a second run the same day.
    expect(await f.runRetention()).toEqual({ compressed: 0, archived: 0, deleted: 0 });
  });

  it('an entry of an archived day arriving late joins the archive without overwriting', async () => {
    const f = start();
    const a = entry('system', now);
    hub.publish(a);
    await f.flush();
    now += DAY_MS;
    await f.runRetention();
    const late = entry('system', now - DAY_MS);
    hub.publish(late);
    await f.runRetention();
    const archived = join(dir, 'archive', '2026-05', '2026-05-10');
    expect(ls(archived)).toEqual(['system.1.log.gz', 'system.log.gz']);
    expect([...read(join(archived, 'system.log.gz')), ...read(join(archived, 'system.1.log.gz'))]).toEqual([a, late]);
  });

  it('retention removes each category after its own days (debug 7, performance 30, system 90), security stays', async () => {
    const f = start();
    for (const category of ['system', 'security', 'performance', 'user_activity', 'application'] as const) hub.publish(entry(category, now));
    hub.publish(entry('security', now, 'DEBUG'));
    await f.flush();
    const archived = join(dir, 'archive', '2026-05', '2026-05-10');
    const advanceTo = async (days: number) => {
      now = Date.parse('2026-05-10T12:00:00.000Z') + days * DAY_MS;
      await f.runRetention();
      return ls(archived);
    };
    expect(await advanceTo(7)).toEqual(['application.log.gz', 'debug.log.gz', 'performance.log.gz', 'security.log.gz', 'system.log.gz', 'user_activity.log.gz']);
    expect(await advanceTo(8)).toEqual(['application.log.gz', 'performance.log.gz', 'security.log.gz', 'system.log.gz', 'user_activity.log.gz']);
    expect(await advanceTo(31)).toEqual(['application.log.gz', 'security.log.gz', 'system.log.gz', 'user_activity.log.gz']);
    expect(await advanceTo(91)).toEqual(['security.log.gz', 'user_activity.log.gz']);
    expect(await advanceTo(366)).toEqual(['security.log.gz']);
    expect(await advanceTo(2555)).toEqual(['security.log.gz']);
    expect(await advanceTo(2556)).toEqual([]);
    // Empty day and month directories go too.
    expect(ls(join(dir, 'archive'))).toEqual([]);
  });

  it('retention also runs at startup', async () => {
    const f1 = start();
    hub.publish(entry('performance', now));
    await f1.close();
    now += 40 * DAY_MS;
    const f2 = start();
    await f2.flush();
    // The startup run is queued before anything else: by the time a flush resolves, it has run.
    expect(ls(dir).filter((name) => name !== 'archive')).toEqual([]);
    expect(ls(join(dir, 'archive'))).toEqual([]);
  });
});
