/**
 * Golden test: a scripted day of traffic — mixed models, streaming and not, a failure, a price
 * change, a top-up and an adjustment, a subscription and its renewal, all three coverage modes —
 * yields exactly the expected ledger (amounts computed here from the price table, independently
 * of the code); the audit replay of that day reports zero differences; dropping and rebuilding the
 * billing and usage projections gives identical tables.
 *
 * The fake upstream answers 11 prompt + 7 completion tokens per request.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAiFake, type OpenAiFake } from '../support/fake-upstreams/openai.js';
import { call, startApp, type RunningApp } from '../support/app.js';
import { createChannel } from '../support/relay.js';

const PROMPT = 11;
const COMPLETION = 7;
/** Integer micro-credits for a price in credits per 1M tokens, rounded once, half up. */
const charge = (inputPer1M: number, outputPer1M: number, perRequestCredits = 0) => Math.round(PROMPT * inputPer1M + COMPLETION * outputPer1M) + perRequestCredits * 1_000_000;

describe('billing: a golden day', () => {
  let s: RunningApp;
  let upstream: OpenAiFake;
  let apiKey: string;

  beforeAll(async () => {
    upstream = await startOpenAiFake();
    s = await startApp({ HEALTH_CHECK_ENABLED: 'false', RELAY_MAX_RETRIES: '0' });
    await createChannel(s, { type: 'openai', base_url: upstream.baseUrl, models: ['m-a', 'm-h'] });
  });
  afterAll(async () => {
    await s.close();
    await upstream.close();
  });

  const admin = (path: string, body?: unknown, method?: string) => call(`${s.url}${path}`, { token: s.adminToken, body, method });
  const asUser = (path: string, body?: unknown) => call(`${s.url}${path}`, { token: s.userToken, body });
  const viaKey = (model: string, stream = false) =>
    call(`${s.url}/v1/chat/completions`, { token: apiKey, body: { model, messages: [{ role: 'user', content: 'hi' }], stream } });
  const viaUi = (model: string) => asUser('/v1/chat/completions', { model, messages: [{ role: 'user', content: 'hi' }] });
  /** Usage events are batched (up to ~100 ms) before they reach the log and the billing view;
   * admission reads that view, so the script lets each request be accounted before the next. */
  const accounted = async () => {
    await s.app.ctx.usage.flush();
    await s.app.ctx.views.billing.waitFor(await s.app.ctx.store.headPosition());
  };

  it('bills the scripted day exactly, replays it without a difference, and rebuilds identically', async () => {
    // Morning: prices, credits, a plan covering 2 requests of m-h per period, a subscription.
    expect((await admin('/v1/admin/pricing/models/m-a', { input_price: 2.5, output_price: 10, per_request_price: 0.001 }, 'PUT')).status).toBe(200);
    expect((await admin('/v1/admin/pricing/models/m-h', { input_price: 1, output_price: 1 }, 'PUT')).status).toBe(200);
    expect((await admin('/v1/admin/credits/user-1/topup', { amount: 2, reason: 'initial credits' })).status).toBe(200);
    const plan = await admin('/v1/admin/plans', { name: 'basic', period: 'month', quotas: [{ models: ['m-h'], requests: 2 }], price: 0.5 });
    expect(plan.status, plan.text).toBe(201);
    expect((await asUser('/v1/subscriptions', { plan_id: plan.json.id })).status).toBe(201);
    const key = await asUser('/v1/keys', { name: 'day' });
    apiKey = key.json.key;

    const A1 = charge(2.5, 10, 0.001); // 97.5 -> 98 + 1,000 = 1,098
    const H = charge(1, 1); // 18
    // Traffic (hybrid, the default): UI and API, stream and not, and a failure that costs nothing.
    expect((await viaUi('m-a')).status).toBe(200); // A1
    await accounted();
    expect((await viaKey('m-a', true)).status).toBe(200); // A1
    await accounted();
    upstream.mode = { kind: 'error', status: 500, message: 'down' };
    expect((await viaKey('m-a')).status).toBe(502); // no charge
    await accounted();
    upstream.mode = { kind: 'reply' };
    // Noon: a price change applies from now on.
    expect((await admin('/v1/admin/pricing/models/m-a', { input_price: 5, output_price: 10, per_request_price: 0.001 }, 'PUT')).status).toBe(200);
    const A2 = charge(5, 10, 0.001); // 125 + 1,000 = 1,125
    expect((await viaKey('m-a')).status).toBe(200); // A2
    await accounted();
    // Hybrid: the subscription covers 2 requests of m-h, the third is billed.
    expect((await viaKey('m-h')).status).toBe(200); // covered
    await accounted();
    expect((await viaKey('m-h')).status).toBe(200); // covered
    await accounted();
    expect((await viaKey('m-h')).status).toBe(200); // H (overage)
    await accounted();
    // Afternoon: renewal (fee again, quota reset), then excluded and included.
    expect((await asUser('/v1/subscriptions/renew', {})).status).toBe(200);
    expect((await admin('/v1/admin/settings', { subscription_covers_relay: 'excluded' }, 'PUT')).status).toBe(200);
    expect((await viaKey('m-h')).status).toBe(200); // H: API traffic always pays in excluded mode
    await accounted();
    expect((await viaUi('m-h')).status).toBe(200); // covered: the UI is not relay traffic
    await accounted();
    expect((await admin('/v1/admin/settings', { subscription_covers_relay: 'included' }, 'PUT')).status).toBe(200);
    expect((await viaKey('m-h')).status).toBe(200); // covered (second request of the renewed quota)
    await accounted();
    const refused = await viaKey('m-h'); // included: quota exhausted and credits are not used
    expect(refused.status).toBe(429);
    expect(refused.json.error.code).toBe('insufficient_quota');
    // Evening: an adjustment.
    expect((await admin('/v1/admin/credits/user-1/adjust', { amount: -0.1, reason: 'goodwill correction' })).status).toBe(200);

    await s.app.ctx.usage.flush();
    await s.app.ctx.runner.waitFor(await s.app.ctx.store.headPosition(), { timeoutMs: 15_000 });
    const ledger = await admin('/v1/admin/billing/ledger?format=json&user_id=user-1');
    expect(ledger.status, ledger.text).toBe(200);
    const entries = (ledger.json.data as Array<{ type: string; amount_micro: number; balance_after_micro: number; reason: string | null }>).map((e) => [e.type, e.amount_micro]);
    const expected: Array<[string, number]> = [
      ['topup', 2_000_000],
      ['subscription_fee', -500_000],
      ['charge', -A1],
      ['charge', -A1],
      ['charge', -A2],
      ['charge', -H],
      ['subscription_fee', -500_000],
      ['charge', -H],
      ['adjustment', -100_000],
    ];
    expect(entries).toEqual(expected);
    // Running balances follow from the amounts.
    let balance = 0;
    for (const e of ledger.json.data as Array<{ amount_micro: number; balance_after_micro: number }>) {
      balance += e.amount_micro;
      expect(e.balance_after_micro).toBe(balance);
    }
    expect(balance).toBe(2_000_000 - 500_000 - 2 * A1 - A2 - H - 500_000 - H - 100_000);
    expect((await asUser('/v1/credits')).json.balance_micro).toBe(balance);

    // The auditor's replay of the day, from the log alone: no difference, to the micro-credit.
    const day = new Date().toISOString().slice(0, 10);
    const from = `${day}T00:00:00.000Z`;
    const to = new Date(Date.parse(from) + 86_400_000).toISOString();
    const audit = await admin('/v1/admin/audit/replay', { from, to });
    expect(audit.status, audit.text).toBe(200);
    expect(audit.json.differences).toBe(0);
    expect((audit.json.tables as Array<{ table: string }>).map((t) => t.table)).toEqual(expect.arrayContaining(['billing_ledger', 'billing_balances', 'usage_requests']));

    // Dropping every billing and usage projection and replaying the log gives identical tables.
    const snapshot = async () => ({
      ledger: await s.app.ctx.sql.db.selectFrom('billing_ledger').selectAll().orderBy('id').execute(),
      balances: await s.app.ctx.sql.db.selectFrom('billing_balances').selectAll().orderBy('user_id').execute(),
      requests: await s.app.ctx.sql.db.selectFrom('billing_requests').selectAll().orderBy('dedupe_key').execute(),
      usage: await s.app.ctx.sql.db.selectFrom('usage_requests').selectAll().orderBy('request_id').execute(),
    });
    const before = await snapshot();
    await s.app.ctx.runner.rebuild('billing');
    await s.app.ctx.runner.rebuild('usage');
    expect(await snapshot()).toEqual(before);
  });
});
