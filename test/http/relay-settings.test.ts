/**
 * Relay settings (issue 16) end to end, in both modes: a channel's rate_limits (shared by every
 * instance: in the distributed mode two instances on one Redis take turns), retry_config and
 * fallback_for; unknown channel fields refused; the tenant's relay_settings; the upstream's
 * request-limit headers on its 429. The official OpenAI SDK is the client, the upstreams are fakes
 * speaking OpenAI's wire format.
 */
import OpenAI from 'openai';
import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { call, startApp, type RunningApp } from '../support/app.js';
import { dereferencedOpenapi } from '../support/openapi.js';
import { FAKE_COMPLETION_TOKENS, FAKE_PROMPT_TOKENS } from '../support/fake-upstreams/fake.js';
import { startOpenAiFake, type OpenAiFake } from '../support/fake-upstreams/openai.js';
import { appModes } from '../support/modes.js';
import { createChannel, sdk, usageEvents } from '../support/relay.js';

const services = inject('services');
const urls = inject('serviceUrls');


/** The distributed mode runs two instances on the same stores. */
const MODES = appModes(services, urls).map((mode) => ({ ...mode, instances: mode.name === 'distributed' ? 2 : 1 }));

const hello = [{ role: 'user' as const, content: 'hi' }];

interface LogLine {
  level: number;
  msg: string;
  request_id?: string;
}

/** The OpenAI SDK's error for a refused request (status, code, headers). */
async function refusal(promise: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof OpenAI.APIError) return error;
    throw error;
  }
  throw new Error('the request was answered');
}

