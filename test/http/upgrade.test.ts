/**
 * `switchyard upgrade` end to end, through the real CLI as a child process: 1.x fixtures (made by
 * the generator the operators use) on SQLite, MariaDB and PostgreSQL are upgraded into embedded
 * and distributed Switchyards; then the legacy database has 2.0.0's schema and history, its
 * uploads carry content-hash names, the read models hold every imported row once, the imported
 * admin logs in with the fixture's password and the imported key relays a chat completion with
 * the `openai` SDK. Unsupported versions and dry runs change nothing; a run killed with SIGKILL
 * mid-import is resumed by running it again, without duplicates.
 */
import { execFile, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openDatabaseUrl } from '../../src/imports/database-url.js';
import { importedId, type ImportKind } from '../../src/imports/sink.js';
import { generateFixture, type FixtureSummary } from '../../src/upgrade/legacy/fixtures.js';
import { LEGACY_VERSIONS, liveColumns, schemaAt, type UpgradableVersion } from '../../src/upgrade/legacy/schema.js';
import { call, login, startApp } from '../support/app.js';
import { CLI_NODE_ARGS, CLI_SHELL, cliEnv, cliInstallation, runCli, type CliInstallation } from '../support/cli.js';
import { startOpenAiFake, type OpenAiFake } from '../support/fake-upstreams/openai.js';
import type { ServerDialect } from '../support/modes.js';
import { uniqueSuffix } from '../support/services.js';

const services = inject('services');
const urls = inject('serviceUrls');

type LegacyDialect = 'sqlite' | 'mysql' | 'postgres';

interface Legacy {
  dialect: LegacyDialect;
  url: string;
  uploads: string;
  cleanup(): Promise<void>;
}

