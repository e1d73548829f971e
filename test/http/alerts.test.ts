/**
 * Alerting end to end on the real server, embedded and distributed (NATS + MariaDB + Redis): rule
 * CRUD, validation and tenant isolation; a relay_error_rate rule firing while a fake upstream
 * answers 500s and resolving once it recovers; failed_logins firing; a firing rule disabled
 * resolves. Rounds run through the app's own evaluator (`evaluateOnce`, with a chosen time where
 * the window must end after the errors), not the timer (the interval is an hour here).
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { call, createUser, loggedInUser, TEST_USER_PASSWORD, startApp, type RunningApp } from '../support/app.js';
import { startOpenAiFake, type OpenAiFake } from '../support/fake-upstreams/openai.js';
import { appModes } from '../support/modes.js';
import { createChannel } from '../support/relay.js';

const services = inject('services');
const urls = inject('serviceUrls');
const MODES = appModes(services, urls);

const RULE = { name: 'Relay errors', condition: { kind: 'relay_error_rate', threshold: 0.5, window: 600 }, severity: 'critical', notify: ['wh_ops'], enabled: true };

describe.each(MODES.map((m) => [m.name, m] as const))('alerts (%s)', (_name, mode) => {
  let s: RunningApp;
  let upstream: OpenAiFake;
  let cleanup: () => Promise<void> = async () => undefined;

  beforeAll(async () => {
    if (!mode.enabled) return;
    upstream = await startOpenAiFake();
    const { env, cleanup: drop } = mode.env();
    cleanup = drop;
    s = await startApp({ ...env, ALERT_EVALUATION_INTERVAL: '1h', HEALTH_CHECK_ENABLED: 'false', RELAY_MAX_RETRIES: '0', CHANNEL_FAILURE_THRESHOLD: '1000' });
    await createChannel(s, { type: 'openai', base_url: upstream.baseUrl, models: ['m'] });
  });
  afterAll(async () => {
    if (!mode.enabled) return;
    await s.close();
    await upstream.close();
    await cleanup();
  });

  const rules = () => `${s.url}/api/admin/alerts/rules`;
  const evaluator = () => s.app.ctx.alerts!;
  const alerts = async (query: string, token = s.adminToken) => {
    const res = await call(`${s.url}/api/admin/alerts${query}`, { token });
    expect(res.status).toBe(200);
    return res.json as { data: Array<Record<string, any>>; has_more: boolean; next_cursor: string | null }; // eslint-disable-line @typescript-eslint/no-explicit-any
  };
  /** Chat requests of user-1, their usage projected. */
  const chat = async (n: number) => {
    const statuses = [];
    for (let i = 0; i < n; i++) statuses.push((await call(`${s.url}/v1/chat/completions`, { token: s.userToken, body: { model: 'm', messages: [{ role: 'user', content: 'hi' }] } })).status);
    await s.app.ctx.usage.flush();
    await s.app.ctx.runner.waitFor(await s.app.ctx.store.headPosition(), { projections: ['usage'] });
    return statuses;
  };

  it.runIf(mode.enabled)('creates, reads, lists, changes (partially) and deletes rules', async () => {
    const created = await call(rules(), { token: s.adminToken, body: { ...RULE, name: 'CRUD' } });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ object: 'alert_rule', tenant_id: 'default', name: 'CRUD', condition: RULE.condition, severity: 'critical', notify: ['wh_ops'], enabled: true, state: 'ok', firing: null, created_by: 'admin-1' });
    const id = created.json.id as string;
    expect(id).toMatch(/^rule_[0-9a-f]{32}$/);

    expect((await call(rules(), { token: s.adminToken })).json.data.map((r: { id: string }) => r.id)).toContain(id);
    expect((await call(`${rules()}/${id}`, { token: s.adminToken })).json).toEqual(created.json);

    const patched = await call(`${rules()}/${id}`, { method: 'PATCH', token: s.adminToken, body: { condition: { threshold: 0.25 }, severity: 'warning' } });
    expect(patched.status).toBe(200);
    expect(patched.json).toMatchObject({ name: 'CRUD', condition: { kind: 'relay_error_rate', threshold: 0.25, window: 600 }, severity: 'warning', notify: ['wh_ops'] });

    // Defaults: severity warning, notify none, enabled.
    const minimal = await call(rules(), { token: s.adminToken, body: { name: 'minimal', condition: { kind: 'channel_unhealthy', threshold: 0, window: 60 } } });
    expect(minimal.json).toMatchObject({ severity: 'warning', notify: [], enabled: true });

    for (const rule of [id, minimal.json.id as string]) {
      expect((await call(`${rules()}/${rule}`, { method: 'DELETE', token: s.adminToken })).json).toEqual({ id: rule, object: 'alert_rule', deleted: true });
      expect((await call(`${rules()}/${rule}`, { token: s.adminToken })).json.error.code).toBe('alert_rule_not_found');
    }
    expect((await call(`${rules()}/${id}`, { method: 'DELETE', token: s.adminToken })).status).toBe(404);
  });

  it.runIf(mode.enabled)('refuses bad rules with a code, and non-admins', async () => {
    const post = (body: unknown, token = s.adminToken) => call(rules(), { token, body });
    const missing = await post({ condition: RULE.condition });
    expect(missing.status).toBe(400);
    expect(missing.json.error).toMatchObject({ code: 'invalid_request', param: 'name' });
    const kind = await post({ ...RULE, condition: { kind: 'cpu', threshold: 1, window: 60 } });
    expect(kind.status).toBe(400);
    expect(kind.json.error.param).toBe('condition.kind');
    expect((await post({ ...RULE, condition: { ...RULE.condition, window: 0 } })).json.error.param).toBe('condition.window');
    expect((await post({ ...RULE, condition: { ...RULE.condition, threshold: -1 } })).status).toBe(400);
    const share = await post({ ...RULE, condition: { ...RULE.condition, threshold: 1.5 } });
    expect(share.status).toBe(422);
    expect(share.json.error.code).toBe('invalid_threshold');
    expect((await post({ ...RULE, condition: { kind: 'failed_logins', threshold: 3, window: 3 * 24 * 3600 } })).json.error.code).toBe('invalid_window');
    expect((await post({ ...RULE, notify: ['has space'] })).json.error.code).toBe('invalid_notify');
    expect((await post(RULE, s.userToken)).status).toBe(403);
    expect((await call(`${s.url}/api/admin/alerts`, { token: s.userToken })).status).toBe(403);
    expect((await call(`${s.url}/api/admin/alerts?state=open`, { token: s.adminToken })).status).toBe(400);
    expect((await call(rules(), { token: undefined })).status).toBe(401);
  });

  it.runIf(mode.enabled)("keeps tenants apart: admins see only their tenant's rules; operators may name a tenant", async () => {
    const other = await loggedInUser(s, 'admin');
    const mine = await call(rules(), { token: s.adminToken, body: { ...RULE, name: 'operator rule' } });
    const theirs = await call(rules(), { token: other.token, body: { ...RULE, name: 'their rule' } });
    expect(theirs.json.tenant_id).toBe(other.tenantId);

    const theirList = (await call(rules(), { token: other.token })).json.data as Array<{ id: string }>;
    expect(theirList.map((r) => r.id)).toEqual([theirs.json.id]);
    for (const method of ['GET', 'PATCH', 'DELETE']) {
      const res = await call(`${rules()}/${mine.json.id}`, { method, token: other.token, ...(method === 'PATCH' && { body: { enabled: false } }) });
      expect(res.status, method).toBe(404);
      expect(res.json.error.code).toBe('alert_rule_not_found');
    }
    expect((await call(`${rules()}?tenant_id=default`, { token: other.token })).json.error.code).toBe('tenant_not_allowed');

    // The operator (an admin of the default tenant) works in another tenant with tenant_id.
    const named = await call(`${rules()}?tenant_id=${other.tenantId}`, { token: s.adminToken });
    expect(named.json.data.map((r: { id: string }) => r.id)).toEqual([theirs.json.id]);
    const made = await call(`${rules()}?tenant_id=${other.tenantId}`, { token: s.adminToken, body: { ...RULE, name: 'made by the operator' } });
    expect(made.json.tenant_id).toBe(other.tenantId);
    expect((await call(`${rules()}/${made.json.id}`, { token: other.token })).status).toBe(200);
    expect((await call(`${rules()}?tenant_id=no-such-tenant`, { token: s.adminToken })).json.error.code).toBe('tenant_not_found');

    for (const [id, token] of [[mine.json.id, s.adminToken], [theirs.json.id, other.token], [made.json.id, other.token]] as const) {
      expect((await call(`${rules()}/${id}`, { method: 'DELETE', token })).status).toBe(200);
    }
  });

  it.runIf(mode.enabled)('fires relay_error_rate while the upstream answers 500s, once, and resolves when it recovers', async () => {
    const rule = (await call(rules(), { token: s.adminToken, body: RULE })).json;
    upstream.mode = { kind: 'error', status: 500, message: 'upstream broke' };
    expect(await chat(3)).toEqual([502, 502, 502]);

    const round = await evaluator().evaluateOnce();
    expect(round).toMatchObject({ held: true, failed: 0 });
    expect(round.fired).toHaveLength(1);
    await s.app.ctx.runner.waitFor(await s.app.ctx.store.headPosition(), { projections: ['alerts'] });
    const firing = (await alerts('?state=firing')).data.filter((a) => a.rule_id === rule.id);
    expect(firing).toEqual([
      expect.objectContaining({
        id: round.fired[0],
        object: 'alert',
        tenant_id: 'default',
        rule_name: 'Relay errors',
        kind: 'relay_error_rate',
        severity: 'critical',
        state: 'firing',
        value: 1,
        threshold: 0.5,
        window: 600,
        notify: ['wh_ops'],
        message: expect.stringContaining('100% of relay requests failed'),
        details: expect.objectContaining({ requests: 3, errors: 3 }),
        resolved_at: null,
        resolution: null,
      }),
    ]);
    expect((await call(`${rules()}/${rule.id}`, { token: s.adminToken })).json).toMatchObject({ state: 'firing', firing: { alert_id: round.fired[0], value: 1 } });
    expect((await s.app.ctx.metrics.alertsFiring.get()).values).toContainEqual(expect.objectContaining({ labels: { severity: 'critical' }, value: 1 }));

    // Still failing: no second alert.
    expect((await evaluator().evaluateOnce()).fired).toEqual([]);

    upstream.mode = { kind: 'reply' };
    const recoveredAt = Date.now();
    expect(await chat(3)).toEqual([200, 200, 200]);
    // The window ending `window` after recovery holds only the successful requests.
    const later = await evaluator().evaluateOnce(recoveredAt + RULE.condition.window * 1000);
    expect(later.resolved).toEqual(round.fired);
    await s.app.ctx.runner.waitFor(await s.app.ctx.store.headPosition(), { projections: ['alerts'] });
    const [resolved] = (await alerts(`?state=resolved&rule_id=${rule.id}`)).data;
    expect(resolved).toMatchObject({ id: round.fired[0], state: 'resolved', value: 1, resolution: { value: 0, reason: 'condition_cleared' } });
    expect(resolved!.resolved_at).toBe(new Date(recoveredAt + RULE.condition.window * 1000).toISOString());
    expect((await alerts(`?state=firing&rule_id=${rule.id}`)).data).toEqual([]);
    expect((await call(`${rules()}/${rule.id}`, { token: s.adminToken })).json).toMatchObject({ state: 'ok', firing: null });

    // Both events are in the rule's stream, in order.
    const stream = await s.app.ctx.store.readStream(`alertrule-${rule.id}`);
    expect(stream.map((e) => e.type)).toEqual(['AlertRuleCreated', 'AlertFired', 'AlertResolved']);
    await call(`${rules()}/${rule.id}`, { method: 'DELETE', token: s.adminToken });
  });

  it.runIf(mode.enabled)("fires failed_logins for the users' tenant only; disabling the rule resolves it", async () => {
    const other = await loggedInUser(s, 'admin');
    const victim = await createUser(s.url, s.adminToken, { tenant_id: other.tenantId });
    const rule = (await call(rules(), { token: other.token, body: { name: 'Guessing', condition: { kind: 'failed_logins', threshold: 2, window: 300 }, severity: 'warning' } })).json;
    for (let i = 0; i < 3; i++) expect((await call(`${s.url}/v1/auth/login`, { body: { email: victim.email, password: `${TEST_USER_PASSWORD}-wrong` } })).status).toBe(401);

    const round = await evaluator().evaluateOnce();
    expect(round.fired).toHaveLength(1);
    await s.app.ctx.runner.waitFor(await s.app.ctx.store.headPosition(), { projections: ['alerts'] });
    const [alert] = (await alerts('?state=firing', other.token)).data;
    expect(alert).toMatchObject({ rule_id: rule.id, kind: 'failed_logins', value: 3, message: 'Guessing: 3 failed logins in the last 5 min' });
    expect((await alerts('?state=firing')).data.map((a) => a.rule_id)).not.toContain(rule.id);

    const disabled = await call(`${rules()}/${rule.id}`, { method: 'PATCH', token: other.token, body: { enabled: false } });
    expect(disabled.json).toMatchObject({ enabled: false, state: 'ok', firing: null });
    expect((await alerts('', other.token)).data).toEqual([expect.objectContaining({ id: alert!.id, state: 'resolved', resolution: expect.objectContaining({ reason: 'rule_disabled', value: 3 }) })]);
    // Disabled: not measured, nothing fires.
    expect((await evaluator().evaluateOnce()).fired).toEqual([]);
  });

  it.runIf(mode.enabled)('pages alerts newest first with a cursor', async () => {
    const other = await loggedInUser(s, 'admin');
    const victim = await createUser(s.url, s.adminToken, { tenant_id: other.tenantId });
    const rule = (await call(rules(), { token: other.token, body: { name: 'Paged', condition: { kind: 'failed_logins', threshold: 0, window: 300 } } })).json;
    await call(`${s.url}/v1/auth/login`, { body: { email: victim.email, password: 'wrong-password' } });
    const fired: string[] = [];
    for (let i = 0; i < 3; i++) {
      fired.push(...(await evaluator().evaluateOnce()).fired);
      // Turned off and on: the open alert resolves (rule_disabled) and the next round fires anew.
      await call(`${rules()}/${rule.id}`, { method: 'PATCH', token: other.token, body: { enabled: false } });
      await call(`${rules()}/${rule.id}`, { method: 'PATCH', token: other.token, body: { enabled: true } });
    }
    expect(fired).toHaveLength(3);
    const first = await alerts('?limit=2', other.token);
    expect(first.data.map((a) => a.id)).toEqual([fired[2], fired[1]]);
    expect(first.has_more).toBe(true);
    const second = await alerts(`?limit=2&cursor=${first.next_cursor}`, other.token);
    expect(second).toMatchObject({ has_more: false, next_cursor: null });
    expect(second.data.map((a) => a.id)).toEqual([fired[0]]);
  });
});
