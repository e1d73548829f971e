/**
 * Databases named by URL, for the commands that read another installation (`switchyard upgrade`,
 * `switchyard import`): `sqlite:/abs/file.db` (or `sqlite:///abs/file.db`, `sqlite:relative.db`),
 * `mysql://user:pass@host:3306/db` (`mariadb://` too) and `postgres://` / `postgresql://`.
 * Opened with the read models' own opener (same drivers and settings).
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Kysely } from 'kysely';
import { openSqlDatabase, type ReadModelConfig, type SqlDialectName } from '../adapters/sql/database.js';
import { ConfigError } from '../errors.js';

export interface UrlDatabase {
  /** Untyped: the tables are another product's (or an older version's). */
  db: Kysely<any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  dialect: SqlDialectName;
  /** The URL without its password, for messages and reports. */
  display: string;
  close(): Promise<void>;
}

/** The read-model config a URL names; a ConfigError (one line) for anything else. */
export function parseDatabaseUrl(url: string): ReadModelConfig {
  if (url.startsWith('sqlite:')) {
    const rest = url.slice('sqlite:'.length);
    const path = rest.startsWith('//') ? rest.slice(2) : rest;
    if (!path) throw new ConfigError(`${url}: a sqlite URL names a file (sqlite:/path/to/file.db)`);
    return { kind: 'sqlite', file: resolve(decodeURIComponent(path)) };
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigError(`${displayUrl(url)} is not a database URL (sqlite:/path/file.db, mysql://user:pass@host:3306/db, postgres://user@host:5432/db)`);
  }
  const scheme = parsed.protocol.replace(/:$/, '');
  const kind = scheme === 'mysql' || scheme === 'mariadb' ? 'mysql' : scheme === 'postgres' || scheme === 'postgresql' ? 'postgres' : null;
  if (!kind) throw new ConfigError(`${displayUrl(url)}: unsupported database scheme "${scheme}" (sqlite, mysql, mariadb, postgres)`);
  const database = decodeURIComponent(parsed.pathname.replace(/^\//, ''));
  if (!database) throw new ConfigError(`${displayUrl(url)}: the URL names no database (…/<database> at its end)`);
  return {
    kind,
    host: parsed.hostname || '127.0.0.1',
    port: Number(parsed.port || (kind === 'mysql' ? 3306 : 5432)),
    user: decodeURIComponent(parsed.username || 'root'),
    password: decodeURIComponent(parsed.password),
    database,
    maxConnections: 4,
    maxIdle: 1,
    connMaxLifetimeMs: 300_000,
  };
}

/** The URL as it may be shown: the password replaced by `***`. */
export function displayUrl(url: string): string {
  return url.replace(/^([a-z]+:\/\/[^:/@]*):[^@/]*@/i, '$1:***@');
}

/**
 * Opens the database a URL names. `create`: make a missing database (fixture generators); without
 * it a missing SQLite file is an error rather than a new empty file.
 */
export async function openDatabaseUrl(url: string, options: { create?: boolean } = {}): Promise<UrlDatabase> {
  const config = parseDatabaseUrl(url);
  if (config.kind === 'sqlite' && !options.create && !existsSync(config.file)) throw new ConfigError(`${displayUrl(url)}: no such database file`);
  const opened = await openSqlDatabase(config);
  return { db: opened.db, dialect: opened.dialect, display: displayUrl(url), close: opened.close };
}
