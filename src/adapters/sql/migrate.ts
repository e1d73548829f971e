/**
 * Versioned schema upgrades: applies pending migrations from /migrations and records each in
 * `schema_migrations(version, applied_at, description)`, one row per applied migration (the
 * spec's table; docs/decisions/0240-schema-migrations.md says why this is our own code and not
 * Kysely's Migrator).
 *
 * Several instances starting together migrate once: every run holds a database lock while it
 * reads what is applied and applies the rest (PostgreSQL: a transaction-scoped advisory lock;
 * MySQL/MariaDB: GET_LOCK on the run's one connection, as DDL there is not transactional; SQLite:
 * BEGIN IMMEDIATE, the database's write lock). A lock dies with its session, so a killed instance
 * never leaves the next one waiting.
 *
 * A database of an installation made by Kysely's Migrator (`schema_migrations(name, timestamp)`)
 * is converted in place on the first run, row for row; a database holding a v1.x installation's
 * schema (rows like `1.8.0`) is refused with one line: it is upgraded by `switchyard upgrade`.
 */
import { MysqlAdapter, PostgresAdapter, sql, type Kysely, type Migration } from 'kysely';
import { migrations as shippedMigrations } from '../../../migrations/index.js';
import { ConfigError } from '../../errors.js';
import { ownValue } from '../../own.js';

export const MIGRATIONS_TABLE = 'schema_migrations';
/** Where a conversion copies the rows before the old table goes (MySQL: resumed after a crash). */
const CONVERTING_TABLE = 'schema_migrations_converting';
/** Kysely's Migrator's lock table: no longer used, dropped by the conversion. */
const KYSELY_LOCK_TABLE = 'schema_migrations_lock';
/** One constant key for both advisory locks (PostgreSQL takes a bigint, MySQL a name). */
const PG_LOCK_KEY = 5_721_040_240;
const MYSQL_LOCK_NAME = 'switchyard.schema_migrations';
const MYSQL_LOCK_WAIT_SECONDS = 600;

type Db = Kysely<unknown>;
type Dialect = 'sqlite' | 'mysql' | 'postgres';
type MigrationSet = Readonly<Record<string, Migration>>;

/** One applied migration, as `schema_migrations` holds it (applied_at as ISO 8601, UTC). */
export interface AppliedMigration {
  version: string;
  applied_at: string;
  description: string | null;
}

/** The database holds a v1.x installation (its own schema): `switchyard upgrade` moves it. */
export class LegacyInstallationError extends ConfigError {
  constructor(readonly legacyVersion: string) {
    super(
      /^[01]\./.test(legacyVersion)
        ? `this database holds a Switchyard ${legacyVersion} installation: upgrade it with "switchyard upgrade --from <url>" into a new database`
        : `this database holds a Switchyard ${legacyVersion} installation's legacy schema (what "switchyard upgrade" reads): give Switchyard a database of its own`,
    );
  }
}

/** "0050_request_rows_in_log_order" -> "request rows in log order": the row's description. */
export function descriptionOf(version: string): string {
  return version.replace(/^\d+_/, '').replace(/_/g, ' ');
}

/** A v1.x installation's version rows look like 1.8.0; ours are file names (0001_spine). */
const LEGACY_VERSION = /^(\d+)\.(\d+)\.(\d+)$/;

/** The highest of the semantic versions among `versions`, or null (pure). */
export function highestLegacyVersion(versions: readonly string[]): string | null {
  const parsed = versions.map((v) => LEGACY_VERSION.exec(v)).filter((m): m is RegExpExecArray => m !== null);
  if (parsed.length === 0) return null;
  parsed.sort((a, b) => Number(b[1]) - Number(a[1]) || Number(b[2]) - Number(a[2]) || Number(b[3]) - Number(a[3]));
  return parsed[0]![0];
}

/** The migrations not applied yet, in version order (pure). An older file added later still runs. */
export function pendingVersions(available: readonly string[], applied: ReadonlySet<string>): string[] {
  return available.filter((v) => !applied.has(v)).sort();
}

function dialectOf(db: Db): Dialect {
  const adapter = db.getExecutor().adapter;
  if (adapter instanceof MysqlAdapter) return 'mysql';
  if (adapter instanceof PostgresAdapter) return 'postgres';
  return 'sqlite';
}

/** The column names of a table in the connection's database (none: the table does not exist). */
async function columnsOf(db: Db, dialect: Dialect, table: string): Promise<string[]> {
  const query =
    dialect === 'sqlite'
      ? sql<{ name: string }>`SELECT name FROM pragma_table_info(${table})`
      : dialect === 'mysql'
        ? sql<{ name: string }>`SELECT column_name AS name FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = ${table}`
        : sql<{ name: string }>`SELECT column_name AS name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ${table}`;
  return (await query.execute(db)).rows.map((r) => r.name.toLowerCase());
}

