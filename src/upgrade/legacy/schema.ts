/**
 * The schemas of Switchyard 1.x installations (1.6.0 to 1.9.0) and of what `switchyard upgrade`
 * leaves in that database at 2.0.0, as data: every table, column and index says in which version
 * it appeared (`since`) and, if it went away, in which version it was removed (`until`).
 * docs/upgrading.md documents exactly this; the fixture generator creates a version's tables from
 * it and the upgrade steps add the columns the next version has from the same definitions.
 */
import { sql, type Kysely } from 'kysely';
import type { SqlDialectName } from '../../adapters/sql/database.js';

export const LEGACY_VERSIONS = ['1.6.0', '1.7.0', '1.8.0', '1.9.0', '2.0.0'] as const;
export type LegacyVersion = (typeof LEGACY_VERSIONS)[number];
/** Versions an installation can be upgraded from (and fixtures generated for). */
export const UPGRADABLE_VERSIONS = ['1.6.0', '1.7.0', '1.8.0', '1.9.0'] as const satisfies readonly LegacyVersion[];
export type UpgradableVersion = (typeof UPGRADABLE_VERSIONS)[number];

/** What each version's row in schema_migrations says. */
export const VERSION_DESCRIPTIONS: Record<LegacyVersion, string> = {
  '1.6.0': 'baseline schema of the 1.6 line',
  '1.7.0': 'API keys stored as sha256 hashes; files.content_type',
  '1.8.0': 'channel weights and model mapping; pinned and archived conversations; key expiry',
  '1.9.0': 'message attachments; file checksums; preset descriptions and visibility; disabled users',
  '2.0.0': 'roles, permissions and user_roles replace users.is_admin; files renamed to content hashes; data imported into Switchyard 2.0',
};

/** Column types, portable: booleans are SMALLINT 0/1 on every database (as 1.x wrote them). */
export type ColumnType = 'id' | 'int' | 'bigint' | 'flag' | 'real' | 'text' | 'timestamp' | { varchar: number } | { char: number };

export interface LegacyColumn {
  name: string;
  type: ColumnType;
  nullable?: boolean;
  /** A literal default (numbers and strings), or 'now' for the current time. */
  default?: number | string | 'now';
  since: LegacyVersion;
  until?: LegacyVersion;
  /** One line for docs/upgrading.md. */
  note?: string;
}

export interface LegacyIndex {
  name: string;
  columns: string[];
  unique: boolean;
  since: LegacyVersion;
  until?: LegacyVersion;
}

export interface LegacyTable {
  name: string;
  since: LegacyVersion;
  columns: LegacyColumn[];
  /** A composite primary key (tables without an `id` column). */
  primaryKey?: string[];
  indexes: LegacyIndex[];
}

const createdAt: LegacyColumn = { name: 'created_at', type: 'timestamp', default: 'now', since: '1.6.0' };

