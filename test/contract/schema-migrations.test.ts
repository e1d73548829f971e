/**
 * The migrator on every read-model database that runs here: `schema_migrations(version,
 * applied_at, description)` one row per migration; a database left by Kysely's Migrator is
 * converted in place (same rows, nothing re-run); several instances at once migrate once; a v1.x
 * installation's database is refused, untouched.
 */
import { Migrator, sql, type Kysely } from 'kysely';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { openSqlDatabase, type SqlDatabase } from '../../src/adapters/sql/database.js';
import { appliedMigrations, LegacyInstallationError, migrateToLatest, readLegacyVersion, schemaVersion } from '../../src/adapters/sql/migrate.js';
import { migrations } from '../../migrations/index.js';
import { dialectsHere, readModelConfig, type Dialect } from '../support/databases.js';

const services = inject('services');
const urls = inject('serviceUrls');
const shipped = Object.keys(migrations).sort();
const latest = shipped.at(-1)!;

/** Today's installations: the table and lock table Kysely's Migrator made (its own code does it here). */
function kyselyMigrator(db: Kysely<unknown>) {
  return new Migrator({ db, provider: { getMigrations: async () => migrations }, migrationTableName: 'schema_migrations', migrationLockTableName: 'schema_migrations_lock' });
}

async function tableNames(db: SqlDatabase): Promise<string[]> {
  return (await db.db.introspection.getTables()).map((t) => t.name).sort();
}

