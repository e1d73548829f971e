/**
 * First start: the default tenant and the root admin, from ADMIN_EMAIL / ADMIN_PASSWORD or with a
 * generated password logged once; idempotent across restarts and across instances starting together.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { pino } from 'pino';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { SqliteEventStore } from '../../src/adapters/event-store/sqlite.js';
import { Metrics } from '../../src/api/metrics.js';
import { bootstrap, INITIAL_PASSWORD_FILE, ROOT_ADMIN_ID } from '../../src/bootstrap.js';
import { CommandBus } from '../../src/commands/bus.js';
import { loadConfig } from '../../src/config.js';
import { CHAT_DEFAULTS } from '../../src/conversations/preferences.js';
import type { Logger } from '../../src/logger.js';
import { call, login, startApp, TEST_SECRET } from '../support/app.js';
import { CLI_NODE_ARGS } from '../support/cli.js';
import { readModelConfig } from '../support/databases.js';
import { uniqueSuffix } from '../support/services.js';

interface LogLine {
  level: number;
  msg: string;
  admin_email?: string;
}

function capturingLogger(): { logger: Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) });
  return { logger, lines };
}

/** The warn lines that announce a generated password (which they never hold: it is in the file). */
function announcements(lines: LogLine[]): LogLine[] {
  return lines.filter((l) => l.level === 40 && l.msg.includes('created with a generated password'));
}

/** The generated password from DATA_DIR's initial-admin-password file (email, then password). */
function passwordFile(dataDir: string): { email: string; password: string; mode: number } | null {
  const file = join(dataDir, INITIAL_PASSWORD_FILE);
  if (!existsSync(file)) return null;
  const [email, password] = readFileSync(file, 'utf8').split('\n');
  return { email: email!, password: password!, mode: statSync(file).mode & 0o777 };
}

