import { existsSync, readFileSync } from 'node:fs';
import { sql } from 'kysely';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { SqlDataKeys } from '../../src/adapters/data-keys/sql.js';
import { SecretBox } from '../../src/crypto/secret-box.js';
import { freshDatabase } from '../support/databases.js';
import { dataKeysFixture, TEST_SECRET } from '../support/data-keys.js';
import { dataKeysContract } from './data-keys.contract.js';

const urls = inject('serviceUrls');

dataKeysContract('sqlite', () => dataKeysFixture('sqlite', urls), true);

/** Every byte SQLite keeps for the database: the main file and, while it exists, the WAL. */
function databaseBytes(file: string): Buffer {
  return Buffer.concat([file, `${file}-wal`].filter(existsSync).map((f) => readFileSync(f)));
}

describe('SqlDataKeys on SQLite: destroyed key bytes do not linger in the file', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  async function open() {
    const db = await freshDatabase('sqlite', urls);
    cleanups.push(db.cleanup);
    if (db.config.kind !== 'sqlite') throw new Error('sqlite expected');
    const keys = new SqlDataKeys(db.sql, new SecretBox(TEST_SECRET, 'data-keys'));
    const sealedOf = async (scope: string) => (await db.sql.db.selectFrom('data_keys').select('sealed_key').where('scope', '=', scope).executeTakeFirstOrThrow()).sealed_key!;
    return { db, keys, file: db.config.file, sealedOf };
  }

  it('finds the sealed key in the file before destroy (the search works), and nowhere after', async () => {
    const { db, keys, file, sealedOf } = await open();
    for (let i = 0; i < 20; i++) await keys.create(`conversation:neighbour-${i}`);
    await keys.create('conversation:secret');
    const sealed = Buffer.from(await sealedOf('conversation:secret'));
    await sql`PRAGMA wal_checkpoint(TRUNCATE)`.execute(db.sql.db);
    expect(databaseBytes(file).includes(sealed)).toBe(true);

    await keys.destroy('conversation:secret');
    const bytes = databaseBytes(file);
    expect(bytes.includes(sealed)).toBe(false);
    // Not even a part of it (the ciphertext part of the envelope, 44+ characters).
    expect(bytes.includes(Buffer.from(sealed.toString().split('.')[3]!))).toBe(false);
    expect(await keys.get('conversation:neighbour-7')).toHaveLength(32);
  });

  it('also when the key is destroyed while its page is still in the WAL (not checkpointed yet)', async () => {
    const { keys, file, sealedOf } = await open();
    await keys.create('conversation:fresh');
    const sealed = Buffer.from(await sealedOf('conversation:fresh'));
    expect(existsSync(`${file}-wal`) && readFileSync(`${file}-wal`).includes(sealed)).toBe(true);
    await keys.destroy('conversation:fresh');
    expect(databaseBytes(file).includes(sealed)).toBe(false);
  });

  it('a plain DELETE (secure_delete off) leaves the bytes in the page: why destroy turns it on', async () => {
    const { db, keys, file, sealedOf } = await open();
    for (let i = 0; i < 20; i++) await keys.create(`conversation:neighbour-${i}`);
    await keys.create('conversation:secret');
    const sealed = Buffer.from(await sealedOf('conversation:secret'));
    await sql`PRAGMA secure_delete = OFF`.execute(db.sql.db);
    await db.sql.db.deleteFrom('data_keys').where('scope', '=', 'conversation:secret').execute();
    await sql`PRAGMA wal_checkpoint(TRUNCATE)`.execute(db.sql.db);
    expect(databaseBytes(file).includes(sealed)).toBe(true);
  });
});