describe.each(dialectsHere(services))('schema_migrations on %s', (dialect: Dialect, enabled) => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    while (cleanups.length) await cleanups.pop()!();
  });
  async function emptyDatabase(): Promise<{ db: SqlDatabase; config: ReturnType<typeof readModelConfig>['config'] }> {
    const { config, cleanup } = readModelConfig(dialect, urls);
    const db = await openSqlDatabase(config);
    cleanups.push(async () => {
      await db.close().catch(() => undefined);
      await cleanup();
    });
    return { db, config };
  }

  it.skipIf(!enabled)('records one row per applied migration: version, applied_at (now), description; a second run applies nothing', async () => {
    const { db } = await emptyDatabase();
    const before = Date.now();
    expect(await migrateToLatest(db.db)).toEqual(shipped);
    const rows = await appliedMigrations(db.db);
    expect(rows.map((r) => r.version)).toEqual(shipped);
    expect(rows.find((r) => r.version === '0050_request_rows_in_log_order')?.description).toBe('request rows in log order');
    for (const row of rows) expect(Math.abs(Date.parse(row.applied_at) - before)).toBeLessThan(60_000);
    expect(await schemaVersion(db.db)).toBe(latest);
    expect(await migrateToLatest(db.db)).toEqual([]);
    expect((await appliedMigrations(db.db)).length).toBe(shipped.length);
    // The spec's columns exactly; the version is the key.
    const table = (await db.db.introspection.getTables()).find((t) => t.name === 'schema_migrations')!;
    expect(table.columns.map((c) => c.name).sort()).toEqual(['applied_at', 'description', 'version']);
    await expect(sql`INSERT INTO schema_migrations (version) VALUES (${latest})`.execute(db.db)).rejects.toThrow();
    expect(await tableNames(db)).not.toContain('schema_migrations_lock');
  });

  it.skipIf(!enabled)("converts Kysely's table in place: the same rows and instants, nothing re-run, the rest applied", async () => {
    const { db } = await emptyDatabase();
    const k = db.db as unknown as Kysely<unknown>;
    const upTo = '0150_files';
    const made = await kyselyMigrator(k).migrateTo(upTo);
    expect(made.error).toBeUndefined();
    const kyselyRows = (await sql<{ name: string; timestamp: string }>`SELECT name, ${sql.ref('timestamp')} FROM schema_migrations ORDER BY name`.execute(k)).rows;
    expect(kyselyRows.length).toBeGreaterThan(5);
    // Data written before the upgrade stays (a re-run of 0060 would fail on its table, or drop it).
    await sql`INSERT INTO projection_quarantine (projection, event_position, event_version, event_id, stream, event_type, tenant_id, occurred_at, error, quarantined_at) VALUES ('p', 1, 1, 'e', 's', 'T', 't', '2026-11-21T00:00:00.000Z', 'boom', '2026-11-21T00:00:00.000Z')`.execute(k);

    const applied = await migrateToLatest(db.db);
    expect(applied).toEqual(shipped.filter((v) => v > upTo));
    const rows = await appliedMigrations(db.db);
    const converted = rows.filter((r) => r.version <= upTo);
    expect(converted.map((r) => [r.version, r.applied_at])).toEqual(kyselyRows.map((r) => [r.name, new Date(r.timestamp).toISOString()]));
    expect(converted.every((r) => r.description === r.version.replace(/^\d+_/, '').replace(/_/g, ' '))).toBe(true);
    expect(rows.map((r) => r.version)).toEqual(shipped);
    expect(Number((await sql<{ n: number }>`SELECT count(*) AS n FROM projection_quarantine`.execute(k)).rows[0]!.n)).toBe(1);
    expect(await tableNames(db)).not.toContain('schema_migrations_lock');
    expect(await migrateToLatest(db.db)).toEqual([]);
  });

  it.skipIf(!enabled)('a conversion cut short (MySQL commits each DDL statement) goes on at the next start', async () => {
    // The copy as the migrator makes it (src/adapters/sql/migrate.ts createMigrationsTable).
    const appliedAtType =
      dialect === 'mysql' ? 'TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3)' : dialect === 'postgres' ? 'TIMESTAMPTZ(3) NOT NULL DEFAULT now()' : "TIMESTAMP NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now'))";
    const at = (iso: string) => (dialect === 'sqlite' ? iso.replace('T', ' ').replace('Z', '') : new Date(iso));
    // Cut short while copying: the copy has some rows, Kysely's table is whole.
    const { db: midCopy } = await emptyDatabase();
    const k1 = midCopy.db as unknown as Kysely<unknown>;
    expect((await kyselyMigrator(k1).migrateToLatest()).error).toBeUndefined();
    const kyselyRows = (await sql<{ name: string; timestamp: string }>`SELECT name, ${sql.ref('timestamp')} FROM schema_migrations ORDER BY name`.execute(k1)).rows;
    await sql.raw(`CREATE TABLE schema_migrations_converting (version VARCHAR(255) NOT NULL PRIMARY KEY, applied_at ${appliedAtType}, description TEXT)`).execute(k1);
    for (const row of kyselyRows.slice(0, 3)) await sql`INSERT INTO schema_migrations_converting (version, applied_at, description) VALUES (${row.name}, ${at(row.timestamp)}, ${'copied'})`.execute(k1);
    expect(await migrateToLatest(midCopy.db)).toEqual([]);
    expect((await appliedMigrations(midCopy.db)).map((r) => [r.version, r.applied_at])).toEqual(kyselyRows.map((r) => [r.name, new Date(r.timestamp).toISOString()]));
    expect(await tableNames(midCopy)).not.toContain('schema_migrations_converting');

    // Cut short between the drop of Kysely's table and the rename: the copy is whole.
    const { db: afterDrop } = await emptyDatabase();
    const k2 = afterDrop.db as unknown as Kysely<unknown>;
    expect((await kyselyMigrator(k2).migrateTo('0150_files')).error).toBeUndefined();
    const copied = (await sql<{ name: string; timestamp: string }>`SELECT name, ${sql.ref('timestamp')} FROM schema_migrations ORDER BY name`.execute(k2)).rows;
    await sql.raw(`CREATE TABLE schema_migrations_converting (version VARCHAR(255) NOT NULL PRIMARY KEY, applied_at ${appliedAtType}, description TEXT)`).execute(k2);
    for (const row of copied) await sql`INSERT INTO schema_migrations_converting (version, applied_at, description) VALUES (${row.name}, ${at(row.timestamp)}, ${'copied'})`.execute(k2);
    await sql`DROP TABLE schema_migrations`.execute(k2);
    expect(await migrateToLatest(afterDrop.db)).toEqual(shipped.filter((v) => v > '0150_files'));
    expect((await appliedMigrations(afterDrop.db)).map((r) => r.version)).toEqual(shipped);
    expect(await tableNames(afterDrop)).not.toContain('schema_migrations_lock');
  });

  it.skipIf(!enabled || dialect === 'sqlite')('several instances starting together migrate once (SQLite: test/http/cli-migrate.test.ts, separate processes)', async () => {
    const { config } = await emptyDatabase();
    const instances = await Promise.all([1, 2, 3, 4].map(() => openSqlDatabase(config)));
    try {
      const results = await Promise.all(instances.map((i) => migrateToLatest(i.db)));
      expect(results.flat().sort()).toEqual(shipped);
      expect(results.filter((r) => r.length > 0)).toHaveLength(1);
      expect((await appliedMigrations(instances[0]!.db)).map((r) => r.version)).toEqual(shipped);
    } finally {
      await Promise.all(instances.map((i) => i.close()));
    }
  });

  it.skipIf(!enabled)('refuses a v1.x installation with one line, changing nothing', async () => {
    const { db } = await emptyDatabase();
    const k = db.db as unknown as Kysely<unknown>;
    await sql.raw('CREATE TABLE schema_migrations (version VARCHAR(32) PRIMARY KEY, applied_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP, description TEXT)').execute(k);
    await sql.raw('CREATE TABLE users (id INTEGER PRIMARY KEY, email VARCHAR(255), is_admin INTEGER)').execute(k);
    for (const [version, description] of [
      ['1.6.0', 'initial schema'],
      ['1.7.0', 'hashed api keys'],
      ['1.10.0', 'presets'],
      ['1.8.0', 'files'],
    ]) {
      await sql`INSERT INTO schema_migrations (version, description) VALUES (${version}, ${description})`.execute(k);
    }
    const before = await tableNames(db);
    expect(await readLegacyVersion(db.db)).toBe('1.10.0');
    const refusal = await migrateToLatest(db.db).then(
      () => null,
      (error: unknown) => error,
    );
    expect(refusal).toBeInstanceOf(LegacyInstallationError);
    expect((refusal as Error).message).toBe('this database holds a Switchyard 1.10.0 installation: upgrade it with "switchyard upgrade --from <url>" into a new database');
    expect(await tableNames(db)).toEqual(before);
    expect(Number((await sql<{ n: number }>`SELECT count(*) AS n FROM schema_migrations`.execute(k)).rows[0]!.n)).toBe(4);
  });

  it.skipIf(!enabled)('readLegacyVersion answers null for an empty database and for a Switchyard schema', async () => {
    const { db } = await emptyDatabase();
    expect(await readLegacyVersion(db.db)).toBeNull();
    await migrateToLatest(db.db);
    expect(await readLegacyVersion(db.db)).toBeNull();
  });
});