export const LEGACY_TABLES: LegacyTable[] = [
  {
    name: 'schema_migrations',
    since: '1.6.0',
    primaryKey: ['version'],
    columns: [
      { name: 'version', type: { varchar: 32 }, since: '1.6.0', note: 'semantic version, e.g. 1.8.0' },
      { name: 'applied_at', type: 'timestamp', default: 'now', since: '1.6.0' },
      { name: 'description', type: 'text', nullable: true, since: '1.6.0' },
    ],
    indexes: [],
  },
  {
    name: 'users',
    since: '1.6.0',
    columns: [
      { name: 'id', type: 'id', since: '1.6.0' },
      { name: 'email', type: { varchar: 255 }, since: '1.6.0' },
      { name: 'password_hash', type: { varchar: 100 }, since: '1.6.0', note: 'bcrypt ($2a$/$2b$, cost 10 by default)' },
      { name: 'display_name', type: { varchar: 100 }, nullable: true, since: '1.6.0' },
      { name: 'is_admin', type: 'flag', default: 0, since: '1.6.0', until: '2.0.0', note: '1: administrator; replaced by user_roles in 2.0.0' },
      { name: 'disabled', type: 'flag', default: 0, since: '1.9.0', note: '1: cannot log in' },
      { name: 'last_login_at', type: 'timestamp', nullable: true, since: '1.6.0' },
      createdAt,
    ],
    indexes: [{ name: 'users_email', columns: ['email'], unique: true, since: '1.6.0' }],
  },
  {
    name: 'channels',
    since: '1.6.0',
    columns: [
      { name: 'id', type: 'id', since: '1.6.0' },
      { name: 'name', type: { varchar: 100 }, since: '1.6.0' },
      { name: 'type', type: { varchar: 32 }, since: '1.6.0', note: 'provider kind: openai, azure, anthropic, gemini, ollama, custom, …' },
      { name: 'api_key', type: 'text', since: '1.6.0', note: "the provider's key, in the clear (1.x never sealed it)" },
      { name: 'base_url', type: { varchar: 255 }, nullable: true, since: '1.6.0', note: "NULL: the provider's default" },
      { name: 'models', type: 'text', since: '1.6.0', note: 'comma-separated model names' },
      { name: 'model_mapping', type: 'text', nullable: true, since: '1.8.0', note: 'JSON object: requested model -> upstream model' },
      { name: 'priority', type: 'int', default: 0, since: '1.6.0', note: 'higher first' },
      { name: 'weight', type: 'int', default: 1, since: '1.8.0', note: 'share among channels of the same priority' },
      { name: 'enabled', type: 'flag', default: 1, since: '1.6.0' },
      createdAt,
    ],
    indexes: [],
  },
  {
    name: 'conversations',
    since: '1.6.0',
    columns: [
      { name: 'id', type: 'id', since: '1.6.0' },
      { name: 'user_id', type: 'int', since: '1.6.0', note: 'users.id' },
      { name: 'title', type: { varchar: 255 }, nullable: true, since: '1.6.0' },
      { name: 'model', type: { varchar: 100 }, nullable: true, since: '1.6.0' },
      { name: 'pinned', type: 'flag', default: 0, since: '1.8.0' },
      { name: 'archived', type: 'flag', default: 0, since: '1.8.0' },
      createdAt,
      { name: 'updated_at', type: 'timestamp', default: 'now', since: '1.6.0' },
    ],
    indexes: [{ name: 'conversations_user', columns: ['user_id'], unique: false, since: '1.6.0' }],
  },
  {
    name: 'messages',
    since: '1.6.0',
    columns: [
      { name: 'id', type: 'id', since: '1.6.0' },
      { name: 'conversation_id', type: 'int', since: '1.6.0', note: 'conversations.id' },
      { name: 'role', type: { varchar: 16 }, since: '1.6.0', note: 'system, user or assistant' },
      { name: 'content', type: 'text', since: '1.6.0' },
      { name: 'model', type: { varchar: 100 }, nullable: true, since: '1.6.0', note: 'the model that answered (assistant messages)' },
      { name: 'file_ids', type: 'text', nullable: true, since: '1.9.0', note: 'JSON array of files.id attached to the message' },
      createdAt,
    ],
    indexes: [{ name: 'messages_conversation', columns: ['conversation_id'], unique: false, since: '1.6.0' }],
  },
  {
    name: 'files',
    since: '1.6.0',
    columns: [
      { name: 'id', type: 'id', since: '1.6.0' },
      { name: 'user_id', type: 'int', since: '1.6.0', note: 'users.id' },
      { name: 'filename', type: { varchar: 255 }, since: '1.6.0', note: 'the name it was uploaded with' },
      { name: 'path', type: { varchar: 512 }, since: '1.6.0', note: 'relative to the uploads directory: YYYY/MM/<random>-<filename> until 1.9, <sha256[0..2]>/<sha256> from 2.0.0' },
      { name: 'content_type', type: { varchar: 127 }, nullable: true, since: '1.7.0' },
      { name: 'size', type: 'bigint', since: '1.6.0', note: 'bytes' },
      { name: 'sha256', type: { char: 64 }, nullable: true, since: '1.9.0', note: 'hex digest of the bytes (uploads from 1.9 on; all rows from 2.0.0)' },
      createdAt,
    ],
    indexes: [],
  },
  {
    name: 'api_keys',
    since: '1.6.0',
    columns: [
      { name: 'id', type: 'id', since: '1.6.0' },
      { name: 'user_id', type: 'int', since: '1.6.0', note: 'users.id' },
      { name: 'name', type: { varchar: 100 }, since: '1.6.0' },
      { name: 'key', type: { varchar: 64 }, since: '1.6.0', until: '1.7.0', note: 'the secret in the clear: sk- and 48 letters and digits' },
      { name: 'key_hash', type: { char: 64 }, nullable: true, since: '1.7.0', note: 'sha256 hex of the whole secret (sk-…); set on every row by 1.7.0' },
      { name: 'key_prefix', type: { varchar: 12 }, nullable: true, since: '1.7.0', note: 'the first 8 characters, for people to recognise the key' },
      { name: 'expires_at', type: 'timestamp', nullable: true, since: '1.8.0', note: 'NULL: never' },
      { name: 'revoked', type: 'flag', default: 0, since: '1.6.0' },
      { name: 'last_used_at', type: 'timestamp', nullable: true, since: '1.6.0' },
      createdAt,
    ],
    indexes: [
      { name: 'api_keys_key', columns: ['key'], unique: true, since: '1.6.0', until: '1.7.0' },
      { name: 'api_keys_key_hash', columns: ['key_hash'], unique: true, since: '1.7.0' },
    ],
  },
  {
    name: 'presets',
    since: '1.6.0',
    columns: [
      { name: 'id', type: 'id', since: '1.6.0' },
      { name: 'user_id', type: 'int', nullable: true, since: '1.6.0', note: 'users.id; NULL: shared with everyone' },
      { name: 'name', type: { varchar: 100 }, since: '1.6.0' },
      { name: 'description', type: { varchar: 255 }, nullable: true, since: '1.9.0' },
      { name: 'system_prompt', type: 'text', since: '1.6.0' },
      { name: 'model', type: { varchar: 100 }, nullable: true, since: '1.6.0' },
      { name: 'temperature', type: 'real', nullable: true, since: '1.6.0' },
      { name: 'visibility', type: { varchar: 16 }, default: 'private', since: '1.9.0', note: "private, team or public (1.9.0 sets 'team' on shared presets)" },
      createdAt,
    ],
    indexes: [],
  },
  {
    name: 'roles',
    since: '2.0.0',
    columns: [
      { name: 'id', type: 'int', since: '2.0.0', note: '1 admin, 2 user' },
      { name: 'name', type: { varchar: 32 }, since: '2.0.0' },
      { name: 'description', type: { varchar: 255 }, nullable: true, since: '2.0.0' },
    ],
    primaryKey: ['id'],
    indexes: [{ name: 'roles_name', columns: ['name'], unique: true, since: '2.0.0' }],
  },
  {
    name: 'permissions',
    since: '2.0.0',
    columns: [
      { name: 'role_id', type: 'int', since: '2.0.0', note: 'roles.id' },
      { name: 'permission', type: { varchar: 64 }, since: '2.0.0', note: 'e.g. chat, keys.own, admin.users' },
    ],
    primaryKey: ['role_id', 'permission'],
    indexes: [],
  },
  {
    name: 'user_roles',
    since: '2.0.0',
    columns: [
      { name: 'user_id', type: 'int', since: '2.0.0', note: 'users.id' },
      { name: 'role_id', type: 'int', since: '2.0.0', note: 'roles.id' },
    ],
    primaryKey: ['user_id', 'role_id'],
    indexes: [],
  },
];

