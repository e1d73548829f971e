/**
 * API versions over HTTP (docs/api-versions.md), embedded and distributed, on every ingress: the
 * relay's fronts (lean, node) and fastify. A request names its version in `API-Version`; none:
 * the installation's API_VERSION (v2 unless set). An unknown version is a 400 wherever it is sent.
 * What the version changes: `/v1/chat` (v2: deprecated, with Deprecation and Sunset; v1: a plain
 * alias) and a new webhook's payload format (v1: the 1.x format).
 */
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startOpenAiFake, type OpenAiFake } from '../support/fake-upstreams/openai.js';
import { call, startApp, type RunningApp } from '../support/app.js';
import { appModes, type ModeEnv } from '../support/modes.js';
import { createChannel } from '../support/relay.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

const services = inject('services');
const urls = inject('serviceUrls');
const CHAT = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'versions' }] };
const POLL = { timeout: 30_000, interval: 25 };
const [embedded, distributed] = appModes(services, urls);

/** A request on a connection of its own: a lean front hands a connection that served fastify over for good. */
async function fresh(url: string, init: { method?: string; token?: string; body?: unknown; headers?: Record<string, string> } = {}) {
  const dispatcher = new Agent();
  try {
    const headers: Record<string, string> = { ...init.headers, ...(init.token && { authorization: `Bearer ${init.token}` }), ...(init.body !== undefined && { 'content-type': 'application/json' }) };
    const res = await fetch(url, { method: init.method ?? (init.body !== undefined ? 'POST' : 'GET'), headers, body: init.body === undefined ? undefined : JSON.stringify(init.body), dispatcher } as unknown as RequestInit);
    const text = await res.text();
    return { status: res.status, headers: res.headers, text, json: text ? (JSON.parse(text) as Record<string, any>) : undefined }; // eslint-disable-line @typescript-eslint/no-explicit-any
  } finally {
    await dispatcher.close();
  }
}

const unsupported = (asked: string) => ({
  error: {
    message: `unsupported API version "${asked}" in the API-Version header: this server speaks v1 (legacy), v2 (current)`,
    type: 'invalid_request_error',
    code: 'unsupported_api_version',
    param: 'API-Version',
  },
});

