/**
 * Webhooks end to end on the real server, embedded and distributed (NATS + MariaDB + Redis): a
 * local receiver (node:http) checks each delivery's signature with the webhook's secret. Covered:
 * the admin API and its tenant scope, v2 payloads of key, alert, maintenance and quota events,
 * retries while the receiver answers 503 or is down, redelivery, the deliveries list, two
 * instances sending each delivery once, a restart between a failure and its retry (driven by a
 * dispatcher with its own clock), a rebuild that sends nothing again, and the SSRF guard at create
 * and at connect (a name that resolves to loopback by then: DNS rebinding).
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { UsageData } from '../../src/commands/usage/events.js';
import { webhooks as webhookDecider } from '../../src/commands/webhooks/decider.js';
import { SecretBox } from '../../src/crypto/secret-box.js';
import { createLogger } from '../../src/logger.js';
import { WebhookDispatcher } from '../../src/webhooks/dispatcher.js';
import { verifySignature } from '../../src/webhooks/signature.js';
import { call, loggedInUser, startApp, TEST_SECRET, type RunningApp } from '../support/app.js';
import { appModes, type ModeEnv } from '../support/modes.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

const services = inject('services');
const urls = inject('serviceUrls');
const SECRET = 'whsec_test_secret_0123456789';
const POLL = { timeout: 30_000, interval: 25 };
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

async function deliveries(s: RunningApp, token: string, webhookId: string, query = ''): Promise<{ data: Json[]; has_more: boolean; next_cursor: string | null }> {
  const res = await call(`${s.url}/v1/admin/webhooks/${webhookId}/deliveries${query}`, { token });
  expect(res.status, res.text).toBe(200);
  return res.json as { data: Json[]; has_more: boolean; next_cursor: string | null };
}

async function createWebhook(s: RunningApp, token: string, body: Record<string, unknown>): Promise<Json> {
  const res = await call(`${s.url}/v1/admin/webhooks`, { token, body });
  expect(res.status, res.text).toBe(201);
  return res.json;
}

async function createKey(s: RunningApp, name: string): Promise<{ id: string; key: string }> {
  const res = await call(`${s.url}/api/admin/keys`, { token: s.adminToken, body: { name, user_id: s.userId } });
  expect(res.status, res.text).toBe(201);
  return res.json as { id: string; key: string };
}

/** A dispatcher of the test's own on the app's read models, with the test's clock. */
function dispatcherOf(
  s: RunningApp,
  clock: { now: number },
  settings: Partial<RunningApp['app']['ctx']['config']['webhooks']> = {},
  resolver?: ConstructorParameters<typeof WebhookDispatcher>[0]['resolver'],
  onAttempt?: ConstructorParameters<typeof WebhookDispatcher>[0]['onAttempt'],
) {
  return new WebhookDispatcher({
    onAttempt,
    db: s.app.ctx.sql.db,
    secrets: new SecretBox(TEST_SECRET, 'webhook-secrets'),
    settings: { ...s.app.ctx.config.webhooks, ...settings },
    logger: createLogger('silent'),
    now: () => clock.now,
    random: () => 0.5,
    ...(resolver && { resolver }),
  });
}

function usageEvent(s: RunningApp, keyId: string, errorCode: string | null): UsageData {
  return {
    request_id: `req_${randomUUID()}`,
    tenant_id: 'default',
    user_id: s.userId,
    key_id: keyId,
    channel_id: null,
    provider: null,
    model_requested: 'gpt-test',
    model_served: null,
    prompt_tokens: 0,
    completion_tokens: 0,
    total_tokens: 0,
    usage_source: 'none',
    stream: false,
    status: errorCode ? 429 : 200,
    error_code: errorCode,
    latency_ms: 1,
    ttft_ms: null,
    attempts: 0,
    started_at: new Date().toISOString(),
  };
}

