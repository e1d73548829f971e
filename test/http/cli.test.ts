/** The operator's CLI against a real embedded installation, while its server keeps running. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TokenService } from '../../src/auth/tokens.js';
import { call, startApp, TEST_SECRET, type RunningApp } from '../support/app.js';
import { runCli, runCliOk } from '../support/cli.js';

describe('switchyard CLI', () => {
  let s: RunningApp;
  const env = () => ({ ...process.env, SECRET: TEST_SECRET, DATA_DIR: s.dataDir, LOG_LEVEL: 'warn' });
  const cli = (...args: string[]) => runCliOk(args, env());

  beforeAll(async () => {
    s = await startApp();
    await call(`${s.url}/v1/admin/maintenance`, { token: s.adminToken, body: { enabled: true, message: 'first' } });
    await call(`${s.url}/v1/admin/maintenance`, { token: s.adminToken, body: { enabled: true, message: 'second' } });
  });
  afterAll(async () => {
    await s.close();
  });

  it('events tail prints the log as JSON lines, filtered by stream', async () => {
    const { stdout } = await cli('events', 'tail', '--stream', 'maintenance-global');
    const events = stdout.trim().split('\n').map((l) => JSON.parse(l) as { type: string; version: number; data: { message: string } });
    expect(events.map((e) => [e.type, e.version, e.data.message])).toEqual([
      ['MaintenanceEnabled', 1, 'first'],
      ['MaintenanceEnabled', 2, 'second'],
    ]);
    const firstCommit = (await s.app.ctx.store.readAll({ after: 0 })).find((c) => c.stream === 'maintenance-global');
    const { stdout: afterFirst } = await cli('events', 'tail', '--from', String(firstCommit!.position), '--stream', 'maintenance-global');
    expect(afterFirst.trim().split('\n').map((l) => (JSON.parse(l) as { data: { message: string } }).data.message)).toEqual(['second']);
  });

  it('projections rebuild replays into the same read model while the server runs', async () => {
    const before = await s.app.ctx.queries.maintenance();
    const { stdout } = await cli('projections', 'rebuild', 'maintenance');
    expect(stdout).toMatch(/^rebuilt maintenance in \d+ ms/);
    expect(await s.app.ctx.queries.maintenance()).toEqual(before);
    const status = await cli('projections', 'status');
    expect(status.stdout).toMatch(/maintenance\s+v1\s+position \d+\s+lag 0/);
    // The running server noticed the new generation and keeps projecting.
    await call(`${s.url}/v1/admin/maintenance`, { token: s.adminToken, body: { enabled: false } });
    expect((await s.app.ctx.queries.maintenance()).enabled).toBe(false);
  });

  it('projections rebuild --all (or `all`, or several names) replays them in one pass, every checkpoint left at the head', async () => {
    const before = await s.app.ctx.queries.maintenance();
    const { stdout } = await cli('projections', 'rebuild', '--all');
    expect(stdout).toMatch(/^rebuilt maintenance, channels, accounts, .*usage.* in \d+ ms/);
    expect((await cli('projections', 'rebuild', 'all')).stdout).toMatch(/^rebuilt maintenance, channels, accounts, .*usage.* in \d+ ms/);
    expect((await cli('projections', 'rebuild', 'maintenance', 'usage')).stdout).toMatch(/^rebuilt maintenance, usage in \d+ ms/);
    const head = await s.app.ctx.store.headPosition();
    const status = (await cli('projections', 'status')).stdout.trim().split('\n');
    expect(status.length).toBeGreaterThan(5);
    for (const line of status) expect(line).toMatch(new RegExp(`position ${head}\\s+lag 0`));
    expect(await s.app.ctx.queries.maintenance()).toEqual(before);
  }, 60_000); // four CLI processes

  it('refuses to rebuild an unknown projection', async () => {
    expect(await runCli(['projections', 'rebuild', 'nope'], env())).toMatchObject({ code: 1, stderr: expect.stringContaining('unknown projection "nope"') });
  });

  it('token mints an access token of a real user, with a session of its own that logout revokes', async () => {
    const { stdout } = await cli('token', '--user', s.adminUserId, '--ttl', '5m');
    const token = stdout.trim();
    const principal = await new TokenService(TEST_SECRET, 60_000).verifyAccessToken(token);
    expect(principal).toEqual({ userId: s.adminUserId, tenantId: 'default', role: 'admin', sessionId: expect.stringMatching(/^ses_/) });
    // The server sees the CLI's commit at its next look at the log (a short poll).
    await expect.poll(async () => (await call(`${s.url}/v1/admin/maintenance`, { token })).status, { timeout: 5000 }).toBe(200);
    expect((await call(`${s.url}/v1/auth/logout`, { token, body: {} })).json).toEqual({ revoked: true });
    expect((await call(`${s.url}/v1/admin/maintenance`, { token })).status).toBe(401);
  });

  it('token refuses users that do not exist and roles the user does not hold', async () => {
    expect(await runCli(['token', '--user', 'ops'], env())).toMatchObject({ code: 1, stderr: expect.stringContaining('no user ops in tenant default') });
    expect(await runCli(['token', '--user', s.userId, '--role', 'admin'], env())).toMatchObject({ code: 1, stderr: expect.stringContaining('has the role user') });
  });
});
