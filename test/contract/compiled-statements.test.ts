/**
 * Statements compiled once (src/adapters/sql/compiled.ts) on every read-model database that runs
 * here: the same rows and results as Kysely building the query each time, one compilation per
 * shape, and a template value that does not come from param() refused.
 */
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { executeCompiled, insertChunks, insertRows, MAX_INSERT_ROWS, preparedStatement, serverInsertChunks } from '../../src/adapters/sql/compiled.js';
import type { SqlDatabase } from '../../src/adapters/sql/database.js';
import type { KeyUsageTable } from '../../src/adapters/sql/schema.js';
import { dialectsHere, freshDatabase } from '../support/databases.js';

const services = inject('services');
const urls = inject('serviceUrls');

describe('insert chunks', () => {
  it('on SQLite: full INSERTs, then powers of two (few statement texts), without losing a row', () => {
    expect(insertChunks(0)).toEqual([]);
    expect(insertChunks(1)).toEqual([1]);
    expect(insertChunks(250)).toEqual([128, 64, 32, 16, 8, 2]);
    expect(insertChunks(300)).toEqual([128, 128, 32, 8, 4]);
    for (let n = 0; n <= 3 * MAX_INSERT_ROWS + 5; n++) {
      const sizes = insertChunks(n);
      expect(sizes.reduce((a, b) => a + b, 0)).toBe(n);
      expect(sizes.every((s) => s <= MAX_INSERT_ROWS && Number.isInteger(Math.log2(s)))).toBe(true);
    }
  });

  it('on the servers: full INSERTs, then the rest in one (few round trips)', () => {
    expect(serverInsertChunks(0)).toEqual([]);
    expect(serverInsertChunks(1)).toEqual([1]);
    expect(serverInsertChunks(128)).toEqual([128]);
    expect(serverInsertChunks(250)).toEqual([128, 122]);
    expect(serverInsertChunks(300)).toEqual([128, 128, 44]);
  });
});

const row = (i: number): KeyUsageTable => ({ key_id: `k-${String(i).padStart(4, '0')}`, tenant_id: i % 2 ? 't1' : 't2', requests: i, total_tokens: i * 1000, updated_at: `2024-05-01T00:00:${String(i % 60).padStart(2, '0')}.000Z` });
const COLUMNS = ['key_id', 'tenant_id', 'requests', 'total_tokens', 'updated_at'] as const;

describe.each(dialectsHere(services))('compiled statements on %s', (dialect, available) => {
  let sql: SqlDatabase;
  let cleanup: () => Promise<void>;

  beforeEach(async (ctx) => {
    if (!available) ctx.skip();
    ({ sql, cleanup } = await freshDatabase(dialect, urls));
  });
  afterEach(async () => {
    if (available) await cleanup();
  });

  it('insertRows writes the rows Kysely writes, in chunks, inside a transaction too', async () => {
    const rows = Array.from({ length: 301 }, (_, i) => row(i));
    await sql.db.transaction().execute(async (trx) => {
      await insertRows(trx, 'key_usage', COLUMNS, rows.slice(0, 150));
      await insertRows(trx, 'key_usage', COLUMNS, []);
    });
    await insertRows(sql.db, 'key_usage', COLUMNS, rows.slice(150));
    const stored = await sql.db.selectFrom('key_usage').selectAll().orderBy('key_id').execute();
    expect(stored.map((r) => ({ ...r, requests: Number(r.requests), total_tokens: Number(r.total_tokens) }))).toEqual(rows);
    await expect(insertRows(sql.db, 'key_usage', COLUMNS, [{ ...row(999), updated_at: undefined as unknown as string }])).rejects.toThrow(/no value for column updated_at/);
  });

  it('a prepared statement binds its named values wherever they appear, and refuses a value not from param()', async () => {
    await insertRows(sql.db, 'key_usage', COLUMNS, [row(1), row(2)]);
    const add = preparedStatement('test.key_usage.add', ['key', 'n', 'at'], (db, p) =>
      db
        .updateTable('key_usage')
        .set((eb) => ({ requests: eb('requests', '+', p('n')), total_tokens: eb('total_tokens', '+', p('n')), updated_at: p('at') }))
        .where('key_id', '=', p('key')),
    );
    expect(Number((await add(sql.db, { key: 'k-0001', n: 5, at: 'later' })).numAffectedRows)).toBe(1);
    expect(Number((await add(sql.db, { key: 'k-9999', n: 5, at: 'later' })).numAffectedRows)).toBe(0);
    const updated = await sql.db.selectFrom('key_usage').selectAll().where('key_id', '=', 'k-0001').executeTakeFirstOrThrow();
    expect([Number(updated.requests), Number(updated.total_tokens), updated.updated_at]).toEqual([6, 1005, 'later']);

    const literal = preparedStatement('test.key_usage.literal', ['key'], (db, p) => db.updateTable('key_usage').set({ requests: 0 }).where('key_id', '=', p('key')));
    await expect(literal(sql.db, { key: 'k-0001' })).rejects.toThrow(/does not come from param\(\)/);
  });

  it('executeCompiled reuses the compiled text for a shape and checks the parameters the first time', async () => {
    await insertRows(sql.db, 'key_usage', COLUMNS, [row(1), row(2), row(3)]);
    let compiled = 0;
    const select = (ids: string[]) =>
      executeCompiled(sql.db, 'test.key_usage.in x2', ids, () => {
        compiled++;
        return sql.db.selectFrom('key_usage').select('key_id').where('key_id', 'in', ids).orderBy('key_id');
      });
    expect((await select(['k-0001', 'k-0003'])).rows).toEqual([{ key_id: 'k-0001' }, { key_id: 'k-0003' }]);
    expect((await select(['k-0002', 'k-0002'])).rows).toEqual([{ key_id: 'k-0002' }]);
    await sql.db.transaction().execute(async (trx) => {
      const inTransaction = await executeCompiled(trx, 'test.key_usage.in x2', ['k-0003', 'k-0009'], () => {
        compiled++;
        return trx.selectFrom('key_usage').select('key_id').where('key_id', 'in', ['k-0003', 'k-0009']).orderBy('key_id');
      });
      expect(inTransaction.rows).toEqual([{ key_id: 'k-0003' }]);
    });
    expect(compiled).toBe(1);
    await expect(executeCompiled(sql.db, 'test.key_usage.bad', ['x'], () => sql.db.selectFrom('key_usage').select('key_id').where('key_id', '=', 'y'))).rejects.toThrow(/not bound as given/);
  });
});