describe.each(appModes(services, urls))('webhooks ($name)', (mode) => {
  let s: RunningApp;
  let receiver: WebhookReceiver;
  let env: ModeEnv;
  const settings = { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_POLL_INTERVAL: '50ms', WEBHOOK_RETRY_BASE: '100ms', HEALTH_CHECK_ENABLED: 'false' };
  let firstHook: Json;

  beforeAll(async () => {
    if (!mode.enabled) return;
    env = mode.env();
    receiver = await startWebhookReceiver();
    receiver.secret = SECRET;
    s = await startApp({ ...env.env, ...settings });
  });

  afterAll(async () => {
    await s?.close();
    await receiver?.close();
    await env?.cleanup();
  });

  it.skipIf(!mode.enabled)('delivers key.created as a signed v2 payload, and lists the delivery', async () => {
    firstHook = await createWebhook(s, s.adminToken, { url: `${receiver.url}/hook`, events: ['key.created'], secret: SECRET });
    expect(firstHook).toMatchObject({ object: 'webhook', url: `${receiver.url}/hook`, events: ['key.created'], enabled: true, created_by: s.adminUserId });
    expect(firstHook.secret).toBeUndefined(); // given, so not answered
    const key = await createKey(s, 'webhook test key');
    await expect.poll(() => receiver.received.length, POLL).toBe(1);
    const got = receiver.received[0]!;
    expect(got.signatureValid).toBe(true);
    expect(got.path).toBe('/hook');
    expect(got.headers['content-type']).toBe('application/json');
    expect(Object.keys(got.json).sort()).toEqual(['api_version', 'created_at', 'data', 'id', 'tenant_id', 'type']);
    expect(got.json).toMatchObject({ type: 'key.created', api_version: 'v2', tenant_id: 'default', data: { key_id: key.id, name: 'webhook test key', user_id: s.userId } });
    expect(got.json.id).toMatch(/^evt_[0-9a-f]{32}$/);
    expect(got.headers['x-switchyard-event-id']).toBe(got.json.id);
    expect(got.headers['idempotency-key']).toBe(got.json.id);
    expect(got.headers['x-switchyard-event-type']).toBe('key.created');
    // Never the key, its hash or its prefix.
    expect(got.body).not.toContain(key.key);
    expect(got.body).not.toContain(key.key.slice(0, 8));
    expect(got.body).not.toContain('hash');

    await expect.poll(async () => (await deliveries(s, s.adminToken, firstHook.id)).data[0]?.status, POLL).toBe('delivered');
    const list = await deliveries(s, s.adminToken, firstHook.id);
    expect(list).toMatchObject({ has_more: false, next_cursor: null });
    expect(list.data).toHaveLength(1);
    expect(list.data[0]).toMatchObject({ object: 'webhook.delivery', webhook_id: firstHook.id, event_id: got.json.id, event_type: 'key.created', attempts: 1, response_code: 200, last_error: null, next_attempt_at: null });
    expect(list.data[0]!.id).toBe(got.headers['x-switchyard-delivery-id']);
    expect(list.data[0]!.payload).toEqual(got.json);
    expect(list.data[0]!.delivered_at).toBeTruthy();
  });

  it.skipIf(!mode.enabled)('manages webhooks in the admin\'s tenant, never answers the secret again, keeps it sealed', async () => {
    const generated = await createWebhook(s, s.adminToken, { url: `${receiver.url}/other`, events: ['*'], enabled: false });
    expect(generated.secret).toMatch(/^whsec_[A-Za-z0-9_-]{40,}$/);
    expect(generated.events).toEqual(['*']);

    const one = await call(`${s.url}/v1/admin/webhooks/${generated.id}`, { token: s.adminToken });
    expect(one.status).toBe(200);
    expect(one.json.secret).toBeUndefined();
    expect(one.text).not.toContain(generated.secret);
    const list = await call(`${s.url}/v1/admin/webhooks`, { token: s.adminToken });
    expect(list.json.data.map((w: Json) => w.id)).toEqual(expect.arrayContaining([firstHook.id, generated.id]));
    expect(list.text).not.toContain(generated.secret);
    expect(list.text).not.toContain(SECRET);

    // Sealed in the log and the read model.
    const events = await s.app.ctx.store.readStream(`webhook-${generated.id}`);
    expect(JSON.stringify(events)).not.toContain(generated.secret);
    const row = await s.app.ctx.sql.db.selectFrom('webhooks').selectAll().where('id', '=', generated.id).executeTakeFirstOrThrow();
    expect(row.secret_sealed).not.toContain(generated.secret);
    expect(new SecretBox(TEST_SECRET, 'webhook-secrets').open(row.secret_sealed)).toBe(generated.secret);

    const patched = await call(`${s.url}/v1/admin/webhooks/${generated.id}`, { method: 'PATCH', token: s.adminToken, body: { events: ['user.created', 'key.revoked', 'user.created'], enabled: true, secret: 'a-new-secret-of-20-chars' } });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.json).toMatchObject({ events: ['key.revoked', 'user.created'], enabled: true });
    expect(patched.json.secret).toBeUndefined();

    const bad = await call(`${s.url}/v1/admin/webhooks`, { token: s.adminToken, body: { url: receiver.url, events: ['key.created', 'key.exploded'] } });
    expect(bad.status).toBe(400);
    expect(bad.json.error).toMatchObject({ code: 'invalid_request', param: expect.stringContaining('events') });
    const ftp = await call(`${s.url}/v1/admin/webhooks`, { token: s.adminToken, body: { url: 'ftp://example.com/x', events: ['*'] } });
    expect(ftp.status).toBe(400);
    expect(ftp.json.error).toMatchObject({ code: 'invalid_webhook_url', param: 'url' });
    const none = await call(`${s.url}/v1/admin/webhooks`, { token: s.adminToken, body: { url: receiver.url, events: [] } });
    expect(none.status).toBe(400);

    // Another tenant's admin sees none of them; a user may not use the API.
    const other = await loggedInUser(s, 'admin');
    expect((await call(`${s.url}/v1/admin/webhooks`, { token: other.token })).json.data).toEqual([]);
    for (const [method, path] of [['GET', ''], ['PATCH', ''], ['DELETE', ''], ['GET', '/deliveries']] as const) {
      const res = await call(`${s.url}/v1/admin/webhooks/${generated.id}${path}`, { method, token: other.token, ...(method === 'PATCH' && { body: { enabled: false } }) });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.json.error.code).toBe('webhook_not_found');
    }
    expect((await call(`${s.url}/v1/admin/webhooks`, { token: s.userToken })).status).toBe(403);

    // In the API description, with the event names.
    const openapi = (await call(`${s.url}/openapi.json`)).json;
    for (const path of ['/v1/admin/webhooks', '/v1/admin/webhooks/{id}', '/v1/admin/webhooks/{id}/deliveries', '/v1/admin/webhooks/{id}/deliveries/{delivery_id}/redeliver']) expect(openapi.paths[path], path).toBeDefined();
    expect(JSON.stringify(openapi.paths['/v1/admin/webhooks'].post.requestBody)).toContain('quota.exhausted');

    const deleted = await call(`${s.url}/v1/admin/webhooks/${generated.id}`, { method: 'DELETE', token: s.adminToken });
    expect(deleted.json).toEqual({ id: generated.id, object: 'webhook', deleted: true });
    expect((await call(`${s.url}/v1/admin/webhooks/${generated.id}`, { token: s.adminToken })).status).toBe(404);
    expect((await call(`${s.url}/v1/admin/webhooks/${generated.id}`, { method: 'DELETE', token: s.adminToken })).status).toBe(404);
  });

  it.skipIf(!mode.enabled)('retries while the receiver answers 503 or is down, and delivers once it is back', async () => {
    const flaky = await startWebhookReceiver();
    flaky.secret = SECRET;
    flaky.answer(503);
    try {
      const hook = await createWebhook(s, s.adminToken, { url: flaky.url, events: ['user.created'], secret: SECRET });
      const user = await loggedInUser(s, 'user', 'default');
      const latest = async () => (await deliveries(s, s.adminToken, hook.id)).data[0];
      await expect.poll(async () => (await latest())?.attempts ?? 0, POLL).toBeGreaterThanOrEqual(2);
      expect(await latest()).toMatchObject({ status: 'pending', response_code: 503, last_error: 'the receiver answered 503' });

      await flaky.stop(); // connection refused
      await expect.poll(async () => (await latest())?.last_error ?? '', POLL).toContain('ECONNREFUSED');
      expect(await latest()).toMatchObject({ status: 'pending', response_code: null });

      flaky.answer(200);
      await flaky.start();
      await expect.poll(async () => (await latest())?.status, POLL).toBe('delivered');
      const final = (await latest())!;
      expect(final.response_code).toBe(200);
      expect(final.attempts).toBeGreaterThanOrEqual(3);
      // Every attempt carried the same payload, signed.
      const ids = new Set(flaky.received.map((r) => r.json.id));
      expect(ids).toEqual(new Set([final.event_id]));
      expect(flaky.received.every((r) => r.signatureValid)).toBe(true);
      // Numbered attempts (those refused at connect never arrived), the last the delivered one.
      const numbers = flaky.received.map((r) => Number(r.headers['x-switchyard-delivery-attempt']));
      expect(numbers[0]).toBe(1);
      expect(numbers.every((n, i) => i === 0 || n > numbers[i - 1]!)).toBe(true);
      expect(numbers.at(-1)).toBe(final.attempts);
      expect(flaky.received.at(-1)!.json).toMatchObject({ type: 'user.created', data: { user_id: user.userId, role: 'user' } });
      expect(flaky.received.at(-1)!.body).not.toContain('password');
    } finally {
      await flaky.close();
    }
  });

  it.skipIf(!mode.enabled)('redelivers a delivery on request (202), with the same event id', async () => {
    const before = (await deliveries(s, s.adminToken, firstHook.id)).data[0]!;
    const count = receiver.received.length;
    const res = await call(`${s.url}/v1/admin/webhooks/${firstHook.id}/deliveries/${before.id}/redeliver`, { token: s.adminToken, body: {} });
    expect(res.status, res.text).toBe(202);
    // Pending when queued; an instance's dispatcher may have sent it already by the time the answer is read.
    expect(res.json.id).toBe(before.id);
    expect(['pending', 'delivered']).toContain(res.json.status);
    await expect.poll(() => receiver.received.length, POLL).toBe(count + 1);
    const again = receiver.received.at(-1)!;
    expect(again.signatureValid).toBe(true);
    expect(again.json.id).toBe(before.event_id);
    expect(again.body).toBe(receiver.received[0]!.body);
    await expect.poll(async () => (await deliveries(s, s.adminToken, firstHook.id)).data.find((d) => d.id === before.id), POLL).toMatchObject({ status: 'delivered', attempts: 2 });

    // A test delivery on request: to this webhook only, although it does not subscribe to it.
    const test = await call(`${s.url}/v1/admin/webhooks/${firstHook.id}/test`, { token: s.adminToken, body: {} });
    expect(test.status, test.text).toBe(202);
    expect(test.json).toMatchObject({ event_type: 'webhook.test', payload: { type: 'webhook.test', api_version: 'v2', tenant_id: 'default', data: { webhook_id: firstHook.id, requested_by: s.adminUserId } } });
    // Pending when queued; a dispatcher may have sent it already by the time the answer is read.
    expect([['pending', 0], ['delivered', 1]]).toContainEqual([test.json.status, test.json.attempts]);
    await expect.poll(() => receiver.received.at(-1)?.json.type, POLL).toBe('webhook.test');
    expect(receiver.received.at(-1)!.signatureValid).toBe(true);
    expect(receiver.received.at(-1)!.json.id).toBe(test.json.event_id);
    expect((await call(`${s.url}/v1/admin/webhooks/wh_missing/test`, { token: s.adminToken, body: {} })).status).toBe(404);

    const missing = await call(`${s.url}/v1/admin/webhooks/${firstHook.id}/deliveries/whd_nope/redeliver`, { token: s.adminToken, body: {} });
    expect(missing.status).toBe(404);
    expect(missing.json.error.code).toBe('delivery_not_found');
  });

  it.skipIf(!mode.enabled)('delivers alert.fired and alert.resolved to the webhooks subscribed and to those the rule names', async () => {
    const alerts = await startWebhookReceiver();
    alerts.secret = SECRET;
    try {
      const subscribed = await createWebhook(s, s.adminToken, { url: `${alerts.url}/subscribed`, events: ['alert.fired', 'alert.resolved'], secret: SECRET });
      const named = await createWebhook(s, s.adminToken, { url: `${alerts.url}/named`, events: ['key.revoked'], secret: SECRET });
      const bystander = await createWebhook(s, s.adminToken, { url: `${alerts.url}/bystander`, events: ['key.revoked'], secret: SECRET });
      const other = await loggedInUser(s, 'admin');
      const foreign = await createWebhook(s, other.token, { url: `${alerts.url}/foreign`, events: ['alert.fired'], secret: SECRET });
      const ruleId = `rule_${randomUUID().slice(0, 8)}`;
      const alertId = `alert_${randomUUID().slice(0, 8)}`;
      const common = { alert_id: alertId, rule_id: ruleId, rule_name: 'errors', kind: 'relay_error_rate', severity: 'critical', value: 0.5, threshold: 0.1, notify: [named.id, foreign.id], message: 'relay error rate 50% > 10%' };
      await s.app.ctx.store.append(
        `alertrule-${ruleId}`,
        [{ type: 'AlertFired', data: { ...common, window: 300, details: { requests: 10 }, fired_at: new Date().toISOString() } }],
        { expectedVersion: 'any', tenantId: 'default' },
      );
      await s.app.ctx.store.append(
        `alertrule-${ruleId}`,
        [{ type: 'AlertResolved', data: { ...common, value: 0, reason: 'condition_cleared', resolved_at: new Date().toISOString() } }],
        { expectedVersion: 'any', tenantId: 'default' },
      );
      await expect.poll(() => alerts.received.length, POLL).toBe(4);
      const byPath = (path: string) => alerts.received.filter((r) => r.path === path).map((r) => r.json);
      for (const path of ['/subscribed', '/named']) {
        expect(byPath(path).map((p) => p.type).sort()).toEqual(['alert.fired', 'alert.resolved']);
        expect(byPath(path).find((p) => p.type === 'alert.fired')).toMatchObject({ tenant_id: 'default', data: { alert_id: alertId, rule_id: ruleId, severity: 'critical', value: 0.5, threshold: 0.1, details: { requests: 10 } } });
      }
      expect(alerts.received.every((r) => r.signatureValid)).toBe(true);
      // Made in the same transaction as the others: none for a webhook neither subscribed nor named, nor another tenant's.
      expect((await deliveries(s, s.adminToken, bystander.id)).data).toEqual([]);
      expect((await deliveries(s, other.token, foreign.id)).data).toEqual([]);

      // The list: newest first, one per page with a cursor, filtered by status.
      const page1 = await deliveries(s, s.adminToken, subscribed.id, '?limit=1');
      expect(page1.data.map((d) => d.event_type)).toEqual(['alert.resolved']);
      expect(page1.has_more).toBe(true);
      const page2 = await deliveries(s, s.adminToken, subscribed.id, `?limit=1&after=${page1.next_cursor}`);
      expect(page2.data.map((d) => d.event_type)).toEqual(['alert.fired']);
      expect(page2).toMatchObject({ has_more: false, next_cursor: null });
      await expect.poll(async () => (await deliveries(s, s.adminToken, subscribed.id, '?status=delivered')).data.length, POLL).toBe(2);
      expect((await deliveries(s, s.adminToken, subscribed.id, '?status=failed')).data).toEqual([]);
      expect((await call(`${s.url}/v1/admin/webhooks/${subscribed.id}/deliveries?status=lost`, { token: s.adminToken })).status).toBe(400);
    } finally {
      await alerts.close();
    }
  });

  it.skipIf(!mode.enabled)('tells every tenant subscribed to maintenance.changed, each with its own tenant id', async () => {
    const inbox = await startWebhookReceiver();
    inbox.secret = SECRET;
    try {
      const other = await loggedInUser(s, 'admin');
      await createWebhook(s, other.token, { url: `${inbox.url}/other`, events: ['maintenance.changed'], secret: SECRET });
      await createWebhook(s, s.adminToken, { url: `${inbox.url}/default`, events: ['*'], secret: SECRET });
      expect((await call(`${s.url}/v1/admin/maintenance`, { token: s.adminToken, body: { enabled: true, message: 'Upgrade' } })).status).toBe(200);
      expect((await call(`${s.url}/v1/admin/maintenance`, { token: s.adminToken, body: { enabled: false } })).status).toBe(200);
      await expect.poll(() => inbox.received.length, POLL).toBe(4);
      const seen = inbox.received.map((r) => `${r.path} ${r.json.tenant_id} ${r.json.type} ${r.json.data.enabled}`).sort();
      expect(seen).toEqual([`/default default maintenance.changed false`, `/default default maintenance.changed true`, `/other ${other.tenantId} maintenance.changed false`, `/other ${other.tenantId} maintenance.changed true`]);
      expect(inbox.received.every((r) => r.signatureValid)).toBe(true);
    } finally {
      await inbox.close();
    }
  });

  it.skipIf(!mode.enabled)('tells quota.exhausted once per key and hour, and nothing for other usage events', async () => {
    const hook = await createWebhook(s, s.adminToken, { url: `${receiver.url}/quota`, events: ['quota.exhausted'], secret: SECRET });
    const keyId = `key_quota${randomUUID().slice(0, 6)}`;
    const stream = `usage-webhooktest${randomUUID().slice(0, 8)}`;
    const append = async (...errorCodes: Array<string | null>) => {
      const version = (await s.app.ctx.store.readStream(stream)).length;
      const events = errorCodes.map((code) => ({ type: 'UsageRecorded', data: usageEvent(s, keyId, code) as unknown as Record<string, unknown> }));
      return (await s.app.ctx.store.append(stream, events, { expectedVersion: version, tenantId: 'default' })).position;
    };
    await append(null);
    await append('insufficient_quota');
    await append('rate_limit_exceeded', null);
    // Several refusals in one commit (one transaction of the projection), and in later ones.
    await append('insufficient_quota', 'insufficient_quota', null);
    const last = await append('insufficient_quota');
    await s.app.ctx.runner.waitFor(last, { projections: ['webhooks'] });
    // One per hour the refusals fell in (one, unless the test ran across the turn of an hour).
    const hours = new Set((await s.app.ctx.store.readStream(stream)).filter((e) => e.data.error_code === 'insufficient_quota').map((e) => e.occurred_at.slice(0, 13)));
    const list = await deliveries(s, s.adminToken, hook.id);
    expect(list.data).toHaveLength(hours.size);
    expect(list.data[0]!.payload).toMatchObject({ type: 'quota.exhausted', tenant_id: 'default', data: { scope: 'key', key_id: keyId, user_id: s.userId, error_code: 'insufficient_quota' } });
    await expect.poll(() => receiver.received.filter((r) => r.path === '/quota').length, POLL).toBe(hours.size);
  });

  it.skipIf(!mode.enabled)('tells file.processed with ids, type and sizes (never the name or the text), and settings.changed', async () => {
    const inbox = await startWebhookReceiver();
    inbox.secret = SECRET;
    try {
      await createWebhook(s, s.adminToken, { url: `${inbox.url}/files`, events: ['file.processed', 'file.failed', 'settings.changed'], secret: SECRET });
      const text = 'the confidential merger plan for next spring';
      const form = new FormData();
      form.append('purpose', 'chat');
      form.append('file', new Blob([text], { type: 'text/plain' }), 'secret-merger-plans.txt');
      const res = await fetch(`${s.url}/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${s.userToken}` }, body: form });
      expect(res.status).toBe(201);
      const file = (await res.json()) as { id: string };
      const settings = await call(`${s.url}/v1/admin/settings`, { method: 'PATCH', token: s.adminToken, body: { storage_quota_bytes: 10_000_000 } });
      expect(settings.status, settings.text).toBe(200);

      await expect.poll(() => inbox.received.map((r) => r.json.type).sort(), POLL).toEqual(['file.processed', 'settings.changed']);
      const processed = inbox.received.find((r) => r.json.type === 'file.processed')!;
      expect(processed.signatureValid).toBe(true);
      expect(processed.json).toMatchObject({ tenant_id: 'default', data: { file_id: file.id, user_id: s.userId, mime_type: 'text/plain', bytes: text.length, purpose: 'chat', text_chars: text.length } });
      expect(processed.body).not.toContain('merger');
      expect(inbox.received.find((r) => r.json.type === 'settings.changed')!.json).toMatchObject({ tenant_id: 'default', data: { changes: { storage_quota_bytes: 10_000_000 }, by: s.adminUserId } });
    } finally {
      await inbox.close();
    }
  });

  it.runIf(mode.enabled && mode.name === 'distributed')('two instances: each delivery is sent once', async () => {
    const b = await startApp({ ...env.env, ...settings });
    const inbox = await startWebhookReceiver();
    inbox.secret = SECRET;
    try {
      const hook = await createWebhook(s, s.adminToken, { url: `${inbox.url}/both`, events: ['key.created'], secret: SECRET });
      for (let i = 0; i < 3; i++) {
        await createKey(s, `a${i}`);
        await createKey(b, `b${i}`);
      }
      await expect.poll(async () => (await deliveries(s, s.adminToken, hook.id, '?status=delivered')).data.length, POLL).toBe(6);
      const ids = inbox.received.map((r) => r.headers['x-switchyard-delivery-id']);
      expect(ids).toHaveLength(6);
      expect(new Set(ids).size).toBe(6);
      expect((await deliveries(s, s.adminToken, hook.id)).data.every((d) => d.attempts === 1)).toBe(true);
    } finally {
      await b.close();
      await inbox.close();
    }
  });
});