describe.each(MODES.map((m) => [m.name, m] as const))('relay settings (%s)', (_name, mode) => {
  let apps: RunningApp[] = [];
  let a: RunningApp;
  const logs: LogLine[] = [];
  let cleanup: () => Promise<void> = async () => undefined;
  const fakes = new Map<string, OpenAiFake>();
  let n = 0;

  /** A fake upstream of its own for each channel name. */
  async function upstream(name: string): Promise<OpenAiFake> {
    let fake = fakes.get(name);
    if (!fake) fakes.set(name, (fake = await startOpenAiFake()));
    return fake;
  }

  /** Every instance has folded everything written so far (channels, keys, settings). */
  async function synced(): Promise<void> {
    const head = await a.app.ctx.store.headPosition();
    await Promise.all(apps.flatMap((s) => [s.app.ctx.views.channels.waitFor(head), s.app.ctx.views.keys.waitFor(head), s.app.ctx.views.billing.waitFor(head)]));
  }

  async function channel(name: string, body: Record<string, unknown>): Promise<{ id: string; [k: string]: unknown }> {
    const fake = await upstream(name);
    const created = await createChannel(a, { type: 'openai', name, base_url: fake.baseUrl, models: ['m'], ...body } as never);
    await synced();
    return created;
  }

  async function apiKey(body: Record<string, unknown>): Promise<string> {
    const res = await call(`${a.url}/api/admin/keys`, { token: a.adminToken, body: { name: `k${++n}`, user_id: a.userId, ...body } });
    expect(res.status).toBe(201);
    await synced();
    return res.json.key as string;
  }

  async function relaySettings(body: Record<string, unknown>) {
    const res = await call(`${a.url}/v1/admin/settings`, { method: 'PATCH', token: a.adminToken, body });
    await synced();
    return res;
  }

  /** The instance for the i-th request: they take turns when there are two. */
  const instance = (i: number) => apps[i % apps.length]!;

  beforeAll(async () => {
    if (!mode.enabled) return;
    const { env, cleanup: drop } = mode.env();
    cleanup = drop;
    const settings = { ...env, HEALTH_CHECK_ENABLED: 'false', RELAY_MAX_RETRIES: '1', RELAY_BACKOFF_BASE: '1ms', CHANNEL_FAILURE_THRESHOLD: '1000' };
    const logger = pino({ level: 'warn' }, { write: (line: string) => void logs.push(JSON.parse(line) as LogLine) });
    a = await startApp(settings, { logger });
    apps = [a];
    for (let i = 1; i < mode.instances; i++) apps.push(await startApp(settings));
  });
  afterAll(async () => {
    for (const s of apps) await s.close();
    for (const fake of fakes.values()) await fake.close();
    await cleanup();
  });
  beforeEach(() => {
    for (const fake of fakes.values()) {
      fake.mode = { kind: 'reply' };
      fake.requests.length = 0;
    }
  });

  describe.runIf(mode.enabled)('channels', () => {
    it('shows rate_limits, retry_config and fallback_for, changes and clears them', async () => {
      const created = await channel('shown', { models: ['shown-m'], rate_limits: { requests_per_minute: 5 }, retry_config: { max_retries: 0 }, fallback_for: ['openai'] });
      expect(created).toMatchObject({
        rate_limits: { requests_per_minute: 5, tokens_per_minute: null },
        retry_config: { max_retries: 0, backoff_multiplier: null },
        fallback_for: ['openai'],
        priority: 0,
      });
      const changed = await call(`${a.url}/v1/admin/channels/${created.id}`, { method: 'PATCH', token: a.adminToken, body: { rate_limits: null, retry_config: { backoff_multiplier: 3 }, fallback_for: [], priority: 4 } });
      expect(changed.status).toBe(200);
      expect(changed.json).toMatchObject({ rate_limits: null, retry_config: { max_retries: null, backoff_multiplier: 3 }, fallback_for: [], priority: 4 });
      const plain = await channel('plain', { models: ['plain-m'] });
      expect(plain).toMatchObject({ rate_limits: null, retry_config: null, fallback_for: [] });
    });

    it('refuses a field a channel does not know (400 unknown_field naming it), on create and update', async () => {
      const base = { name: 'typo', type: 'openai', base_url: 'http://127.0.0.1:1', key: 'k', models: ['x'] };
      const top = await call(`${a.url}/v1/admin/channels`, { token: a.adminToken, body: { ...base, priorty: 3 } });
      expect(top.status).toBe(400);
      expect(top.json.error).toMatchObject({ code: 'unknown_field', param: 'priorty', type: 'invalid_request_error' });
      const nested = await call(`${a.url}/v1/admin/channels`, { token: a.adminToken, body: { ...base, rate_limits: { rpm: 3 } } });
      expect(nested.json.error).toMatchObject({ code: 'unknown_field', param: 'rate_limits.rpm' });
      const plain = (await call(`${a.url}/v1/admin/channels`, { token: a.adminToken })).json.data.find((c: { name: string }) => c.name === 'plain');
      const update = await call(`${a.url}/v1/admin/channels/${plain.id}`, { method: 'PATCH', token: a.adminToken, body: { weight: 2, retry_config: { retries: 1 } } });
      expect(update.status).toBe(400);
      expect(update.json.error).toMatchObject({ code: 'unknown_field', param: 'retry_config.retries' });
      expect((await call(`${a.url}/v1/admin/channels/${plain.id}`, { token: a.adminToken })).json.weight).toBe(1);
    });
  });

  describe.runIf(mode.enabled)('OpenAPI', () => {
    it('documents the channel fields (closed objects) and relay_settings', async () => {
      const doc = (await dereferencedOpenapi(a.url));
      const create = doc.paths['/v1/admin/channels'].post.requestBody.content['application/json'].schema;
      expect(create.additionalProperties).toBe(false);
      expect(Object.keys(create.properties)).toEqual(expect.arrayContaining(['rate_limits', 'retry_config', 'fallback_for', 'priority']));
      const view = doc.paths['/v1/admin/channels/{channel_id}'].get.responses['200'].content['application/json'].schema;
      expect(Object.keys(view.properties)).toEqual(expect.arrayContaining(['rate_limits', 'retry_config', 'fallback_for']));
      const settings = doc.paths['/v1/admin/settings'].get.responses['200'].content['application/json'].schema;
      expect(Object.keys(settings.properties.relay_settings.properties).sort()).toEqual(['conversation_title_model', 'default_provider', 'enabled', 'error_logging', 'fallback_providers', 'rate_limiting', 'usage_tracking']);
      const input = doc.paths['/v1/admin/settings'].patch.requestBody.content['application/json'].schema;
      expect(input.properties.relay_settings.additionalProperties).toBe(false);
    });
  });

  describe.runIf(mode.enabled)('channel rate limits', () => {
    it('sends a channel no more than requests_per_minute (across instances), then the next candidate', async () => {
      const limited = await upstream('rpm-limited');
      const spare = await upstream('rpm-spare');
      await channel('rpm-limited', { models: ['rpm-m'], rate_limits: { requests_per_minute: 2 } });
      await channel('rpm-spare', { models: ['rpm-m'], priority: 10 });
      for (let i = 0; i < 4; i++) {
        const completion = await sdk(instance(i)).chat.completions.create({ model: 'rpm-m', messages: hello });
        expect(completion.choices[0]!.message.content).toBe('Hello! You said: hi');
      }
      expect(limited.requests).toHaveLength(2);
      expect(spare.requests).toHaveLength(2);
    });

    it('answers 429 channel_rate_limited with Retry-After when every channel is at its limit', async () => {
      const only = await upstream('rpm-only');
      await channel('rpm-only', { models: ['rpm-only-m'], rate_limits: { requests_per_minute: 3 } });
      for (let i = 0; i < 3; i++) await sdk(instance(i)).chat.completions.create({ model: 'rpm-only-m', messages: hello });
      const refused = await refusal(sdk(instance(3)).chat.completions.create({ model: 'rpm-only-m', messages: hello }));
      expect(refused.status).toBe(429);
      expect(refused.code).toBe('channel_rate_limited');
      const retryAfter = Number(refused.headers?.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(only.requests).toHaveLength(3);
      for (const s of apps) await s.app.ctx.usage.flush(); // the refused request was b's in the distributed mode
      const events = await usageEvents(a);
      expect(events.filter((e) => e.model_requested === 'rpm-only-m').map((e) => [e.status, e.error_code])).toContainEqual([429, 'channel_rate_limited']);
    });

    it('counts real tokens after each request against tokens_per_minute and checks them before the next', async () => {
      const fake = await upstream('tpm');
      const perRequest = FAKE_PROMPT_TOKENS + FAKE_COMPLETION_TOKENS;
      // Room for two requests: the check is "under the limit before sending", the charge comes after.
      await channel('tpm', { models: ['tpm-m'], rate_limits: { tokens_per_minute: perRequest + 1 } });
      await sdk(instance(0)).chat.completions.create({ model: 'tpm-m', messages: hello });
      const stream = await sdk(instance(1)).chat.completions.create({ model: 'tpm-m', messages: hello, stream: true });
      for await (const _chunk of stream) void _chunk;
      const refused = await refusal(sdk(instance(2)).chat.completions.create({ model: 'tpm-m', messages: hello }));
      expect([refused.status, refused.code]).toEqual([429, 'channel_rate_limited']);
      expect(fake.requests).toHaveLength(2);
    });
  });

  describe.runIf(mode.enabled)('retry_config and fallback_for', () => {
    it("retries after a failure per the failing channel's retry_config (RELAY_MAX_RETRIES=1 otherwise)", async () => {
      const strict = await upstream('retry-strict');
      const lenient = await upstream('retry-default');
      const backup = await upstream('retry-backup');
      await channel('retry-strict', { models: ['strict-m'], retry_config: { max_retries: 0 } });
      await channel('retry-default', { models: ['default-m'] });
      await channel('retry-backup', { models: ['strict-m', 'default-m'], priority: 10 });
      strict.mode = { kind: 'error', status: 500 };
      lenient.mode = { kind: 'error', status: 500 };
      const failed = await refusal(sdk(a).chat.completions.create({ model: 'strict-m', messages: hello }));
      expect([failed.status, failed.code]).toEqual([502, 'upstream_error']);
      expect(backup.requests).toHaveLength(0);
      const answered = await sdk(a).chat.completions.create({ model: 'default-m', messages: hello });
      expect(answered.choices[0]!.message.content).toBe('Hello! You said: hi');
      expect(backup.requests).toHaveLength(1);
      // More retries than the global default: the only candidate is tried 1 + 2 times.
      const generous = await upstream('retry-generous');
      await channel('retry-generous', { models: ['generous-m'], retry_config: { max_retries: 2, backoff_multiplier: 1 } });
      generous.mode = { kind: 'error', status: 500 };
      expect((await refusal(sdk(a).chat.completions.create({ model: 'generous-m', messages: hello }))).status).toBe(502);
      expect(generous.requests).toHaveLength(3);
    });

    it('tries a fallback channel after the channels it backs up, with its own model', async () => {
      const primary = await upstream('fb-primary');
      const backup = await upstream('fb-backup');
      await channel('fb-primary', { models: ['fb-m'] });
      // A lower priority value than the primary's: still only tried after it.
      await channel('fb-backup', { models: ['backup-model'], model_mapping: { 'fb-alias': 'backup-aliased' }, fallback_for: ['fb-primary'], priority: -5 });
      await sdk(a).chat.completions.create({ model: 'fb-m', messages: hello });
      expect([primary.requests.length, backup.requests.length]).toEqual([1, 0]);

      primary.mode = { kind: 'error', status: 503 };
      const rescued = await sdk(a).chat.completions.create({ model: 'fb-m', messages: hello });
      expect(rescued.choices[0]!.message.content).toBe('Hello! You said: hi');
      expect(backup.requests.map((r) => (r.json as { model: string }).model)).toEqual(['backup-model']);
      // Its own models, for which it backs up nobody: an ordinary channel.
      await sdk(a).chat.completions.create({ model: 'backup-model', messages: hello });
      expect(backup.requests).toHaveLength(2);
    });
  });

  describe.runIf(mode.enabled)('tenant relay_settings', () => {
    afterAll(async () => {
      await relaySettings({ relay_settings: { enabled: true, default_provider: null, fallback_providers: [], rate_limiting: true, usage_tracking: true, error_logging: true } });
    });

    it('shows the defaults, changes fields, keeps relay_api_enabled as an alias of enabled, refuses unknown fields', async () => {
      const initial = await call(`${a.url}/v1/admin/settings`, { token: a.adminToken });
      expect(initial.json).toMatchObject({
        relay_api_enabled: true,
        relay_settings: { enabled: true, default_provider: null, fallback_providers: [], rate_limiting: true, usage_tracking: true, error_logging: true },
      });
      const off = await relaySettings({ relay_api_enabled: false });
      expect(off.json).toMatchObject({ relay_api_enabled: false, relay_settings: { enabled: false } });
      const on = await relaySettings({ relay_settings: { enabled: true, fallback_providers: ['x'] } });
      expect(on.json).toMatchObject({ relay_api_enabled: true, relay_settings: { enabled: true, fallback_providers: ['x'] } });
      const conflict = await relaySettings({ relay_api_enabled: false, relay_settings: { enabled: true } });
      expect([conflict.status, conflict.json.error.code]).toEqual([400, 'conflicting_fields']);
      const unknown = await relaySettings({ relay_settings: { default_providr: 'openai' } });
      expect([unknown.status, unknown.json.error.code, unknown.json.error.param]).toEqual([400, 'unknown_field', 'relay_settings.default_providr']);
      await relaySettings({ relay_settings: { fallback_providers: [] } });
      // Back at the defaults: the row holds NULL, as rows from before these settings do (a replay agrees).
      const row = await a.app.ctx.sql.db.selectFrom('billing_settings').select('relay_settings').where('tenant_id', '=', 'default').executeTakeFirstOrThrow();
      expect(row.relay_settings).toBeNull();
    });

    it('tries default_provider first, then fallback_providers, then the others (requests naming no provider_config)', async () => {
      const one = await upstream('dp-one');
      const two = await upstream('dp-two');
      const three = await upstream('dp-three');
      await channel('dp-one', { models: ['dp-m'], priority: 0 });
      await channel('dp-two', { models: ['dp-m'], priority: 5 });
      await channel('dp-three', { models: ['dp-m'], priority: 9 });
      await relaySettings({ relay_settings: { default_provider: 'dp-three', fallback_providers: ['dp-two'] } });
      await sdk(instance(1)).chat.completions.create({ model: 'dp-m', messages: hello });
      expect([one.requests.length, two.requests.length, three.requests.length]).toEqual([0, 0, 1]);
      three.mode = { kind: 'error', status: 500 };
      await sdk(instance(1)).chat.completions.create({ model: 'dp-m', messages: hello });
      expect([one.requests.length, two.requests.length]).toEqual([0, 1]);
      // A request's own provider_config still decides for it.
      const res = await call(`${a.url}/v1/chat/completions`, { token: a.userToken, body: { model: 'dp-m', messages: hello, provider_config: { primary: 'dp-one' } } });
      expect(res.status).toBe(200);
      expect(one.requests).toHaveLength(1);
      await relaySettings({ relay_settings: { default_provider: null, fallback_providers: [] } });
    });

    it("rate_limiting false: the API keys' rate limits are not enforced (nor announced)", async () => {
      await channel('rl-key', { models: ['rl-key-m'] });
      const key = await apiKey({ rate_limits: { requests_per_minute: 1 } });
      const first = await sdk(a, key).chat.completions.create({ model: 'rl-key-m', messages: hello }).withResponse();
      expect(first.response.headers.get('x-ratelimit-limit-requests')).toBe('1');
      expect((await refusal(sdk(a, key).chat.completions.create({ model: 'rl-key-m', messages: hello }))).code).toBe('rate_limit_exceeded');
      await relaySettings({ relay_settings: { rate_limiting: false } });
      for (let i = 0; i < 3; i++) {
        const answered = await sdk(instance(i), key).chat.completions.create({ model: 'rl-key-m', messages: hello }).withResponse();
        expect(answered.response.headers.get('x-ratelimit-limit-requests')).toBeNull();
      }
      await relaySettings({ relay_settings: { rate_limiting: true } });
      expect((await refusal(sdk(a, key).chat.completions.create({ model: 'rl-key-m', messages: hello }))).code).toBe('rate_limit_exceeded');
    });

    it('usage_tracking false: no per-request listing, usage events still written', async () => {
      await channel('ut', { models: ['ut-m'] });
      await relaySettings({ relay_settings: { usage_tracking: false } });
      const answered = await sdk(a).chat.completions.create({ model: 'ut-m', messages: hello }).withResponse();
      const requestId = answered.response.headers.get('x-request-id');
      expect((await usageEvents(a)).some((e) => e.request_id === requestId)).toBe(true);
      await a.app.ctx.runner.waitFor(await a.app.ctx.store.headPosition());
      for (const path of ['/v1/admin/usage/requests', '/v1/usage/requests']) {
        const listed = await call(`${a.url}${path}`, { token: path.includes('admin') ? a.adminToken : a.userToken });
        expect(listed.json).toMatchObject({ object: 'list', data: [], has_more: false });
      }
      await relaySettings({ relay_settings: { usage_tracking: true } });
      const listed = await call(`${a.url}/v1/admin/usage/requests?model=ut-m`, { token: a.adminToken });
      expect(listed.json.data.map((r: { request_id: string }) => r.request_id)).toContain(requestId);
    });

    it("error_logging false: the tenant's upstream failures are not logged", async () => {
      const fake = await upstream('el');
      await channel('el', { models: ['el-m'] });
      fake.mode = { kind: 'reset', prefix: '' };
      const logged = async () => {
        const id = `el-${mode.name}-${++n}`;
        const res = await call(`${a.url}/v1/chat/completions`, { token: a.userToken, body: { model: 'el-m', messages: hello }, headers: { 'x-request-id': id } });
        expect(res.status).toBe(502);
        return logs.some((l) => l.request_id === id);
      };
      expect(await logged()).toBe(true);
      await relaySettings({ relay_settings: { error_logging: false } });
      expect(await logged()).toBe(false);
      await relaySettings({ relay_settings: { error_logging: true } });
    });
  });

  describe.runIf(mode.enabled)("an upstream's 429", () => {
    it("passes the upstream's request-limit headers with Retry-After; they win over the API key's own", async () => {
      const fake = await upstream('up429');
      await channel('up429', { models: ['up429-m'] });
      const key = await apiKey({ rate_limits: { requests_per_minute: 1000 } });
      fake.mode = {
        kind: 'raw',
        status: 429,
        headers: { 'content-type': 'application/json', 'retry-after': '7', 'x-ratelimit-limit-requests': '500', 'x-ratelimit-remaining-requests': '0' },
        body: JSON.stringify({ error: { message: 'slow down', type: 'rate_limit_error', code: 'rate_limit_exceeded' } }),
      };
      const refused = await refusal(sdk(a, key).chat.completions.create({ model: 'up429-m', messages: hello }));
      expect([refused.status, refused.code]).toEqual([429, 'upstream_rate_limited']);
      expect(refused.headers?.get('retry-after')).toBe('7');
      expect(refused.headers?.get('x-ratelimit-limit-requests')).toBe('500');
      expect(refused.headers?.get('x-ratelimit-remaining-requests')).toBe('0');
    });
  });
});
