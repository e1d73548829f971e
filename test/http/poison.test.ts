/**
 * Issue 14: one request whose `model` is an Object.prototype name (`constructor`, `__proto__`,
 * `toString`...) froze billing for the whole installation. Embedded and distributed (NATS +
 * MariaDB + Redis):
 * - every such name, through every caller-controlled lookup (the model, an API key's aliases, a
 *   channel's and the request's model_mapping, provider_config, preset_id), with a session token
 *   and with an API key, is refused like any unknown name, reaches no upstream, and leaves a
 *   usage event that validates; billing, key_usage and usage keep moving;
 * - a poison usage event already in the log (what the old code wrote) is quarantined by every
 *   projection that reads it: top-ups keep working, /health says degraded (still 200), the metric
 *   counts it, audit replay reports it, a restart does not stall, the admin API lists and replays.
 */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { UsageRecorded } from '../../src/commands/usage/events.js';
import { call, startApp, type RunningApp } from '../support/app.js';
import { startOpenAiFake, type OpenAiFake } from '../support/fake-upstreams/openai.js';
import { distributedEnv } from '../support/modes.js';
import { createChannel, usageEvents } from '../support/relay.js';

const services = inject('services');
const urls = inject('serviceUrls');

/** Every name a plain object answers for without having it. */
const PROTOTYPE_NAMES = [...new Set([...Object.getOwnPropertyNames(Object.prototype), '__proto__'])];

const modes: Array<[string, boolean]> = [
  ['embedded', true],
  ['distributed', services.nats && services.mysql && services.redis],
];

