/**
 * The operator's CLI with a poison event in the log (issue 14), on a real embedded installation
 * while its server runs: `projections rebuild billing` completes (exit 0) and reports the
 * quarantined event, `projections status` shows it, `projections quarantine list` prints it and
 * `projections quarantine replay` leaves it quarantined (exit 2) while the code still fails on it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startApp, TEST_SECRET, type RunningApp } from '../support/app.js';
import { runCli, runCliOk } from '../support/cli.js';

describe('switchyard CLI with a quarantined event', () => {
  let s: RunningApp;
  let position: number;
  const env = () => ({ ...process.env, SECRET: TEST_SECRET, DATA_DIR: s.dataDir, LOG_LEVEL: 'warn' });
  const cli = (...args: string[]) => runCliOk(args, env());

  beforeAll(async () => {
    s = await startApp();
    // A usage event as the old code wrote it for model "constructor": no model_served.
    const data = { request_id: 'req-poison', tenant_id: 'default', user_id: s.userId, key_id: null, channel_id: null, provider: null, model_requested: 'constructor', prompt_tokens: 1, completion_tokens: 0, total_tokens: 1, usage_source: 'tokenizer', stream: false, status: 200, error_code: null, latency_ms: 1, ttft_ms: null, attempts: 1, started_at: new Date().toISOString() };
    position = (await s.app.ctx.store.append('usage-poisoncli', [{ type: 'UsageRecorded', data }], { expectedVersion: 'any', tenantId: 'default' })).position;
    await s.app.ctx.runner.waitFor(position, { timeoutMs: 20_000 });
  }, 60_000);
  afterAll(async () => {
    await s?.close();
  });

  it('rebuild exits 0 and reports the quarantined event; status and quarantine list show it', async () => {
    const { stdout } = await cli('projections', 'rebuild', 'billing');
    expect(stdout).toMatch(/^rebuilt billing in \d+ ms; 1 event\(s\) quarantined/);
    const status = await cli('projections', 'status');
    expect(status.stdout).toMatch(/billing\s+v\d+\s+position \d+\s+lag 0\s+QUARANTINED 1/);
    expect(status.stdout).toMatch(/maintenance\s+v1\s+position \d+\s+lag 0\n/);
    const list = await cli('projections', 'quarantine', 'list', 'billing');
    const rows = list.stdout.trim().split('\n').map((l) => JSON.parse(l) as { projection: string; event_position: number; error: string });
    expect(rows.map((r) => [r.projection, r.event_position])).toEqual([['billing', position]]);
    expect(rows[0]!.error).toMatch(/model_served/);
    // The server kept going: a top-up goes through.
    expect((await call(`${s.url}/v1/admin/credits/${s.userId}/topup`, { token: s.adminToken, body: { amount: '1', reason: 'after rebuild' } })).status).toBe(200);
  }, 60_000);

  it('replay leaves an event the code still cannot apply quarantined (exit 2)', async () => {
    expect(await runCli(['projections', 'quarantine', 'replay', 'billing'], env())).toMatchObject({ code: 2, stderr: expect.stringContaining('0 event(s); 1 still quarantined') });
    expect(await runCli(['projections', 'quarantine', 'replay', 'nope'], env())).toMatchObject({ code: 1, stderr: expect.stringContaining('unknown projection "nope"') });
  }, 60_000);
});
