/**
 * Webhooks end to end on the real server, embedded and distributed (NATS + MariaDB + Redis): a
 * local receiver checks each delivery's signature; deliveries are retried while it is down and
 * survive a restart; redelivery; the deliveries list; the SSRF guard at create and at connect.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { call, loggedInUser, startApp, type RunningApp } from '../support/app.js';
import { appModes } from '../support/modes.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

const services = inject('services');
const urls = inject('serviceUrls');
const SECRET = 'whsec_test_secret_0123456789';

/** The deliveries of a webhook, as its admin sees them. */
async function deliveries(s: RunningApp, token: string, webhookId: string, query = '') {
  const res = await call(`${s.url}/v1/admin/webhooks/${webhookId}/deliveries${query}`, { token });
  expect(res.status).toBe(200);
  return res.json as { data: Array<Record<string, any>>; has_more: boolean; next_cursor: string | null }; // eslint-disable-line @typescript-eslint/no-explicit-any
}

async function createWebhook(s: RunningApp, token: string, body: Record<string, unknown>) {
  const res = await call(`${s.url}/v1/admin/webhooks`, { token, body });
  expect(res.status, res.text).toBe(201);
  return res.json as { id: string; secret?: string; url: string; events: string[] };
}

async function createKey(s: RunningApp, name: string) {
  const res = await call(`${s.url}/api/admin/keys`, { token: s.adminToken, body: { name, user_id: s.userId } });
  expect(res.status, res.text).toBe(201);
  return res.json as { id: string; key: string };
}

describe.each(appModes(services, urls))('webhooks ($name)', (mode) => {
  let s: RunningApp;
  let receiver: WebhookReceiver;
  const cleanups: Array<() => Promise<void>> = [];

  beforeAll(async () => {
    if (!mode.enabled) return;
    const env = mode.env();
    cleanups.push(env.cleanup);
    receiver = await startWebhookReceiver();
    receiver.secret = SECRET;
    s = await startApp({ ...env.env, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_POLL_INTERVAL: '50ms', WEBHOOK_RETRY_BASE: '100ms', HEALTH_CHECK_ENABLED: 'false' });
  });

  afterAll(async () => {
    await s?.close();
    await receiver?.close();
    for (const cleanup of cleanups) await cleanup();
  });

  it.skipIf(!mode.enabled)('delivers key.created as a signed v2 payload', async () => {
    const hook = await createWebhook(s, s.adminToken, { url: `${receiver.url}/hook`, events: ['key.created'], secret: SECRET });
    expect(hook.secret).toBeUndefined();
    const key = await createKey(s, 'webhook test key');
    await expect.poll(() => receiver.received.length, { timeout: 10_000 }).toBe(1);
    const got = receiver.received[0]!;
    expect(got.signatureValid).toBe(true);
    expect(got.json).toMatchObject({ type: 'key.created', api_version: 'v2', tenant_id: 'default', data: { key_id: key.id, name: 'webhook test key', user_id: s.userId } });
    expect(got.headers['x-switchyard-event-id']).toBe(got.json.id);
    expect(got.headers['idempotency-key']).toBe(got.json.id);
    expect(got.body).not.toContain(key.key);
    expect(got.body).not.toContain('key_hash');
    const list = await deliveries(s, s.adminToken, hook.id);
    console.log(JSON.stringify(list, null, 1));
  });
});
