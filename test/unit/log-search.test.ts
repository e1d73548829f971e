/**
 * The pure parts of the log index: query words in each database's syntax, IP wildcards, cursors,
 * date ranges, CSV cells, entries derived from events (ids, levels, nothing secret); and the
 * batcher in front of a real SQLite index whose table goes away and comes back (an outage).
 */
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import type { LogEntry } from '../../src/logs/entry.js';
import { LogIndexBatcher } from '../../src/logs/index/batcher.js';
import { csvField } from '../../src/logs/index/export.js';
import { findLogEntries } from '../../src/logs/index/queries.js';
import { decodeCursor, encodeCursor, fts5MatchOf, ipPatternOf, mysqlRegexpOf, mysqlTermsOf, prefixEnd, prefixTsqueryOf, rangeOf, textTermsOf } from '../../src/logs/index/search.js';
import { pruneLogIndex, SqlLogIndex } from '../../src/logs/index/sql-index.js';
import { entriesOfEvent } from '../../src/logs/of-events.js';
import { AppError } from '../../src/errors.js';
import type { StoredEvent } from '../../src/ports/event-store.js';
import { freshDatabase } from '../support/databases.js';

const codeOf = (fn: () => unknown): string | undefined => {
  try {
    fn();
  } catch (error) {
    return error instanceof AppError ? `${error.status} ${error.code} ${error.param}` : String(error);
  }
  return undefined;
};

describe('query words', () => {
  it('splits words into their indexed parts, keeps prefixes, and writes each dialect', () => {
    const words = textTermsOf('Connection  gpt-4o refus*', ['db']);
    expect(words).toEqual([
      { parts: ['connection'], prefix: false, text: 'connection' },
      { parts: ['gpt', '4o'], prefix: false, text: 'gpt-4o' },
      { parts: ['refus'], prefix: true, text: 'refus' },
      { parts: ['db'], prefix: false, text: 'db' },
    ]);
    expect(fts5MatchOf(words)).toBe('"connection" AND "gpt 4o" AND "refus" * AND "db"');
    expect(prefixTsqueryOf(textTermsOf('gpt-4*')[0]!)).toBe("'gpt' <-> '4':*");
    // MariaDB's FULLTEXT index has no word shorter than 3 characters: those go to LIKE.
    expect(mysqlTermsOf(words)).toEqual({ against: '+connection +refus*', likeWords: ['gpt', '4o', 'db'] });
    expect(mysqlTermsOf(textTermsOf('ok'))).toEqual({ against: null, likeWords: ['ok'] });
    expect(words.map(mysqlRegexpOf)).toEqual(['\\bconnection\\b', '\\bgpt\\W+4o\\b', '\\brefus', '\\bdb\\b']);
  });

  it('drops what is only punctuation (no syntax of any engine gets through) and bounds the word count', () => {
    expect(textTermsOf('" OR 1=1 -- ) NEAR(').map((w) => w.parts)).toEqual([['or'], ['1', '1'], ['near']]);
    expect(fts5MatchOf(textTermsOf('"a" AND b'))).toBe('"a" AND "and" AND "b"');
    expect(codeOf(() => textTermsOf(Array.from({ length: 33 }, (_, i) => `w${i}`).join(' ')))).toBe('400 query_too_long query');
  });
});

describe('ip_address patterns', () => {
  it('reads an address, a trailing wildcard as a prefix, any other wildcard as LIKE', () => {
    expect(ipPatternOf('10.0.0.1')).toEqual({ kind: 'exact', value: '10.0.0.1' });
    expect(ipPatternOf('10.0.*')).toEqual({ kind: 'prefix', prefix: '10.0.' });
    expect(ipPatternOf('2001:DB8:*')).toEqual({ kind: 'prefix', prefix: '2001:db8:' });
    expect(ipPatternOf('10.*.0.*')).toEqual({ kind: 'like', like: '10.%.0.%' });
    expect(prefixEnd('10.0.')).toBe('10.0/');
    expect(prefixEnd('2001:db8:')).toBe('2001:db8;');
    for (const bad of ['10.0.0.1%', "1' or '1", '10.0.0.1_', 'localhost']) expect(codeOf(() => ipPatternOf(bad))).toBe('400 invalid_ip_pattern filters.ip_address');
  });
});

