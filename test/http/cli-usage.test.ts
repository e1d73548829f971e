/**
 * The CLI as a newcomer meets it (issue 22): output survives a pipe, a bad command line is one
 * clear line and a non-zero status (never a stack trace, never a silent success), `--help`,
 * `-h` and `--version` work on every command, and `token` mints only for a user that exists —
 * or for a service account it makes, a real user listed with the tenant's users.
 */
import { execFile, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startApp, TEST_SECRET, type RunningApp } from '../support/app.js';
import { CLI_SHELL, runCli } from '../support/cli.js';

const VERSION = (JSON.parse(readFileSync(join(process.cwd(), 'package.json'), 'utf8')) as { version: string }).version;

describe('switchyard CLI: pipes, bad input, help, tokens', () => {
  let s: RunningApp;
  const env = () => ({ ...process.env, SECRET: TEST_SECRET, DATA_DIR: s.dataDir, LOG_LEVEL: 'warn' });
  const cli = (...args: string[]) => runCli(args, env());
  /** Runs `cli … | wc -l` in a shell: what a reader at the end of a pipe gets. */
  const pipedLineCount = (...args: string[]) =>
    new Promise<number>((resolve, reject) => {
      const child = spawn('bash', ['-c', `set -o pipefail; ${CLI_SHELL} ${args.join(' ')} | wc -l`], { env: env(), stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      child.once('error', reject);
      child.once('close', (code) => (code === 0 ? resolve(Number(out.trim())) : reject(new Error(`exit ${code}`))));
    });

  beforeAll(async () => {
    s = await startApp();
    // Enough events that the lines overflow a pipe's buffer many times over (64 KiB).
    const events = Array.from({ length: 400 }, (_, i) => ({ id: crypto.randomUUID(), type: 'PipeFiller', data: { i, pad: 'x'.repeat(200) } }));
    for (let batch = 0; batch < 10; batch++) await s.app.ctx.store.append(`pipe-filler-${batch}`, events.map((e) => ({ ...e, id: crypto.randomUUID() })), { expectedVersion: 0, tenantId: 'default', causationId: null, correlationId: null });
  }, 60_000);
  afterAll(async () => {
    await s.close();
  });

  it('events tail through a pipe delivers every line', async () => {
    const commits = [];
    for (let after = 0; ; ) {
      const page = await s.app.ctx.store.readAll({ after, limit: 1000 });
      if (page.length === 0) break;
      commits.push(...page);
      after = page.at(-1)!.position;
    }
    const events = commits.reduce((n, c) => n + c.events.length, 0);
    expect(events).toBeGreaterThan(4000);
    expect(await pipedLineCount('events', 'tail')).toBe(events);
  }, 60_000);

  it.each([
    [['events', 'tail', '--from', '-5'], /--from/],
    [['events', 'tail', '--from', 'abc'], /--from must be a whole number \(got "abc"\)/],
    [['events', 'tail', '--bogus'], /Unknown option '--bogus'/],
    [['token', '--user', 'admin-1', '--role', 'superuser'], /--role must be admin or user \(got "superuser"\)/],
    [['token', '--user', 'admin-1', '--ttl', 'forever'], /--ttl: "forever" is not a duration/],
    [['token', '--role', 'admin'], /name an existing user with --user, or a service account/],
    [['audit', 'replay', '--tenant', 'nope'], /no tenant "nope"/],
    [['audit', 'history', 'user-1', '--limit', '0'], /--limit must be a whole number of at least 1/],
  ])('%j: one line on stderr, a non-zero status, nothing on stdout', async (args, message) => {
    const { code, stdout, stderr } = await cli(...args);
    expect(code).not.toBe(0);
    expect(stdout).toBe('');
    expect(stderr).toMatch(message);
    expect(stderr.trim().split('\n')).toHaveLength(1);
    expect(stderr).toMatch(/^switchyard: .*\(see: switchyard \w+ --help\)\n$/);
  });

  it('--help and -h print the command usage, --version the version, on every command', async () => {
    // Before anything else: no SECRET or store is needed to read the help.
    const events = await cli('events', 'tail', '--help');
    expect(events.code).toBe(0);
    expect(events.stdout).toMatch(/^usage: switchyard\n {2}events tail \[--from N\]/);
    const token = await cli('token', '-h');
    expect(token.code).toBe(0);
    expect(token.stdout).toMatch(/^usage: switchyard\n {2}token --user U \| --service-account NAME/);
    expect(token.stdout).not.toMatch(/events tail/);
    for (const args of [['--version'], ['audit', '--version']]) {
      const { code, stdout } = await cli(...args);
      expect(code).toBe(0);
      expect(stdout.trim()).toBe(VERSION);
    }
    const top = await cli('--help');
    expect(top.code).toBe(0);
    expect(top.stdout).toMatch(/^usage: switchyard <command>/);
  }, 60_000);

  it('projections status needs no SECRET, and after a rebuild beside the running server agrees with /health', async () => {
    const rebuilt = await cli('projections', 'rebuild', '--all');
    expect(rebuilt.code, rebuilt.stderr).toBe(0);
    // The server goes on writing: commits most projections skip (only maintenance reads these).
    for (const enabled of [true, false]) await call(`${s.url}/v1/admin/maintenance`, { token: s.adminToken, body: { enabled } });
    type Row = { name: string; position: number; lag: number };
    let health: Row[] = [];
    for (let i = 0; i < 100; i++) {
      health = ((await call(`${s.url}/health`)).json.projections as Row[]) ?? [];
      if (health.length > 0 && health.every((p) => p.lag === 0)) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    await new Promise((r) => setTimeout(r, 200)); // a skipped commit's checkpoint is stored within 50 ms
    const { SECRET: _secret, ...withoutSecret } = env();
    const status = await runCli(['projections', 'status'], withoutSecret);
    expect(status.code, status.stderr).toBe(0);
    const cliRows = status.stdout.trim().split('\n').map((line) => {
      const [, name, position, lag] = /^(\S+)\s+v\d+\s+position (\d+)\s+lag (\d+)/.exec(line)!;
      return { name: name!, position: Number(position), lag: Number(lag) };
    });
    expect(cliRows.map((r) => [r.name, r.position, r.lag])).toEqual(health.map((r) => [r.name, r.position, r.lag]));
    expect(cliRows.every((r) => r.lag === 0)).toBe(true);
  }, 60_000);

  it.skipIf(spawnSync('sh', ['-c', 'command -v script']).status !== 0)('on a terminal, rebuild and audit replay draw progress: a bar, counts and rate, redrawn in place', async () => {
    // `script` runs the command on a pseudo-terminal, as an operator's shell would.
    const onTerminal = (args: string) =>
      new Promise<string>((resolve) => {
        execFile('script', ['-qec', `${CLI_SHELL} ${args}`, '/dev/null'], { env: env() }, (_error, stdout) => resolve(stdout));
      });
    const rebuild = await onTerminal('projections rebuild --all');
    expect(rebuild).toMatch(/\rrebuilding \d+ projections \(log position\) {2}\[=+>? *\] {2}[\d,]+\/[\d,]+ {2}\d+% {2}[\d,]+\/s/);
    expect(rebuild).toMatch(/rebuilt maintenance, /);
    const replay = await onTerminal('audit replay');
    expect(replay).toMatch(/\rreplaying \w+ \(log position\) {2}\[/);
  }, 60_000);

  it.each(['SERVER_PORT', 'METRICS_PORT'])('serve with %s taken: one line naming it, exit 1', async (setting) => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as { port: number }).port;
    const dataDir = mkdtempSync(join(tmpdir(), 'sy-port-'));
    try {
      const ports = setting === 'SERVER_PORT' ? { SERVER_PORT: String(port), METRICS_PORT: '0' } : { SERVER_PORT: '0', METRICS_PORT: String(port) };
      const outcome = await runCli(['serve'], { ...env(), DATA_DIR: dataDir, HOST: '127.0.0.1', LOG_LEVEL: 'silent', ADMIN_PASSWORD: 'admin-password-for-tests', ...ports }, { timeoutMs: 60_000 });
      expect(outcome.code).toBe(1);
      expect(outcome.stderr.trim()).toBe(`${setting}: port ${port} on 127.0.0.1 is already in use by another process: stop it or set ${setting} to a free port${setting === 'METRICS_PORT' ? " (9090 is also Prometheus's own default port)" : ''}`);
    } finally {
      taken.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 90_000);

  it('token refuses a user that does not exist; --service-account makes a real, listed user whose token works', async () => {
    const missing = await cli('token', '--user', 'ops', '--role', 'admin');
    expect(missing.code).toBe(1);
    expect(missing.stdout).toBe('');
    expect(missing.stderr).toMatch(/no user ops in tenant default/);

    const minted = await cli('token', '--service-account', 'ci-bot', '--role', 'admin');
    expect(minted.code, minted.stderr).toBe(0);
    expect(minted.stderr).toMatch(/created service account svc_ci-bot \(admin\)/);
    const token = minted.stdout.trim();
    // The server sees the new session within a moment (its next look at the log).
    let users: { status: number; json: Record<string, any> } = { status: 0, json: {} }; // eslint-disable-line @typescript-eslint/no-explicit-any
    for (let i = 0; i < 100 && !(users.status === 200 && JSON.stringify(users.json).includes('svc_ci-bot')); i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, 50));
      users = await call(`${s.url}/v1/admin/users`, { token });
    }
    expect(users.status).toBe(200);
    expect(JSON.stringify(users.json)).toContain('svc_ci-bot');
    const asUser = await cli('token', '--service-account', 'ci-bot', '--role', 'user');
    expect(asUser.code).toBe(1);
    expect(asUser.stderr).toMatch(/user svc_ci-bot has the role admin, not user/);
    const reused = await cli('token', '--service-account', 'ci-bot', '--role', 'admin');
    expect(reused.code).toBe(0);
    expect(reused.stderr).not.toMatch(/created/);
  }, 60_000);
});
