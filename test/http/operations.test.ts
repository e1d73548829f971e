/**
 * Issue 19 end to end, across its parts: an alert rule fires while a fake upstream fails and
 * resolves when it recovers; the real evaluator appends AlertFired/AlertResolved, the webhooks
 * projection queues them for the rule's `notify` webhook, the real dispatcher signs and sends them
 * to a local receiver that checks the signature — which was down when the alert fired, so the
 * delivery is retried; the alert shows in the admin logs. Embedded (one instance) and distributed
 * (two instances on NATS + MariaDB + Redis: the rule is evaluated on one, the webhook and the logs
 * are read on the other).
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { call, startApp, type RunningApp } from '../support/app.js';
import { startOpenAiFake, type OpenAiFake } from '../support/fake-upstreams/openai.js';
import { appModes, type ModeEnv } from '../support/modes.js';
import { createChannel } from '../support/relay.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

const services = inject('services');
const urls = inject('serviceUrls');
const MODES = appModes(services, urls);
const SECRET = 'whsec_operations-test-secret-0123456789';
const POLL = { timeout: 20_000, interval: 50 };
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe.each(MODES.map((m) => [m.name, m] as const))('alerts notified by webhooks, shown in the logs (%s)', (name, mode) => {
  let a: RunningApp;
  /** The instance the operator reads from: another one in the distributed mode. */
  let b: RunningApp;
  let upstream: OpenAiFake;
  let receiver: WebhookReceiver;
  let env: ModeEnv;

  beforeAll(async () => {
    if (!mode.enabled) return;
    upstream = await startOpenAiFake();
    receiver = await startWebhookReceiver();
    receiver.secret = SECRET;
    env = mode.env();
    const settings = {
      ...env.env,
      ALERT_EVALUATION_INTERVAL: '1h', // rounds are run by the test (evaluateOnce)
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_POLL_INTERVAL: '50ms',
      WEBHOOK_RETRY_BASE: '100ms',
      HEALTH_CHECK_ENABLED: 'false',
      RELAY_MAX_RETRIES: '0',
      CHANNEL_FAILURE_THRESHOLD: '1000',
    };
    a = await startApp(settings);
    b = name === 'distributed' ? await startApp(settings) : a;
    await createChannel(a, { type: 'openai', base_url: upstream.baseUrl, models: ['m'] });
  });

  afterAll(async () => {
    if (!mode.enabled) return;
    if (b !== a) await b?.close();
    await a?.close();
    await upstream?.close();
    await receiver?.close();
    await env?.cleanup();
  });

  const chat = async (n: number) => {
    const statuses: number[] = [];
    for (let i = 0; i < n; i++) statuses.push((await call(`${a.url}/v1/chat/completions`, { token: a.userToken, body: { model: 'm', messages: [{ role: 'user', content: 'hi' }] } })).status);
    await a.app.ctx.usage.flush();
    await a.app.ctx.runner.waitFor(await a.app.ctx.store.headPosition(), { projections: ['usage'] });
    return statuses;
  };

  it.runIf(mode.enabled)('fires, retries the notice until the receiver is back, resolves, and logs both', async () => {
    const hook = await call(`${b.url}/v1/admin/webhooks`, { token: b.adminToken, body: { url: `${receiver.url}/alerts`, events: ['channel.health_changed'], secret: SECRET } });
    expect(hook.status, hook.text).toBe(201);
    const rule = await call(`${a.url}/api/admin/alerts/rules`, {
      token: a.adminToken,
      body: { name: 'Relay failing', condition: { kind: 'relay_error_rate', threshold: 0.5, window: 600 }, severity: 'critical', notify: [hook.json.id], enabled: true },
    });
    expect(rule.status, rule.text).toBe(201);

    // The receiver is down when the alert fires.
    await receiver.stop();
    upstream.mode = { kind: 'error', status: 500, message: 'upstream broke' };
    expect(await chat(4)).toEqual([502, 502, 502, 502]);
    const round = await a.app.ctx.alerts!.evaluateOnce();
    expect(round.fired).toHaveLength(1);
    const alertId = round.fired[0]!;

    // A failed attempt is recorded and retried (connection refused), from whichever instance claims it.
    const deliveries = async () => (await call(`${b.url}/v1/admin/webhooks/${hook.json.id}/deliveries`, { token: b.adminToken })).json.data as Json[];
    await expect.poll(async () => (await deliveries()).find((d) => d.event_type === 'alert.fired')?.attempts ?? 0, POLL).toBeGreaterThanOrEqual(2);
    const pending = (await deliveries()).find((d) => d.event_type === 'alert.fired')!;
    expect(pending).toMatchObject({ status: 'pending', response_code: null });
    expect(pending.last_error).toBeTruthy();
    expect(receiver.received).toEqual([]);

    await receiver.start();
    await expect.poll(() => receiver.received.filter((r) => r.json.type === 'alert.fired').length, POLL).toBe(1);
    const fired = receiver.received.find((r) => r.json.type === 'alert.fired')!;
    expect(fired.signatureValid).toBe(true);
    expect(fired.json).toMatchObject({ type: 'alert.fired', api_version: 'v2', tenant_id: 'default', data: expect.objectContaining({ alert_id: alertId, rule_id: rule.json.id, kind: 'relay_error_rate', severity: 'critical', value: 1 }) });
    expect(fired.headers['idempotency-key']).toBe(fired.json.id);
    await expect.poll(async () => (await deliveries()).find((d) => d.event_type === 'alert.fired')?.status, POLL).toBe('delivered');

    // Recovery: the window ending `window` after it holds only successful requests.
    upstream.mode = { kind: 'reply' };
    const recoveredAt = Date.now();
    expect(await chat(3)).toEqual([200, 200, 200]);
    const later = await a.app.ctx.alerts!.evaluateOnce(recoveredAt + 600_000);
    expect(later.resolved).toEqual([alertId]);
    await expect.poll(() => receiver.received.filter((r) => r.json.type === 'alert.resolved').length, POLL).toBe(1);
    const resolved = receiver.received.find((r) => r.json.type === 'alert.resolved')!;
    expect(resolved.signatureValid).toBe(true);
    expect(resolved.json.data).toMatchObject({ alert_id: alertId, reason: 'condition_cleared' });

    // The operator reads it on the other instance: the alerts list and the logs.
    await b.app.ctx.runner.waitFor(await b.app.ctx.store.headPosition(), { timeoutMs: 20_000 });
    const list = await call(`${b.url}/api/admin/alerts?state=resolved`, { token: b.adminToken });
    expect(list.json.data.map((x: Json) => x.id)).toContain(alertId);
    await expect
      .poll(async () => {
        const found = await call(`${b.url}/api/admin/logs/search`, { token: b.adminToken, body: { query: 'Relay failing', filters: { components: ['alerts'] } } });
        return (found.json.data as Json[] | undefined)?.map((e) => e.event).sort() ?? found.text;
      }, POLL)
      .toEqual(expect.arrayContaining(['alert_fired', 'alert_resolved']));
  });
});
