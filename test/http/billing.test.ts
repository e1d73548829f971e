/**
 * Billing end to end on the real server (real HTTP, fake OpenAI upstream answering 11 prompt + 7
 * completion tokens per request): prices and price history, credits and the ledger with running
 * balances, admission (429 insufficient_quota), the coverage modes, relay_disabled, subscriptions,
 * statements, CSV/JSON export, idempotency per request_id, tenant isolation, and a rebuild of the
 * billing projection from the log giving identical tables. Runs embedded (SQLite + memory), on
 * NATS + MariaDB + Redis, and with PostgreSQL read models.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { startOpenAiFake, type OpenAiFake } from '../support/fake-upstreams/openai.js';
import { call, createUser, login, loggedInUser, startApp, TEST_USER_PASSWORD, type RunningApp } from '../support/app.js';
import { dereferencedOpenapi } from '../support/openapi.js';
import { readModelConfig, type Dialect } from '../support/databases.js';
import { createChannel, usageEvents } from '../support/relay.js';
import { uniqueSuffix } from '../support/services.js';

// m-a: 2.5 credits per 1M prompt tokens, 10 per 1M completion tokens, 0.001 per request:
// 11 × 2.5 + 7 × 10 = 97.5 micro-credits -> 98 (rounded once, half up) + 1,000 = 1,098.
const M_A_CHARGE = 1_098;

const services = inject('services');
const urls = inject('serviceUrls');

interface Stack {
  env: Record<string, string>;
  cleanup(): Promise<void>;
}

function serverDatabase(dialect: Exclude<Dialect, 'sqlite'>, extra: Record<string, string> = {}): Stack {
  const { config, cleanup } = readModelConfig(dialect, urls);
  if (config.kind === 'sqlite') throw new Error('unreachable');
  return {
    env: { SQLDB_HOST: config.host, SQLDB_PORT: String(config.port), SQLDB_USER: config.user, SQLDB_PASSWORD: config.password, SQLDB_NAME: config.database, SQLDB_DIALECT: dialect, ...extra },
    cleanup,
  };
}

const TWO_INSTANCES = 'NATS + MariaDB + Redis';

const variants: Array<[string, () => Stack, boolean]> = [
  ['embedded', () => ({ env: {}, cleanup: async () => undefined }), true],
  [
    TWO_INSTANCES,
    () => {
      const suffix = uniqueSuffix();
      const redis = new URL(urls.redis);
      return serverDatabase('mysql', { NATS_URL: urls.nats, NATS_STREAM: `SYBILL_${suffix}`, CACHE_HOST: redis.hostname, CACHE_PORT: redis.port || '6379', CACHE_PREFIX: `sybill:${suffix}:` });
    },
    services.nats && services.mysql && services.redis,
  ],
  ['PostgreSQL read models', () => serverDatabase('postgres'), services.postgres],
];

describe.each(variants)('billing (%s)', (name, stack, enabled) => {
  let s: RunningApp;
  let env: Record<string, string> = {};
  let upstream: OpenAiFake;
  let otherAdmin: string;
  let otherTenantId: string;
  let otherTenantUserToken: string;
  let cleanup: () => Promise<void> = async () => undefined;

  beforeAll(async () => {
    if (!enabled) return;
    upstream = await startOpenAiFake();
    const created = stack();
    env = created.env;
    cleanup = created.cleanup;
    s = await startApp({ HEALTH_CHECK_ENABLED: 'false', ...env });
    await createChannel(s, { type: 'openai', base_url: upstream.baseUrl, models: ['m-a', 'm-h', 'm-free', 'm-t'] });
    const res = await call(`${s.url}/v1/admin/pricing/models/m-a`, { method: 'PUT', token: s.adminToken, body: { input_price: '2.5', output_price: 10, per_request_price: '0.001' } });
    expect(res.status, res.text).toBe(200);
    // m-t: 1 credit per 1M prompt tokens and 10 per 1M completion tokens, nothing per request.
    expect((await call(`${s.url}/v1/admin/pricing/models/m-t`, { method: 'PUT', token: s.adminToken, body: { input_price: 1, output_price: 10 } })).status).toBe(200);
    const adminB = await loggedInUser(s, 'admin');
    otherAdmin = adminB.token;
    otherTenantId = adminB.tenantId;
    otherTenantUserToken = (await loggedInUser(s, 'user', adminB.tenantId)).token;
  });
  afterAll(async () => {
    await s?.close();
    await upstream?.close();
    await cleanup();
  });
  beforeEach((ctx) => {
    if (!enabled) ctx.skip();
    upstream.mode = { kind: 'reply' };
  });

  /** Usage published, the billing projection and this instance's live view caught up. */
  async function settled() {
    await s.app.ctx.usage.flush();
    const head = await s.app.ctx.store.headPosition();
    await Promise.all([s.app.ctx.runner.waitFor(head, { projections: ['billing'] }), s.app.ctx.views.billing.waitFor(head)]);
  }
  async function newUser(credits?: string) {
    const user = await createUser(s.url, s.adminToken);
    const token = (await login(s.url, user.email, TEST_USER_PASSWORD)).access_token;
    if (credits !== undefined) await topup(user.id, credits);
    return { id: user.id, token };
  }
  async function topup(userId: string, amount: string | number, reason = 'test credits') {
    const res = await call(`${s.url}/v1/admin/credits/${userId}/topup`, { token: s.adminToken, body: { amount, reason } });
    expect(res.status, res.text).toBe(200);
    return res.json;
  }
  async function newKey(userId: string) {
    const res = await call(`${s.url}/api/admin/keys`, { token: s.adminToken, body: { name: 'k', user_id: userId } });
    expect(res.status, res.text).toBe(201);
    return res.json.key as string;
  }
  const chat = (token: string, model = 'm-a') => call(`${s.url}/v1/chat/completions`, { token, body: { model, messages: [{ role: 'user', content: 'hi' }] } });
  async function ledgerOf(userId: string) {
    await settled();
    const res = await call(`${s.url}/v1/admin/billing/ledger?user_id=${userId}`, { token: s.adminToken });
    expect(res.status, res.text).toBe(200);
    return res.json.data as Array<Record<string, any>>; // eslint-disable-line @typescript-eslint/no-explicit-any
  }
  async function balanceOf(userId: string): Promise<number> {
    await settled();
    return (await call(`${s.url}/v1/admin/credits/${userId}`, { token: s.adminToken })).json.balance_micro as number;
  }
  async function setSettings(body: Record<string, unknown>) {
    const res = await call(`${s.url}/v1/admin/settings`, { method: 'PUT', token: s.adminToken, body });
    expect(res.status, res.text).toBe(200);
    return res.json;
  }
  async function newPlan(body: Record<string, unknown>) {
    const res = await call(`${s.url}/v1/admin/plans`, { token: s.adminToken, body: { name: 'Plan', period: 'month', ...body } });
    expect(res.status, res.text).toBe(201);
    return res.json as { id: string } & Record<string, unknown>;
  }

  it('keeps a price table per tenant: model prices, a default, removal, validation', async () => {
    const table = await call(`${s.url}/v1/admin/pricing`, { token: s.adminToken });
    expect(table.status).toBe(200);
    expect(table.json).toMatchObject({ object: 'pricing', tenant_id: 'default', default: { input_price: '0.000000', input_per_1m_micro: 0 } });
    expect(table.json.models.find((m: { model: string }) => m.model === 'm-a')).toMatchObject({
      input_price: '2.500000',
      output_price: '10.000000',
      per_request_price: '0.001000',
      input_per_1m_micro: 2_500_000,
      output_per_1m_micro: 10_000_000,
      per_request_micro: 1_000,
    });
    // POST with the model in the body, PUT the default, DELETE a model price.
    const posted = await call(`${s.url}/v1/admin/pricing/models`, { token: s.adminToken, body: { model: 'm-x', input_price: '0.15', output_price: '0.6' } });
    expect(posted.json.models.find((m: { model: string }) => m.model === 'm-x')).toMatchObject({ input_per_1m_micro: 150_000, output_per_1m_micro: 600_000, per_request_micro: 0 });
    const def = await call(`${s.url}/v1/admin/pricing/default`, { method: 'PUT', token: s.adminToken, body: { input_price: 1, output_price: 2 } });
    expect(def.json.default).toMatchObject({ input_per_1m_micro: 1_000_000, output_per_1m_micro: 2_000_000, updated_by: 'admin-1' });
    const bulk = await call(`${s.url}/v1/admin/pricing`, { method: 'PUT', token: s.adminToken, body: { default: { input_price: 0, output_price: 0 }, models: { 'm-y': { input_price: '3', output_price: '4' } } } });
    expect(bulk.json.default.input_per_1m_micro).toBe(0);
    expect(bulk.json.models.map((m: { model: string }) => m.model)).toEqual(expect.arrayContaining(['m-a', 'm-x', 'm-y']));
    for (const model of ['m-x', 'm-y']) expect((await call(`${s.url}/v1/admin/pricing/models/${model}`, { method: 'DELETE', token: s.adminToken })).status).toBe(200);
    const missing = await call(`${s.url}/v1/admin/pricing/models/m-x`, { method: 'DELETE', token: s.adminToken });
    expect(missing.status).toBe(404);
    expect(missing.json.error.code).toBe('price_not_found');
    // Amounts: at most 6 decimals, never negative, never floating point.
    for (const body of [{ input_price: '0.0000001', output_price: 1 }, { input_price: -1, output_price: 1 }, { input_price: '1e3', output_price: 1 }]) {
      const bad = await call(`${s.url}/v1/admin/pricing/models/m-x`, { method: 'PUT', token: s.adminToken, body });
      expect(bad.status, JSON.stringify(body)).toBe(400);
    }
    const user = await call(`${s.url}/v1/admin/pricing`, { token: s.userToken });
    expect(user.status).toBe(403);
    // Another tenant has its own (empty) table.
    expect((await call(`${s.url}/v1/admin/pricing`, { token: otherAdmin })).json).toMatchObject({ tenant_id: otherTenantId, models: [] });
  });

  it('tops up and adjusts with reasons, with running balances in the ledger', async () => {
    const u = await newUser();
    const first = await topup(u.id, '10', 'welcome bonus');
    expect(first).toMatchObject({ object: 'credit_balance', user_id: u.id, balance: '10.000000', balance_micro: 10_000_000 });
    expect(first.entry).toMatchObject({ type: 'topup', amount: '10.000000', amount_micro: 10_000_000, balance_after_micro: 10_000_000, reason: 'welcome bonus', created_by: 'admin-1' });
    const down = await call(`${s.url}/v1/admin/credits/${u.id}/adjust`, { token: s.adminToken, body: { amount: '-2.5', reason: 'correction' } });
    expect(down.json.entry).toMatchObject({ type: 'adjustment', amount: '-2.500000', amount_micro: -2_500_000, balance_after: '7.500000', reason: 'correction' });
    const up = await call(`${s.url}/v1/admin/credits/${u.id}/adjust`, { token: s.adminToken, body: { amount: 0.000001, reason: 'rounding' } });
    expect(up.json).toMatchObject({ balance_micro: 7_500_001, entry: { amount_micro: 1, balance_after_micro: 7_500_001 } });

    expect((await call(`${s.url}/v1/admin/credits/${u.id}/topup`, { token: s.adminToken, body: { amount: '5' } })).status).toBe(400); // no reason
    expect((await call(`${s.url}/v1/admin/credits/${u.id}/topup`, { token: s.adminToken, body: { amount: '-5', reason: 'x' } })).json.error.code).toBe('invalid_amount');
    expect((await call(`${s.url}/v1/admin/credits/${u.id}/adjust`, { token: s.adminToken, body: { amount: 0, reason: 'x' } })).json.error.code).toBe('invalid_amount');
    expect((await call(`${s.url}/v1/admin/credits/${u.id}/topup`, { token: s.adminToken, body: { amount: '1.0000001', reason: 'x' } })).status).toBe(400);
    expect((await call(`${s.url}/v1/admin/credits/no-such-user/topup`, { token: s.adminToken, body: { amount: '1', reason: 'x' } })).json.error.code).toBe('user_not_found');
    expect((await call(`${s.url}/v1/admin/credits/${u.id}/topup`, { token: u.token, body: { amount: '1', reason: 'x' } })).status).toBe(403);

    const ledger = await ledgerOf(u.id);
    expect(ledger.map((e) => [e.type, e.amount_micro, e.balance_after_micro, e.reason])).toEqual([
      ['topup', 10_000_000, 10_000_000, 'welcome bonus'],
      ['adjustment', -2_500_000, 7_500_000, 'correction'],
      ['adjustment', 1, 7_500_001, 'rounding'],
    ]);
    const mine = await call(`${s.url}/v1/credits`, { token: u.token });
    expect(mine.json).toMatchObject({ user_id: u.id, balance: '7.500001', subscription: null });
  });

  it('charges each request exactly to the micro-credit, for session and API-key callers', async () => {
    const u = await newUser('1');
    const key = await newKey(u.id);
    expect((await chat(u.token)).status).toBe(200);
    expect((await chat(key)).status).toBe(200);
    const ledger = await ledgerOf(u.id);
    const charges = ledger.filter((e) => e.type === 'charge');
    expect(charges.map((e) => [e.amount_micro, e.balance_after_micro, e.prompt_tokens, e.completion_tokens, e.model])).toEqual([
      [-M_A_CHARGE, 1_000_000 - M_A_CHARGE, 11, 7, 'm-a'],
      [-M_A_CHARGE, 1_000_000 - 2 * M_A_CHARGE, 11, 7, 'm-a'],
    ]);
    expect(charges[0]!.amount).toBe('-0.001098');
    expect(charges[0]!.key_id).toBeNull();
    expect(charges[1]!.key_id).not.toBeNull();
    // Each charge points back at its request and its usage event.
    const events = await usageEvents(s);
    for (const charge of charges) {
      expect(events.some((e) => e.request_id === charge.request_id)).toBe(true);
      const stored = (await s.app.ctx.store.readAll({ after: 0, limit: 100_000 })).flatMap((c) => c.events).find((e) => e.id === charge.event_id)!;
      expect(stored).toMatchObject({ type: 'UsageRecorded', data: { request_id: charge.request_id } });
    }
    // Free models and requests that generated nothing cost nothing.
    expect((await chat(u.token, 'm-free')).status).toBe(200);
    upstream.mode = { kind: 'error', status: 400, message: 'bad' };
    expect((await chat(u.token)).status).toBe(400);
    expect((await ledgerOf(u.id)).filter((e) => e.type === 'charge')).toHaveLength(2);
    expect(await balanceOf(u.id)).toBe(1_000_000 - 2 * M_A_CHARGE);
  });

  it('keeps the price in force when a request happened: a price change applies from then on', async () => {
    const u = await newUser('1');
    await call(`${s.url}/v1/admin/pricing/models/m-h`, { method: 'PUT', token: s.adminToken, body: { input_price: '2.5', output_price: '10', per_request_price: '0.001' } });
    expect((await chat(u.token, 'm-h')).status).toBe(200);
    expect((await chat(u.token, 'm-h')).status).toBe(200);
    await settled();
    // New price: 11 × 3 + 7 × 15 = 138 micro-credits, nothing per request.
    await call(`${s.url}/v1/admin/pricing/models/m-h`, { method: 'PUT', token: s.adminToken, body: { input_price: '3', output_price: '15', per_request_price: '0' } });
    expect((await chat(u.token, 'm-h')).status).toBe(200);
    const charges = (await ledgerOf(u.id)).filter((e) => e.type === 'charge');
    expect(charges.map((e) => e.amount_micro)).toEqual([-1_098, -1_098, -138]);
    expect(charges.at(-1)!.balance_after_micro).toBe(1_000_000 - 2 * 1_098 - 138);
    const rated = await s.app.ctx.sql.db.selectFrom('billing_requests').selectAll().where('user_id', '=', u.id).orderBy('event_position').execute();
    expect(rated.map((r) => [Number(r.input_per_1m_micro), Number(r.cost_micro)])).toEqual([
      [2_500_000, 1_098],
      [2_500_000, 1_098],
      [3_000_000, 138],
    ]);
  });

  it("charges this instance's billing view when the relay publishes the usage, once, before the log has it", async () => {
    const u = await newUser('1');
    await settled();
    const viewBalance = () => s.app.ctx.views.billing.state.balances.get(u.id);
    expect(viewBalance()).toBe(1_000_000);
    expect((await chat(u.token)).status).toBe(200);
    // Admission of the next request already counts this one: the usage event has not been
    // appended yet (the publisher batches for milliseconds), but the view has folded it.
    expect(viewBalance()).toBe(1_000_000 - M_A_CHARGE);
    await settled(); // the commit is in the log and has come back to this instance: not charged again
    expect(viewBalance()).toBe(1_000_000 - M_A_CHARGE);
    expect(await balanceOf(u.id)).toBe(1_000_000 - M_A_CHARGE); // the ledger agrees
  });

  it('answers 429 insufficient_quota before any upstream call when there are no credits and no coverage', async () => {
    const u = await newUser();
    const key = await newKey(u.id);
    const before = upstream.requests.length;
    for (const token of [u.token, key]) {
      const res = await chat(token);
      expect(res.status).toBe(429);
      expect(res.json.error).toMatchObject({ type: 'insufficient_quota', code: 'insufficient_quota' });
      expect(res.json.error.message).toMatch(/insufficient credits/);
    }
    expect(upstream.requests.length).toBe(before);
    // Each refusal still published its one usage event.
    await settled();
    const refused = (await usageEvents(s)).filter((e) => e.user_id === u.id);
    expect(refused).toHaveLength(2);
    for (const e of refused) expect(e).toMatchObject({ status: 429, error_code: 'insufficient_quota', total_tokens: 0 });
    // Free models need no credits; credits make priced ones work at once.
    expect((await chat(u.token, 'm-free')).status).toBe(200);
    await topup(u.id, '0.000001');
    expect((await chat(key)).status).toBe(200);
    // The balance went below zero by that request (elastic); the next one is refused.
    expect(await balanceOf(u.id)).toBe(1 - M_A_CHARGE);
    expect((await chat(key)).status).toBe(429);
  });

  it('hybrid (default): the subscription covers up to its quota, the overage is charged', async () => {
    const plan = await newPlan({ name: 'Tokens', quotas: [{ models: ['m-t'], tokens: 30 }], price: '0.5' });
    const u = await newUser('1');
    const key = await newKey(u.id);
    const sub = await call(`${s.url}/v1/subscriptions`, { token: u.token, body: { plan_id: plan.id } });
    expect(sub.status, sub.text).toBe(201);
    // 30 tokens: the first request's 18 are covered, the second's first 12 (11 prompt + 1
    // completion), its 6 other completion tokens are charged at 10/1M = 60 micro (the per-request
    // price is waived for a partly covered request); then everything is charged (11 + 70 = 81).
    for (const token of [key, key, key]) expect((await chat(token, 'm-t')).status).toBe(200);
    const ledger = await ledgerOf(u.id);
    expect(ledger.map((e) => [e.type, e.amount_micro])).toEqual([
      ['topup', 1_000_000],
      ['subscription_fee', -500_000],
      ['charge', -60],
      ['charge', -81],
    ]);
    expect(ledger.at(-1)!.balance_after_micro).toBe(500_000 - 141);
    const mine = await call(`${s.url}/v1/subscriptions`, { token: u.token });
    expect(mine.json.quotas[0]).toMatchObject({ models: ['m-t'], tokens: 30, used_tokens: 30, remaining: 0 });
  });

  it('included: API-key traffic draws on the subscription only; exhausted -> 429, credits untouched', async () => {
    const plan = await newPlan({ name: 'Included', quotas: [{ models: ['m-a'], requests: 1 }], price: 0 });
    const u = await newUser('1');
    const key = await newKey(u.id);
    expect((await call(`${s.url}/v1/subscriptions`, { token: u.token, body: { plan_id: plan.id } })).status).toBe(201);
    await setSettings({ subscription_covers_relay: 'included' });
    try {
      expect((await chat(key)).status).toBe(200); // covered
      await settled();
      const refused = await chat(key);
      expect(refused.status).toBe(429);
      expect(refused.json.error.code).toBe('insufficient_quota');
      expect(refused.json.error.message).toMatch(/used up/);
      expect(await balanceOf(u.id)).toBe(1_000_000); // credits were not used
      // The chat UI: subscription first, then credits.
      expect((await chat(u.token)).status).toBe(200);
      expect(await balanceOf(u.id)).toBe(1_000_000 - M_A_CHARGE);
    } finally {
      await setSettings({ subscription_covers_relay: 'hybrid' });
    }
  });

  it('excluded: API-key traffic is always billed from credits; no credits -> 429 saying the subscription does not cover it', async () => {
    const plan = await newPlan({ name: 'UI only', quotas: [{ models: ['*'], requests: 100 }], price: 0 });
    const u = await newUser();
    const key = await newKey(u.id);
    expect((await call(`${s.url}/v1/subscriptions`, { token: u.token, body: { plan_id: plan.id } })).status).toBe(201);
    const settings = await setSettings({ subscription_covers_relay: 'excluded' });
    expect(settings).toMatchObject({ object: 'settings', tenant_id: 'default', relay_api_enabled: true, subscription_covers_relay: 'excluded' });
    try {
      const refused = await chat(key);
      expect(refused.status).toBe(429);
      expect(refused.json.error.code).toBe('insufficient_quota');
      expect(refused.json.error.message).toMatch(/subscription does not cover relay API usage/);
      expect(refused.json.error.message).toMatch(/credits are needed/);
      expect((await chat(u.token)).status).toBe(200); // the UI is covered by the subscription
      await topup(u.id, '1');
      expect((await chat(key)).status).toBe(200);
      const ledger = await ledgerOf(u.id);
      expect(ledger.filter((e) => e.type === 'charge').map((e) => e.amount_micro)).toEqual([-M_A_CHARGE]);
      const mine = await call(`${s.url}/v1/subscriptions`, { token: u.token });
      expect(mine.json.quotas[0]).toMatchObject({ used_requests: 1, remaining: 99 }); // only the UI request
    } finally {
      await setSettings({ subscription_covers_relay: 'hybrid' });
    }
  });

  it('relay_api_enabled=false refuses API keys with 403 relay_disabled, not the chat UI', async () => {
    const u = await newUser('1');
    const key = await newKey(u.id);
    const off = await setSettings({ relay_api_enabled: false });
    expect(off.relay_api_enabled).toBe(false);
    try {
      const res = await chat(key);
      expect(res.status).toBe(403);
      expect(res.json.error).toMatchObject({ type: 'permission_error', code: 'relay_disabled' });
      expect(res.json.error.message).toMatch(/relay API is disabled/);
      expect((await call(`${s.url}/v1/models`, { token: key })).json.error.code).toBe('relay_disabled');
      expect((await chat(u.token)).status).toBe(200);
      await settled();
      const event = (await usageEvents(s)).find((e) => e.request_id === res.headers.get('x-request-id'));
      expect(event).toMatchObject({ status: 403, error_code: 'relay_disabled', key_id: expect.any(String) });
      expect((await call(`${s.url}/v1/admin/settings`, { token: s.adminToken })).json.relay_api_enabled).toBe(false);
      expect((await call(`${s.url}/v1/admin/settings`, { token: u.token })).status).toBe(403);
    } finally {
      await setSettings({ relay_api_enabled: true });
    }
    expect((await chat(key)).status).toBe(200);
  });

  it('applies settings, credits and prices on every instance (a second instance on the same stores)', async (ctx) => {
    if (name !== TWO_INSTANCES) return ctx.skip();
    const b = await startApp({ HEALTH_CHECK_ENABLED: 'false', ...env });
    const until = async (what: string, check: () => Promise<boolean>) => {
      const deadline = Date.now() + 5_000;
      while (!(await check())) {
        if (Date.now() > deadline) throw new Error(`instance b never saw: ${what}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    const chatOn = (token: string) => call(`${b.url}/v1/chat/completions`, { token, body: { model: 'm-a', messages: [{ role: 'user', content: 'hi' }] } });
    try {
      const u = await newUser();
      const key = await newKey(u.id);
      await until('the key (refused for credits)', async () => (await chatOn(key)).json.error?.code === 'insufficient_quota');
      await topup(u.id, '1'); // on instance a
      await until('the top-up', async () => (await chatOn(key)).status === 200);
      await setSettings({ relay_api_enabled: false });
      try {
        await until('relay_api_enabled=false', async () => (await chatOn(key)).json.error?.code === 'relay_disabled');
        expect((await chatOn(u.token)).status).toBe(200);
      } finally {
        await setSettings({ relay_api_enabled: true });
      }
      await until('relay_api_enabled=true', async () => (await chatOn(key)).status === 200);
      // Both instances' usage lands in one ledger, each request charged once.
      await b.app.ctx.usage.flush();
      const charges = (await ledgerOf(u.id)).filter((e) => e.type === 'charge');
      expect(charges.every((e) => e.amount_micro === -M_A_CHARGE)).toBe(true);
      expect(new Set(charges.map((e) => e.request_id)).size).toBe(charges.length);
      expect(await balanceOf(u.id)).toBe(1_000_000 - charges.length * M_A_CHARGE);
    } finally {
      await b.close();
    }
  });

  it('subscribes, covers, renews (fee again, quotas reset), cancels; an ended period covers nothing', async () => {
    const plan = await newPlan({ name: 'Starter', description: 'one request', period: { days: 30 }, quotas: [{ models: ['m-a'], requests: 1 }], price: '0.25' });
    expect(plan).toMatchObject({ object: 'plan', period: { days: 30 }, price: '0.250000', price_micro: 250_000, quotas: [{ models: ['m-a'], requests: 1, tokens: null }] });
    expect((await call(`${s.url}/v1/plans`, { token: s.userToken })).json.data.some((p: { id: string }) => p.id === plan.id)).toBe(true);
    const poor = await newUser();
    const refused = await call(`${s.url}/v1/subscriptions`, { token: poor.token, body: { plan_id: plan.id } });
    expect(refused.status).toBe(402);
    expect(refused.json.error.code).toBe('insufficient_credits');

    const u = await newUser('1');
    const sub = await call(`${s.url}/v1/subscriptions`, { token: u.token, body: { plan_id: plan.id } });
    expect(sub.json).toMatchObject({ object: 'subscription', plan_id: plan.id, plan_name: 'Starter', status: 'active', price_micro: 250_000, quotas: [{ requests: 1, used_requests: 0, remaining: 1 }] });
    expect(Date.parse(sub.json.current_period_end) - Date.parse(sub.json.current_period_start)).toBe(30 * 86_400_000);
    expect((await call(`${s.url}/v1/subscriptions`, { token: u.token, body: { plan_id: plan.id } })).json.error.code).toBe('already_subscribed');

    expect((await chat(u.token)).status).toBe(200); // covered
    expect((await chat(u.token)).status).toBe(200); // quota used up: charged
    await settled();
    expect((await call(`${s.url}/v1/subscriptions`, { token: u.token })).json.quotas[0]).toMatchObject({ used_requests: 1, remaining: 0 });
    const renewed = await call(`${s.url}/v1/subscriptions/renew`, { method: 'POST', token: u.token });
    expect(renewed.status, renewed.text).toBe(200);
    expect(renewed.json.quotas[0]).toMatchObject({ used_requests: 0, remaining: 1 });
    expect((await chat(u.token)).status).toBe(200); // covered again
    // Its usage event must reach the log before the cancellation: coverage is rated at the
    // event's place in the log, and usage events are published in batches.
    await settled();
    const canceled = await call(`${s.url}/v1/subscriptions/cancel`, { method: 'POST', token: u.token });
    expect(canceled.json).toMatchObject({ status: 'canceled', canceled_at: expect.any(String) });
    expect((await call(`${s.url}/v1/subscriptions/cancel`, { method: 'POST', token: u.token })).json.error.code).toBe('subscription_not_active');
    expect((await chat(u.token)).status).toBe(200); // charged
    const ledger = await ledgerOf(u.id);
    expect(ledger.map((e) => [e.type, e.amount_micro])).toEqual([
      ['topup', 1_000_000],
      ['subscription_fee', -250_000],
      ['charge', -M_A_CHARGE],
      ['subscription_fee', -250_000],
      ['charge', -M_A_CHARGE],
    ]);
    expect(ledger[1]).toMatchObject({ plan_id: plan.id, subscription_id: sub.json.id });
    expect(ledger.at(-1)!.balance_after_micro).toBe(500_000 - 2 * M_A_CHARGE);

    // A period that ended: written straight into the log (no waiting a month), then no coverage.
    const renewedAgain = await call(`${s.url}/v1/admin/subscriptions/${u.id}/renew`, { method: 'POST', token: s.adminToken });
    expect(renewedAgain.json.status).toBe('active');
    const stream = `subscription-${u.id}`;
    const terms = { plan_id: plan.id, plan_name: 'Starter', period: { days: 30 }, quotas: [{ models: ['m-a'], requests: 1, tokens: null }], price_micro: 0 };
    const past = { subscription_id: sub.json.id, user_id: u.id, terms, period_start: '2020-01-01T00:00:00.000Z', period_end: '2020-01-31T00:00:00.000Z', by: null };
    await s.app.ctx.store.append(stream, [{ type: 'SubscriptionRenewed', data: past }], { expectedVersion: 'any', tenantId: 'default' });
    await settled();
    expect((await call(`${s.url}/v1/subscriptions`, { token: u.token })).json.status).toBe('expired');
    const before = await balanceOf(u.id);
    expect((await chat(u.token)).status).toBe(200);
    expect(await balanceOf(u.id)).toBe(before - M_A_CHARGE);
  });

  it('manages plans: update, delete, 404s; admins see subscriptions', async () => {
    const plan = await newPlan({ name: 'Temp', quotas: [{ models: ['m-a'], tokens: 1000 }], price: 1 });
    const patched = await call(`${s.url}/v1/admin/plans/${plan.id}`, { method: 'PATCH', token: s.adminToken, body: { price: '2', period: 'week' } });
    expect(patched.json).toMatchObject({ price_micro: 2_000_000, period: 'week', name: 'Temp' });
    expect((await call(`${s.url}/v1/admin/plans`, { token: s.adminToken, body: { name: 'bad', period: 'month', quotas: [{ models: ['m'], requests: 1, tokens: 2 }], price: 0 } })).json.error.code).toBe('invalid_quota');
    expect((await call(`${s.url}/v1/admin/plans/${plan.id}`, { method: 'DELETE', token: s.adminToken })).json).toEqual({ id: plan.id, object: 'plan', deleted: true });
    expect((await call(`${s.url}/v1/admin/plans/${plan.id}`, { token: s.adminToken })).status).toBe(404);
    const u = await newUser('10');
    expect((await call(`${s.url}/v1/subscriptions`, { token: u.token, body: { plan_id: plan.id } })).json.error.code).toBe('plan_not_found');
    expect((await call(`${s.url}/v1/admin/plans`, { token: s.userToken })).status).toBe(403);
    const list = await call(`${s.url}/v1/admin/subscriptions`, { token: s.adminToken });
    expect(list.json.object).toBe('list');
    expect(list.json.data.length).toBeGreaterThan(0);
    expect((await call(`${s.url}/v1/admin/subscriptions/${u.id}`, { token: s.adminToken })).json.error.code).toBe('subscription_not_found');
  });

  it('exports the ledger as JSON and CSV, filtered by time; users see only their own', async () => {
    const u = await newUser('3');
    expect((await chat(u.token)).status).toBe(200);
    await settled();
    const json = await call(`${s.url}/v1/admin/billing/ledger?format=json&user_id=${u.id}`, { token: s.adminToken });
    expect(json.json.data.map((e: { type: string }) => e.type)).toEqual(['topup', 'charge']);
    const csv = await call(`${s.url}/v1/admin/billing/ledger?format=csv&user_id=${u.id}`, { token: s.adminToken });
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(csv.headers.get('content-disposition')).toMatch(/attachment; filename=".*\.csv"/);
    const lines = csv.text.trimEnd().split('\r\n');
    expect(lines[0]).toBe('id,created_at,tenant_id,user_id,type,amount,amount_micro,balance_after,balance_after_micro,request_id,event_id,model,prompt_tokens,completion_tokens,key_id,reason,plan_id,subscription_id,created_by');
    expect(lines).toHaveLength(3);
    const charge = lines[2]!.split(',');
    expect(charge.slice(2, 9)).toEqual(['default', u.id, 'charge', '-0.001098', String(-M_A_CHARGE), '2.998902', String(3_000_000 - M_A_CHARGE)]);
    expect(lines[1]).toContain(',test credits,');

    const all = await call(`${s.url}/v1/admin/billing/ledger`, { token: s.adminToken });
    expect(all.json.data.length).toBeGreaterThan(2);
    const future = await call(`${s.url}/v1/admin/billing/ledger?from=2999-01-01`, { token: s.adminToken });
    expect(future.json.data).toEqual([]);
    const past = await call(`${s.url}/v1/admin/billing/ledger?to=2000-01-01&format=csv`, { token: s.adminToken });
    expect(past.text.trimEnd().split('\r\n')).toHaveLength(1);
    expect((await call(`${s.url}/v1/admin/billing/ledger?from=yesterday`, { token: s.adminToken })).status).toBe(400);

    const mine = await call(`${s.url}/v1/billing/ledger`, { token: u.token });
    expect(mine.json.data.every((e: { user_id: string }) => e.user_id === u.id)).toBe(true);
    expect(mine.json.data).toHaveLength(2);
    expect((await call(`${s.url}/v1/billing/ledger?format=csv`, { token: u.token })).text.trimEnd().split('\r\n')).toHaveLength(3);
    expect((await call(`${s.url}/v1/admin/billing/ledger`, { token: u.token })).status).toBe(403);
  });

  it('builds monthly statements: opening, movements by type, closing, requests', async () => {
    const u = await newUser('2');
    await call(`${s.url}/v1/admin/credits/${u.id}/adjust`, { token: s.adminToken, body: { amount: '-0.5', reason: 'fee' } });
    expect((await chat(u.token)).status).toBe(200);
    expect((await chat(u.token)).status).toBe(200);
    await settled();
    const period = new Date().toISOString().slice(0, 7);
    const res = await call(`${s.url}/v1/admin/billing/statements?period=${period}`, { token: s.adminToken });
    expect(res.status, res.text).toBe(200);
    expect(res.json).toMatchObject({ object: 'billing.statement', tenant_id: 'default', period });
    const line = res.json.users.find((l: { user_id: string }) => l.user_id === u.id);
    expect(line).toMatchObject({
      opening_balance_micro: 0,
      topups_micro: 2_000_000,
      adjustments_micro: -500_000,
      charges_micro: -2 * M_A_CHARGE,
      subscription_fees_micro: 0,
      closing_balance_micro: 1_500_000 - 2 * M_A_CHARGE,
      closing_balance: '1.497804',
      requests: 2,
      covered_requests: 0,
      prompt_tokens: 22,
      completion_tokens: 14,
      list_cost_micro: 2 * M_A_CHARGE,
    });
    expect(line.closing_balance_micro).toBe(await balanceOf(u.id));
    // Totals add up the users' lines.
    const sum = res.json.users.reduce((acc: number, l: { closing_balance_micro: number }) => acc + l.closing_balance_micro, 0);
    expect(res.json.totals.closing_balance_micro).toBe(sum);
    // Next month opens with this month's closing balance; an earlier one shows nothing.
    const [y, m] = period.split('-').map(Number) as [number, number];
    const next = `${m === 12 ? y + 1 : y}-${String((m % 12) + 1).padStart(2, '0')}`;
    const later = await call(`${s.url}/v1/admin/billing/statements?period=${next}&user_id=${u.id}`, { token: s.adminToken });
    expect(later.json.users).toEqual([expect.objectContaining({ user_id: u.id, opening_balance_micro: line.closing_balance_micro, charges_micro: 0, closing_balance_micro: line.closing_balance_micro })]);
    expect((await call(`${s.url}/v1/admin/billing/statements?period=2001-01`, { token: s.adminToken })).json.users).toEqual([]);
    expect((await call(`${s.url}/v1/admin/billing/statements?period=2026-13`, { token: s.adminToken })).status).toBe(400);
    const mine = await call(`${s.url}/v1/billing/statements?period=${period}`, { token: u.token });
    expect(mine.json.users).toEqual([expect.objectContaining({ user_id: u.id, charges_micro: -2 * M_A_CHARGE })]);
  });

  it('ignores a duplicate usage event for the same request_id (spool replay), charges a different request reusing the id', async () => {
    const u = await newUser('1');
    const res = await chat(u.token);
    const requestId = res.headers.get('x-request-id')!;
    const ledger = await ledgerOf(u.id);
    const balance = await balanceOf(u.id);
    const original = (await s.app.ctx.store.readAll({ after: 0, limit: 100_000 })).flatMap((c) => c.events).find((e) => e.type === 'UsageRecorded' && e.data.request_id === requestId)!;
    // The same event appended again, as a spool replay after a crash would.
    await s.app.ctx.store.append(`usage-replay${randomUUID().replace(/-/g, '')}`, [{ type: 'UsageRecorded', data: original.data }], { expectedVersion: 0, tenantId: 'default' });
    expect(await ledgerOf(u.id)).toEqual(ledger);
    expect(await balanceOf(u.id)).toBe(balance);
    expect(s.app.ctx.billing.balanceOf(u.id)).toBe(balance); // the live view too
    expect(await s.app.ctx.sql.db.selectFrom('billing_requests').select('dedupe_key').where('request_id', '=', requestId).execute()).toHaveLength(1);
    // Twice in one commit (one batch of the projection): charged once.
    const twin = { ...original.data, request_id: `twin-${randomUUID()}` };
    await s.app.ctx.store.append(`usage-replay${randomUUID().replace(/-/g, '')}`, [{ type: 'UsageRecorded', data: twin }, { type: 'UsageRecorded', data: twin }], { expectedVersion: 0, tenantId: 'default' });
    expect((await ledgerOf(u.id)).filter((e) => e.type === 'charge')).toHaveLength(2);
    expect(await balanceOf(u.id)).toBe(balance - M_A_CHARGE);
    expect(s.app.ctx.billing.balanceOf(u.id)).toBe(balance - M_A_CHARGE);
    // A client may choose its X-Request-Id: another request with the same id is still billed.
    const again = await call(`${s.url}/v1/chat/completions`, { token: u.token, headers: { 'x-request-id': requestId }, body: { model: 'm-a', messages: [{ role: 'user', content: 'hi' }] } });
    expect(again.headers.get('x-request-id')).toBe(requestId);
    expect((await ledgerOf(u.id)).filter((e) => e.type === 'charge')).toHaveLength(3);
    expect(await balanceOf(u.id)).toBe(balance - 2 * M_A_CHARGE);
  });

  it('isolates tenants on every billing endpoint (another tenant’s ids are 404, lists are empty)', async () => {
    const u = await newUser('1');
    const plan = await newPlan({ name: 'Mine', quotas: [], price: 0 });
    expect((await call(`${s.url}/v1/subscriptions`, { token: u.token, body: { plan_id: plan.id } })).status).toBe(201);
    expect((await chat(u.token)).status).toBe(200);
    await settled();
    const probes: Array<[string, string, unknown]> = [
      ['GET', `/v1/admin/credits/${u.id}`, undefined],
      ['POST', `/v1/admin/credits/${u.id}/topup`, { amount: 1, reason: 'x' }],
      ['POST', `/v1/admin/credits/${u.id}/adjust`, { amount: 1, reason: 'x' }],
      ['GET', `/v1/admin/plans/${plan.id}`, undefined],
      ['PATCH', `/v1/admin/plans/${plan.id}`, { name: 'stolen' }],
      ['DELETE', `/v1/admin/plans/${plan.id}`, undefined],
      ['GET', `/v1/admin/subscriptions/${u.id}`, undefined],
      ['POST', `/v1/admin/subscriptions/${u.id}`, { plan_id: plan.id }],
      ['POST', `/v1/admin/subscriptions/${u.id}/renew`, undefined],
      ['POST', `/v1/admin/subscriptions/${u.id}/cancel`, undefined],
    ];
    for (const [method, path, body] of probes) expect((await call(`${s.url}${path}`, { method, token: otherAdmin, body })).status, `${method} ${path}`).toBe(404);
    expect((await call(`${s.url}/v1/subscriptions`, { token: otherTenantUserToken, body: { plan_id: plan.id } })).json.error.code).toBe('plan_not_found');
    for (const path of ['/v1/admin/plans', '/v1/admin/subscriptions', '/v1/admin/billing/ledger', '/v1/admin/credits', '/v1/plans']) {
      const token = path === '/v1/plans' ? otherTenantUserToken : otherAdmin;
      expect((await call(`${s.url}${path}`, { token })).json.data, path).toEqual([]);
    }
    const period = new Date().toISOString().slice(0, 7);
    for (const path of [`/v1/admin/billing/ledger?user_id=${u.id}&format=csv`, `/v1/admin/billing/statements?period=${period}&user_id=${u.id}`]) {
      expect((await call(`${s.url}${path}`, { token: otherAdmin })).json?.error?.code, path).toBe('user_not_found');
    }
    expect((await call(`${s.url}/v1/admin/billing/statements?period=${period}`, { token: otherAdmin })).json.users).toEqual([]);
    expect((await call(`${s.url}/v1/admin/settings`, { token: otherAdmin })).json).toMatchObject({ tenant_id: otherTenantId, relay_api_enabled: true, subscription_covers_relay: 'hybrid', updated_at: null });
    // Nothing leaked the other way either, and the user's own data is intact.
    expect((await call(`${s.url}/v1/admin/plans/${plan.id}`, { token: s.adminToken })).json.name).toBe('Mine');
    expect((await call(`${s.url}/v1/credits`, { token: u.token })).json.balance_micro).toBe(1_000_000 - M_A_CHARGE);
  });

  it('publishes every billing shape in the OpenAPI document', async () => {
    const doc = (await dereferencedOpenapi(s.url));
    for (const path of [
      '/v1/admin/pricing',
      '/v1/admin/pricing/default',
      '/v1/admin/pricing/models',
      '/v1/admin/pricing/models/{model}',
      '/v1/admin/credits',
      '/v1/admin/credits/{user_id}',
      '/v1/admin/credits/{user_id}/topup',
      '/v1/admin/credits/{user_id}/adjust',
      '/v1/credits',
      '/v1/admin/billing/ledger',
      '/v1/billing/ledger',
      '/v1/admin/billing/statements',
      '/v1/billing/statements',
      '/v1/admin/plans',
      '/v1/admin/plans/{plan_id}',
      '/v1/plans',
      '/v1/subscriptions',
      '/v1/subscriptions/renew',
      '/v1/subscriptions/cancel',
      '/v1/admin/subscriptions',
      '/v1/admin/subscriptions/{user_id}',
      '/v1/admin/settings',
    ]) {
      expect(doc.paths[path], path).toBeDefined();
    }
    expect(JSON.stringify(doc.paths['/v1/admin/billing/ledger'].get.responses['200'])).toContain('balance_after_micro');
    expect(JSON.stringify(doc.paths['/v1/admin/settings'].put.requestBody)).toContain('subscription_covers_relay');
  });

  it('rebuilds the billing projection from the log into identical tables, and re-seeds the live view', async () => {
    await settled();
    const tables = ['billing_prices', 'billing_settings', 'billing_balances', 'billing_ledger', 'billing_requests', 'billing_plans', 'billing_subscriptions', 'billing_key_spend'] as const;
    const keys: Record<(typeof tables)[number], string[]> = {
      billing_prices: ['tenant_id', 'model'],
      billing_settings: ['tenant_id'],
      billing_balances: ['user_id'],
      billing_ledger: ['id'],
      billing_requests: ['dedupe_key'],
      billing_plans: ['id'],
      billing_subscriptions: ['user_id'],
      billing_key_spend: ['key_id'],
    };
    const dump = async () => {
      const out: Record<string, unknown[]> = {};
      for (const table of tables) {
        let query = s.app.ctx.sql.db.selectFrom(table).selectAll();
        for (const column of keys[table]) query = query.orderBy(column as never);
        out[table] = await query.execute();
      }
      return out;
    };
    const before = await dump();
    expect(before.billing_ledger!.length).toBeGreaterThan(20);
    expect(before.billing_key_spend!.length).toBeGreaterThan(0);
    await s.app.ctx.runner.rebuild('billing');
    expect(await dump()).toEqual(before);
    // The price change mid-traffic survived the replay: old requests kept the old price.
    const mh = (before.billing_requests as Array<{ model: string; cost_micro: number; event_position: number }>)
      .filter((r) => r.model === 'm-h')
      .sort((a, b) => Number(a.event_position) - Number(b.event_position))
      .map((r) => Number(r.cost_micro));
    expect(mh).toEqual([1_098, 1_098, 138]);
  });
});
