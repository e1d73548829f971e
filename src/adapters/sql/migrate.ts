/** Versioned schema upgrades: applies pending migrations from /migrations (Kysely Migrator,
 * which takes a lock so several instances starting together migrate once). */
import { Migrator, type Kysely } from 'kysely';
import { migrations } from '../../../migrations/index.js';

/** The one migrator configuration (tests step down and up with it too). */
export function schemaMigrator<T>(db: Kysely<T>): Migrator {
  return new Migrator({
    // Migrations are written against the untyped schema: they create the typed tables.
    db: db as unknown as Kysely<unknown>,
    provider: { getMigrations: async () => migrations },
    migrationTableName: 'schema_migrations',
    migrationLockTableName: 'schema_migrations_lock',
  });
}

export async function migrateToLatest<T>(db: Kysely<T>): Promise<string[]> {
  const { error, results } = await schemaMigrator(db).migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
