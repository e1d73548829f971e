/**
 * The log index's queries on every read-model database that runs here (SQLite FTS5, MariaDB
 * FULLTEXT, PostgreSQL tsvector): the same entries give the same answers — full text (case,
 * prefixes, words split by punctuation, short words MariaDB's index leaves out, words other engines
 * call stopwords), IP wildcards, levels, keyset pages, and the projection's reset keeping process
 * entries.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { SqlDatabase } from '../../src/adapters/sql/database.js';
import type { LogEntry } from '../../src/logs/entry.js';
import { findLogEntries } from '../../src/logs/index/queries.js';
import { ipPatternOf, textTermsOf, type LogQuery } from '../../src/logs/index/search.js';
import { insertLogRows, rowOf, SqlLogIndex } from '../../src/logs/index/sql-index.js';
import { logsProjection } from '../../src/projections/logs.js';
import { dialectsHere, freshDatabase } from '../support/databases.js';

const services = inject('services');
const urls = inject('serviceUrls');

const at = (s: number) => new Date(Date.UTC(2026, 2, 10, 0, 0, s)).toISOString();
const entries: LogEntry[] = [
  { id: 'e1', timestamp: at(1), level: 'ERROR', category: 'system', component: 'database', event: 'x', message: 'Connection refused by the primary', details: { host: 'db-1' }, ip_address: '10.0.1.2', tenant_id: 't1' },
  { id: 'e2', timestamp: at(2), level: 'INFO', category: 'application', component: 'relay', event: 'x', message: 'request ok', details: { model: 'gpt-4o' }, ip_address: '10.1.0.1', tenant_id: 't2' },
  { id: 'e3', timestamp: at(3), level: 'WARNING', category: 'security', component: 'auth', event: 'x', message: 'login not allowed after lockout', details: {}, ip_address: '2001:db8::1' },
  { id: 'e4', timestamp: at(3), level: 'CRITICAL', category: 'system', component: 'database', event: 'x', message: 'disk full', details: { note: 'Connections dropped' }, ip_address: '110.0.0.1', tenant_id: 't1' },
];

for (const [dialect, enabled] of dialectsHere(services)) {
  describe.skipIf(!enabled)(`log index queries on ${dialect}`, () => {
    let database: SqlDatabase;
    let cleanup: () => Promise<void>;
    /** Through the scans (the default), then through the full-text index alone: the same answer. */
    const find = async (q: Partial<LogQuery>) => {
      const query: LogQuery = { tenantId: null, order: 'oldest', limit: 100, ...q };
      const scanned = (await findLogEntries(database.db, query)).rows.map((r) => r.id);
      expect((await findLogEntries(database.db, query, [])).rows.map((r) => r.id)).toEqual(scanned);
      return scanned;
    };

    beforeAll(async () => {
      ({ sql: database, cleanup } = await freshDatabase(dialect, urls));
      await new SqlLogIndex(database.db).append(entries);
      await new SqlLogIndex(database.db).append(entries.slice(0, 2)); // already there: ignored
    });
    afterAll(async () => {
      await cleanup?.();
    });

    it('answers full text alike', async () => {
      expect(await find({ words: textTermsOf('connection') })).toEqual(['e1']);
      expect(await find({ words: textTermsOf('CONNECTION*') })).toEqual(['e1', 'e4']);
      expect(await find({ words: textTermsOf('db-1') })).toEqual(['e1']);
      expect(await find({ words: textTermsOf('gpt-4o') })).toEqual(['e2']);
      expect(await find({ words: textTermsOf('ok') })).toEqual(['e2']);
      expect(await find({ words: textTermsOf('not after') })).toEqual(['e3']);
      expect(await find({ words: textTermsOf('the primary') })).toEqual(['e1']);
      expect(await find({ words: textTermsOf('refused disk') })).toEqual([]);
    });

    it('answers full text alike when a scan of 2 candidates fills the page, or falls to the index', async () => {
      // A page of 1: two matches among the scanned candidates make a full page from the scan.
      const newest = async (text: string, q: Partial<LogQuery> = {}) => {
        const query: LogQuery = { tenantId: null, order: 'newest', limit: 1, words: textTermsOf(text), ...q };
        const ids = (await findLogEntries(database.db, query, [2])).rows.map((r) => r.id);
        expect((await findLogEntries(database.db, query, [])).rows.map((r) => r.id)).toEqual(ids);
        return ids;
      };
      expect(await newest('CONNECTION*')).toEqual(['e4']);
      expect(await newest('connection*', { order: 'oldest' })).toEqual(['e1']);
      expect(await newest('connection')).toEqual(['e1']);
      expect(await newest('db-1')).toEqual(['e1']);
      expect(await newest('connections')).toEqual(['e4']);
      const first = await findLogEntries(database.db, { tenantId: null, order: 'newest', limit: 1, words: textTermsOf('connection*') });
      const second = await findLogEntries(database.db, { tenantId: null, order: 'newest', limit: 1, words: textTermsOf('connection*'), after: first.next! });
      expect([...first.rows, ...second.rows].map((r) => r.id)).toEqual(['e4', 'e1']);
      expect(second.next).toBeNull();
    });

    it('answers filters, tenants and pages alike', async () => {
      expect(await find({ ip: ipPatternOf('10.0.*') })).toEqual(['e1']);
      expect(await find({ ip: ipPatternOf('10.*') })).toEqual(['e1', 'e2']);
      expect(await find({ ip: ipPatternOf('*.0.*') })).toEqual(['e1', 'e2', 'e4']);
      expect(await find({ ip: ipPatternOf('*.0.*.1') })).toEqual(['e4']);
      expect(await find({ ip: ipPatternOf('2001:db8:*') })).toEqual(['e3']);
      expect(await find({ minRank: 2 })).toEqual(['e1', 'e3', 'e4']);
      expect(await find({ levels: ['INFO', 'CRITICAL'], components: ['database', 'relay'] })).toEqual(['e2', 'e4']);
      expect(await find({ tenantId: 't1' })).toEqual(['e1', 'e4']);
      expect(await find({ since: at(2), until: at(3) })).toEqual(['e2', 'e3', 'e4']);
      const first = await findLogEntries(database.db, { tenantId: null, order: 'newest', limit: 2 });
      expect(first.rows.map((r) => r.id)).toEqual(['e4', 'e3']);
      const second = await findLogEntries(database.db, { tenantId: null, order: 'newest', limit: 2, after: first.next! });
      expect(second.rows.map((r) => r.id)).toEqual(['e2', 'e1']);
      expect(second.next).toBeNull();
    });

    it("the projection's reset deletes only the entries of events", async () => {
      await insertLogRows(database.db, [rowOf({ ...entries[0]!, id: 'ev-1', message: 'from an event' }, 'event')]);
      expect(await find({ words: textTermsOf('event') })).toEqual(['ev-1']);
      await database.db.transaction().execute((trx) => logsProjection().reset(trx));
      expect(await find({})).toEqual(['e1', 'e2', 'e3', 'e4']);
      expect(await find({ words: textTermsOf('event') })).toEqual([]);
    });
  });
}
