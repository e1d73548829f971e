/** The real server, embedded mode: health, version, error bodies, request ids, OpenAPI. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { migrations } from '../../migrations/index.js';
import { call, startApp, type RunningApp } from '../support/app.js';
import { dereferencedOpenapi } from '../support/openapi.js';

describe('HTTP server (embedded)', () => {
  let s: RunningApp;
  beforeAll(async () => {
    s = await startApp();
  });
  afterAll(async () => {
    await s.close();
  });

  it('reports liveness and the readiness of every dependency on /health', async () => {
    const res = await call(`${s.url}/health`);
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      status: 'ok',
      live: true,
      ready: true,
      mode: 'embedded',
      maintenance: false,
      checks: { event_store: { status: 'up', kind: 'sqlite' }, read_models: { status: 'up', kind: 'sqlite' }, counters: { status: 'up', kind: 'memory' }, projectors: { status: 'up', kind: 'thread' } },
    });
    expect(res.json.projections.map((p: { name: string }) => p.name)).toContain('maintenance');
    expect((await call(`${s.url}/health/live`)).json).toEqual({ status: 'ok' });
    expect((await call(`${s.url}/health/ready`)).status).toBe(200);
  });

  it('answers /v1/system/version', async () => {
    const res = await call(`${s.url}/v1/system/version`);
    expect(res.status).toBe(200);
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(pkg.version).toBe('2.0.0');
    expect(res.json).toEqual({
      version: '2.0.0',
      api_versions: [
        { version: 'v1', status: 'legacy' },
        { version: 'v2', status: 'current' },
      ],
      default_api_version: 'v2',
      build: expect.any(String),
      releases: [
        { version: '2.0.x', released: '2024-Q2', support: 'Current' },
        { version: '1.9.x', released: expect.stringMatching(/^20\d\d-Q[1-4]$/), support: 'Maintenance' },
        { version: '1.8.x', released: expect.stringMatching(/^20\d\d-Q[1-4]$/), support: 'Maintenance' },
        { version: '1.7.x', released: expect.stringMatching(/^20\d\d-Q[1-4]$/), support: 'End of Life' },
        { version: '1.6.x', released: expect.stringMatching(/^20\d\d-Q[1-4]$/), support: 'End of Life' },
      ],
      // The latest migration this server applied at its start.
      schema_version: Object.keys(migrations).sort().at(-1),
    });
    const openapi = (await dereferencedOpenapi(s.url));
    expect(Object.keys(openapi.paths['/v1/system/version'].get.responses['200'].content['application/json'].schema.properties)).toEqual(['version', 'api_versions', 'default_api_version', 'build', 'releases', 'schema_version']);
  });

  it('answers unknown routes with an OpenAI-style 404', async () => {
    const res = await call(`${s.url}/v1/does-not-exist`);
    expect(res.status).toBe(404);
    expect(res.json).toEqual({ error: { message: 'no route for GET /v1/does-not-exist', type: 'invalid_request_error', code: 'not_found', param: null } });
  });

  it('answers malformed JSON with 400 invalid_json', async () => {
    const res = await call(`${s.url}/v1/admin/maintenance`, { method: 'POST', token: s.adminToken, body: '{"enabled": tru' });
    expect(res.status).toBe(400);
    expect(res.json.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_json' });
  });

  it('echoes a well-formed X-Request-Id and generates one otherwise', async () => {
    const given = await call(`${s.url}/health/live`, { headers: { 'x-request-id': 'trace-abc-123' } });
    expect(given.headers.get('x-request-id')).toBe('trace-abc-123');
    const generated = await call(`${s.url}/health/live`, { headers: { 'x-request-id': 'bad id with spaces' } });
    expect(generated.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('publishes an OpenAPI document built from the route schemas', async () => {
    const res = { status: (await call(`${s.url}/openapi.json`)).status, json: await dereferencedOpenapi(s.url) };
    expect(res.status).toBe(200);
    expect(res.json.openapi).toMatch(/^3\./);
    expect(Object.keys(res.json.paths)).toEqual(
      expect.arrayContaining([
        '/health',
        '/v1/system/version',
        '/v1/admin/maintenance',
        '/v1/admin/channels',
        '/v1/admin/channels/{channel_id}',
        '/v1/admin/channels/{channel_id}/test',
        '/v1/chat/completions',
        '/api/v1/chat/completions',
        '/v1/chat',
        '/v1/models',
        '/v1/auth/login',
        '/v1/auth/refresh',
        '/v1/auth/logout',
        '/v1/admin/tenants',
        '/v1/admin/tenants/{tenant_id}',
        '/v1/admin/tenants/{tenant_id}/disable',
        '/v1/admin/tenants/{tenant_id}/enable',
        '/v1/admin/users',
        '/v1/admin/users/{user_id}',
        '/v1/admin/users/{user_id}/disable',
        '/v1/admin/users/{user_id}/mfa/reset',
        '/v1/admin/users/{user_id}/enable',
        '/v1/users/me',
        '/v1/users/me/password',
        '/v1/users/me/mfa/enroll',
        '/v1/users/me/mfa/verify',
        '/v1/users/me/mfa/disable',
      ]),
    );
    expect(res.json.paths['/v1/auth/login'].post.requestBody.content['application/json'].schema.required).toEqual(['email', 'password']);
    expect(Object.keys(res.json.paths['/v1/auth/login'].post.responses['200'].content['application/json'].schema.properties)).toEqual(['access_token', 'refresh_token', 'token_type', 'expires_in']);
    expect(res.json.paths['/v1/admin/users'].post.requestBody.content['application/json'].schema.required).toEqual(['email', 'password']);
    expect(res.json.paths['/v1/users/me'].patch).toBeDefined();
    expect(res.json.paths['/v1/chat'].post.deprecated).toBe(true);
    expect(res.json.paths['/v1/chat/completions'].post.requestBody.content['application/json'].schema.required).toEqual(['model', 'messages']);
    expect(res.json.paths['/v1/admin/channels'].post.responses['201']).toBeDefined();
    expect(res.json.paths['/v1/admin/maintenance'].post.requestBody.content['application/json'].schema.required).toEqual(['enabled']);
  });

  it('refuses admin endpoints without a valid token (401) and to non-admins (403)', async () => {
    expect((await call(`${s.url}/v1/admin/maintenance`)).json).toMatchObject({ error: { message: 'unauthorized', code: 'unauthorized', type: 'authentication_error' } });
    expect((await call(`${s.url}/v1/admin/maintenance`, { token: 'not-a-jwt' })).status).toBe(401);
    const forged = `${s.adminToken.split('.').slice(0, 2).join('.')}.AAAA`;
    expect((await call(`${s.url}/v1/admin/maintenance`, { token: forged })).status).toBe(401);
    // alg "none" with admin claims must not pass.
    const none = `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${Buffer.from(JSON.stringify({ sub: 'x', tid: 'default', role: 'admin', iss: 'switchyard', exp: 9999999999 })).toString('base64url')}.`;
    expect((await call(`${s.url}/v1/admin/maintenance`, { token: none })).status).toBe(401);
    const asUser = await call(`${s.url}/v1/admin/maintenance`, { token: s.userToken });
    expect(asUser.status).toBe(403);
    expect(asUser.json.error.code).toBe('forbidden');
  });
});
