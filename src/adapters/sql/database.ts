/**
 * The one query layer for read models: Kysely over SQLite (embedded), MySQL/MariaDB (mysql2) or
 * PostgreSQL (pg). Drivers are imported lazily so the embedded default never loads the others.
 */
import { mkdirSync } from 'node:fs';
import type { Database as SqliteHandle, Statement } from 'better-sqlite3';
import { dirname } from 'node:path';
import { Kysely, MysqlDialect, PostgresDialect, SqliteDialect, sql, type Dialect } from 'kysely';
import type { Config } from '../../config.js';
import { AppError } from '../../errors.js';
import type { ReadModelTables } from './schema.js';

export type SqlDialectName = 'sqlite' | 'mysql' | 'postgres';

export interface SqlDatabase {
  db: Kysely<ReadModelTables>;
  dialect: SqlDialectName;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export class DatabaseConnectionError extends AppError {
  constructor(detail: string) {
    super(503, 'service_unavailable', 'database_unavailable', `Failed to connect to database: ${detail}`);
  }
}

export type ReadModelConfig = Config['readModels'];

/** Opens the read-model database; for MySQL and PostgreSQL the database is created if missing. */
export async function openSqlDatabase(config: ReadModelConfig): Promise<SqlDatabase> {
  const dialect = await createDialect(config);
  const db = new Kysely<ReadModelTables>({ dialect });
  const handle: SqlDatabase = {
    db,
    dialect: config.kind,
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    close: () => db.destroy(),
  };
  try {
    await handle.ping();
  } catch (error) {
    await db.destroy().catch(() => undefined);
    throw new DatabaseConnectionError(describe(error));
  }
  return handle;
}

function describe(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) return describe(error.errors[0]);
  if (error instanceof Error) return error.message || (error as NodeJS.ErrnoException).code || error.name;
  return String(error);
}

async function createDialect(config: ReadModelConfig): Promise<Dialect> {
  switch (config.kind) {
    case 'sqlite': {
      const { default: Database } = await import('better-sqlite3');
      if (config.file !== ':memory:') mkdirSync(dirname(config.file), { recursive: true });
      const database = new Database(config.file);
      database.pragma('journal_mode = WAL');
      database.pragma('busy_timeout = 5000');
      database.pragma('synchronous = NORMAL');
      return new SqliteDialect({ database: withStatementCache(database) });
    }
    case 'mysql': {
      const mysql = await import('mysql2');
      const mysqlPromise = await import('mysql2/promise');
      await ensureDatabase(config, async () => {
        const conn = await mysqlPromise.createConnection({ host: config.host, port: config.port, user: config.user, password: config.password, connectTimeout: 5000 });
        try {
          await conn.query(`CREATE DATABASE IF NOT EXISTS \`${config.database.replace(/`/g, '')}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
        } finally {
          await conn.end();
        }
      });
      const pool = mysql.createPool({
        host: config.host,
        port: config.port,
        user: config.user,
        password: config.password,
        database: config.database,
        connectionLimit: config.maxConnections,
        maxIdle: config.maxIdle,
        idleTimeout: config.connMaxLifetimeMs,
        connectTimeout: 5000,
        charset: 'utf8mb4_bin',
        // Positions and micro-credit amounts are BIGINT: read them as numbers.
        supportBigNumbers: true,
        bigNumberStrings: false,
        decimalNumbers: true,
      });
      return new MysqlDialect({ pool });
    }
    case 'postgres': {
      const pg = await import('pg');
      // int8 -> number (positions and micro-credits stay far below 2^53).
      pg.default.types.setTypeParser(20, (v: string) => Number(v));
      await ensureDatabase(config, async () => {
        const client = new pg.default.Client({ host: config.host, port: config.port, user: config.user, password: config.password, database: 'postgres', connectionTimeoutMillis: 5000 });
        await client.connect();
        try {
          const exists = await client.query('select 1 from pg_database where datname = $1', [config.database]);
          if (exists.rowCount === 0) {
            // Two instances starting together may race here: "already exists" (42P04) is success.
            await client.query(`create database "${config.database.replace(/"/g, '')}"`).catch((e: { code?: string }) => {
              if (e.code !== '42P04') throw e;
            });
          }
        } finally {
          await client.end();
        }
      });
      const pool = new pg.default.Pool({
        host: config.host,
        port: config.port,
        user: config.user,
        password: config.password,
        database: config.database,
        max: config.maxConnections,
        idleTimeoutMillis: config.connMaxLifetimeMs,
        connectionTimeoutMillis: 5000,
      });
      // An idle connection the server (or the network) drops is an 'error' on the pool: without a
      // listener it would end the process. The pool discards that connection and opens a new one
      // on the next query (which fails while the database is down, and is retried by its caller).
      pool.on('error', () => undefined);
      // The same drop while a connection is checked out (between two statements of a transaction)
      // is an 'error' on that client, which the pool does not listen to then; its next query fails
      // instead, and the transaction with it.
      pool.on('connect', (client) => client.on('error', () => undefined));
      return new PostgresDialect({ pool });
    }
  }
}

async function ensureDatabase(_config: ReadModelConfig, create: () => Promise<void>): Promise<void> {
  try {
    await create();
  } catch (error) {
    throw new DatabaseConnectionError(describe(error));
  }
}

/**
 * Kysely's SQLite driver prepares every query it runs; preparing (parsing and planning) is a
 * large share of what a projection's small INSERT or UPDATE costs, and the read models run the
 * same few statements over and over. Keeps the most recently used prepared statements, by SQL
 * text. (No query here is streamed: a statement being iterated could not be shared.)
 */
function withStatementCache(database: SqliteHandle, size = 512) {
  const cache = new Map<string, Statement>();
  return {
    close: () => database.close(),
    prepare(sql: string) {
      let statement = cache.get(sql);
      if (statement) {
        cache.delete(sql); // re-inserted below: most recently used last
      } else {
        statement = database.prepare(sql);
        if (cache.size >= size) cache.delete(cache.keys().next().value!);
      }
      cache.set(sql, statement);
      return statement;
    },
  };
}