/** A place for a legacy installation: a SQLite file or a fresh database on the server, and an uploads dir. */
function legacyPlace(dialect: LegacyDialect): Legacy {
  const dir = mkdtempSync(join(tmpdir(), 'sy-legacy-'));
  const uploads = join(dir, 'uploads');
  if (dialect === 'sqlite') return { dialect, url: `sqlite:${join(dir, 'switchyard.db')}`, uploads, cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
  const server = new URL(dialect === 'mysql' ? urls.mysql : urls.postgres);
  const name = `sy_legacy_${uniqueSuffix()}`;
  const url = `${dialect}://${server.username || 'root'}${server.password ? `:${server.password}` : ''}@${server.host}/${name}`;
  return {
    dialect,
    url,
    uploads,
    cleanup: async () => {
      const admin = await openDatabaseUrl(url.replace(`/${name}`, dialect === 'mysql' ? '/mysql' : '/postgres'));
      try {
        const { sql } = await import('kysely');
        await sql.raw(dialect === 'mysql' ? `DROP DATABASE IF EXISTS \`${name}\`` : `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).execute(admin.db);
      } finally {
        await admin.close();
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

type Target = CliInstallation;

/** A Switchyard to upgrade into: embedded, or on NATS + `dialect` + Redis. */
function target(mode: 'embedded' | 'distributed', dialect: ServerDialect = 'mysql'): Target {
  return cliInstallation(mode, {
    urls,
    dialect,
    // Not UTC: the drivers read 1.x DATETIMEs as local time, the upgrade must still read UTC.
    env: { LOG_LEVEL: 'warn', TZ: 'Asia/Tokyo' },
  });
}

const cli = runCli;

/** Every table's columns and rows, and every upload's path and bytes: "nothing changed" compares two of these. */
async function snapshot(legacy: Legacy): Promise<string> {
  const opened = await openDatabaseUrl(legacy.url);
  const tables: Record<string, unknown> = {};
  try {
    for (const table of (await opened.db.introspection.getTables()).sort((a, b) => a.name.localeCompare(b.name))) {
      const first = table.columns[0]!.name;
      tables[table.name] = { columns: table.columns.map((c) => c.name), rows: await opened.db.selectFrom(table.name).selectAll().orderBy(first).execute() };
    }
  } finally {
    await opened.close();
  }
  const files = listFiles(legacy.uploads).map((path) => [path, createHash('sha256').update(readFileSync(join(legacy.uploads, path))).digest('hex')]);
  return JSON.stringify({ tables, files });
}

function listFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((p) => statSync(join(dir, p)).isFile())
    .map((p) => relative(dir, join(dir, p)))
    .sort();
}

const idsOf = (kind: ImportKind, count: number) => Array.from({ length: count }, (_, i) => importedId('switchyard-1', kind, i + 1));

async function withLegacy<T>(legacy: Legacy, work: (db: Awaited<ReturnType<typeof openDatabaseUrl>>['db']) => Promise<T>): Promise<T> {
  const opened = await openDatabaseUrl(legacy.url);
  try {
    return await work(opened.db);
  } finally {
    await opened.close();
  }
}

describe('switchyard upgrade', () => {
  let upstream: OpenAiFake;
  beforeAll(async () => {
    upstream = await startOpenAiFake();
  });
  afterAll(async () => {
    await upstream?.close();
  });

  const fixtureOf = (legacy: Legacy, version: UpgradableVersion, extra: { users?: number; messages?: number } = {}) =>
    generateFixture({ version, url: legacy.url, uploads: legacy.uploads, channelBaseUrl: upstream.baseUrl, channelKey: 'test-key', users: extra.users ?? 5, messages: extra.messages ?? 24 });

  /** Everything an upgraded installation must show, in the legacy database and in Switchyard. */
  async function expectUpgraded(legacy: Legacy, into: Target, fixture: FixtureSummary, output: string) {
    // The legacy database: 2.0.0's tables and columns exactly, the whole history, roles from is_admin.
    await withLegacy(legacy, async (db) => {
      const live = await liveColumns(db);
      for (const table of schemaAt('2.0.0')) expect([...(live.get(table.name) ?? [])].sort(), table.name).toEqual(table.columns.map((c) => c.name).sort());
      const history = (await db.selectFrom('schema_migrations').select(['version', 'description', 'applied_at']).execute()).map((r) => String(r.version));
      expect(history.sort()).toEqual([...LEGACY_VERSIONS]);
      const roles = await db.selectFrom('user_roles').select(['user_id', 'role_id']).orderBy('user_id').execute();
      expect(roles).toHaveLength(fixture.counts.users);
      expect(roles.filter((r) => Number(r.role_id) === 1).map((r) => Number(r.user_id))).toEqual(Array.from({ length: fixture.counts.admins }, (_, i) => i + 1));
      // Uploads: at their content hash, every row's bytes there, the old names gone.
      const files = await db.selectFrom('files').select(['path', 'sha256', 'size']).execute();
      expect(files).toHaveLength(fixture.counts.files);
      for (const f of files) {
        expect(f.path).toMatch(/^[0-9a-f]{2}\/[0-9a-f]{64}$/);
        expect(String(f.path).endsWith(String(f.sha256))).toBe(true);
        const bytes = readFileSync(join(legacy.uploads, String(f.path)));
        expect(createHash('sha256').update(bytes).digest('hex')).toBe(f.sha256);
        expect(bytes.length).toBe(Number(f.size));
      }
      // The fixture's duplicate upload shares its twin's file.
      expect(listFiles(legacy.uploads)).toEqual([...new Set(files.map((f) => String(f.path)))].sort());
    });
    // No secret in anything the command printed: neither a 1.x key nor a provider key.
    expect(output).not.toContain(fixture.sample_key);
    expect(output).not.toMatch(/sk-[A-Za-z0-9]{48}/);
    expect(output).not.toContain('sk-ant-api03-');

    const s = await startApp(into.appEnv, { keepDataDir: into.dataDir });
    try {
      const db = s.app.ctx.sql.db;
      const count = async (table: 'users' | 'conversations' | 'api_keys' | 'presets' | 'channels' | 'files', kind: ImportKind, n: number) =>
        Number((await db.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).where('id', 'in', idsOf(kind, n)).executeTakeFirstOrThrow()).n);
      expect(await count('users', 'user', fixture.counts.users)).toBe(fixture.counts.users);
      expect(await count('conversations', 'conversation', fixture.counts.conversations)).toBe(fixture.counts.conversations);
      expect(await count('api_keys', 'key', fixture.counts.api_keys)).toBe(fixture.counts.api_keys);
      // Key state: user 2's key expires in 2099 (from 1.8 on), the admin's old CI key (the last one) is revoked.
      const keys = await db.selectFrom('api_keys').select(['id', 'policy', 'revoked']).where('id', 'in', idsOf('key', fixture.counts.api_keys)).execute();
      const keyById = new Map(keys.map((k) => [k.id, k]));
      expect(Number(keyById.get(importedId('switchyard-1', 'key', fixture.counts.api_keys))!.revoked)).toBe(1);
      expect(Number(keyById.get(importedId('switchyard-1', 'key', 1))!.revoked)).toBe(0);
      const expiry = (JSON.parse(String(keyById.get(importedId('switchyard-1', 'key', 2))!.policy)) as { expires_at: string | null }).expires_at;
      expect(expiry).toBe(fixture.version >= '1.8.0' ? '2099-01-01T00:00:00.000Z' : null);
      expect(await count('presets', 'preset', fixture.counts.presets)).toBe(fixture.counts.presets);
      expect(await count('channels', 'channel', fixture.counts.channels)).toBe(fixture.counts.channels);
      expect(await count('files', 'file', fixture.counts.files)).toBe(fixture.counts.files);
      const messages = await db.selectFrom('conversation_messages').select((eb) => eb.fn.countAll().as('n')).where('conversation_id', 'in', idsOf('conversation', fixture.counts.conversations)).executeTakeFirstOrThrow();
      expect(Number(messages.n)).toBe(fixture.counts.messages);

      // The imported admin logs in with the 1.x password and is an admin here.
      const admin = await login(s.url, fixture.admin.email, fixture.admin.password);
      expect((await call(`${s.url}/v1/admin/users`, { token: admin.access_token })).status).toBe(200);
      // The imported key relays through the imported channel.
      const before = upstream.requests.length;
      const client = new OpenAI({ apiKey: fixture.sample_key, baseURL: `${s.url}/v1`, maxRetries: 0 });
      const completion = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello after the upgrade' }] });
      expect(completion.choices[0]!.message.content).toBeTruthy();
      expect(upstream.requests.length).toBe(before + 1);
      expect(upstream.requests.at(-1)!.headers.authorization).toBe('Bearer test-key');
    } finally {
      await s.close();
    }
  }

  // Every version on SQLite and on MariaDB, each dialect into both modes; PostgreSQL once.
  const paths: Array<{ dialect: LegacyDialect; mode: 'embedded' | 'distributed'; server?: ServerDialect; versions: readonly UpgradableVersion[] }> = [
    { dialect: 'sqlite', mode: 'embedded', versions: ['1.6.0', '1.8.0'] },
    { dialect: 'sqlite', mode: 'distributed', server: 'mysql', versions: ['1.7.0', '1.9.0'] },
    { dialect: 'mysql', mode: 'distributed', server: 'mysql', versions: ['1.6.0', '1.8.0'] },
    { dialect: 'mysql', mode: 'embedded', versions: ['1.7.0', '1.9.0'] },
    { dialect: 'postgres', mode: 'distributed', server: 'postgres', versions: ['1.6.0'] },
  ];
  for (const path of paths) {
    const available = (path.dialect === 'sqlite' || services[path.dialect]) && (path.mode === 'embedded' || (services.nats && services.redis && services[path.server ?? 'mysql']));
    for (const version of path.versions) {
      it.skipIf(!available)(`${version} on ${path.dialect} -> 2.0.0 in ${path.mode}${path.server ? ` (${path.server})` : ''}`, { timeout: 120_000 }, async () => {
        const legacy = legacyPlace(path.dialect);
        const into = target(path.mode, path.server);
        try {
          const fixture = await fixtureOf(legacy, version);
          const result = await cli(['upgrade', '--from', legacy.url, '--uploads', legacy.uploads], into.env);
          expect(result.code, result.stderr).toBe(0);
          expect(result.stdout).toContain(`Switchyard ${version}, upgrading through`);
          expect(result.stdout).toContain('upgraded to 2.0.0');
          expect(result.stdout).toContain(`messages: ${fixture.counts.messages} new, 0 already there, 0 skipped`);
          expect(result.stderr).toMatch(/2\.0\.0 messages .*100%/); // progress (a line, not a bar: stderr is a pipe)
          await expectUpgraded(legacy, into, fixture, result.stdout + result.stderr);
          if (version === '1.6.0') {
            // Done once: a second run has nothing to do.
            const again = await cli(['upgrade', '--from', legacy.url, '--uploads', legacy.uploads], into.env);
            expect(again).toMatchObject({ code: 0, stdout: 'already current\n' });
          }
        } finally {
          await into.cleanup();
          await legacy.cleanup();
        }
      });
    }
  }

  for (const dialect of ['sqlite', 'mysql'] as const) {
    it.skipIf(dialect !== 'sqlite' && !services[dialect])(`unsupported starting versions (1.5.0, 3.0.0) on ${dialect}: the message, a non-zero status, nothing changed`, { timeout: 60_000 }, async () => {
      const legacy = legacyPlace(dialect);
      const into = target('embedded');
      try {
        await fixtureOf(legacy, '1.6.0');
        for (const [version, rewrite] of [
          ['1.5.0', async (db: Awaited<ReturnType<typeof openDatabaseUrl>>['db']) => {
            await db.deleteFrom('schema_migrations').execute();
            await db.insertInto('schema_migrations').values([{ version: '1.4.2', description: 'old' }, { version: '1.5.0', description: 'older line' }]).execute();
          }],
          ['3.0.0', async (db: Awaited<ReturnType<typeof openDatabaseUrl>>['db']) => {
            await db.insertInto('schema_migrations').values({ version: '3.0.0', description: 'from the future' }).execute();
          }],
        ] as const) {
          await withLegacy(legacy, rewrite);
          const before = await snapshot(legacy);
          const result = await cli(['upgrade', '--from', legacy.url, '--uploads', legacy.uploads], into.env);
          expect(result.code).not.toBe(0);
          expect(result.stderr.trim()).toBe(`unsupported upgrade path from ${version}`);
          expect(result.stdout).toBe('');
          expect(await snapshot(legacy)).toBe(before);
          expect(readdirSync(into.dataDir)).toEqual([]); // Switchyard was not even opened
        }
      } finally {
        await into.cleanup();
        await legacy.cleanup();
      }
    });
  }

  it.skipIf(!services.mysql)('a schema step interrupted half-way on MariaDB (DDL not transactional) is completed by the next run', { timeout: 120_000 }, async () => {
    const legacy = legacyPlace('mysql');
    const into = target('embedded');
    try {
      const fixture = await fixtureOf(legacy, '1.6.0');
      // What a 1.7.0 step killed after its ALTERs and two of its updates leaves behind.
      await withLegacy(legacy, async (db) => {
        await db.schema.alterTable('api_keys').addColumn('key_hash', 'char(64)').execute();
        await db.schema.alterTable('api_keys').addColumn('key_prefix', 'varchar(12)').execute();
        for (const row of await db.selectFrom('api_keys').select(['id', 'key']).where('id', '<=', 2).execute()) {
          await db.updateTable('api_keys').set({ key_hash: createHash('sha256').update(String(row.key)).digest('hex'), key_prefix: String(row.key).slice(0, 8) }).where('id', '=', row.id).execute();
        }
      });
      const result = await cli(['upgrade', '--from', legacy.url, '--uploads', legacy.uploads], into.env);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toContain(`hashed ${fixture.counts.api_keys - 2} API key(s)`);
      expect(result.stdout).toContain('added files.content_type\n'); // the key columns were there already
      await withLegacy(legacy, async (db) => {
        const keys = await db.selectFrom('api_keys').select(['key_hash', 'key_prefix']).execute();
        expect(keys.every((k) => /^[0-9a-f]{64}$/.test(String(k.key_hash)) && String(k.key_prefix).startsWith('sk-'))).toBe(true);
        expect(new Set(keys.map((k) => k.key_hash)).size).toBe(fixture.counts.api_keys);
      });
      await expectUpgraded(legacy, into, fixture, result.stdout + result.stderr);
    } finally {
      await into.cleanup();
      await legacy.cleanup();
    }
  });

  it('an upload missing from the uploads directory is reported and left as it was; the rest is imported', { timeout: 120_000 }, async () => {
    const legacy = legacyPlace('sqlite');
    const into = target('embedded');
    try {
      const fixture = await fixtureOf(legacy, '1.9.0');
      const lost = await withLegacy(legacy, (db) => db.selectFrom('files').select(['id', 'filename', 'path']).where('id', '=', 2).executeTakeFirstOrThrow());
      rmSync(join(legacy.uploads, String(lost.path)));
      const result = await cli(['upgrade', '--from', legacy.url, '--uploads', legacy.uploads], into.env);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toContain(`1 missing from the uploads directory`);
      expect(result.stdout).toContain(`files: ${fixture.counts.files - 1} new, 0 already there, 1 skipped`);
      expect(result.stdout).toContain(`not imported: file 2 (${lost.filename}): not in the uploads directory (${lost.path})`);
      // Its message (it was attached to one) is imported all the same.
      expect(result.stdout).toContain(`messages: ${fixture.counts.messages} new, 0 already there, 0 skipped`);
      expect(result.stdout).toContain('upgraded to 2.0.0');
      const row = await withLegacy(legacy, (db) => db.selectFrom('files').select('path').where('id', '=', 2).executeTakeFirstOrThrow());
      expect(row.path).toBe(lost.path);
    } finally {
      await into.cleanup();
      await legacy.cleanup();
    }
  });

  it.skipIf(spawnSync('sh', ['-c', 'command -v script']).status !== 0)('on a terminal the long steps draw a progress bar, redrawn in place', { timeout: 120_000 }, async () => {
    const legacy = legacyPlace('sqlite');
    const into = target('embedded');
    try {
      const fixture = await fixtureOf(legacy, '1.9.0');
      // `script` runs the command on a pseudo-terminal, as an operator's shell would.
      const output = await new Promise<string>((resolve) => {
        execFile('script', ['-qec', `${CLI_SHELL} upgrade --from "${legacy.url}" --uploads "${legacy.uploads}"`, '/dev/null'], { env: cliEnv(into.env) }, (_error, stdout) => resolve(stdout));
      });
      const n = fixture.counts.messages;
      expect(output).toMatch(new RegExp(`\\r2\\.0\\.0 messages {2}\\[=+>? *\\] {2}${n}/${n} {2}100%`));
      expect(output).toMatch(/\r2\.0\.0 renaming files {2}\[/);
      expect(output).toContain('upgraded to 2.0.0');
    } finally {
      await into.cleanup();
      await legacy.cleanup();
    }
  });

  it('--dry-run says what each step would do, with row counts, and changes nothing anywhere', { timeout: 60_000 }, async () => {
    const legacy = legacyPlace('sqlite');
    const into = target('embedded');
    try {
      const fixture = await fixtureOf(legacy, '1.6.0');
      const before = await snapshot(legacy);
      // No SECRET needed: nothing is sealed or signed.
      const { SECRET: _secret, ...withoutSecret } = into.env;
      const result = await cli(['upgrade', '--from', legacy.url, '--uploads', legacy.uploads, '--dry-run'], withoutSecret);
      expect(result.code, result.stderr).toBe(0);
      const { counts } = fixture;
      for (const expected of [
        'upgrading through 1.7.0, 1.8.0, 1.9.0, 2.0.0 (dry run: nothing is changed)',
        `hash ${counts.api_keys} API key(s) with sha256`,
        `${counts.admins} admin(s), ${counts.users - counts.admins} user(s); drop users.is_admin`,
        `rename ${counts.files} file(s) to content-hash names`,
        `${counts.users} users, ${counts.channels} channels, ${counts.presets} presets, ${counts.api_keys} api keys, ${counts.files} files, ${counts.conversations} conversations, ${counts.messages} messages`,
      ]) {
        expect(result.stdout).toContain(expected);
      }
      expect(await snapshot(legacy)).toBe(before);
      expect(readdirSync(into.dataDir)).toEqual([]);
    } finally {
      await into.cleanup();
      await legacy.cleanup();
    }
  });

  it('the fixture generator runs from the CLI and refuses a database that already holds an installation', { timeout: 60_000 }, async () => {
    const legacy = legacyPlace('sqlite');
    const into = target('embedded');
    try {
      const args = ['upgrade', 'fixture', '1.9.0', '--to', legacy.url, '--uploads', legacy.uploads, '--users', '3', '--messages', '10', '--admin-password', 'rehearsal-pass-1'];
      const made = await cli(args, into.env);
      expect(made.code, made.stderr).toBe(0);
      const summary = JSON.parse(made.stdout) as FixtureSummary;
      expect(summary).toMatchObject({ version: '1.9.0', admin: { email: 'admin@example.com', password: 'rehearsal-pass-1' }, counts: { users: 3, messages: 10 } });
      expect(summary.sample_key).toMatch(/^sk-[A-Za-z0-9]{48}$/);
      await withLegacy(legacy, async (db) => {
        const live = await liveColumns(db);
        for (const table of schemaAt('1.9.0')) expect([...(live.get(table.name) ?? [])].sort(), table.name).toEqual(table.columns.map((c) => c.name).sort());
        const key = await db.selectFrom('api_keys').select(['key_hash', 'key_prefix']).where('id', '=', 1).executeTakeFirstOrThrow();
        expect(key).toEqual({ key_hash: createHash('sha256').update(summary.sample_key).digest('hex'), key_prefix: summary.sample_key.slice(0, 8) });
      });
      const again = await cli(args, into.env);
      expect(again.code).not.toBe(0);
      expect(again.stderr).toContain('already holds an installation');
    } finally {
      await into.cleanup();
      await legacy.cleanup();
    }
  });

  for (const [dialect, mode] of [
    ['sqlite', 'embedded'],
    ['mysql', 'distributed'],
  ] as const) {
  it.skipIf(dialect === 'mysql' && !(services.mysql && services.nats && services.redis))(`killed with SIGKILL while importing (${dialect} into ${mode}), a second run resumes: every row once`, { timeout: 240_000 }, async () => {
    const legacy = legacyPlace(dialect);
    const into = target(mode);
    try {
      // Enough messages that a kill one second into them lands mid-way: SQLite takes ~1,200 a
      // second here, JetStream + MariaDB ~200.
      const fixture = await fixtureOf(legacy, '1.8.0', { users: 20, messages: dialect === 'sqlite' ? 8000 : 2000 });
      // One process: SIGKILL must hit the upgrade itself.
      const child = spawn(process.execPath, [...CLI_NODE_ARGS, 'upgrade', '--from', legacy.url, '--uploads', legacy.uploads], {
        env: cliEnv(into.env),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let err = '';
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`the import of messages never started: ${err.slice(-2000)}`)), 120_000);
        child.stderr.on('data', (d: Buffer) => {
          err += d.toString();
          if (err.includes(`2.0.0: importing ${fixture.counts.messages} messages`)) {
            clearTimeout(timer);
            // Some messages in: kill it mid-way.
            setTimeout(() => {
              child.kill('SIGKILL');
              resolve();
            }, 1000);
          }
        });
        child.once('exit', (code) => reject(new Error(`the upgrade ended on its own (${code}) before it was killed: ${out}${err.slice(-2000)}`)));
      });
      await exited;
      expect(child.signalCode).toBe('SIGKILL');
      expect(out).not.toContain('upgraded to 2.0.0');
      // It had not finished: 2.0.0 is not recorded (the schema steps before it are).
      const history = await withLegacy(legacy, async (db) => (await db.selectFrom('schema_migrations').select('version').execute()).map((r) => String(r.version)).sort());
      expect(history).toEqual(['1.6.0', '1.7.0', '1.8.0', '1.9.0']);

      const resumed = await cli(['upgrade', '--from', legacy.url, '--uploads', legacy.uploads], into.env);
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(resumed.stdout).toContain('Switchyard 1.9.0, upgrading through 2.0.0');
      expect(resumed.stdout).toContain(`users: 0 new, ${fixture.counts.users} already there, 0 skipped`);
      const messages = /messages: (\d+) new, (\d+) already there, 0 skipped/.exec(resumed.stdout);
      expect(messages, resumed.stdout).not.toBeNull();
      // Killed mid-way: some messages were in, some were not.
      expect(Number(messages![2])).toBeGreaterThan(0);
      expect(Number(messages![1])).toBeGreaterThan(0);
      expect(Number(messages![1]) + Number(messages![2])).toBe(fixture.counts.messages);
      await expectUpgraded(legacy, into, fixture, out + err + resumed.stdout + resumed.stderr);
    } finally {
      await into.cleanup();
      await legacy.cleanup();
    }
  });
  }
});
