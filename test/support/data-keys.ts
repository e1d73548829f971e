/** A DataKeys fixture on a fresh read-model database of one dialect (the contract's factory). */
import { SqlDataKeys } from '../../src/adapters/data-keys/sql.js';
import { openSqlDatabase } from '../../src/adapters/sql/database.js';
import { SecretBox } from '../../src/crypto/secret-box.js';
import type { DataKeysFixture } from '../contract/data-keys.contract.js';
import { freshDatabase, type Dialect } from './databases.js';

export const TEST_SECRET = 'data-keys-test-secret-0123456789abcdef';

export async function dataKeysFixture(dialect: Dialect, urls: { mysql: string; postgres: string }): Promise<DataKeysFixture & { file: string | null }> {
  const db = await freshDatabase(dialect, urls);
  const box = new SecretBox(TEST_SECRET, 'data-keys');
  // The other instance: its own connection (pool) to the same database.
  const second = dialect === 'sqlite' ? db.sql : await openSqlDatabase(db.config);
  return {
    keys: new SqlDataKeys(db.sql, box),
    other: new SqlDataKeys(second, box),
    file: db.config.kind === 'sqlite' ? db.config.file : null,
    cleanup: async () => {
      if (second !== db.sql) await second.close();
      await db.cleanup();
    },
  };
}