describe('cursors and date ranges', () => {
  it('round-trips a cursor and refuses anything else', () => {
    const cursor = { timestamp: '2026-03-10T12:00:00.000Z', id: 'a,b"c' };
    expect(decodeCursor(encodeCursor(cursor))).toEqual(cursor);
    for (const bad of ['', 'x', Buffer.from('{"a":1}').toString('base64url'), Buffer.from('["2026-03-10", "x"]').toString('base64url')]) {
      expect(codeOf(() => decodeCursor(bad))).toBe('400 invalid_cursor cursor');
    }
  });

  it('reads dates as whole days, date-times in any offset as UTC, and refuses a range that ends before it starts', () => {
    expect(rangeOf({ start: '2026-03-10', end: '2026-03-10' })).toEqual({ since: '2026-03-10T00:00:00.000Z', until: '2026-03-10T23:59:59.999Z' });
    expect(rangeOf({ start: '2026-03-10T14:00:00+02:00' })).toEqual({ since: '2026-03-10T12:00:00.000Z' });
    expect(codeOf(() => rangeOf({ start: '2026-03-11', end: '2026-03-10' }))).toBe('400 invalid_date_range date_range');
    expect(codeOf(() => rangeOf({ start: 'last week' }))).toBe('400 invalid_date_range date_range.start');
    expect(codeOf(() => rangeOf({ end: '1710000000' }))).toBe('400 invalid_date_range date_range.end');
  });
});

describe('CSV cells', () => {
  it('defuses formulas and quotes as RFC 4180 says', () => {
    expect(csvField('=1+2')).toBe("'=1+2");
    expect(csvField('+1')).toBe("'+1");
    expect(csvField('-1')).toBe("'-1");
    expect(csvField('@SUM(A1)')).toBe("'@SUM(A1)");
    expect(csvField('\tx')).toBe("'\tx");
    expect(csvField('\rx')).toBe(`"'\rx"`);
    expect(csvField('=HYPERLINK("a","b")')).toBe(`"'=HYPERLINK(""a"",""b"")"`);
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('line\nbreak')).toBe('"line\nbreak"');
    expect(csvField('plain')).toBe('plain');
    expect(csvField(null)).toBe('');
  });
});

