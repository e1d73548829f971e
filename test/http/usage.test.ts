/**
 * Usage end to end on the real server: relay traffic through the fake OpenAI upstream (11 + 7
 * tokens per request) becomes per-request rows and hourly / daily rollups; every group_by, time
 * filters (with fixture events at fixed times), the self view, tenant isolation, duplicates.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { USAGE_RECORDED, type UsageData } from '../../src/commands/usage/events.js';
import { startOpenAiFake, type OpenAiFake } from '../support/fake-upstreams/openai.js';
import { call, createUser, login, startApp, TEST_USER_PASSWORD, type RunningApp } from '../support/app.js';
import { dereferencedOpenapi } from '../support/openapi.js';
import { createChannel } from '../support/relay.js';

const TOKENS = { prompt: 11, completion: 7, total: 18 };

describe('usage', () => {
  let s: RunningApp;
  let upstream: OpenAiFake;
  let channelId: string;
  let keyId: string;
  let tenantB: string;
  let adminB: string;
  const requestIds: Record<string, string[]> = { user: [], key: [], admin: [], failed: [], b: [] };

  const chat = async (token: string, model = 'gpt-a') => {
    const res = await call(`${s.url}/v1/chat/completions`, { token, body: { model, messages: [{ role: 'user', content: 'hi' }] } });
    return { status: res.status, requestId: res.headers.get('x-request-id')! };
  };
  /** Everything published so far, projected. */
  const settle = async () => {
    await s.app.ctx.usage.flush();
    await s.app.ctx.runner.waitFor(await s.app.ctx.store.headPosition(), { projections: ['usage'] });
  };
  const usage = (token: string, query = '', path = '/v1/admin/usage') => call(`${s.url}${path}${query ? `?${query}` : ''}`, { token });

  beforeAll(async () => {
    upstream = await startOpenAiFake();
    s = await startApp({ HEALTH_CHECK_ENABLED: 'false' });
    channelId = (await createChannel(s, { type: 'openai', base_url: upstream.baseUrl, models: ['gpt-a', 'gpt-b'] })).id;
    const key = await call(`${s.url}/api/admin/keys`, { token: s.adminToken, body: { name: 'k', user_id: s.userId } });
    keyId = key.json.id as string;

    const tenant = await call(`${s.url}/v1/admin/tenants`, { token: s.adminToken, body: { name: 'tenant b' } });
    tenantB = tenant.json.id as string;
    const userB = await createUser(s.url, s.adminToken, { role: 'admin', tenant_id: tenantB });
    adminB = (await login(s.url, userB.email, TEST_USER_PASSWORD)).access_token;
    await createChannel(s, { type: 'openai', base_url: upstream.baseUrl, models: ['gpt-a'] }, adminB);

    for (let i = 0; i < 2; i++) requestIds.user!.push((await chat(s.userToken)).requestId);
    requestIds.key!.push((await chat(key.json.key as string, 'gpt-b')).requestId);
    requestIds.admin!.push((await chat(s.adminToken)).requestId);
    const failed = await chat(s.userToken, 'no-such-model');
    expect(failed.status).toBe(404); // model_not_found
    requestIds.failed!.push(failed.requestId);
    requestIds.b!.push((await chat(adminB)).requestId);
    await settle();
  });
  afterAll(async () => {
    await s?.close();
    await upstream?.close();
  });

  it('keeps one row per request with exact integers, paginated newest first', async () => {
    const all = await usage(s.adminToken, 'limit=1000', '/v1/admin/usage/requests');
    expect(all.status, all.text).toBe(200);
    const rows = all.json.data as Array<Record<string, unknown>>;
    expect(rows.map((r) => r.request_id).sort()).toEqual([...requestIds.user!, ...requestIds.key!, ...requestIds.admin!, ...requestIds.failed!].sort());
    const ok = rows.find((r) => r.request_id === requestIds.key![0])!;
    expect(ok).toMatchObject({
      object: 'usage.request',
      tenant_id: 'default',
      user_id: s.userId,
      key_id: keyId,
      channel_id: channelId,
      provider: 'openai',
      model: 'gpt-b',
      status: 200,
      error: false,
      prompt_tokens: TOKENS.prompt,
      completion_tokens: TOKENS.completion,
      total_tokens: TOKENS.total,
      usage_source: 'upstream',
    });
    expect(ok.latency_ms as number).toBeGreaterThan(0);
    const failed = rows.find((r) => r.request_id === requestIds.failed![0])!;
    expect(failed).toMatchObject({ status: 404, error: true, error_code: 'model_not_found', total_tokens: 0, channel_id: null });
    // Newest first, and pages of 2 cover the same rows exactly once.
    const started = rows.map((r) => r.started_at as string);
    expect([...started].sort().reverse()).toEqual(started);
    const paged: unknown[] = [];
    let cursor: string | null = null;
    do {
      const page = await usage(s.adminToken, `limit=2${cursor ? `&cursor=${cursor}` : ''}`, '/v1/admin/usage/requests');
      paged.push(...(page.json.data as Array<{ request_id: string }>).map((r) => r.request_id));
      cursor = page.json.next_cursor as string | null;
      expect(page.json.has_more).toBe(cursor !== null);
    } while (cursor);
    expect(paged).toEqual(rows.map((r) => r.request_id));
    expect((await usage(s.adminToken, `status=error`, '/v1/admin/usage/requests')).json.data.map((r: { request_id: string }) => r.request_id)).toEqual(requestIds.failed);
    expect((await usage(s.adminToken, 'cursor=garbage', '/v1/admin/usage/requests')).status).toBe(400);
  });

  it('sums by every group_by, from whichever table answers, with the same totals', async () => {
    const totals = { requests: 5, errors: 1, prompt_tokens: 4 * TOKENS.prompt, completion_tokens: 4 * TOKENS.completion, total_tokens: 4 * TOKENS.total };
    const byUser = await usage(s.adminToken, 'group_by=user');
    expect(byUser.status, byUser.text).toBe(200);
    expect(byUser.json).toMatchObject({ object: 'usage', tenant_id: 'default', group_by: ['user'], source: 'usage_daily', totals });
    expect(byUser.json.data).toEqual([
      expect.objectContaining({ user_id: s.adminUserId, requests: 1, errors: 0, total_tokens: TOKENS.total }),
      expect.objectContaining({ user_id: s.userId, requests: 4, errors: 1, prompt_tokens: 3 * TOKENS.prompt, total_tokens: 3 * TOKENS.total }),
    ]);
    expect(byUser.json.data[0].avg_latency_ms).toBeGreaterThan(0);

    const byKey = await usage(s.adminToken, 'group_by=key');
    expect(byKey.json.data).toEqual([expect.objectContaining({ key_id: null, requests: 4 }), expect.objectContaining({ key_id: keyId, requests: 1, total_tokens: TOKENS.total })]);
    const byChannel = await usage(s.adminToken, 'group_by=channel');
    expect(byChannel.json.data).toEqual([expect.objectContaining({ channel_id: null, requests: 1, errors: 1 }), expect.objectContaining({ channel_id: channelId, requests: 4, errors: 0 })]);
    const byModel = await usage(s.adminToken, 'group_by=model');
    expect(byModel.json.data.map((g: { model: string; requests: number }) => [g.model, g.requests])).toEqual([
      ['gpt-a', 3],
      ['gpt-b', 1],
      ['no-such-model', 1],
    ]);
    const byUserModel = await usage(s.adminToken, 'group_by=user,model');
    expect(byUserModel.json.data.map((g: { user_id: string; model: string; requests: number }) => [g.user_id, g.model, g.requests])).toEqual([
      [s.adminUserId, 'gpt-a', 1],
      [s.userId, 'gpt-a', 2],
      [s.userId, 'gpt-b', 1],
      [s.userId, 'no-such-model', 1],
    ]);

    // hour and day: the traffic may straddle an hour (or a day) boundary, so check the sums.
    const byHour = await usage(s.adminToken, 'group_by=hour');
    expect(byHour.json.source).toBe('usage_hourly');
    const byDay = await usage(s.adminToken, 'group_by=day');
    expect(byDay.json.source).toBe('usage_daily');
    for (const res of [byHour, byDay]) {
      const groups = res.json.data as Array<{ requests: number; total_tokens: number; hour?: string; day?: string }>;
      expect(groups.reduce((n, g) => n + g.requests, 0)).toBe(5);
      expect(groups.reduce((n, g) => n + g.total_tokens, 0)).toBe(totals.total_tokens);
    }
    expect(byHour.json.data[0].hour).toMatch(/^\d{4}-\d\d-\d\dT\d\d:00:00\.000Z$/);
    expect(byDay.json.data[0].day).toMatch(/^\d{4}-\d\d-\d\dT00:00:00\.000Z$/);

    // A range that is not on whole hours is answered from the per-request rows: same figures.
    const now = Date.now();
    const exact = await usage(s.adminToken, `group_by=user&from=${new Date(now - 3_600_123).toISOString()}&to=${new Date(now + 60_000).toISOString()}`);
    expect(exact.json.source).toBe('usage_requests');
    expect(exact.json.totals).toMatchObject(totals);
    expect(exact.json.data).toEqual(byUser.json.data);
    // Filters.
    expect((await usage(s.adminToken, `user_id=${s.userId}`)).json.totals.requests).toBe(4);
    expect((await usage(s.adminToken, `key_id=${keyId}`)).json.totals.requests).toBe(1);
    expect((await usage(s.adminToken, 'model=gpt-a')).json.totals.requests).toBe(3);
    expect((await usage(s.adminToken, `channel_id=${channelId}`)).json.totals.requests).toBe(4);
    expect((await usage(s.adminToken, 'group_by=tenant')).status).toBe(400);
  });

  it('filters by time on the request start: inclusive from, exclusive to, in hour and day buckets', async () => {
    const fixture = (requestId: string, startedAt: string, tokens: number): UsageData => ({
      request_id: requestId,
      tenant_id: 'default',
      user_id: 'user-fixture',
      key_id: null,
      channel_id: 'ch_fixture',
      provider: 'openai',
      model_requested: 'gpt-fixture',
      model_served: 'gpt-fixture',
      prompt_tokens: tokens,
      completion_tokens: 1,
      total_tokens: tokens + 1,
      usage_source: 'upstream',
      stream: false,
      status: 200,
      error_code: null,
      latency_ms: 12.34,
      ttft_ms: null,
      attempts: 1,
      started_at: startedAt,
    });
    const events = [fixture('fx-1', '2024-03-01T10:15:00.000Z', 10), fixture('fx-2', '2024-03-01T11:45:00.000Z', 20), fixture('fx-3', '2024-03-02T00:30:00.000Z', 40)];
    const { position } = await s.app.ctx.store.append(
      'usage-fixture',
      events.map((data) => ({ type: USAGE_RECORDED, data })),
      { expectedVersion: 'any', tenantId: 'default' },
    );
    await s.app.ctx.runner.waitFor(position, { projections: ['usage'] });
    const q = (query: string) => usage(s.adminToken, `user_id=user-fixture&${query}`);

    const days = await q('group_by=day&from=2024-03-01&to=2024-03-03');
    expect(days.json.source).toBe('usage_daily');
    expect(days.json.data.map((g: { day: string; requests: number; total_tokens: number }) => [g.day, g.requests, g.total_tokens])).toEqual([
      ['2024-03-01T00:00:00.000Z', 2, 32],
      ['2024-03-02T00:00:00.000Z', 1, 41],
    ]);
    expect(days.json.data[0]).toMatchObject({ latency_us_sum: 24_680, avg_latency_ms: 12.34 });
    const hours = await q('group_by=hour&from=2024-03-01T00:00:00Z&to=2024-03-03T00:00:00Z');
    expect(hours.json.source).toBe('usage_hourly');
    expect(hours.json.data.map((g: { hour: string; requests: number }) => [g.hour, g.requests])).toEqual([
      ['2024-03-01T10:00:00.000Z', 1],
      ['2024-03-01T11:00:00.000Z', 1],
      ['2024-03-02T00:00:00.000Z', 1],
    ]);
    // `to` is exclusive, `from` inclusive; bounds inside an hour use the request rows.
    expect((await q('from=2024-03-01T10:00:00Z&to=2024-03-01T11:00:00Z')).json.totals.requests).toBe(1);
    expect((await q('from=2024-03-01T10:15:00Z&to=2024-03-01T11:45:00Z')).json).toMatchObject({ source: 'usage_requests', totals: { requests: 1, total_tokens: 11 } });
    expect((await q('from=2024-03-01T10:15:00.001Z&to=2024-03-01T11:45:00.001Z')).json.totals.total_tokens).toBe(21);
    expect((await q('from=2024-03-02&to=2024-03-03')).json.totals.requests).toBe(1);
    expect((await q('from=2024-03-03&to=2024-03-04')).json.totals).toMatchObject({ requests: 0, total_tokens: 0, avg_latency_ms: null });
    // The default window (the last 30 UTC days) leaves these old requests out.
    expect((await q('')).json.totals.requests).toBe(0);
    expect((await q('from=2024-03-02&to=2024-03-01')).status).toBe(400);
    const rows = await usage(s.adminToken, 'user_id=user-fixture&from=2024-01-01&to=2024-12-31', '/v1/admin/usage/requests');
    expect(rows.json.data.map((r: { request_id: string }) => r.request_id)).toEqual(['fx-3', 'fx-2', 'fx-1']);
    expect(rows.json.data[0]).toMatchObject({ latency_ms: 12.34 });
  });

  it('ignores a usage event published twice, but counts another request that reused the id', async () => {
    const [original] = (await s.app.ctx.store.readAll({ after: 0, limit: 100_000 }))
      .flatMap((c) => c.events)
      .filter((e) => e.type === USAGE_RECORDED && (e.data as UsageData).request_id === requestIds.key![0]);
    const before = await usage(s.adminToken, `key_id=${keyId}`);
    // The same event again (as a crash during a spool replay would publish it).
    let { position } = await s.app.ctx.store.append('usage-replayed', [{ type: USAGE_RECORDED, data: original!.data }], { expectedVersion: 'any', tenantId: 'default' });
    await s.app.ctx.runner.waitFor(position, { projections: ['usage'] });
    const after = await usage(s.adminToken, `key_id=${keyId}`);
    expect(after.json.totals).toEqual(before.json.totals);
    const rows = await s.app.ctx.sql.db.selectFrom('usage_requests').select('request_key').where('request_id', '=', requestIds.key![0]!).execute();
    expect(rows).toHaveLength(1);
    // A different request under the same (client-chosen) id is usage too.
    ({ position } = await s.app.ctx.store.append('usage-replayed', [{ type: USAGE_RECORDED, data: { ...original!.data, started_at: new Date().toISOString() } }], { expectedVersion: 'any', tenantId: 'default' }));
    await s.app.ctx.runner.waitFor(position, { projections: ['usage'] });
    expect((await usage(s.adminToken, `key_id=${keyId}`)).json.totals.requests).toBe(before.json.totals.requests + 1);
    const keys = await s.app.ctx.sql.db.selectFrom('usage_requests').select('request_key').where('request_id', '=', requestIds.key![0]!).orderBy('request_key').execute();
    expect(keys.map((r) => r.request_key)).toEqual([requestIds.key![0], `${requestIds.key![0]}~1`]);
  });

  it('shows users their own usage only; the admin views are 403 for them', async () => {
    const mine = await usage(s.userToken, 'group_by=user,key', '/v1/usage');
    expect(mine.status, mine.text).toBe(200);
    expect(mine.json.data.every((g: { user_id: string }) => g.user_id === s.userId)).toBe(true);
    expect(mine.json.totals.requests).toBeGreaterThanOrEqual(4);
    const rows = await usage(s.userToken, 'limit=1000', '/v1/usage/requests');
    expect(rows.json.data.length).toBeGreaterThanOrEqual(4);
    expect(rows.json.data.every((r: { user_id: string }) => r.user_id === s.userId)).toBe(true);
    expect(rows.json.data.some((r: { request_id: string }) => r.request_id === requestIds.admin![0])).toBe(false);
    for (const path of ['/v1/admin/usage', '/v1/admin/usage/requests']) expect((await usage(s.userToken, '', path)).status, path).toBe(403);
    expect((await call(`${s.url}/v1/usage`)).status).toBe(401);
  });

  it("keeps tenants apart: another tenant's admin sees only its own usage, and this tenant's ids are empty or 404", async () => {
    const b = await usage(adminB, 'group_by=user');
    expect(b.json).toMatchObject({ tenant_id: tenantB, totals: { requests: 1, total_tokens: TOKENS.total } });
    const rows = await usage(adminB, 'limit=1000', '/v1/admin/usage/requests');
    expect(rows.json.data.map((r: { request_id: string }) => r.request_id)).toEqual(requestIds.b);
    expect((await usage(adminB, `user_id=${s.userId}`)).json.totals.requests).toBe(0);
    expect((await usage(adminB, `key_id=${keyId}`, '/v1/admin/usage/requests')).json.data).toEqual([]);
    expect((await usage(adminB, 'tenant_id=default')).status).toBe(404);
    expect((await usage(adminB, 'tenant_id=default', '/v1/admin/usage/requests')).status).toBe(404);
    // This tenant's admin does not see tenant b's request; operators may look at tenant b.
    const own = await usage(s.adminToken, 'limit=1000', '/v1/admin/usage/requests');
    expect(own.json.data.some((r: { request_id: string }) => r.request_id === requestIds.b![0])).toBe(false);
    expect((await usage(s.adminToken, `tenant_id=${tenantB}`)).json.totals.requests).toBe(1);
  });

  it('publishes the usage endpoints in the OpenAPI document', async () => {
    const doc = (await dereferencedOpenapi(s.url));
    for (const path of ['/v1/admin/usage', '/v1/admin/usage/requests', '/v1/usage', '/v1/usage/requests']) expect(doc.paths[path]?.get, path).toBeDefined();
    const params = (doc.paths['/v1/admin/usage'].get.parameters as Array<{ name: string }>).map((p) => p.name);
    expect(params).toEqual(expect.arrayContaining(['group_by', 'from', 'to', 'user_id', 'key_id', 'model']));
    expect(JSON.stringify(doc.paths['/v1/admin/usage'].get.responses['200'])).toContain('total_tokens');
  });
});
