/**
 * `switchyard migrate` and `serve` as child processes: a database holding a v1.x installation is
 * refused with one line and a non-zero status, untouched (SQLite embedded, MariaDB distributed);
 * several processes migrating one fresh SQLite database at once apply each migration once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { sql } from 'kysely';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { openSqlDatabase } from '../../src/adapters/sql/database.js';
import { migrations } from '../../migrations/index.js';
import { TEST_SECRET } from '../support/app.js';
import { runCli } from '../support/cli.js';
import { distributedEnv } from '../support/modes.js';

const services = inject('services');
const urls = inject('serviceUrls');
const REFUSAL = 'this database holds a Switchyard 1.8.0 installation: upgrade it with "switchyard upgrade --from <url>" into a new database';
const LEGACY_ROWS = [
  ['1.6.0', 'initial schema'],
  ['1.7.0', 'api keys hashed'],
  ['1.8.0', 'files keep a path'],
];

/** Runs the CLI to its end: exit status and output, whatever the status. */
const cli = (env: Record<string, string>, ...args: string[]) =>
  runCli(args, { ...process.env, SECRET: TEST_SECRET, LOG_LEVEL: 'warn', SERVER_PORT: '0', METRICS_PORT: '0', HOST: '127.0.0.1', ...env }, { timeoutMs: 60_000 });

describe('switchyard migrate / serve against a database', () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    while (cleanups.length) await cleanups.pop()!();
  });
  const dataDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'sy-cli-migrate-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    return dir;
  };

  it('refuses a v1.x installation on SQLite with one line, for migrate and serve, and changes nothing', async () => {
    const dir = dataDir();
    const legacy = new Database(join(dir, 'readmodels.db'));
    legacy.exec('CREATE TABLE schema_migrations (version VARCHAR(32) PRIMARY KEY, applied_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP, description TEXT)');
    legacy.exec('CREATE TABLE users (id INTEGER PRIMARY KEY, email TEXT, is_admin INTEGER)');
    for (const [version, description] of LEGACY_ROWS) legacy.prepare('INSERT INTO schema_migrations (version, description) VALUES (?, ?)').run(version, description);
    const tablesBefore = legacy.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all();
    legacy.close();

    for (const command of ['migrate', 'serve']) {
      const result = await cli({ DATA_DIR: dir }, command);
      expect(result.code, command).not.toBe(0);
      expect(result.stderr.trim(), command).toBe(REFUSAL);
      expect(result.stdout).not.toContain('schema is up to date');
    }
    const after = new Database(join(dir, 'readmodels.db'), { readonly: true });
    try {
      expect(after.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all()).toEqual(tablesBefore);
      expect(after.prepare('SELECT version FROM schema_migrations ORDER BY version').all()).toEqual(LEGACY_ROWS.map(([version]) => ({ version })));
    } finally {
      after.close();
    }
  });

  it.skipIf(!services.mysql || !services.nats || !services.redis)('refuses a v1.x installation on MariaDB (distributed) the same way', async () => {
    const mode = distributedEnv(urls, 'mysql');
    cleanups.push(() => mode.cleanup());
    const db = await openSqlDatabase({ kind: 'mysql', host: mode.env.SQLDB_HOST!, port: Number(mode.env.SQLDB_PORT), user: mode.env.SQLDB_USER!, password: mode.env.SQLDB_PASSWORD ?? '', database: mode.env.SQLDB_NAME!, maxConnections: 2, maxIdle: 1, connMaxLifetimeMs: 60_000 });
    try {
      await sql.raw('CREATE TABLE schema_migrations (version VARCHAR(32) PRIMARY KEY, applied_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP, description TEXT)').execute(db.db);
      for (const [version, description] of LEGACY_ROWS) await sql`INSERT INTO schema_migrations (version, description) VALUES (${version}, ${description})`.execute(db.db);
      const result = await cli({ ...mode.env, DATA_DIR: dataDir() }, 'migrate');
      expect(result.code).not.toBe(0);
      expect(result.stderr.trim()).toBe(REFUSAL);
      expect((await db.db.introspection.getTables()).map((t) => t.name)).toEqual(['schema_migrations']);
    } finally {
      await db.close();
    }
  });

  it('several processes migrating one fresh SQLite database at once apply each migration once', async () => {
    const dir = dataDir();
    const results = await Promise.all([1, 2, 3].map(() => cli({ DATA_DIR: dir }, 'migrate')));
    for (const r of results) {
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout.trim()).toBe('schema is up to date');
    }
    const db = new Database(join(dir, 'readmodels.db'), { readonly: true });
    try {
      expect(db.prepare('SELECT version FROM schema_migrations ORDER BY version').all()).toEqual(Object.keys(migrations).sort().map((version) => ({ version })));
    } finally {
      db.close();
    }
  });
});