/**
 * The version of the v1.x installation this database holds (the highest `1.8.0`-like row of its
 * `schema_migrations`), or null when it holds none. Reads only; any dialect; for `switchyard
 * upgrade` too.
 */
export async function readLegacyVersion<T>(db: Kysely<T>): Promise<string | null> {
  const k = db as unknown as Db;
  if (!(await columnsOf(k, dialectOf(k), MIGRATIONS_TABLE)).includes('version')) return null;
  const rows = await sql<{ version: string }>`SELECT version FROM ${sql.table(MIGRATIONS_TABLE)}`.execute(k);
  return highestLegacyVersion(rows.rows.map((r) => String(r.version)));
}

/** Runs `work` on one connection holding the migration lock (see the file's comment). */
async function withMigrationLock<T>(db: Db, work: (conn: Db, dialect: Dialect) => Promise<T>): Promise<T> {
  const dialect = dialectOf(db);
  return db.connection().execute(async (conn) => {
    if (dialect === 'mysql') {
      const got = await sql<{ got: number | null }>`SELECT GET_LOCK(${MYSQL_LOCK_NAME}, ${MYSQL_LOCK_WAIT_SECONDS}) AS got`.execute(conn);
      if (Number(got.rows[0]?.got) !== 1) throw new Error(`schema migrations: another instance held the migration lock for ${MYSQL_LOCK_WAIT_SECONDS} s`);
      try {
        return await work(conn, dialect);
      } finally {
        await sql`SELECT RELEASE_LOCK(${MYSQL_LOCK_NAME})`.execute(conn);
      }
    }
    // SQLite and PostgreSQL change their schema in a transaction: a failed migration leaves nothing.
    await sql.raw(dialect === 'sqlite' ? 'BEGIN IMMEDIATE' : 'BEGIN').execute(conn);
    try {
      if (dialect === 'postgres') await sql`SELECT pg_advisory_xact_lock(${sql.lit(PG_LOCK_KEY)})`.execute(conn);
      const result = await work(conn, dialect);
      await sql.raw('COMMIT').execute(conn);
      return result;
    } catch (error) {
      await sql.raw('ROLLBACK').execute(conn).catch(() => undefined);
      throw error;
    }
  });
}

function createMigrationsTable(db: Db, dialect: Dialect, name: string) {
  // Milliseconds kept: a converted row keeps the instant Kysely recorded.
  const appliedAt = dialect === 'mysql' ? 'TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3)' : dialect === 'postgres' ? 'TIMESTAMPTZ(3) NOT NULL DEFAULT now()' : "TIMESTAMP NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now'))";
  return sql.raw(`CREATE TABLE IF NOT EXISTS ${name} (version VARCHAR(255) NOT NULL PRIMARY KEY, applied_at ${appliedAt}, description TEXT)`).execute(db);
}

/** An instant as each dialect's column takes it (SQLite: UTC text, the default's format). */
function appliedAtValue(dialect: Dialect, iso: string): Date | string {
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) throw new Error(`schema migrations: unreadable timestamp ${JSON.stringify(iso)} in Kysely's table`);
  return dialect === 'sqlite' ? at.toISOString().replace('T', ' ').replace('Z', '') : at;
}

function isoOf(value: unknown): string {
  if (value instanceof Date) return value.toISOString();
  const text = String(value);
  return /^\d{4}-\d\d-\d\d \d/.test(text) ? new Date(`${text.replace(' ', 'T')}Z`).toISOString() : text;
}

/**
 * Makes `schema_migrations` the spec's table: creates it, or converts Kysely's (name, timestamp)
 * into it row for row. Each step can be run again: on MySQL, where DDL commits at once, a
 * conversion cut short goes on from where it was.
 */
