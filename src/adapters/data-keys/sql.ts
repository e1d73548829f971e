/**
 * Data keys in the read-model database (SQLite embedded, MariaDB / PostgreSQL distributed), in the
 * `data_keys` table (migration 0130), which no projection owns. Each key is sealed with SECRET, so
 * the table alone (a dump, a backup) gives nothing away.
 *
 * Destroying deletes the row and leaves a tombstone without key bytes. On SQLite a plain DELETE
 * leaves the row's bytes in the page's free space (and the WAL keeps the page as it was), so the
 * delete runs with `secure_delete` on (SQLite zeroes what it frees) and is followed by a WAL
 * checkpoint that truncates the WAL (docs/decisions/0120-crypto-shredding.md).
 */
import { randomBytes } from 'node:crypto';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { SqlDatabase } from '../sql/database.js';
import type { ReadModelTables } from '../sql/schema.js';
import type { SecretBox } from '../../crypto/secret-box.js';
import { DataKeyDestroyedError, type DataKeys } from '../../ports/data-keys.js';

const KEY_BYTES = 32;

export class SqlDataKeys implements DataKeys {
  constructor(
    private readonly database: SqlDatabase,
    /** Seals the keys at rest: give it a purpose of its own (`new SecretBox(secret, 'data-keys')`). */
    private readonly box: SecretBox,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async create(scope: string): Promise<Buffer> {
    checkScope(scope);
    const row = { scope, sealed_key: this.box.seal(randomBytes(KEY_BYTES).toString('base64')), created_at: this.now().toISOString(), destroyed_at: null };
    const insert = this.database.db.insertInto('data_keys').values(row);
    // Insert-if-missing: of instances creating together, the first row wins and all read it back.
    if (this.database.dialect === 'mysql') await insert.ignore().execute();
    else await insert.onConflict((oc) => oc.column('scope').doNothing()).execute();
    const kept = await this.read(scope);
    if (kept === undefined || kept === null) throw new DataKeyDestroyedError(scope);
    return kept;
  }

  async get(scope: string): Promise<Buffer | null> {
    checkScope(scope);
    return (await this.read(scope)) ?? null;
  }

  async destroy(scope: string): Promise<void> {
    checkScope(scope);
    await this.destroyAll(async () => [scope]);
  }

  async destroyPrefix(prefix: string): Promise<number> {
    if (prefix.length === 0) throw new RangeError('destroyPrefix needs a non-empty prefix');
    return this.destroyAll(async (trx) => {
      // substr, not LIKE: no wildcard in a scope can widen the match.
      const rows = await trx
        .selectFrom('data_keys')
        .select('scope')
        .where(sql<string>`substr(scope, 1, ${prefix.length})`, '=', prefix)
        .where('sealed_key', 'is not', null)
        .execute();
      return rows.map((r) => r.scope);
    });
  }

  private read(scope: string): Promise<Buffer | null | undefined> {
    return readDataKey(this.database.db, this.box, scope);
  }

  private async destroyAll(scopesOf: (trx: Transaction<ReadModelTables>) => Promise<string[]>): Promise<number> {
    const sqlite = this.database.dialect === 'sqlite';
    const destroyedAt = this.now().toISOString();
    const count = await this.database.db.transaction().execute(async (trx) => {
      // SQLite has one connection: the pragma, set inside the transaction, covers only these deletes.
      if (sqlite) await sql`PRAGMA secure_delete = ON`.execute(trx);
      try {
        const scopes = await scopesOf(trx);
        for (const scope of scopes) {
          await trx.deleteFrom('data_keys').where('scope', '=', scope).execute();
          await trx.insertInto('data_keys').values({ scope, sealed_key: null, created_at: destroyedAt, destroyed_at: destroyedAt }).execute();
        }
        return scopes.length;
      } finally {
        if (sqlite) await sql`PRAGMA secure_delete = OFF`.execute(trx);
      }
    });
    // The WAL still holds the page as it was before the delete: copy it back and empty the WAL.
    await truncateWal(this.database);
    return count;
  }
}

/**
 * SQLite: copies the WAL back into the database file and empties it, so that the pages as they
 * were before a secure delete are gone from the WAL too (decision 0120). Answers false when a
 * reader's snapshot kept it from finishing (the frames stay until a later complete checkpoint);
 * true, and nothing done, on other databases.
 */
export async function truncateWal(database: Pick<SqlDatabase, 'db' | 'dialect'>): Promise<boolean> {
  if (database.dialect !== 'sqlite') return true;
  const { rows } = await sql<{ busy: number }>`PRAGMA wal_checkpoint(TRUNCATE)`.execute(database.db);
  return Number(rows[0]?.busy ?? 0) === 0;
}

/**
 * A scope's key read through `db` (a transaction too: projections read keys in theirs).
 * undefined: never created; null: destroyed.
 */
export async function readDataKey(db: Kysely<ReadModelTables>, box: SecretBox, scope: string): Promise<Buffer | null | undefined> {
  const row = await db.selectFrom('data_keys').select('sealed_key').where('scope', '=', scope).executeTakeFirst();
  if (!row) return undefined;
  return row.sealed_key === null ? null : Buffer.from(box.open(row.sealed_key), 'base64');
}

function checkScope(scope: string): void {
  if (scope.length === 0 || scope.length > 255) throw new RangeError('a data-key scope is 1 to 255 characters');
}