describe.each([
  { mode: embedded!, front: 'lean' },
  { mode: embedded!, front: 'node' },
  { mode: embedded!, front: 'fastify' },
  { mode: distributed!, front: 'lean' },
])('API versions ($mode.name, $front front)', ({ mode, front }) => {
  let s: RunningApp;
  let env: ModeEnv;
  let upstream: OpenAiFake;
  let fastifySaw: string[];

  beforeAll(async () => {
    if (!mode.enabled) return;
    env = mode.env();
    upstream = await startOpenAiFake();
    s = await startApp({ ...env.env, HEALTH_CHECK_ENABLED: 'false', RELAY_HTTP_SERVER: front, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_POLL_INTERVAL: '50ms' });
    await createChannel(s, { name: 'versions', type: 'openai', base_url: upstream.baseUrl, models: ['gpt-4o-mini'] });
    fastifySaw = [];
    s.app.server.server.on('request', (req: { method?: string; url?: string }) => fastifySaw.push(`${req.method} ${req.url}`));
  });
  afterAll(async () => {
    await s?.close();
    await upstream?.close();
    await env?.cleanup();
  });

  it.skipIf(!mode.enabled)('v2 by default: /v1/chat answers with Deprecation, Sunset and its successor; v1 keeps it a plain alias', async () => {
    fastifySaw.length = 0;
    for (const headers of [{}, { 'API-Version': 'v2' }] as Array<Record<string, string>>) {
      const res = await fresh(`${s.url}/v1/chat`, { token: s.userToken, body: CHAT, headers });
      expect(res.status, res.text).toBe(200);
      expect(res.json!.choices[0].message.content).toBe('Hello! You said: versions');
      expect(res.headers.get('deprecation')).toBe('@1711929600');
      expect(res.headers.get('sunset')).toBe('Wed, 30 Jun 2027 23:59:59 GMT');
      expect(res.headers.get('link')).toBe('</v1/chat/completions>; rel="successor-version"');
    }
    const legacy = await fresh(`${s.url}/v1/chat`, { token: s.userToken, body: CHAT, headers: { 'API-Version': 'v1' } });
    expect(legacy.status, legacy.text).toBe(200);
    expect(legacy.json!.choices[0].message.content).toBe('Hello! You said: versions');
    expect(legacy.headers.get('deprecation')).toBeNull();
    expect(legacy.headers.get('sunset')).toBeNull();
    // The successor is not deprecated in either version.
    const current = await fresh(`${s.url}/v1/chat/completions`, { token: s.userToken, body: CHAT, headers: { 'API-Version': 'v1' } });
    expect(current.status).toBe(200);
    expect(current.headers.get('deprecation')).toBeNull();
    // Answered by the front itself, or by fastify when it is the only server.
    expect(fastifySaw.filter((r) => r.startsWith('POST /v1/chat'))).toHaveLength(front === 'fastify' ? 4 : 0);
  });

  it.skipIf(!mode.enabled)('an unknown API-Version is a 400 on every ingress, before anything is relayed', async () => {
    fastifySaw.length = 0;
    const before = upstream.requests.length;
    const chat = await fresh(`${s.url}/v1/chat/completions`, { token: s.userToken, body: CHAT, headers: { 'API-Version': 'v3' } });
    expect(chat.status).toBe(400);
    expect(chat.json).toEqual(unsupported('v3'));
    const models = await fresh(`${s.url}/v1/models`, { token: s.userToken, headers: { 'API-Version': '2024-06-01' } });
    expect(models.status).toBe(400);
    expect(models.json).toEqual(unsupported('2024-06-01'));
    expect(fastifySaw).toEqual(front === 'fastify' ? ['POST /v1/chat/completions', 'GET /v1/models'] : []);
    expect(upstream.requests.length).toBe(before);
    // fastify's routes, /v1 or not.
    for (const path of ['/v1/system/version', '/v1/admin/webhooks', '/health']) {
      const res = await call(`${s.url}${path}`, { token: s.adminToken, headers: { 'API-Version': 'latest' } });
      expect(res.status, path).toBe(400);
      expect(res.json).toEqual(unsupported('latest'));
    }
    // Case and surrounding space do not matter; a known version passes everywhere.
    expect((await call(`${s.url}/v1/system/version`, { headers: { 'API-Version': ' V1 ' } })).status).toBe(200);
    expect((await fresh(`${s.url}/v1/models`, { token: s.userToken, headers: { 'API-Version': 'v1' } })).status).toBe(200);
  });

  it.skipIf(!mode.enabled || front !== 'lean')("gives a webhook the payload format of its api_version (default: the request's version)", async () => {
    const receiver: WebhookReceiver = await startWebhookReceiver();
    receiver.secret = 'whsec_versions_0123456789';
    try {
      const create = async (path: string, body: Record<string, unknown>, headers: Record<string, string> = {}) => {
        const res = await call(`${s.url}/v1/admin/webhooks`, { token: s.adminToken, headers, body: { url: `${receiver.url}${path}`, events: ['key.created'], secret: receiver.secret, ...body } });
        expect(res.status, res.text).toBe(201);
        return res.json;
      };
      const legacyByHeader = await create('/v1-header', {}, { 'API-Version': 'v1' });
      const legacyByField = await create('/v1-field', { api_version: 'v1' }, { 'API-Version': 'v2' });
      const current = await create('/v2-default', {});
      expect([legacyByHeader.api_version, legacyByField.api_version, current.api_version]).toEqual(['v1', 'v1', 'v2']);

      const key = await call(`${s.url}/api/admin/keys`, { token: s.adminToken, body: { name: 'versions key', user_id: s.userId } });
      expect(key.status, key.text).toBe(201);
      await expect.poll(() => receiver.received.length, POLL).toBe(3);
      const byPath = Object.fromEntries(receiver.received.map((r) => [r.path, r]));
      const v2 = byPath['/v2-default']!;
      expect(Object.keys(v2.json).sort()).toEqual(['api_version', 'created_at', 'data', 'id', 'tenant_id', 'type']);
      expect(v2.json).toMatchObject({ type: 'key.created', api_version: 'v2', tenant_id: 'default', data: { key_id: key.json.id } });
      for (const path of ['/v1-header', '/v1-field']) {
        const v1 = byPath[path]!;
        expect(v1.signatureValid).toBe(true);
        expect(Object.keys(v1.json).sort()).toEqual(['api_version', 'data', 'event', 'id', 'tenant', 'timestamp']);
        // The same event: the same id and data, the 1.x names.
        expect(v1.json).toEqual({ id: v2.json.id, event: 'key.created', api_version: 'v1', timestamp: Math.floor(Date.parse(v2.json.created_at) / 1000), tenant: 'default', data: v2.json.data });
      }

      // A webhook changes format with a PATCH.
      const patched = await call(`${s.url}/v1/admin/webhooks/${current.id}`, { method: 'PATCH', token: s.adminToken, body: { api_version: 'v1' } });
      expect(patched.json).toMatchObject({ api_version: 'v1' });
      const bad = await call(`${s.url}/v1/admin/webhooks/${current.id}`, { method: 'PATCH', token: s.adminToken, body: { api_version: 'v9' } });
      expect(bad.status).toBe(400);
      expect(bad.json.error.param).toContain('api_version');
    } finally {
      await receiver.close();
    }
  });
});

describe('an installation whose API_VERSION is v1 (embedded)', () => {
  let s: RunningApp;
  let upstream: OpenAiFake;
  beforeAll(async () => {
    upstream = await startOpenAiFake();
    s = await startApp({ HEALTH_CHECK_ENABLED: 'false', API_VERSION: 'v1', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' });
    await createChannel(s, { name: 'versions', type: 'openai', base_url: upstream.baseUrl, models: ['gpt-4o-mini'] });
  });
  afterAll(async () => {
    await s?.close();
    await upstream?.close();
  });

  it('answers in v1 unless a request asks for v2', async () => {
    expect((await call(`${s.url}/v1/system/version`)).json).toMatchObject({ default_api_version: 'v1', api_versions: [{ version: 'v1', status: 'legacy' }, { version: 'v2', status: 'current' }] });
    const plain = await fresh(`${s.url}/v1/chat`, { token: s.userToken, body: CHAT });
    expect(plain.status).toBe(200);
    expect(plain.headers.get('deprecation')).toBeNull();
    const asked = await fresh(`${s.url}/v1/chat`, { token: s.userToken, body: CHAT, headers: { 'API-Version': 'v2' } });
    expect(asked.headers.get('deprecation')).toBe('@1711929600');
    expect(asked.headers.get('sunset')).toBe('Wed, 30 Jun 2027 23:59:59 GMT');
    const hook = await call(`${s.url}/v1/admin/webhooks`, { token: s.adminToken, body: { url: 'http://127.0.0.1:9/hook', events: ['*'], enabled: false } });
    expect(hook.status, hook.text).toBe(201);
    expect(hook.json.api_version).toBe('v1');
  });
});