describe('entries of events', () => {
  const stored = (type: string, data: Record<string, unknown>, over: Partial<StoredEvent> = {}): StoredEvent => ({
    id: '0190c0de-0000-7000-8000-000000000001',
    type,
    stream: 'apikey-key_1',
    version: 1,
    position: 10,
    tenant_id: 'ten_x',
    occurred_at: '2026-03-10T12:00:00.000Z',
    schema_version: 1,
    causation_id: null,
    correlation_id: null,
    data,
    ...over,
  });
  const usage = (over: Record<string, unknown>) =>
    stored(
      'UsageRecorded',
      {
        request_id: 'req_1',
        tenant_id: 'ten_x',
        user_id: 'usr_1',
        key_id: 'key_1',
        channel_id: 'ch_1',
        provider: 'openai',
        model_requested: 'gpt-x',
        model_served: 'gpt-x',
        prompt_tokens: 1,
        completion_tokens: 1,
        total_tokens: 2,
        usage_source: 'upstream',
        stream: false,
        status: 200,
        error_code: null,
        latency_ms: 120,
        ttft_ms: null,
        attempts: 1,
        started_at: '2026-03-10T12:00:00.000Z',
        ...over,
      },
      { stream: 'usage-i1', tenant_id: 'ten_x' },
    );

  it('gives ids derived from the event, the same on every call', () => {
    const event = stored('ApiKeyCreated', { key_id: 'key_1', name: 'my secret project', user_id: 'usr_1', key_hash: 'f'.repeat(64), key_prefix: 'sk-abcd', policy: {} });
    const [first] = entriesOfEvent(event);
    expect(first).toEqual({
      id: 'ev-0190c0de-0000-7000-8000-000000000001',
      timestamp: '2026-03-10T12:00:00.000Z',
      level: 'INFO',
      category: 'user_activity',
      component: 'keys',
      event: 'key_created',
      message: 'API key key_1 created',
      details: { key_id: 'key_1' },
      instance: 'projection',
      tenant_id: 'ten_x',
      user_id: 'usr_1',
    });
    expect(entriesOfEvent(event)).toEqual([first]);
  });

  it('never carries secrets or user content', () => {
    const events = [
      stored('ApiKeyCreated', { key_id: 'key_1', name: 'NAME-OF-KEY', user_id: 'usr_1', key_hash: 'HASH-OF-KEY', key_prefix: 'sk-PREFIX', policy: {} }),
      stored('UserCreated', { user_id: 'usr_1', email: 'person@example.test', password_hash: 'SCRYPT-HASH', role: 'user' }, { stream: 'user-usr_1' }),
      stored('PasswordChanged', { password_hash: 'SCRYPT-HASH' }, { stream: 'user-usr_1' }),
      stored('SessionStarted', { session_id: 'ses_1', user_id: 'usr_1', refresh_token_hash: 'REFRESH-HASH', expires_at: '2026-04-01T00:00:00Z', user_agent: 'curl/8', ip: '10.0.0.1' }, { stream: 'session-ses_1' }),
      stored('FileUploaded', { file_id: 'file-1', tenant_id: 'ten_x', user_id: 'usr_1', filename: { sealed: 'SEALED-NAME' }, purpose: 'chat', bytes: 10, sha256: 'SHA', mime_type: 'text/plain', storage_key: 'uploads/x' }, { stream: 'file-file-1' }),
      stored('FileProcessingFailed', { code: 'file_processing_error', reason: 'QUOTED CONTENT OF THE FILE' }, { stream: 'file-file-1' }),
      stored('ConversationRenamed', { title: { sealed: 'SEALED-TITLE' }, generated: true }, { stream: 'conversation-c1' }),
      stored('PresetCreated', { preset_id: 'p1', owner_id: 'usr_1', visibility: 'private', name: 'PRESET-NAME', system_prompt: 'PROMPT', context: [] }, { stream: 'preset-p1' }),
      stored('MfaEnrollmentStarted', { secret_sealed: 'SEALED-TOTP', recovery_code_hashes: ['RC'] }, { stream: 'user-usr_1' }),
      stored('PreferencesChanged', { preferences: { theme: 'SECRET-THEME-VALUE' } }, { stream: 'user-usr_1' }),
    ];
    const text = JSON.stringify(events.flatMap((e) => entriesOfEvent(e)));
    for (const secret of ['NAME-OF-KEY', 'HASH-OF-KEY', 'sk-PREFIX', 'person@example.test', 'SCRYPT-HASH', 'REFRESH-HASH', 'SEALED', 'QUOTED CONTENT', 'PRESET-NAME', 'PROMPT', 'SECRET-THEME-VALUE', 'RC']) {
      expect(text).not.toContain(secret);
    }
    expect(text).toContain('"ip_address":"10.0.0.1"');
    expect(text).toContain('"fields":["theme"]');
  });

  it('writes nothing for a plain usage event, an application error for a failed one, a performance entry for a slow one', () => {
    expect(entriesOfEvent(usage({}))).toEqual([]);
    expect(entriesOfEvent(usage({ status: 429, error_code: 'rate_limit_exceeded' }))).toEqual([]);
    const [failed] = entriesOfEvent(usage({ status: 502, error_code: 'upstream_error' }));
    expect(failed).toMatchObject({ category: 'application', level: 'ERROR', component: 'provider:openai', event: 'relay_error', request_id: 'req_1', user_id: 'usr_1', details: { status: 502, error_code: 'upstream_error', model: 'gpt-x', latency_ms: 120 } });
    expect(entriesOfEvent(usage({ status: 429, error_code: 'upstream_rate_limited' }))[0]).toMatchObject({ level: 'WARNING', event: 'relay_error' });
    expect(entriesOfEvent(usage({ latency_ms: 15_000 }))).toMatchObject([{ category: 'performance', level: 'WARNING', event: 'slow_request' }]);
    expect(entriesOfEvent(usage({ latency_ms: 15_000 }), { slowRequestMs: 20_000 })).toEqual([]);
    const both = entriesOfEvent(usage({ latency_ms: 15_000, status: 504, error_code: 'upstream_timeout' }));
    expect(both.map((e) => e.id)).toEqual(['ev-0190c0de-0000-7000-8000-000000000001', 'ev-0190c0de-0000-7000-8000-000000000001-slow']);
    expect(entriesOfEvent(usage({ status: 'not a number' }))).toEqual([]);
  });

  it('puts security events in the security category, alerts by severity, and system streams without a tenant', () => {
    expect(entriesOfEvent(stored('UserRoleChanged', { role: 'admin', by: 'usr_root' }, { stream: 'user-usr_1' }))[0]).toMatchObject({ category: 'security', level: 'WARNING', event: 'role_changed', user_id: 'usr_1', details: { role: 'admin', by: 'usr_root' } });
    expect(entriesOfEvent(stored('MfaRecoveryCodeUsed', { code_hash: 'x' }, { stream: 'user-usr_1' }))[0]).toMatchObject({ category: 'security', event: 'mfa_recovery_code_used' });
    const resealed = entriesOfEvent(stored('MfaSecretResealed', { secret_sealed: 'v1.sealed-bytes' }, { stream: 'user-usr_1' }));
    expect(resealed).toMatchObject([{ category: 'security', level: 'INFO', event: 'mfa_secret_resealed', user_id: 'usr_1', details: { fields: ['secret_sealed'] } }]);
    expect(JSON.stringify(resealed)).not.toContain('sealed-bytes');
    expect(entriesOfEvent(stored('SessionRevoked', { reason: 'refresh_token_reused', by: null }, { stream: 'session-ses_1' }))[0]).toMatchObject({ category: 'security', session_id: 'ses_1' });
    expect(entriesOfEvent(stored('SessionRevoked', { reason: 'logout', by: 'usr_1' }, { stream: 'session-ses_1' }))[0]).toMatchObject({ category: 'user_activity', event: 'logout', user_id: 'usr_1' });
    const alert = { alert_id: 'al_1', rule_id: 'r1', rule_name: 'errors', kind: 'relay_error_rate', value: 0.5, threshold: 0.1, window: 60, notify: [], message: 'error rate 50%', details: {}, fired_at: '2026-03-10T12:00:00.000Z' };
    expect(entriesOfEvent(stored('AlertFired', { ...alert, severity: 'critical' }, { stream: 'alertrule-r1' }))[0]).toMatchObject({ level: 'ERROR', category: 'application', event: 'alert_fired', message: 'error rate 50%' });
    expect(entriesOfEvent(stored('AlertFired', { ...alert, severity: 'warning' }, { stream: 'alertrule-r1' }))[0]).toMatchObject({ level: 'WARNING' });
    expect(entriesOfEvent(stored('AlertResolved', { ...alert, severity: 'critical', reason: 'condition_cleared' }, { stream: 'alertrule-r1' }))[0]).toMatchObject({ level: 'INFO', event: 'alert_resolved' });
    const health = entriesOfEvent(stored('ChannelHealthChanged', { healthy: false, cooldown_until: null, reason: 'upstream_error' }, { stream: 'channel-ch_1', tenant_id: '_system' }))[0]!;
    expect(health).toMatchObject({ event: 'channel_unhealthy', level: 'WARNING' });
    expect(health.tenant_id).toBeUndefined();
    expect(entriesOfEvent(stored('ConversationMessageAppended', { content: 'x' }, { stream: 'conversation-c1' }))).toEqual([]);
  });
});