async function ensureMigrationsTable(db: Db, dialect: Dialect): Promise<void> {
  const columns = await columnsOf(db, dialect, MIGRATIONS_TABLE);
  const converting = (await columnsOf(db, dialect, CONVERTING_TABLE)).length > 0;
  if (columns.includes('name') && !columns.includes('version')) {
    await createMigrationsTable(db, dialect, CONVERTING_TABLE);
    const kyselyRows = await sql<{ name: string; timestamp: string }>`SELECT name, ${sql.ref('timestamp')} FROM ${sql.table(MIGRATIONS_TABLE)}`.execute(db);
    const copied = new Set((await sql<{ version: string }>`SELECT version FROM ${sql.table(CONVERTING_TABLE)}`.execute(db)).rows.map((r) => r.version));
    for (const row of kyselyRows.rows) {
      if (copied.has(row.name)) continue;
      await sql`INSERT INTO ${sql.table(CONVERTING_TABLE)} (version, applied_at, description) VALUES (${row.name}, ${appliedAtValue(dialect, row.timestamp)}, ${descriptionOf(row.name)})`.execute(db);
    }
    await sql`DROP TABLE ${sql.table(MIGRATIONS_TABLE)}`.execute(db);
    await renameTable(db, dialect, CONVERTING_TABLE, MIGRATIONS_TABLE);
    await sql`DROP TABLE IF EXISTS ${sql.table(KYSELY_LOCK_TABLE)}`.execute(db);
    return;
  }
  if (columns.length === 0 && converting) {
    // Cut short between the drop and the rename (MySQL): the copy is whole.
    await renameTable(db, dialect, CONVERTING_TABLE, MIGRATIONS_TABLE);
    await sql`DROP TABLE IF EXISTS ${sql.table(KYSELY_LOCK_TABLE)}`.execute(db);
    return;
  }
  if (columns.length === 0) {
    await createMigrationsTable(db, dialect, MIGRATIONS_TABLE);
    return;
  }
  for (const column of ['version', 'applied_at', 'description']) {
    if (!columns.includes(column)) throw new ConfigError(`the database's ${MIGRATIONS_TABLE} table has no ${column} column: it is not a Switchyard schema (columns: ${columns.join(', ')})`);
  }
}

function renameTable(db: Db, dialect: Dialect, from: string, to: string) {
  return sql.raw(dialect === 'mysql' ? `RENAME TABLE ${from} TO ${to}` : `ALTER TABLE ${from} RENAME TO ${to}`).execute(db);
}

async function appliedVersions(db: Db): Promise<Set<string>> {
  return new Set((await sql<{ version: string }>`SELECT version FROM ${sql.table(MIGRATIONS_TABLE)}`.execute(db)).rows.map((r) => String(r.version)));
}

/** The table made ready and a legacy installation refused: what every run starts with, under the lock. */
async function prepare(conn: Db, dialect: Dialect): Promise<Set<string>> {
  await ensureMigrationsTable(conn, dialect);
  const applied = await appliedVersions(conn);
  const legacy = highestLegacyVersion([...applied]);
  if (legacy !== null) throw new LegacyInstallationError(legacy);
  return applied;
}

/** Applies every pending migration; answers the versions it applied, in order. */
export async function migrateToLatest<T>(db: Kysely<T>, migrations: MigrationSet = shippedMigrations): Promise<string[]> {
  return withMigrationLock(db as unknown as Db, async (conn, dialect) => {
    const applied = await prepare(conn, dialect);
    const done: string[] = [];
    for (const version of pendingVersions(Object.keys(migrations), applied)) {
      await ownValue(migrations, version)!.up(conn);
      // applied_at: the column's default, the database's now.
      await sql`INSERT INTO ${sql.table(MIGRATIONS_TABLE)} (version, description) VALUES (${version}, ${descriptionOf(version)})`.execute(conn);
      done.push(version);
    }
    return done;
  });
}

/**
 * Steps down: undoes every applied migration after `target` (newest first); answers the versions
 * it undid. For tests of a migration's down step, and an operator's way back before a downgrade.
 */
export async function migrateDownTo<T>(db: Kysely<T>, target: string, migrations: MigrationSet = shippedMigrations): Promise<string[]> {
  if (!Object.hasOwn(migrations, target)) throw new Error(`schema migrations: no migration ${target}`);
  return withMigrationLock(db as unknown as Db, async (conn, dialect) => {
    const applied = await prepare(conn, dialect);
    const undo = [...applied].filter((v) => v > target).sort().reverse();
    for (const version of undo) {
      const migration = ownValue(migrations, version);
      if (!migration?.down) throw new Error(`schema migrations: ${version} cannot be undone`);
      await migration.down(conn);
      await sql`DELETE FROM ${sql.table(MIGRATIONS_TABLE)} WHERE version = ${version}`.execute(conn);
    }
    return undo;
  });
}

/** Every row of `schema_migrations`, in version order ([] before the first run). */
export async function appliedMigrations<T>(db: Kysely<T>): Promise<AppliedMigration[]> {
  const k = db as unknown as Db;
  if (!(await columnsOf(k, dialectOf(k), MIGRATIONS_TABLE)).includes('version')) return [];
  const rows = await sql<{ version: string; applied_at: unknown; description: string | null }>`SELECT version, applied_at, description FROM ${sql.table(MIGRATIONS_TABLE)} ORDER BY version`.execute(k);
  return rows.rows.map((r) => ({ version: String(r.version), applied_at: isoOf(r.applied_at), description: r.description }));
}

/** The latest applied Switchyard migration (GET /v1/system/version's schema_version), or null. */
export async function schemaVersion<T>(db: Kysely<T>): Promise<string | null> {
  const k = db as unknown as Db;
  const row = await sql<{ version: string | null }>`SELECT max(version) AS version FROM ${sql.table(MIGRATIONS_TABLE)}`.execute(k);
  return row.rows[0]?.version ?? null;
}