/** Version order (these are all x.y.z with small numbers). */
export function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (Number.isNaN(d)) return a < b ? -1 : a > b ? 1 : 0;
    if (d !== 0) return d;
  }
  return 0;
}

/** Whether something introduced at `since` and removed at `until` is there at `version`. */
export function presentAt(item: { since: LegacyVersion; until?: LegacyVersion }, version: LegacyVersion): boolean {
  return compareVersions(item.since, version) <= 0 && (item.until === undefined || compareVersions(version, item.until) < 0);
}

/** The tables of `version`, with only that version's columns and indexes. */
export function schemaAt(version: LegacyVersion): LegacyTable[] {
  return LEGACY_TABLES.filter((t) => presentAt(t, version)).map((t) => ({
    ...t,
    columns: t.columns.filter((c) => presentAt(c, version)),
    indexes: t.indexes.filter((i) => presentAt(i, version)),
  }));
}

export function legacyTable(name: string): LegacyTable {
  const table = LEGACY_TABLES.find((t) => t.name === name);
  if (!table) throw new Error(`no legacy table ${name}`);
  return table;
}

export function legacyColumn(table: string, column: string): LegacyColumn {
  const found = legacyTable(table).columns.find((c) => c.name === column);
  if (!found) throw new Error(`no legacy column ${table}.${column}`);
  return found;
}

