/**
 * Tenants and users through the admin API, self-service, RBAC (on and off), and tenant isolation:
 * every endpoint with another tenant's ids answers 404.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createUser, login, startApp, TEST_USER_PASSWORD, type RunningApp } from '../support/app.js';

describe('tenants and users', () => {
  let s: RunningApp;
  beforeAll(async () => {
    s = await startApp();
  });
  afterAll(async () => {
    await s.close();
  });

  const newTenant = async (name: string) => {
    const res = await call(`${s.url}/v1/admin/tenants`, { token: s.adminToken, body: { name } });
    expect(res.status).toBe(201);
    return res.json as { id: string; name: string };
  };
  /** A tenant with an admin and a user, all logged in. */
  const populatedTenant = async (name: string) => {
    const tenant = await newTenant(name);
    const admin = await createUser(s.url, s.adminToken, { tenant_id: tenant.id, role: 'admin' });
    const user = await createUser(s.url, s.adminToken, { tenant_id: tenant.id });
    return {
      tenant,
      admin: { ...admin, token: (await login(s.url, admin.email, TEST_USER_PASSWORD)).access_token },
      user: { ...user, token: (await login(s.url, user.email, TEST_USER_PASSWORD)).access_token },
    };
  };

  it('creates, reads, lists, disables and enables tenants (operators)', async () => {
    const created = await call(`${s.url}/v1/admin/tenants`, { token: s.adminToken, body: { name: '  Acme Corp ' } });
    expect(created.status).toBe(201);
    expect(created.json).toEqual({ id: expect.stringMatching(/^ten_/), object: 'tenant', name: 'Acme Corp', disabled: false, created_at: expect.any(String), updated_at: expect.any(String) });
    const id = created.json.id as string;
    expect((await call(`${s.url}/v1/admin/tenants/${id}`, { token: s.adminToken })).json).toEqual(created.json);
    const list = await call(`${s.url}/v1/admin/tenants`, { token: s.adminToken });
    expect(list.json.object).toBe('list');
    expect(list.json.data.map((t: { id: string }) => t.id)).toEqual(expect.arrayContaining(['default', id]));
    expect((await call(`${s.url}/v1/admin/tenants/${id}/disable`, { method: 'POST', token: s.adminToken })).json).toMatchObject({ id, disabled: true });
    expect((await call(`${s.url}/v1/admin/tenants/${id}/enable`, { method: 'POST', token: s.adminToken })).json).toMatchObject({ id, disabled: false });
    const events = await s.app.ctx.store.readStream(`tenant-${id}`);
    expect(events.map((e) => `${e.type}:${e.tenant_id}`)).toEqual([`TenantCreated:${id}`, `TenantDisabled:${id}`, `TenantEnabled:${id}`]);

    expect((await call(`${s.url}/v1/admin/tenants`, { token: s.adminToken, body: { name: '' } })).status).toBe(400);
    expect((await call(`${s.url}/v1/admin/tenants/nope`, { token: s.adminToken })).status).toBe(404);
    const dflt = await call(`${s.url}/v1/admin/tenants/default/disable`, { method: 'POST', token: s.adminToken });
    expect(dflt.status).toBe(422);
    expect(dflt.json.error.code).toBe('cannot_disable_default_tenant');
  });

  it("lets only the default tenant's admins create and manage tenants (403 for other tenants' admins)", async () => {
    const { tenant, admin } = await populatedTenant('Not operators');
    const res = await call(`${s.url}/v1/admin/tenants`, { token: admin.token, body: { name: 'mine' } });
    expect(res.status).toBe(403);
    expect(res.json.error).toMatchObject({ type: 'permission_error', code: 'forbidden' });
    // Their own tenant: visible, but operator actions are 403.
    expect((await call(`${s.url}/v1/admin/tenants/${tenant.id}`, { token: admin.token })).json).toMatchObject({ id: tenant.id });
    expect((await call(`${s.url}/v1/admin/tenants`, { token: admin.token })).json.data.map((t: { id: string }) => t.id)).toEqual([tenant.id]);
    expect((await call(`${s.url}/v1/admin/tenants/${tenant.id}/disable`, { method: 'POST', token: admin.token })).status).toBe(403);
  });

  it('creates users (role user by default), validates input, and keeps emails unique across the installation', async () => {
    const created = await call(`${s.url}/v1/admin/users`, { token: s.adminToken, body: { email: 'Grace@Example.com', password: 'long-enough-1' } });
    expect(created.status).toBe(201);
    expect(created.json).toEqual({
      id: expect.stringMatching(/^usr_/),
      object: 'user',
      email: 'grace@example.com',
      tenant_id: 'default',
      role: 'user',
      disabled: false,
      mfa_enabled: false,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(created.text).not.toContain('scrypt');
    expect((await call(`${s.url}/v1/admin/users/${created.json.id}`, { token: s.adminToken })).json).toEqual(created.json);
    expect((await call(`${s.url}/v1/admin/users`, { token: s.adminToken })).json.data.map((u: { id: string }) => u.id)).toContain(created.json.id);
    await login(s.url, 'grace@example.com', 'long-enough-1');

    const tenant = await newTenant('Other');
    for (const body of [
      { email: 'grace@example.com', password: 'long-enough-2' },
      { email: ' GRACE@example.COM', password: 'long-enough-2', tenant_id: tenant.id },
    ]) {
      const dup = await call(`${s.url}/v1/admin/users`, { token: s.adminToken, body });
      expect(dup.status).toBe(409);
      expect(dup.json.error).toMatchObject({ code: 'email_taken', type: 'conflict_error' });
    }
    const short = await call(`${s.url}/v1/admin/users`, { token: s.adminToken, body: { email: 'h@example.com', password: 'short' } });
    expect(short.status).toBe(400);
    expect(short.json.error.param).toBe('password');
    expect((await call(`${s.url}/v1/admin/users`, { token: s.adminToken, body: { email: 'not-an-email', password: 'long-enough' } })).json.error.param).toBe('email');
    expect((await call(`${s.url}/v1/admin/users`, { token: s.adminToken, body: { email: 'r@example.com', password: 'long-enough', role: 'root' } })).json.error.param).toBe('role');
    expect((await call(`${s.url}/v1/admin/users`, { token: s.adminToken, body: { email: 'n@example.com', password: 'long-enough', tenant_id: 'ten_missing' } })).status).toBe(404);

    // The password is stored as a scrypt hash only.
    const row = await s.app.ctx.sql.db.selectFrom('users').selectAll().where('id', '=', created.json.id).executeTakeFirstOrThrow();
    expect(row.password_hash).toMatch(/^\$scrypt\$ln=15,r=8,p=1\$/);
    expect(JSON.stringify(await s.app.ctx.store.readStream(`user-${created.json.id}`))).not.toContain('long-enough-1');
  });

  it('honours tenant_id only for operators; other admins naming another tenant get 403', async () => {
    const a = await populatedTenant('A');
    const b = await populatedTenant('B');
    const email = `x-${Date.now()}@example.com`;
    const made = await call(`${s.url}/v1/admin/users`, { token: b.admin.token, body: { email, password: 'long-enough', tenant_id: a.tenant.id } });
    expect(made.status, made.text).toBe(403);
    expect(made.json.error).toMatchObject({ type: 'permission_error', code: 'tenant_not_allowed' });
    for (const path of ['/v1/admin/users', `/v1/admin/users/${b.user.id}`, `/v1/admin/users/${a.user.id}`, `/v1/admin/users?tenant_id=ten_missing`]) {
      const url = path.includes('?') ? `${s.url}${path}` : `${s.url}${path}?tenant_id=${a.tenant.id}`;
      expect((await call(url, { token: b.admin.token })).json.error?.code, path).toBe('tenant_not_allowed');
    }
    const denied = await call(`${s.url}/v1/admin/users/${b.user.id}/disable?tenant_id=${a.tenant.id}`, { method: 'POST', token: b.admin.token });
    expect(denied.status).toBe(403);
    expect((await call(`${s.url}/v1/admin/users/${b.user.id}`, { token: b.admin.token })).json.disabled).toBe(false);
    // Naming their own tenant is fine.
    const own = await call(`${s.url}/v1/admin/users`, { token: b.admin.token, body: { email, password: 'long-enough', tenant_id: b.tenant.id } });
    expect(own.status, own.text).toBe(201);
    expect(own.json.tenant_id).toBe(b.tenant.id);
    const listed = await call(`${s.url}/v1/admin/users?tenant_id=${b.tenant.id}`, { token: b.admin.token });
    expect(new Set(listed.json.data.map((u: { tenant_id: string }) => u.tenant_id))).toEqual(new Set([b.tenant.id]));
    const byOperator = await call(`${s.url}/v1/admin/users?tenant_id=${a.tenant.id}`, { token: s.adminToken });
    expect(byOperator.json.data.map((u: { id: string }) => u.id).sort()).toEqual([a.admin.id, a.user.id].sort());
    expect((await call(`${s.url}/v1/admin/users/${a.user.id}?tenant_id=${a.tenant.id}`, { token: s.adminToken })).status).toBe(200);
  });

  it("answers 404 for every endpoint with another tenant's ids", async () => {
    const a = await populatedTenant('Isolated A');
    const b = await populatedTenant('Isolated B');
    const foreignUsers = [a.admin.id, a.user.id, s.adminUserId, s.userId, 'usr_root'];
    const foreignTenants = [a.tenant.id, 'default'];
    const probes: Array<[string, string, unknown]> = [];
    for (const t of foreignTenants) {
      probes.push(['GET', `/v1/admin/tenants/${t}`, undefined], ['POST', `/v1/admin/tenants/${t}/disable`, undefined], ['POST', `/v1/admin/tenants/${t}/enable`, undefined]);
    }
    for (const u of foreignUsers) {
      for (const suffix of ['', `?tenant_id=${b.tenant.id}`]) {
        probes.push(
          ['GET', `/v1/admin/users/${u}${suffix}`, undefined],
          ['PATCH', `/v1/admin/users/${u}${suffix}`, { role: 'admin' }],
          ['POST', `/v1/admin/users/${u}/disable${suffix}`, undefined],
          ['POST', `/v1/admin/users/${u}/enable${suffix}`, undefined],
        );
      }
    }
    for (const [method, path, body] of probes) {
      const res = await call(`${s.url}${path}`, { method, token: b.admin.token, body });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.json.error.type).toBe('not_found_error');
    }
    // Nothing of A leaks into B's lists, and nothing of A changed.
    const users = await call(`${s.url}/v1/admin/users`, { token: b.admin.token });
    expect(users.json.data.map((u: { id: string }) => u.id).sort()).toEqual([b.admin.id, b.user.id].sort());
    expect((await call(`${s.url}/v1/admin/tenants`, { token: b.admin.token })).json.data.map((t: { id: string }) => t.id)).toEqual([b.tenant.id]);
    expect((await call(`${s.url}/v1/admin/users/${a.user.id}?tenant_id=${a.tenant.id}`, { token: s.adminToken })).json).toMatchObject({ role: 'user', disabled: false });
    expect((await call(`${s.url}/v1/users/me`, { token: a.user.token })).status).toBe(200);
    // Users of B are only ever themselves on the self-service endpoints.
    expect((await call(`${s.url}/v1/users/me`, { token: b.user.token })).json).toMatchObject({ id: b.user.id, tenant_id: b.tenant.id });
  });

  it('refuses an admin disabling or demoting themselves', async () => {
    expect((await call(`${s.url}/v1/admin/users/${s.adminUserId}/disable`, { method: 'POST', token: s.adminToken })).json.error.code).toBe('cannot_disable_self');
    expect((await call(`${s.url}/v1/admin/users/${s.adminUserId}`, { method: 'PATCH', token: s.adminToken, body: { role: 'user' } })).json.error.code).toBe('cannot_change_own_role');
  });

  it('answers /v1/users/me and merges preference changes', async () => {
    const me = await call(`${s.url}/v1/users/me`, { token: s.userToken });
    expect(me.json).toEqual({
      id: s.userId,
      email: s.userEmail,
      tenant_id: 'default',
      role: 'user',
      permissions: ['chat:use', 'files:upload', 'keys:manage_own', 'presets:read', 'presets:write'],
      mfa_enabled: false,
      preferences: {},
      chat_defaults: { theme: 'system', language: 'en', default_model: null, temperature: 0.7, max_tokens: 2048 },
    });
    const first = await call(`${s.url}/v1/users/me`, { method: 'PATCH', token: s.userToken, body: { preferences: { theme: 'dark', language: 'de' } } });
    expect(first.json.preferences).toEqual({ theme: 'dark', language: 'de' });
    const second = await call(`${s.url}/v1/users/me`, { method: 'PATCH', token: s.userToken, body: { preferences: { language: null, model: 'gpt-4o' } } });
    expect(second.json.preferences).toEqual({ theme: 'dark', model: 'gpt-4o' });
    expect((await call(`${s.url}/v1/users/me`, { method: 'PATCH', token: s.userToken, body: { preferences: { blob: 'x'.repeat(20_000) } } })).status).toBe(422);
    // A correctly signed token naming no account is refused.
    const nobody = await s.app.ctx.tokens.issueAccessToken({ userId: 'ops', tenantId: 'default', role: 'admin' });
    expect((await call(`${s.url}/v1/users/me`, { token: nobody })).status).toBe(401);
  });

  it('enforces RBAC: users get 403 on admin endpoints, and roles live in the read model', async () => {
    for (const [method, path] of [
      ['GET', '/v1/admin/users'],
      ['POST', '/v1/admin/users'],
      ['GET', `/v1/admin/users/${s.userId}`],
      ['GET', '/v1/admin/tenants'],
      ['POST', '/v1/admin/tenants'],
      ['GET', '/v1/admin/tenants/default'],
    ] as const) {
      const res = await call(`${s.url}${path}`, { method, token: s.userToken, body: method === 'POST' ? { name: 'x', email: 'y@z.io', password: 'long-enough' } : undefined });
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.json.error.code).toBe('forbidden');
    }
    const db = s.app.ctx.sql.db;
    expect((await db.selectFrom('roles').select('name').orderBy('name').execute()).map((r) => r.name)).toEqual(['admin', 'user']);
    expect(await db.selectFrom('permissions').selectAll().where('role', '=', 'admin').execute()).toEqual([{ role: 'admin', permission: '*' }]);
    expect(await db.selectFrom('user_roles').selectAll().where('user_id', '=', s.userId).execute()).toEqual([{ user_id: s.userId, tenant_id: 'default', role: 'user' }]);
  });
});

describe('RBAC off', () => {
  let s: RunningApp;
  beforeAll(async () => {
    s = await startApp({ RBAC_ENABLED: 'false' });
  });
  afterAll(async () => {
    await s.close();
  });

  it('allows every authenticated user everything their tenant scope allows', async () => {
    expect((await call(`${s.url}/v1/admin/users`, { token: s.userToken })).status).toBe(200);
    expect((await call(`${s.url}/v1/admin/maintenance`, { token: s.userToken })).status).toBe(200);
    expect((await call(`${s.url}/v1/users/me`, { token: s.userToken })).json).toMatchObject({ role: 'user', permissions: ['*'] });
    expect((await call(`${s.url}/v1/admin/users`)).status).toBe(401); // still authenticated only
  });
});