describe.each(modes)('Object.prototype names and poison events (%s)', (mode, enabled) => {
  let s: RunningApp;
  let upstream: OpenAiFake;
  let env: Record<string, string> = {};
  let cleanup: () => Promise<void> = async () => undefined;
  let apiKey: string;
  let keyId: string;
  const dataDirs: string[] = [];

  beforeAll(async () => {
    if (!enabled) return;
    if (mode === 'distributed') ({ env, cleanup } = distributedEnv(urls));
    upstream = await startOpenAiFake();
    s = await startApp(env);
    await createChannel(s, { type: 'openai', base_url: upstream.baseUrl, models: ['gpt-a'], model_mapping: { fast: 'gpt-a' } });
    const key = await call(`${s.url}/api/admin/keys`, { token: s.adminToken, body: { name: 'k', user_id: s.userId, model_restrictions: { model_aliases: { quick: 'gpt-a' } } } });
    expect(key.status, key.text).toBe(201);
    apiKey = key.json.key as string;
    keyId = key.json.id as string;
    expect((await call(`${s.url}/v1/admin/credits/${s.userId}/topup`, { token: s.adminToken, body: { amount: '5', reason: 'start' } })).status).toBe(200);
  }, 60_000);
  afterAll(async () => {
    if (!enabled) return;
    await s?.close();
    await upstream?.close();
    await cleanup();
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  });

  const chat = (token: string, body: Record<string, unknown>) => call(`${s.url}/v1/chat/completions`, { token, body: { messages: [{ role: 'user', content: 'hi' }], ...body } });
  const balance = async () => (await call(`${s.url}/v1/admin/credits/${s.userId}`, { token: s.adminToken })).json.balance_micro as number;
  const topup = (amount: string) => call(`${s.url}/v1/admin/credits/${s.userId}/topup`, { token: s.adminToken, body: { amount, reason: 'more' } });

  it.skipIf(!enabled)('refuses every Object.prototype name at every lookup, with session tokens and API keys, and billing keeps moving', async () => {
    const before = upstream.requests.length;
    for (const name of PROTOTYPE_NAMES) {
      for (const token of [s.userToken, apiKey]) {
        const who = `${name} (${token === apiKey ? 'API key' : 'session'})`;
        // The model itself (a channel's model_mapping and an API key's aliases are looked up by it).
        const byModel = await chat(token, { model: name });
        expect(byModel.status, who).toBe(404);
        expect(byModel.json.error, who).toMatchObject({ code: 'model_not_found', type: expect.any(String) });
        // The request's own model_mapping, with another alias in it.
        const byMapping = await chat(token, { model: name, model_mapping: { other: { actual_model: 'gpt-a' } } });
        expect(byMapping.json.error?.code, who).toBe('model_not_found');
        // provider_config names no channel type or name.
        const byProvider = await chat(token, { model: 'gpt-a', provider_config: { primary: name } });
        expect(byProvider.json.error?.code, who).toBe('no_available_channels');
        // A preset nobody has.
        const byPreset = await chat(token, { model: 'gpt-a', preset_id: name });
        expect([byPreset.status, byPreset.json.error?.code], who).toEqual([404, 'preset_not_found']);
      }
    }
    expect(upstream.requests.length).toBe(before);

    // Real traffic still goes through, by alias too.
    expect((await chat(s.userToken, { model: 'fast' })).status).toBe(200);
    expect((await chat(apiKey, { model: 'quick' })).status).toBe(200);

    // Every usage event validates, so the projections have nothing to choke on.
    const events = await usageEvents(s);
    expect(events.length).toBeGreaterThan(PROTOTYPE_NAMES.length * 6);
    for (const data of events) expect(UsageRecorded.safeParse({ type: 'UsageRecorded', data }).success, JSON.stringify(data)).toBe(true);
    const routed = events.filter((e) => PROTOTYPE_NAMES.includes(e.model_requested as string) && e.model_routed !== undefined);
    expect(routed.every((e) => typeof e.model_routed === 'string')).toBe(true);

    // Billing, key_usage and usage keep moving: a top-up is reflected, the key's usage counted.
    const start = await balance();
    const res = await topup('1');
    expect(res.status, res.text).toBe(200);
    expect(await balance()).toBe(start + 1_000_000);
    await s.app.ctx.runner.waitFor(await s.app.ctx.store.headPosition());
    const keyUsage = await s.app.ctx.sql.db.selectFrom('key_usage').selectAll().where('key_id', '=', keyId).executeTakeFirstOrThrow();
    expect(keyUsage.requests).toBeGreaterThan(PROTOTYPE_NAMES.length);
    const health = await call(`${s.url}/health`);
    expect(health.json.status).toBe('ok');
    expect((health.json.projections as Array<{ quarantined: number }>).every((p) => p.quarantined === 0)).toBe(true);
  }, 120_000);

  it.skipIf(!enabled)('quarantines a poison usage event already in the log: billing keeps moving, health degraded, audit and the admin API show it, a restart does not stall', async () => {
    // What the old code published for model "constructor": no model_served, model_routed {}.
    const poison = {
      request_id: `req-poison-${mode}`,
      tenant_id: 'default',
      user_id: s.userId,
      key_id: keyId,
      channel_id: null,
      provider: null,
      model_requested: 'constructor',
      model_routed: {},
      prompt_tokens: 3,
      completion_tokens: 0,
      total_tokens: 3,
      usage_source: 'tokenizer',
      stream: false,
      status: 200,
      error_code: null,
      latency_ms: 1,
      ttft_ms: null,
      attempts: 1,
      started_at: new Date().toISOString(),
    };
    const appended = await s.app.ctx.store.append(`usage-poison${mode}`, [{ type: 'UsageRecorded', data: poison }], { expectedVersion: 'any', tenantId: 'default' });
    await s.app.ctx.runner.waitFor(appended.position, { timeoutMs: 20_000 });

    const quarantined = await call(`${s.url}/v1/admin/projections/quarantine`, { token: s.adminToken });
    expect(quarantined.status, quarantined.text).toBe(200);
    const rows = quarantined.json.data as Array<{ projection: string; event_position: number; error: string; event_type: string }>;
    expect(rows.map((r) => r.projection).sort()).toEqual(['billing', 'key_usage', 'usage']);
    expect(rows.every((r) => r.event_position === appended.position && r.event_type === 'UsageRecorded' && r.error.length > 0)).toBe(true);
    // Operators only; documented.
    expect((await call(`${s.url}/v1/admin/projections/quarantine`, { token: s.userToken })).status).toBe(403);
    const paths = Object.keys((await call(`${s.url}/openapi.json`)).json.paths as object);
    expect(paths).toEqual(expect.arrayContaining(['/v1/admin/projections/quarantine', '/v1/admin/projections/quarantine/replay']));

    // Billing moves on: top-ups answer and show.
    const start = await balance();
    const res = await topup('2');
    expect(res.status, res.text).toBe(200);
    expect(await balance()).toBe(start + 2_000_000);

    // Degraded, still ready.
    const health = await call(`${s.url}/health`);
    expect(health.status).toBe(200);
    expect(health.json).toMatchObject({ status: 'degraded', ready: true });
    const counts = Object.fromEntries((health.json.projections as Array<{ name: string; quarantined: number }>).map((p) => [p.name, p.quarantined]));
    expect(counts).toMatchObject({ billing: 1, key_usage: 1, usage: 1, accounts: 0 });
    if (s.metricsUrl) {
      const metrics = await (await fetch(`${s.metricsUrl}/metrics`)).text();
      expect(metrics).toMatch(/switchyard_projection_quarantined_events\{projection="billing"\} 1/);
    }

    // The audit no longer claims the read models agree with the log.
    const day = 86_400_000;
    const audit = await call(`${s.url}/v1/admin/audit/replay`, { token: s.adminToken, body: { from: new Date(Date.now() - day).toISOString(), to: new Date(Date.now() + day).toISOString() } });
    expect(audit.status, audit.text).toBe(200);
    expect(audit.json.differences).toBeGreaterThanOrEqual(2);
    expect((audit.json.quarantined as Array<{ projection: string; found_in: string }>).map((q) => [q.projection, q.found_in]).sort()).toEqual([
      ['billing', 'both'],
      ['usage', 'both'],
    ]);

    // Replaying without a fix leaves them quarantined, with the error.
    const replay = await call(`${s.url}/v1/admin/projections/quarantine/replay`, { token: s.adminToken, body: { projection: 'billing' } });
    expect(replay.status, replay.text).toBe(200);
    expect(replay.json).toMatchObject({ applied: 0, still_quarantined: 1, data: [{ projection: 'billing', result: 'failed' }] });
    expect((await call(`${s.url}/v1/admin/projections/quarantine/replay`, { token: s.adminToken, body: { projection: 'nope' } })).status).toBe(404);

    // A restart catches up past the event (no stall), still degraded, billing still moving.
    await s.app.close();
    s = await startApp(env, { keepDataDir: s.dataDir });
    dataDirs.push(s.dataDir);
    expect((await call(`${s.url}/health`)).json.status).toBe('degraded');
    const again = await balance();
    expect((await topup('1')).status).toBe(200);
    expect(await balance()).toBe(again + 1_000_000);
    // Rebuilding billing meets the event again: it completes, with the event quarantined once.
    await s.app.ctx.runner.rebuild('billing');
    expect(await balance()).toBe(again + 1_000_000);
    const afterRebuild = await call(`${s.url}/v1/admin/projections/quarantine?projection=billing`, { token: s.adminToken });
    expect((afterRebuild.json.data as unknown[]).length).toBe(1);
  }, 120_000);
});