describe('bootstrap', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('creates the default tenant and a root admin from ADMIN_EMAIL / ADMIN_PASSWORD', async () => {
    const { logger, lines } = capturingLogger();
    const s = await startApp({ ADMIN_EMAIL: 'Root@Example.com', ADMIN_PASSWORD: 'given-root-password' }, { logger, anonymous: true });
    try {
      const tokens = await login(s.url, 'root@example.com', 'given-root-password');
      expect(tokens).toMatchObject({ token_type: 'Bearer', expires_in: 24 * 3600 });
      const me = await call(`${s.url}/v1/users/me`, { token: tokens.access_token });
      expect(me.json).toEqual({ id: ROOT_ADMIN_ID, email: 'root@example.com', tenant_id: 'default', role: 'admin', permissions: ['*'], mfa_enabled: false, preferences: {}, chat_defaults: CHAT_DEFAULTS });
      const tenant = await call(`${s.url}/v1/admin/tenants/default`, { token: tokens.access_token });
      expect(tenant.json).toMatchObject({ id: 'default', object: 'tenant', name: 'Default', disabled: false });
      expect(announcements(lines)).toEqual([]);
      expect(passwordFile(s.dataDir)).toBeNull();
      expect(JSON.stringify(lines)).not.toContain('given-root-password');
    } finally {
      await s.close();
    }
  });

  it('without ADMIN_PASSWORD generates one into a 0600 file under DATA_DIR (never into the log), and a restart creates nothing again', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'sy-boot-'));
    dirs.push(dataDir);
    const first = capturingLogger();
    let s = await startApp({ ADMIN_PASSWORD: '', ADMIN_EMAIL: '' }, { logger: first.logger, anonymous: true, keepDataDir: dataDir });
    const written = passwordFile(dataDir);
    expect(written).toMatchObject({ email: 'admin@switchyard.local', mode: 0o600 });
    const password = written!.password;
    expect(password).toMatch(/^[A-Za-z0-9_-]{24}$/);
    expect(announcements(first.lines)).toHaveLength(1);
    expect(announcements(first.lines)[0]!.msg).toContain('admin@switchyard.local');
    expect(JSON.stringify(first.lines)).not.toContain(password);
    const tokens = await login(s.url, 'admin@switchyard.local', password!);
    expect((await call(`${s.url}/v1/users/me`, { token: tokens.access_token })).json).toMatchObject({ id: ROOT_ADMIN_ID, role: 'admin', tenant_id: 'default' });
    await s.app.close();

    // Second start, even with ADMIN_PASSWORD set now: nothing is created, nothing printed.
    const second = capturingLogger();
    s = await startApp({ ADMIN_PASSWORD: 'a-later-password' }, { logger: second.logger, anonymous: true, keepDataDir: dataDir });
    try {
      expect(announcements(second.lines)).toEqual([]);
      expect(await s.app.ctx.store.readStream(`user-${ROOT_ADMIN_ID}`)).toHaveLength(1);
      expect(await s.app.ctx.store.readStream('tenant-default')).toHaveLength(1);
      await login(s.url, 'admin@switchyard.local', password!); // the first password still holds
      expect((await call(`${s.url}/v1/auth/login`, { body: { email: 'admin@switchyard.local', password: 'a-later-password' } })).status).toBe(401);
      expect((await call(`${s.url}/v1/admin/tenants`, { token: tokens.access_token })).json.data.map((t: { id: string }) => t.id)).toEqual(['default']);
    } finally {
      await s.app.close();
    }
  });

  it('serve prints the generated password on the terminal even with LOG_LEVEL=error, and names the file', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'sy-boot-cli-'));
    dirs.push(dataDir);
    const env: NodeJS.ProcessEnv = { ...process.env, SECRET: TEST_SECRET, DATA_DIR: dataDir, LOG_LEVEL: 'error', SERVER_PORT: '0', METRICS_PORT: '0', HOST: '127.0.0.1' };
    delete env.ADMIN_PASSWORD;
    delete env.ADMIN_EMAIL;
    const child = spawn(process.execPath, [...CLI_NODE_ARGS, 'serve'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no password printed: ${stderr}`)), 60_000);
        child.stderr.on('data', (chunk: Buffer) => {
          stderr += chunk.toString();
          if (/delete that file/.test(stderr)) {
            clearTimeout(timer);
            resolve();
          }
        });
      });
    } finally {
      child.kill('SIGTERM');
    }
    const written = passwordFile(dataDir)!;
    expect(stderr).toContain('ROOT ADMIN CREATED');
    expect(stderr).toContain(`admin@switchyard.local\n    ${written.password}\n`);
    expect(stderr).toContain(`It is also in ${join(dataDir, INITIAL_PASSWORD_FILE)} (mode 0600)`);
    expect(written.mode).toBe(0o600);
  }, 90_000);

  it('creates the root admin once when instances bootstrap the same store concurrently', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sy-boot-race-'));
    dirs.push(dir);
    const store = new SqliteEventStore({ file: join(dir, 'events.db') });
    try {
      const config = loadConfig({ SECRET: TEST_SECRET, DATA_DIR: dir });
      const logs = [capturingLogger(), capturingLogger(), capturingLogger()];
      await Promise.all(logs.map(({ logger }) => bootstrap(store, new CommandBus(store, new Metrics()), config, logger)));
      expect(logs.flatMap((l) => announcements(l.lines))).toHaveLength(1);
      expect(passwordFile(dir)?.password).toMatch(/^[A-Za-z0-9_-]{24}$/);
      expect(await store.readStream(`user-${ROOT_ADMIN_ID}`)).toHaveLength(1);
      expect(await store.readStream('tenant-default')).toHaveLength(1);
      const commits = await store.readAll({ after: 0 });
      expect(commits.flatMap((c) => c.events.map((e) => e.type)).sort()).toEqual(['EmailReserved', 'TenantCreated', 'UserCreated']);
    } finally {
      await store.close();
    }
  });
});

const services = inject('services');
const urls = inject('serviceUrls');

describe.skipIf(!services.nats || !services.mysql)('bootstrap: two instances starting together on NATS + MariaDB', () => {
  const stream = `SYTEST_BOOT_${uniqueSuffix()}`;
  const { config: db, cleanup: dropDatabase } = readModelConfig('mysql', urls);

  afterAll(async () => {
    await dropDatabase();
    const nc = await connect({ servers: urls.nats });
    await (await jetstreamManager(nc)).streams.delete(stream).catch(() => undefined);
    await nc.close();
  });

  it('creates one root admin, prints its password once, and both instances accept it', async () => {
    if (db.kind !== 'mysql') throw new Error('expected a mysql config');
    const env = {
      NATS_URL: urls.nats,
      NATS_STREAM: stream,
      SQLDB_HOST: db.host,
      SQLDB_PORT: String(db.port),
      SQLDB_USER: db.user,
      SQLDB_PASSWORD: db.password,
      SQLDB_NAME: db.database,
      ADMIN_PASSWORD: '',
      ADMIN_EMAIL: '',
    };
    const logs = [capturingLogger(), capturingLogger()];
    const [a, b] = await Promise.all(logs.map(({ logger }) => startApp(env, { logger, anonymous: true })));
    try {
      expect(logs.flatMap((l) => announcements(l.lines))).toHaveLength(1);
      // Written by the instance that created the admin, under its own DATA_DIR.
      const passwords = [a!, b!].map((instance) => passwordFile(instance.dataDir)?.password).filter((p): p is string => p !== undefined);
      expect(passwords).toHaveLength(1);
      for (const instance of [a!, b!]) {
        const tokens = await login(instance.url, 'admin@switchyard.local', passwords[0]!);
        expect((await call(`${instance.url}/v1/users/me`, { token: tokens.access_token })).json.id).toBe(ROOT_ADMIN_ID);
      }
      expect(await a!.app.ctx.store.readStream(`user-${ROOT_ADMIN_ID}`)).toHaveLength(1);
    } finally {
      await Promise.all([a!.close(), b!.close()]);
    }
  });
});