describe.each(appModes(services, urls))('webhook deliveries across a restart, on a clock ($name)', (mode) => {
  let s: RunningApp;
  let env: ModeEnv;
  let receiver: WebhookReceiver;
  // No background sending: the test's dispatchers, on the test's clock, make every attempt.
  const settings = { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_POLL_INTERVAL: '0', WEBHOOK_RETRY_BASE: '1m', WEBHOOK_RETRY_FOR: '24h', HEALTH_CHECK_ENABLED: 'false' };

  beforeAll(async () => {
    if (!mode.enabled) return;
    env = mode.env();
    receiver = await startWebhookReceiver();
    receiver.secret = SECRET;
    s = await startApp({ ...env.env, ...settings });
  });

  afterAll(async () => {
    await s?.close();
    await receiver?.close();
    await env?.cleanup();
  });

  it.skipIf(!mode.enabled)('a delivery that failed before a restart is retried after it; a rebuild sends nothing again', async () => {
    const hook = await createWebhook(s, s.adminToken, { url: `${receiver.url}/restart`, events: ['key.created'], secret: SECRET });
    await receiver.stop();
    await createKey(s, 'before restart');
    await expect.poll(async () => (await deliveries(s, s.adminToken, hook.id)).data.length, POLL).toBe(1);

    const clock = { now: Date.now() };
    const first = dispatcherOf(s, clock);
    expect(await first.runOnce()).toBe(1);
    let row = (await deliveries(s, s.adminToken, hook.id)).data[0]!;
    expect(row).toMatchObject({ status: 'pending', attempts: 1, response_code: null });
    expect(row.last_error).toContain('ECONNREFUSED');
    // The first retry after WEBHOOK_RETRY_BASE (jitter 0 at random 0.5): not due before.
    expect(Date.parse(row.next_attempt_at) - clock.now).toBeGreaterThanOrEqual(60_000);
    expect(await first.runOnce()).toBe(0);
    await first.close();

    const dataDir = s.dataDir;
    await s.app.close();
    s = await startApp({ ...env.env, ...settings }, mode.name === 'embedded' ? { keepDataDir: dataDir } : {});
    await receiver.start();

    clock.now += 2 * 60_000;
    const second = dispatcherOf(s, clock);
    try {
      expect(await second.runOnce()).toBe(1);
      row = (await deliveries(s, s.adminToken, hook.id)).data[0]!;
      expect(row).toMatchObject({ status: 'delivered', attempts: 2, response_code: 200 });
      expect(receiver.received).toHaveLength(1);
      expect(receiver.received[0]!.signatureValid).toBe(true);
      expect(receiver.received[0]!.json).toMatchObject({ type: 'key.created', data: { name: 'before restart' } });

      // A rebuild replays the log: the webhook comes back, no delivery is made or queued again.
      await s.app.ctx.runner.rebuild('webhooks');
      expect((await call(`${s.url}/v1/admin/webhooks/${hook.id}`, { token: s.adminToken })).status).toBe(200);
      const after = await deliveries(s, s.adminToken, hook.id);
      expect(after.data).toHaveLength(1);
      expect(after.data[0]).toMatchObject({ status: 'delivered', attempts: 2 });
      expect(await second.runOnce()).toBe(0);
      // ...and what happens after it is delivered as before.
      await createKey(s, 'after rebuild');
      await expect.poll(async () => (await deliveries(s, s.adminToken, hook.id)).data.length, POLL).toBe(2);
      expect(await second.runOnce()).toBe(1);
      expect(receiver.received.at(-1)!.json.data.name).toBe('after rebuild');
    } finally {
      await second.close();
    }
  });

  it.skipIf(!mode.enabled)('fails a delivery once its retry window is over; a redelivery gets a new one', async () => {
    const hook = await createWebhook(s, s.adminToken, { url: `${receiver.url}/window`, events: ['key.revoked'], secret: SECRET });
    receiver.answer(500);
    const key = await createKey(s, 'revoked');
    expect((await call(`${s.url}/api/admin/keys/${key.id}`, { method: 'DELETE', token: s.adminToken })).status).toBe(200);
    await expect.poll(async () => (await deliveries(s, s.adminToken, hook.id)).data.length, POLL).toBe(1);
    const clock = { now: Date.now() };
    const outcomes: string[] = [];
    const dispatcher = dispatcherOf(s, clock, {}, undefined, (outcome, type) => {
      if (type === 'key.revoked') outcomes.push(outcome);
    });
    try {
      await dispatcher.runOnce();
      expect((await deliveries(s, s.adminToken, hook.id)).data[0]).toMatchObject({ status: 'pending', attempts: 1, response_code: 500 });
      // Each wait doubles; the last attempt is at the end of the window, then the delivery fails.
      for (let i = 0; i < 40; i++) {
        const row = (await deliveries(s, s.adminToken, hook.id)).data[0]!;
        if (row.status !== 'pending') break;
        clock.now = Date.parse(row.next_attempt_at);
        await dispatcher.runOnce();
      }
      const failed = (await deliveries(s, s.adminToken, hook.id)).data[0]!;
      const sent = receiver.received.filter((r) => r.path === '/window');
      expect(failed).toMatchObject({ status: 'failed', attempts: sent.length, response_code: 500, next_attempt_at: null });
      expect(Date.parse(failed.last_attempt_at) - Date.parse(failed.first_attempt_at)).toBe(24 * 3_600_000);
      // 1m, 2m, 4m ... 1h (the cap), then hourly until the window's end.
      expect(sent.length).toBeGreaterThan(24);
      expect(sent.every((r) => r.json.type === 'key.revoked' && r.json.data.key_id === key.id)).toBe(true);
      // Signed at each attempt's time (the test's clock, hours ahead: a receiver's tolerance would refuse them now).
      expect(sent.every((r) => verifySignature(SECRET, String(r.headers['x-switchyard-signature']), r.body, Number(/t=(\d+)/.exec(String(r.headers['x-switchyard-signature']))![1])))).toBe(true);

      receiver.answer(200);
      const redelivered = await call(`${s.url}/v1/admin/webhooks/${hook.id}/deliveries/${failed.id}/redeliver`, { token: s.adminToken, body: {} });
      expect(redelivered.status).toBe(202);
      expect(redelivered.json).toMatchObject({ status: 'pending', first_attempt_at: null });
      clock.now = Date.now() + 1000;
      await dispatcher.runOnce();
      expect((await deliveries(s, s.adminToken, hook.id)).data[0]).toMatchObject({ status: 'delivered', attempts: sent.length + 1, response_code: 200 });
      expect(outcomes).toEqual([...Array<string>(sent.length - 1).fill('retry'), 'failed', 'delivered']);
    } finally {
      await dispatcher.close();
    }
  });

  it.skipIf(!mode.enabled)('gives up an attempt the receiver does not answer within WEBHOOK_TIMEOUT; the delivery stays pending for a retry', async () => {
    // A receiver that reads the request and never answers.
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as AddressInfo).port;
    try {
      const hook = await createWebhook(s, s.adminToken, { url: `http://127.0.0.1:${port}/silent`, events: ['key.created'], secret: SECRET });
      await createKey(s, 'unanswered');
      await expect.poll(async () => (await deliveries(s, s.adminToken, hook.id)).data.length, POLL).toBe(1);
      const dispatcher = dispatcherOf(s, { now: Date.now() }, { timeoutMs: 300 });
      try {
        await dispatcher.runOnce();
      } finally {
        await dispatcher.close();
      }
      expect((await deliveries(s, s.adminToken, hook.id)).data[0]).toMatchObject({ status: 'pending', attempts: 1, response_code: null, last_error: 'timed out (WEBHOOK_TIMEOUT)' });
    } finally {
      silent.closeAllConnections();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  it.skipIf(!mode.enabled)('removes delivered and failed deliveries past WEBHOOK_DELIVERY_RETENTION, keeps the recent ones', async () => {
    receiver.answer(200);
    const hook = await createWebhook(s, s.adminToken, { url: `${receiver.url}/retention`, events: ['key.created'], secret: SECRET });
    await createKey(s, 'old news');
    await expect.poll(async () => (await deliveries(s, s.adminToken, hook.id)).data.length, POLL).toBe(1);
    const clock = { now: Date.now() };
    const today = dispatcherOf(s, clock);
    try {
      await today.runOnce();
    } finally {
      await today.close();
    }
    expect((await deliveries(s, s.adminToken, hook.id)).data[0]).toMatchObject({ status: 'delivered' });
    await createKey(s, 'fresh news');
    await expect.poll(async () => (await deliveries(s, s.adminToken, hook.id)).data.length, POLL).toBe(2);

    clock.now += 31 * 86_400_000;
    const later = dispatcherOf(s, clock);
    try {
      await later.runOnce();
    } finally {
      await later.close();
    }
    // The old delivery is gone; the one sent (for the first time) at the later time stays.
    const left = (await deliveries(s, s.adminToken, hook.id)).data;
    expect(left.map((d) => [d.payload.data.name, d.status])).toEqual([['fresh news', 'delivered']]);
  });
});

describe.each(appModes(services, urls))('webhook targets: the SSRF guard ($name)', (mode) => {
  let s: RunningApp;
  let env: ModeEnv;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    if (!mode.enabled) return;
    env = mode.env();
    receiver = await startWebhookReceiver();
    s = await startApp({ ...env.env, WEBHOOK_POLL_INTERVAL: '0', HEALTH_CHECK_ENABLED: 'false' });
  });

  afterAll(async () => {
    await s?.close();
    await receiver?.close();
    await env?.cleanup();
  });

  it.skipIf(!mode.enabled)('refuses private, loopback, link-local and metadata targets at create and update', async () => {
    const refused = [
      'http://127.0.0.1:9000/hook',
      'http://10.1.2.3/hook',
      'http://[::1]:8080/hook',
      'http://169.254.169.254/latest/meta-data/',
      'http://localhost:8080/hook',
      'http://[::ffff:127.0.0.1]/hook',
      'http://100.64.0.7/hook',
      'https://192.168.1.10/hook',
      'http://[fd00:ec2::254]/hook',
      'http://0.0.0.0:80/',
    ];
    for (const url of refused) {
      const res = await call(`${s.url}/v1/admin/webhooks`, { token: s.adminToken, body: { url, events: ['*'] } });
      expect(res.status, url).toBe(400);
      expect(res.json.error, url).toMatchObject({ type: 'invalid_request_error', code: 'webhook_target_not_allowed', param: 'url' });
    }
    // A public address literal needs no DNS and passes.
    const ok = await createWebhook(s, s.adminToken, { url: 'http://93.184.215.14/hook', events: ['*'] });
    const patched = await call(`${s.url}/v1/admin/webhooks/${ok.id}`, { method: 'PATCH', token: s.adminToken, body: { url: 'http://172.16.0.1/hook' } });
    expect(patched.status).toBe(400);
    expect(patched.json.error.code).toBe('webhook_target_not_allowed');
    expect((await call(`${s.url}/v1/admin/webhooks/${ok.id}`, { token: s.adminToken })).json.url).toBe('http://93.184.215.14/hook');
    // (Not left to receive the next test's events: nothing here may reach the internet.)
    expect((await call(`${s.url}/v1/admin/webhooks/${ok.id}`, { method: 'DELETE', token: s.adminToken })).status).toBe(200);
  });

  it.skipIf(!mode.enabled)('refuses, at connect, a target whose name resolves to loopback by then (DNS rebinding) or a private literal', async () => {
    // Webhooks saved while their names resolved elsewhere: made through the command bus, as the
    // route would have after its check.
    const box = new SecretBox(TEST_SECRET, 'webhook-secrets');
    const ids: string[] = [];
    for (const url of [`http://rebind.test:${receiver.port}/hook`, `${receiver.url}/literal`]) {
      const id = `wh_ssrf${randomUUID().slice(0, 8)}`;
      ids.push(id);
      const result = await s.app.ctx.commands.execute(webhookDecider, id, { type: 'CreateWebhook', webhookId: id, url, events: ['key.created'], secretSealed: box.seal(SECRET), enabled: true, by: null }, { tenantId: 'default' });
      await s.app.ctx.runner.waitFor(result.position!, { projections: ['webhooks'] });
    }
    await createKey(s, 'ssrf');
    for (const id of ids) await expect.poll(async () => (await deliveries(s, s.adminToken, id)).data.length, POLL).toBe(1);
    const rebinding = async (host: string) => (host === 'rebind.test' ? [{ address: '127.0.0.1', family: 4 }] : []);
    const dispatcher = dispatcherOf(s, { now: Date.now() }, { allowPrivateTargets: false }, rebinding);
    try {
      expect(await dispatcher.runOnce()).toBe(2);
    } finally {
      await dispatcher.close();
    }
    for (const id of ids) {
      const row = (await deliveries(s, s.adminToken, id)).data[0]!;
      expect(row).toMatchObject({ status: 'pending', attempts: 1, response_code: null });
      expect(row.last_error).toMatch(/^refused: webhook target .* loopback address \(127\.0\.0\.1\)/);
    }
    expect(receiver.received).toEqual([]);
  });
});
