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

  it.runIf(mode.enabled)('documents the endpoints in /openapi.json', async () => {
    const paths = (await call(`${s.url}/openapi.json`)).json.paths as Record<string, Record<string, unknown>>;
    expect(Object.keys(paths['/api/admin/alerts/rules']!).sort()).toEqual(['get', 'post']);
    expect(Object.keys(paths['/api/admin/alerts/rules/{rule_id}']!).sort()).toEqual(['delete', 'get', 'patch']);
    expect(Object.keys(paths['/api/admin/alerts']!)).toEqual(['get']);
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

  it.runIf(mode.enabled)("measures no_available_channels and p95_latency from the tenant's usage", async () => {
    const admin = await loggedInUser(s, 'admin');
    const user = await loggedInUser(s, 'user', admin.tenantId);
    const channel = await createChannel(s, { type: 'openai', name: 'flaky', base_url: upstream.baseUrl, models: ['m'] }, admin.token);
    // A model only a switched-off channel lists: no_available_channels (a model nobody lists is model_not_found).
    await createChannel(s, { type: 'openai', name: 'switched-off', base_url: upstream.baseUrl, models: ['nope'], enabled: false }, admin.token);
    const made = [];
    for (const body of [
      { name: 'No channel', condition: { kind: 'no_available_channels', threshold: 1, window: 600 } },
      { name: 'Slow', condition: { kind: 'p95_latency', threshold: 250, window: 600 } },
      { name: 'Refused quota', condition: { kind: 'quota_exhausted', threshold: 0, window: 600 } },
    ]) {
      made.push((await call(rules(), { token: admin.token, body })).json);
    }
    const send = (model: string) => call(`${s.url}/v1/chat/completions`, { token: user.token, body: { model, messages: [{ role: 'user', content: 'hi' }] } });
    expect((await send('nope')).json.error.code).toBe('no_available_channels');
    expect((await send('nope')).status).toBe(503);
    upstream.mode = { kind: 'slow', delayMs: 300 };
    try {
      expect((await send('m')).status).toBe(200);
      expect((await send('m')).status).toBe(200);
    } finally {
      upstream.mode = { kind: 'reply' };
    }
    await s.app.ctx.usage.flush();
    await s.app.ctx.runner.waitFor(await s.app.ctx.store.headPosition(), { projections: ['usage'] });

    expect((await evaluator().evaluateOnce()).fired).toHaveLength(2);
    await s.app.ctx.runner.waitFor(await s.app.ctx.store.headPosition(), { projections: ['alerts'] });
    const firing = (await alerts('?state=firing', admin.token)).data;
    expect(firing.map((a) => a.rule_name).sort()).toEqual(['No channel', 'Slow']);
    const byName = Object.fromEntries(firing.map((a) => [a.rule_name, a]));
    expect(byName['No channel']).toMatchObject({ value: 2, details: { models: [{ model: 'nope', requests: 2 }] } });
    // 4 requests: the nearest-rank p95 is the slowest, a slow one.
    expect(byName.Slow!.value).toBeGreaterThanOrEqual(300);
    expect(byName.Slow!.details).toMatchObject({ requests: 4 });

    // A channel marked unhealthy (as channel health does after failures) fires channel_unhealthy.
    const down = (await call(rules(), { token: admin.token, body: { name: 'Down', condition: { kind: 'channel_unhealthy', threshold: 0, window: 60 } } })).json;
    await s.app.ctx.views.channels.waitFor(await s.app.ctx.store.headPosition());
    const routable = s.app.ctx.views.channels.state.get(channel.id)!;
    await s.app.ctx.health.setHealth(routable.channel, false, Date.now() + 60_000, 'test: 5 failures', null);
    await s.app.ctx.runner.waitFor(await s.app.ctx.store.headPosition(), { projections: ['channels'] });
    expect((await evaluator().evaluateOnce()).fired).toHaveLength(1);
    await s.app.ctx.runner.waitFor(await s.app.ctx.store.headPosition(), { projections: ['alerts'] });
    const [unhealthy] = (await alerts(`?state=firing&rule_id=${down.id}`, admin.token)).data;
    expect(unhealthy).toMatchObject({ value: 1, message: 'Down: 1 channel unhealthy (flaky)', details: { unhealthy: [{ id: channel.id, name: 'flaky', reason: 'test: 5 failures' }] } });
  });

  it.runIf(mode.enabled)('sums the spool backlog over the instances that reported lately; measures projection lag', async () => {
    const admin = await loggedInUser(s, 'admin');
    const spool = (await call(rules(), { token: admin.token, body: { name: 'Backlog', condition: { kind: 'spool_backlog', threshold: 5, window: 60 } } })).json;
    await call(rules(), { token: admin.token, body: { name: 'Lag', condition: { kind: 'projection_lag', threshold: 1_000_000, window: 60 } } });
    const db = s.app.ctx.sql.db;
    // Another instance's report (its usage journal holds 7 events), and one long silent.
    await db.insertInto('alert_instances').values({ instance_id: 'busy-instance', spool_depth: 7, reported_at: new Date().toISOString() }).execute();
    await db.insertInto('alert_instances').values({ instance_id: 'gone-instance', spool_depth: 1000, reported_at: new Date(Date.now() - 6 * 3600_000).toISOString() }).execute();
    try {
      const round = await evaluator().tick();
      expect(round.fired).toHaveLength(1);
      await s.app.ctx.runner.waitFor(await s.app.ctx.store.headPosition(), { projections: ['alerts'] });
      const [alert] = (await alerts('?state=firing', admin.token)).data;
      expect(alert).toMatchObject({ rule_id: spool.id, value: 7, details: { instances: [{ instance: 'busy-instance', depth: 7 }], reporting: 2 } });
    } finally {
      await db.deleteFrom('alert_instances').where('instance_id', 'in', ['busy-instance', 'gone-instance']).execute();
    }
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

/** The lease: two instances on the same NATS + MariaDB + Redis; one evaluates, the other takes over when it goes. */
describe.runIf(MODES[1]!.enabled)('alert evaluation on two instances', () => {
  let a: RunningApp;
  let b: RunningApp;
  let aClosed = false;
  let cleanup: () => Promise<void> = async () => undefined;

  beforeAll(async () => {
    const { env, cleanup: drop } = MODES[1]!.env();
    cleanup = drop;
    a = await startApp({ ...env, ALERT_EVALUATION_INTERVAL: '1h' });
    b = await startApp({ ...env, ALERT_EVALUATION_INTERVAL: '1h' });
  });
  afterAll(async () => {
    if (!aClosed) await a?.close();
    await b?.close();
    await cleanup();
  });

  it('evaluates on one instance only; the other takes over when it closes, and fires once', async () => {
    const [ea, eb] = [a.app.ctx.alerts!, b.app.ctx.alerts!];
    // Both instances reported their spool depth at their first tick (spool_backlog sums them).
    await ea.tick();
    await eb.tick();
    const reports = await a.app.ctx.sql.db.selectFrom('alert_instances').select('instance_id').execute();
    expect(reports.map((r) => r.instance_id).sort()).toEqual([ea.instanceId, eb.instanceId].sort());

    // A started first and holds the lease; B is refused as long as A renews it.
    expect((await ea.evaluateOnce()).held).toBe(true);
    expect((await eb.evaluateOnce()).held).toBe(false);
    expect((await eb.evaluateOnce()).held).toBe(false);

    // A rule created on A fires once, whichever instances race for it.
    const created = await call(`${a.url}/api/admin/alerts/rules`, { token: a.adminToken, body: { name: 'Any failure', condition: { kind: 'failed_logins', threshold: 0, window: 300 } } });
    await call(`${a.url}/v1/auth/login`, { body: { email: a.userEmail, password: 'wrong-password' } });
    const rounds = await Promise.all([ea.evaluateOnce(), eb.evaluateOnce()]);
    expect(rounds.map((r) => r.held)).toEqual([true, false]);
    expect(rounds[0]!.fired).toHaveLength(1);
    const metricsOf = async (e: typeof ea) => (await (e === ea ? a : b).app.ctx.metrics.alertsFiring.get()).values.find((v) => v.labels.severity === 'warning')?.value;
    expect(await metricsOf(ea)).toBe(1);
    expect(await metricsOf(eb)).toBe(0);

    // A goes: its lease is released at close, and B's next round holds it.
    await a.close();
    aClosed = true;
    const takeover = await eb.evaluateOnce();
    expect(takeover.held).toBe(true);
    // The rule still fires: B sees it firing (no second alert).
    expect(takeover.fired).toEqual([]);
    await b.app.ctx.runner.waitFor(await b.app.ctx.store.headPosition(), { projections: ['alerts'] });
    const listed = await call(`${b.url}/api/admin/alerts?state=firing&rule_id=${created.json.id}`, { token: b.adminToken });
    expect(listed.json.data.map((x: { id: string }) => x.id)).toEqual(rounds[0]!.fired);
    expect(await metricsOf(eb)).toBe(1);
  });

  it('passes the lease on when its holder stops renewing it (a crashed instance)', async () => {
    const eb = b.app.ctx.alerts!;
    await b.app.ctx.counters.releaseLease('alerts:evaluator', eb.instanceId);
    // An instance that took the lease for 300 ms and died.
    expect(await b.app.ctx.counters.holdLease('alerts:evaluator', 'crashed-instance', 300)).toBe(true);
    expect((await eb.evaluateOnce()).held).toBe(false);
    await expect.poll(async () => (await eb.evaluateOnce()).held, { timeout: 5_000, interval: 100 }).toBe(true);
  });
});
