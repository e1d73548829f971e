/** Read-model databases for tests: a fresh SQLite file, or a fresh database on MariaDB / PostgreSQL. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqlDatabase, type ReadModelConfig, type SqlDatabase } from '../../src/adapters/sql/database.js';
import { parseDatabaseUrl } from '../../src/imports/database-url.js';
import { migrateToLatest } from '../../src/adapters/sql/migrate.js';
import { uniqueSuffix } from './services.js';

export type Dialect = 'sqlite' | 'mysql' | 'postgres';

/** Every read-model dialect, with whether it can run here (SQLite always can; the servers if they answered). */
export function dialectsHere(services: { mysql: boolean; postgres: boolean }): Array<[Dialect, boolean]> {
  return [
    ['sqlite', true],
    ['mysql', services.mysql],
    ['postgres', services.postgres],
  ];
}

export function readModelConfig(dialect: Dialect, urls: { mysql: string; postgres: string }): { config: ReadModelConfig; cleanup: () => Promise<void> } {
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'sy-rm-'));
    return { config: { kind: 'sqlite', file: join(dir, 'readmodels.db') }, cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const database = `sy_test_${uniqueSuffix()}`;
  const url = new URL(dialect === 'mysql' ? urls.mysql : urls.postgres);
  url.pathname = `/${database}`;
  const parsed = parseDatabaseUrl(url.toString());
  if (parsed.kind === 'sqlite') throw new Error(`expected a ${dialect} URL`);
  const config: ReadModelConfig = { ...parsed, maxConnections: 10, maxIdle: 2, connMaxLifetimeMs: 60_000 };
  return {
    config,
    cleanup: async () => {
      // Drop through a connection to the server's default database.
      const admin = await openSqlDatabase({ ...config, database: dialect === 'mysql' ? 'mysql' : 'postgres' });
      try {
        const { sql } = await import('kysely');
        if (dialect === 'mysql') await sql.raw(`DROP DATABASE IF EXISTS \`${database}\``).execute(admin.db);
        else await sql.raw(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`).execute(admin.db);
      } finally {
        await admin.close();
      }
    },
  };
}

/** Opens and migrates a fresh read-model database. */
export async function freshDatabase(dialect: Dialect, urls: { mysql: string; postgres: string }): Promise<{ sql: SqlDatabase; config: ReadModelConfig; cleanup: () => Promise<void> }> {
  const { config, cleanup } = readModelConfig(dialect, urls);
  const sql = await openSqlDatabase(config);
  await migrateToLatest(sql.db);
  return {
    sql,
    config,
    cleanup: async () => {
      await sql.close().catch(() => undefined);
      await cleanup();
    },
  };
}
