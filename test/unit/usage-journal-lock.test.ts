/** Whose usage journal is an orphan: the lock's pid on this host, else its heartbeat. */
import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { lockIsLive } from '../../src/relay/usage-journal.js';

describe('usage journal lock', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'sy-lock-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const lock = (content: object, ageMs = 0) => {
    const file = join(dir, 'a.lock');
    writeFileSync(file, JSON.stringify(content));
    const at = new Date(Date.now() - ageMs);
    utimesSync(file, at, at);
    return file;
  };

  it('is dead without a lock file, or with a torn one', () => {
    expect(lockIsLive(join(dir, 'none.lock'))).toBe(false);
    const file = join(dir, 'torn.lock');
    writeFileSync(file, '{"pid":');
    expect(lockIsLive(file)).toBe(false);
  });

  it('on this host: dead when its pid does not run, or is this process (a restarted container has the same pid)', () => {
    expect(lockIsLive(lock({ pid: 2 ** 22 + 7, host: hostname() }))).toBe(false);
    expect(lockIsLive(lock({ pid: process.pid, host: hostname() }))).toBe(false);
  });

  it('on this host: live while its pid runs and its heartbeat is fresh; a stale heartbeat means the pid was reused', () => {
    expect(lockIsLive(lock({ pid: process.ppid, host: hostname() }))).toBe(true);
    expect(lockIsLive(lock({ pid: process.ppid, host: hostname() }, 60_000))).toBe(false);
  });

  it('from another host: only the heartbeat tells', () => {
    expect(lockIsLive(lock({ pid: 1, host: 'elsewhere' }))).toBe(true);
    expect(lockIsLive(lock({ pid: 1, host: 'elsewhere' }, 60_000))).toBe(false);
  });
});