describe('the batcher in front of a real SQLite index', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0)) await c();
  });
  const entry = (i: number, level: LogEntry['level'] = 'INFO'): LogEntry => ({ id: `b-${i}`, timestamp: new Date(Date.UTC(2026, 2, 10, 0, 0, i)).toISOString(), level, category: 'system', component: 'test', event: 'e', message: `entry ${i}`, details: {} });

  it('keeps only indexed levels, writes in batches, ignores ids already stored', async () => {
    const { sql: database, cleanup } = await freshDatabase('sqlite', { mysql: '', postgres: '' });
    cleanups.push(cleanup);
    const batcher = new LogIndexBatcher(new SqlLogIndex(database.db), { minLevel: 'INFO', flushEveryMs: 3_600_000, maxBatch: 2 });
    batcher.push(entry(1, 'DEBUG'));
    for (const i of [2, 3, 4, 2]) batcher.push(entry(i));
    await batcher.flush();
    const { rows } = await findLogEntries(database.db, { tenantId: null, order: 'oldest', limit: 10 });
    expect(rows.map((r) => r.id)).toEqual(['b-2', 'b-3', 'b-4']);
    expect(batcher.stats()).toMatchObject({ queued: 0, dropped: 0, written: 4 });
    await batcher.close();
  });

  it('keeps a bounded queue while the database fails, reports it, and writes what it kept once it works again', async () => {
    const { sql: database, cleanup } = await freshDatabase('sqlite', { mysql: '', postgres: '' });
    cleanups.push(cleanup);
    const reports: Array<{ state: string; dropped: number }> = [];
    const batcher = new LogIndexBatcher(new SqlLogIndex(database.db), { minLevel: 'INFO', flushEveryMs: 3_600_000, retryMs: 3_600_000, maxBatch: 3, maxQueued: 5, onTrouble: ({ state, dropped }) => reports.push({ state, dropped }) });
    // The outage: the table is not there.
    await sql`alter table log_entries rename to log_entries_away`.execute(database.db);
    for (let i = 1; i <= 4; i++) batcher.push(entry(i));
    await expect(batcher.flush()).resolves.toBeUndefined();
    for (let i = 5; i <= 8; i++) expect(() => batcher.push(entry(i))).not.toThrow();
    await batcher.flush();
    expect(batcher.stats()).toMatchObject({ queued: 5, dropped: 3 });
    expect(reports).toEqual([{ state: 'failing', dropped: 0 }]);

    await sql`alter table log_entries_away rename to log_entries`.execute(database.db);
    await batcher.flush();
    const { rows } = await findLogEntries(database.db, { tenantId: null, order: 'oldest', limit: 10 });
    expect(rows.map((r) => r.id)).toEqual(['b-1', 'b-2', 'b-3', 'b-4', 'b-5']);
    expect(reports).toEqual([
      { state: 'failing', dropped: 0 },
      { state: 'recovered', dropped: 3 },
    ]);
    // Closing writes what is left; later entries are counted as dropped, never thrown.
    batcher.push(entry(9));
    await batcher.close();
    batcher.push(entry(10));
    expect(batcher.stats()).toMatchObject({ queued: 0, dropped: 4, written: 6 });
  });

  it('prunes by category retention and DEBUG retention', async () => {
    const { sql: database, cleanup } = await freshDatabase('sqlite', { mysql: '', postgres: '' });
    cleanups.push(cleanup);
    const now = new Date('2026-06-01T00:00:00.000Z');
    const daysAgo = (d: number) => new Date(now.getTime() - d * 86_400_000 - 1000).toISOString();
    const e = (id: string, category: LogEntry['category'], days: number, level: LogEntry['level'] = 'INFO'): LogEntry => ({ id, timestamp: daysAgo(days), level, category, component: 'c', event: 'e', message: id, details: {} });
    await new SqlLogIndex(database.db).append([e('sys-old', 'system', 91), e('sys-new', 'system', 89), e('sec-kept', 'security', 400), e('perf-old', 'performance', 31), e('debug-old', 'security', 8, 'DEBUG'), e('debug-new', 'security', 6, 'DEBUG')]);
    const removed = await pruneLogIndex(database.db, { system: 90, application: 90, user_activity: 365, security: 2555, performance: 30, debug: 7 }, now);
    expect(removed).toBe(3);
    const { rows } = await findLogEntries(database.db, { tenantId: null, order: 'oldest', limit: 10 });
    expect(rows.map((r) => r.id).sort()).toEqual(['debug-new', 'sec-kept', 'sys-new']);
    // The full-text index follows the deletes.
    expect((await findLogEntries(database.db, { tenantId: null, order: 'oldest', limit: 10, words: textTermsOf('old') })).rows).toEqual([]);
  });
});
