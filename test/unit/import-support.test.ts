/** The pieces every import command shares: database URLs, ids of imported rows, progress lines. */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { displayUrl, parseDatabaseUrl } from '../../src/imports/database-url.js';
import { formatProgress, startProgress } from '../../src/progress.js';
import { importedId, keyPolicyOf } from '../../src/imports/sink.js';

describe('database URLs', () => {
  it('names SQLite files, MySQL/MariaDB and PostgreSQL databases', () => {
    expect(parseDatabaseUrl('sqlite:/var/lib/legacy.db')).toEqual({ kind: 'sqlite', file: '/var/lib/legacy.db' });
    expect(parseDatabaseUrl('sqlite:///var/lib/legacy.db')).toEqual({ kind: 'sqlite', file: '/var/lib/legacy.db' });
    expect(parseDatabaseUrl('mariadb://u:p%40ss@db.internal/one_api')).toMatchObject({ kind: 'mysql', host: 'db.internal', port: 3306, user: 'u', password: 'p@ss', database: 'one_api' });
    expect(parseDatabaseUrl('postgresql://root@127.0.0.1:5433/legacy')).toMatchObject({ kind: 'postgres', port: 5433, user: 'root', password: '', database: 'legacy' });
  });

  it('refuses other schemes, a missing database and non-URLs in one line without the password', () => {
    expect(() => parseDatabaseUrl('mongodb://u:secret@h/db')).toThrow(/unsupported database scheme "mongodb"/);
    expect(() => parseDatabaseUrl('mysql://u:secret@h/')).toThrow(/names no database/);
    expect(() => parseDatabaseUrl('not a url')).toThrow(/is not a database URL/);
    expect(() => parseDatabaseUrl('mongodb://u:secret@h/db')).not.toThrow(/secret/);
    expect(displayUrl('mysql://root:hunter2@h:3306/db')).toBe('mysql://root:***@h:3306/db');
  });
});

describe('imported ids', () => {
  it('are stable per source, kind and legacy id, and distinct otherwise', () => {
    expect(importedId('one-api', 'user', 1)).toBe(importedId('one-api', 'user', '1'));
    expect(importedId('one-api', 'user', 1)).toMatch(/^usr_imp[A-Za-z0-9]{24}$/);
    expect(new Set([importedId('one-api', 'user', 1), importedId('new-api', 'user', 1), importedId('one-api', 'key', 1), importedId('one-api', 'user', 2)]).size).toBe(4);
  });

  it('a partial key policy means no restriction for what it leaves out', () => {
    const policy = keyPolicyOf({ allowed_models: ['gpt-4o'], expires_at: '2030-01-01T00:00:00.000Z' });
    expect(policy).toMatchObject({ allowed_models: ['gpt-4o'], blocked_models: [], quota_limit: null, allowed_ips: [], expires_at: '2030-01-01T00:00:00.000Z' });
  });
});

describe('progress', () => {
  it('shows counts, percentage, rate and time left; the bar on terminals', () => {
    expect(formatProgress({ label: 'messages', done: 250, total: 1000, elapsedMs: 5000 })).toBe('messages  250/1,000  25%  50/s  ETA 15s');
    expect(formatProgress({ label: 'messages', done: 500, total: 1000, elapsedMs: 1000 }, 10)).toBe('messages  [=====>    ]  500/1,000  50%  500/s  ETA 1s');
    expect(formatProgress({ label: 'events', done: 1200, total: null, elapsedMs: 2000 })).toBe('events  1,200  600/s');
    expect(formatProgress({ label: 'users', done: 10, total: 10, elapsedMs: 125_000 })).toBe('users  10/10  100%  0/s  in 2m05s');
  });

  it('writes a line at most every interval off a terminal, and the last figures at the end', () => {
    const out = new PassThrough();
    let text = '';
    out.on('data', (chunk: Buffer) => (text += chunk.toString()));
    let now = 0;
    const progress = startProgress('rows', 100, { stream: out, lineEveryMs: 1000, now: () => now });
    for (let i = 0; i < 100; i++) {
      now += 50;
      progress.tick();
    }
    progress.finish();
    const lines = text.trim().split('\n');
    expect(lines.length).toBe(5); // every 1000 ms of 5000, the last of them at the end
    expect(lines.at(-1)).toBe('rows  100/100  100%  20/s  in 5s');
  });
});
