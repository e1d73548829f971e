/**
 * Audit end to end: after real relay traffic, replaying the log into a scratch database matches
 * the live usage (and billing) tables to the unit; a tampered live row is reported by table and
 * key; a rebuild gives identical tables; the history lists the events with their causation ids.
 * Over HTTP and through the `switchyard` CLI as a separate process, while the server runs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectionsOf } from '../../src/projections/index.js';
import type { ReadModelDb } from '../../src/projections/runtime/projection.js';
import { startOpenAiFake, type OpenAiFake } from '../support/fake-upstreams/openai.js';
import { call, createUser, login, startApp, TEST_SECRET, TEST_USER_PASSWORD, type RunningApp } from '../support/app.js';
import { runCli, runCliOk } from '../support/cli.js';
import { dereferencedOpenapi } from '../support/openapi.js';
import { createChannel } from '../support/relay.js';

const FROM = '2000-01-01T00:00:00.000Z';
const TO = '2100-01-01T00:00:00.000Z';

interface Report {
  tenant_id: string;
  projections: Array<{ name: string; position: number }>;
  tables: Array<{ table: string; live_rows: number; replayed_rows: number; missing: unknown[]; extra: unknown[]; different: Array<{ key: Record<string, string>; columns: Record<string, { live: string; replayed: string }> }>; differences: number }>;
  differences: number;
}

async function usageTables(db: ReadModelDb) {
  return {
    requests: await db.selectFrom('usage_requests').selectAll().orderBy('request_key').execute(),
    hourly: await db.selectFrom('usage_hourly').selectAll().orderBy('tenant_id').orderBy('hour').orderBy('user_id').orderBy('key_id').orderBy('channel_id').orderBy('model').execute(),
    daily: await db.selectFrom('usage_daily').selectAll().orderBy('tenant_id').orderBy('day').orderBy('user_id').orderBy('key_id').orderBy('channel_id').orderBy('model').execute(),
  };
}

describe('audit', () => {
  let s: RunningApp;
  let upstream: OpenAiFake;
  let key: { id: string; key: string };
  let adminB: string;
  const requestIds: string[] = [];
  let untampered: Awaited<ReturnType<typeof usageTables>>;
  /** Whether the billing API is there to price gpt-a and top credits up (then charges reach the ledger). */
  let billed = false;
  const env = () => ({ ...process.env, SECRET: TEST_SECRET, DATA_DIR: s.dataDir, LOG_LEVEL: 'warn' });
  const cli = (...args: string[]) => runCliOk(args, env());
  const replay = (body: Record<string, unknown>, token = s.adminToken) => call(`${s.url}/v1/admin/audit/replay`, { token, body });

  beforeAll(async () => {
    upstream = await startOpenAiFake();
    s = await startApp({ HEALTH_CHECK_ENABLED: 'false' });
    await createChannel(s, { type: 'openai', base_url: upstream.baseUrl, models: ['gpt-a'] });
    key = (await call(`${s.url}/api/admin/keys`, { token: s.adminToken, body: { name: 'k', user_id: s.userId } })).json as { id: string; key: string };
    const tenant = await call(`${s.url}/v1/admin/tenants`, { token: s.adminToken, body: { name: 'tenant b' } });
    const userB = await createUser(s.url, s.adminToken, { role: 'admin', tenant_id: tenant.json.id as string });
    adminB = (await login(s.url, userB.email, TEST_USER_PASSWORD)).access_token;
    // Prices and credits, so that the ledger has top-ups and charges to audit.
    const price = await call(`${s.url}/v1/admin/pricing/models/gpt-a`, { method: 'PUT', token: s.adminToken, body: { input_price: '1.5', output_price: '3' } });
    if (price.status !== 404) {
      expect(price.status, price.text).toBe(200);
      for (const user of [s.userId, s.adminUserId]) {
        const topup = await call(`${s.url}/v1/admin/credits/${user}/topup`, { token: s.adminToken, body: { amount: '10', reason: 'audit test' } });
        expect(topup.status, topup.text).toBe(200);
      }
      billed = true;
    }
    for (const token of [s.userToken, s.userToken, key.key, s.adminToken]) {
      const res = await call(`${s.url}/v1/chat/completions`, { token, body: { model: 'gpt-a', messages: [{ role: 'user', content: 'hi' }] } });
      expect(res.status).toBe(200);
      requestIds.push(res.headers.get('x-request-id')!);
    }
    await call(`${s.url}/v1/chat/completions`, { token: s.userToken, body: { model: 'nope', messages: [{ role: 'user', content: 'hi' }] } });
    await s.app.ctx.usage.flush();
    await s.app.ctx.runner.waitFor(await s.app.ctx.store.headPosition());
  });
  afterAll(async () => {
    await s?.close();
    await upstream?.close();
  });

  it('replays usage and billing from the log and finds no difference after real traffic', async () => {
    const res = await replay({ from: FROM, to: TO });
    expect(res.status, res.text).toBe(200);
    const report = res.json as Report;
    expect(report.differences).toBe(0);
    expect(report.projections.map((p) => p.name)).toContain('usage');
    const tables = Object.fromEntries(report.tables.map((t) => [t.table, t]));
    expect(tables.usage_requests).toMatchObject({ live_rows: 5, replayed_rows: 5, missing: [], extra: [], different: [] });
    expect(tables.usage_hourly!.live_rows).toBeGreaterThan(0);
    expect(tables.usage_daily!.replayed_rows).toBe(tables.usage_daily!.live_rows);
    if (projectionsOf({ secret: 'names only' }).some((p) => p.name === 'billing')) {
      // Billing's tables are compared too when the billing projection is registered.
      expect(report.projections.map((p) => p.name)).toContain('billing');
      for (const name of ['billing_ledger', 'billing_balances', 'billing_requests']) expect(tables[name]?.differences, name).toBe(0);
      expect(tables.billing_requests!.live_rows).toBeGreaterThan(0);
      // Two top-ups and four charges (11 x 1.5 + 7 x 3 credits per 1M tokens each).
      if (billed) expect(tables.billing_ledger).toMatchObject({ live_rows: 6, replayed_rows: 6 });
    }
    // A period with nothing in it compares nothing and agrees.
    const empty = (await replay({ from: '2001-01-01T00:00:00Z', to: '2001-01-02T00:00:00Z' })).json as Report;
    expect(empty.differences).toBe(0);
    expect(empty.tables.find((t) => t.table === 'usage_requests')).toMatchObject({ live_rows: 0, replayed_rows: 0 });
  });

  it('is tenant-scoped: other tenants are 404, their own audit sees none of this tenant', async () => {
    expect((await replay({ tenant_id: 'default', from: FROM, to: TO }, adminB)).status).toBe(404);
    const own = (await replay({ from: FROM, to: TO }, adminB)).json as Report;
    expect(own.tenant_id).not.toBe('default');
    expect(own.tables.find((t) => t.table === 'usage_requests')).toMatchObject({ live_rows: 0, replayed_rows: 0 });
    expect((await call(`${s.url}/v1/admin/audit/history?user_id=${s.userId}`, { token: adminB })).status).toBe(404);
    expect((await call(`${s.url}/v1/admin/audit/history?key_id=${key.id}`, { token: adminB })).status).toBe(404);
    expect((await replay({ from: FROM, to: TO }, s.userToken)).status).toBe(403);
    expect((await replay({ from: TO, to: FROM })).status).toBe(400);
  });

  it('lists the events that changed a user or a key, in log order, with causation ids', async () => {
    const res = await call(`${s.url}/v1/admin/audit/history?user_id=${s.userId}`, { token: s.adminToken });
    expect(res.status, res.text).toBe(200);
    const entries = res.json.data as Array<{ position: number; type: string; causation_id: string | null; request_id: string; data: { user_id: string } }>;
    const usage = entries.filter((e) => e.type === 'UsageRecorded');
    expect(usage).toHaveLength(4); // two with the token, one with the key, one refused
    expect(usage.map((e) => e.request_id).slice(0, 3)).toEqual(requestIds.slice(0, 3));
    for (const e of entries) {
      expect(e.causation_id).toBeTruthy();
      expect(e.data.user_id).toBe(s.userId);
    }
    // Balance changes too: the top-up comes first, caused by the admin's HTTP request.
    if (billed) expect(entries[0]).toMatchObject({ type: 'CreditsToppedUp', data: { user_id: s.userId } });
    const positions = entries.map((e) => e.position);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
    expect(res.json.next_after).toBeNull();

    const byKey = await call(`${s.url}/v1/admin/audit/history?key_id=${key.id}`, { token: s.adminToken });
    expect(byKey.json.data.map((e: { request_id: string }) => e.request_id)).toEqual([requestIds[2]]);
    expect((await call(`${s.url}/v1/admin/audit/history`, { token: s.adminToken })).status).toBe(400);
    expect((await call(`${s.url}/v1/admin/audit/history?user_id=nobody`, { token: s.adminToken })).status).toBe(404);
    const page = await call(`${s.url}/v1/admin/audit/history?user_id=${s.userId}&limit=1`, { token: s.adminToken });
    expect(page.json.next_after).toBeGreaterThan(0);
  });

  it('CLI: audit replay prints a report with no differences; audit history prints the events', { timeout: 60_000 }, async () => {
    const { stdout } = await cli('audit', 'replay', '--tenant', 'default', '--from', FROM, '--to', TO);
    const report = JSON.parse(stdout) as Report;
    expect(report.differences).toBe(0);
    expect(report.tables.find((t) => t.table === 'usage_requests')).toMatchObject({ live_rows: 5, replayed_rows: 5 });

    const history = await cli('audit', 'history', key.id, '--tenant', 'default');
    const lines = history.stdout.trim().split('\n').map((l) => JSON.parse(l) as { type: string; request_id: string; causation_id: string; correlation_id: string | null; data: { key_id: string } });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ type: 'UsageRecorded', request_id: requestIds[2], data: { key_id: key.id } });
    expect(lines[0]!.causation_id).toBeTruthy();
  });

  it('reports a tampered live row by table and key, over HTTP and from the CLI (exit status 2)', { timeout: 60_000 }, async () => {
    const db = s.app.ctx.sql.db;
    untampered = await usageTables(db);
    const row = await db.selectFrom('usage_hourly').selectAll().where('tenant_id', '=', 'default').where('user_id', '=', s.userId).where('key_id', '=', key.id).executeTakeFirstOrThrow();
    await db.updateTable('usage_hourly').set({ total_tokens: Number(row.total_tokens) + 1 }).where('tenant_id', '=', 'default').where('hour', '=', row.hour).where('key_id', '=', key.id).execute();
    await db.deleteFrom('usage_requests').where('request_id', '=', requestIds[0]!).execute();
    // One micro-credit off a balance.
    let balance = 0;
    if (billed) {
      balance = Number((await db.selectFrom('billing_balances').select('balance_micro').where('user_id', '=', s.userId).executeTakeFirstOrThrow()).balance_micro);
      await db.updateTable('billing_balances').set({ balance_micro: balance + 1 }).where('user_id', '=', s.userId).execute();
    }

    const report = (await replay({ from: FROM, to: TO })).json as Report;
    expect(report.differences).toBe(billed ? 3 : 2);
    if (billed) {
      expect(report.tables.find((t) => t.table === 'billing_balances')!.different).toEqual([
        { key: { user_id: s.userId }, columns: { balance_micro: { live: String(balance + 1), replayed: String(balance) } } },
      ]);
    }
    const hourly = report.tables.find((t) => t.table === 'usage_hourly')!;
    expect(hourly.different).toEqual([
      {
        key: { hour: row.hour, user_id: s.userId, key_id: key.id, channel_id: row.channel_id, model: 'gpt-a' },
        columns: { total_tokens: { live: String(Number(row.total_tokens) + 1), replayed: String(row.total_tokens) } },
      },
    ]);
    const requests = report.tables.find((t) => t.table === 'usage_requests')!;
    expect(requests).toMatchObject({ live_rows: 4, replayed_rows: 5, differences: 1, extra: [], different: [] });
    expect(requests.missing).toEqual([expect.objectContaining({ key: { request_key: requestIds[0] } })]);

    const failed = await runCli(['audit', 'replay', '--from', FROM, '--to', TO], env());
    expect(failed.code).toBe(2);
    expect((JSON.parse(failed.stdout) as Report).differences).toBe(billed ? 3 : 2);
  });

  it("a rebuild of 'usage' gives the same tables as the replay (and as before the tampering)", async () => {
    if (billed) await s.app.ctx.runner.rebuild('billing');
    await s.app.ctx.runner.rebuild('usage');
    const rebuilt = await usageTables(s.app.ctx.sql.db);
    const report = (await replay({ from: FROM, to: TO })).json as Report;
    expect(report.differences).toBe(0);
    expect(rebuilt).toEqual(untampered);
    // Rebuilding again is deterministic, row for row.
    await s.app.ctx.runner.rebuild('usage');
    expect(await usageTables(s.app.ctx.sql.db)).toEqual(rebuilt);
  });

  it('publishes the audit endpoints in the OpenAPI document', async () => {
    const doc = (await dereferencedOpenapi(s.url));
    expect(doc.paths['/v1/admin/audit/replay']?.post).toBeDefined();
    expect(doc.paths['/v1/admin/audit/history']?.get).toBeDefined();
    expect(JSON.stringify(doc.paths['/v1/admin/audit/replay'].post.responses['200'])).toContain('replayed_rows');
  });
});
