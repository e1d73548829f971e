/** Versioned schema upgrades: applies pending migrations from /migrations (Kysely Migrator,
 * which takes a lock so several instances starting together migrate once). */
import { Migrator, type Kysely } from 'kysely';
import { migrations } from '../../../migrations/index.js';

export async function migrateToLatest(db: Kysely<never> | Kysely<unknown>): Promise<string[]> {
  const migrator = new Migrator({
    db: db as Kysely<unknown>,
    provider: { getMigrations: async () => migrations },
    migrationTableName: 'schema_migrations',
    migrationLockTableName: 'schema_migrations_lock',
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