/** The SQL type of a column on a dialect (as text, for Kysely's schema builder and for the docs). */
export function sqlType(type: ColumnType, dialect: SqlDialectName): string {
  if (typeof type === 'object') return 'varchar' in type ? `varchar(${type.varchar})` : `char(${type.char})`;
  switch (type) {
    case 'id':
      return dialect === 'postgres' ? 'serial' : 'integer';
    case 'int':
      return 'integer';
    case 'bigint':
      return 'bigint';
    case 'flag':
      return 'smallint';
    case 'real':
      return dialect === 'mysql' ? 'double' : 'real';
    case 'text':
      return 'text';
    case 'timestamp':
      // MySQL's TIMESTAMP stops in 2038 and converts time zones: 1.x used DATETIME there.
      return dialect === 'mysql' ? 'datetime' : 'timestamp';
  }
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

/** Kysely's column builder callback for a column (used by CREATE TABLE and ALTER TABLE ADD COLUMN). */
function columnOptions(column: LegacyColumn, dialect: SqlDialectName) {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return (c: any) => {
    let b = c;
    if (column.type === 'id') {
      b = b.primaryKey();
      if (dialect !== 'postgres') b = b.autoIncrement();
      return b;
    }
    if (!column.nullable) b = b.notNull();
    if (column.default === 'now') b = b.defaultTo(sql`CURRENT_TIMESTAMP`);
    else if (column.default !== undefined) b = b.defaultTo(column.default);
    return b;
  };
}

/** CREATE TABLE for `table` as it is at its version (the fixture generator; the 2.0.0 step's new tables). */
export async function createLegacyTable(db: AnyDb, dialect: SqlDialectName, table: LegacyTable, ifNotExists = false): Promise<void> {
  let builder = db.schema.createTable(table.name);
  if (ifNotExists) builder = builder.ifNotExists();
  for (const column of table.columns) builder = builder.addColumn(column.name, sql.raw(sqlType(column.type, dialect)), columnOptions(column, dialect));
  if (table.primaryKey) builder = builder.addPrimaryKeyConstraint(`${table.name}_pkey`, table.primaryKey as never);
  await builder.execute();
  for (const index of table.indexes) await ensureIndex(db, dialect, table.name, index);
}

/** ALTER TABLE … ADD COLUMN with the column's definition. */
export async function addLegacyColumn(db: AnyDb, dialect: SqlDialectName, table: string, column: LegacyColumn): Promise<void> {
  await db.schema.alterTable(table).addColumn(column.name, sql.raw(sqlType(column.type, dialect)), columnOptions(column, dialect)).execute();
}

/** The columns each table has now (lower-case names), read from the database itself. */
export async function liveColumns(db: AnyDb): Promise<Map<string, Set<string>>> {
  const tables = await db.introspection.getTables();
  return new Map(tables.map((t) => [t.name.toLowerCase(), new Set(t.columns.map((c) => c.name.toLowerCase()))]));
}

/** Whether an index of that name exists (MySQL has no CREATE/DROP INDEX IF [NOT] EXISTS). */
export async function indexExists(db: AnyDb, dialect: SqlDialectName, table: string, name: string): Promise<boolean> {
  switch (dialect) {
    case 'sqlite':
      return (await sql<{ n: number }>`select count(*) as n from sqlite_master where type = 'index' and name = ${name}`.execute(db)).rows[0]!.n > 0;
    case 'mysql':
      return Number((await sql<{ n: number }>`select count(*) as n from information_schema.statistics where table_schema = database() and table_name = ${table} and index_name = ${name}`.execute(db)).rows[0]!.n) > 0;
    case 'postgres':
      return Number((await sql<{ n: number }>`select count(*) as n from pg_indexes where schemaname = current_schema() and indexname = ${name}`.execute(db)).rows[0]!.n) > 0;
  }
}

export async function ensureIndex(db: AnyDb, dialect: SqlDialectName, table: string, index: LegacyIndex): Promise<void> {
  if (await indexExists(db, dialect, table, index.name)) return;
  let builder = db.schema.createIndex(index.name).on(table).columns(index.columns);
  if (index.unique) builder = builder.unique();
  await builder.execute();
}

export async function dropIndexIfExists(db: AnyDb, dialect: SqlDialectName, table: string, name: string): Promise<void> {
  if (!(await indexExists(db, dialect, table, name))) return;
  let builder = db.schema.dropIndex(name);
  if (dialect === 'mysql') builder = builder.on(table);
  await builder.execute();
}

/** A time as every dialect's TIMESTAMP/DATETIME takes it: `YYYY-MM-DD HH:MM:SS` (UTC). */
export function sqlTime(date: Date): string {
  return date.toISOString().slice(0, 19).replace('T', ' ');
}

/** A TIMESTAMP/DATETIME as read back (a Date from mysql2/pg, text from SQLite) as ISO 8601 UTC. */
export function isoTime(value: unknown): string | undefined {
  if (value === null || value === undefined) return undefined;
  // mysql2 and pg read a DATETIME / TIMESTAMP WITHOUT TIME ZONE as local time; 1.x wrote UTC.
  if (value instanceof Date) return new Date(Date.UTC(value.getFullYear(), value.getMonth(), value.getDate(), value.getHours(), value.getMinutes(), value.getSeconds(), value.getMilliseconds())).toISOString();
  const text = String(value);
  const date = new Date(/[zZ]|[+-]\d\d:?\d\d$/.test(text) ? text : `${text.replace(' ', 'T')}Z`);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}
