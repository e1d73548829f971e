/**
 * Deleting a user (issue 17: "deleting a conversation (or a user) destroys its key"), end to end in
 * both modes: after DELETE /v1/admin/users/{id} the user cannot log in, refresh, use its access
 * token or its API keys (on every instance), is gone from the lists, its email may be used again,
 * and the data keys of its conversations are destroyed while everyone else's stay. In the
 * distributed mode the deletion happens on one instance and is checked on the other.
 */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DataKeyDestroyedError } from '../../src/ports/data-keys.js';
import { call, createUser, loggedInUser, login, startApp, TEST_USER_PASSWORD, type RunningApp } from '../support/app.js';
import { dereferencedOpenapi } from '../support/openapi.js';
import { appModes } from '../support/modes.js';

const services = inject('services');
const urls = inject('serviceUrls');
const MODES = appModes(services, urls).map((mode) => ({ ...mode, instances: mode.name === 'distributed' ? 2 : 1 }));

describe.each(MODES.map((m) => [m.name, m] as const))('deleting a user (%s)', (_name, mode) => {
  let apps: RunningApp[] = [];
  let a: RunningApp;
  let b: RunningApp;
  let cleanup: () => Promise<void> = async () => undefined;
  let restartEnv: Record<string, string> = {};
  /** Data directories of restarted instances (kept by the restart, removed at the end). */
  const keptDirs: string[] = [];

  beforeAll(async () => {
    if (!mode.enabled) return;
    const { env, cleanup: drop } = mode.env();
    cleanup = drop;
    restartEnv = env;
    a = await startApp(env);
    apps = [a];
    for (let i = 1; i < mode.instances; i++) apps.push(await startApp(env));
    b = apps.at(-1)!;
  });
  afterAll(async () => {
    for (const s of apps) await s.close();
    for (const dir of keptDirs) rmSync(dir, { recursive: true, force: true });
    await cleanup();
  });

  /** Every instance has folded everything written so far. */
  async function synced(): Promise<void> {
    const head = await a.app.ctx.store.headPosition();
    await Promise.all(apps.flatMap((s) => [s.app.ctx.views.access.waitFor(head), s.app.ctx.views.sessions.waitFor(head), s.app.ctx.views.keys.waitFor(head)]));
  }

  /** A user of the default tenant with a session (access and refresh token) and an API key. */
  async function member() {
    const user = await createUser(a.url, a.adminToken);
    const tokens = await login(a.url, user.email, TEST_USER_PASSWORD);
    const key = await call(`${a.url}/api/admin/keys`, { token: a.adminToken, body: { name: 'k', user_id: user.id } });
    expect(key.status).toBe(201);
    await synced();
    return { ...user, tokens, key: key.json.key as string };
  }

  const remove = (s: RunningApp, token: string, userId: string, query = '') => call(`${s.url}/v1/admin/users/${userId}${query}`, { method: 'DELETE', token });

  describe.runIf(mode.enabled)('DELETE /v1/admin/users/{user_id}', () => {
    it('refuses the user everywhere at once: login, refresh, access token, API key; gone from the lists', async () => {
      const victim = await member();
      const other = await member();
      for (const s of apps) {
        expect((await call(`${s.url}/v1/users/me`, { token: victim.tokens.access_token })).status).toBe(200);
        expect((await call(`${s.url}/v1/models`, { token: victim.key })).status).toBe(200);
      }

      const res = await remove(a, a.adminToken, victim.id);
      expect(res.status).toBe(200);
      expect(res.json).toEqual({ id: victim.id, object: 'user', deleted: true, sessions_revoked: 1, api_keys_revoked: 1, data_keys_destroyed: 0, files_deleted: 0 });
      // The event conversations' projection reads: exactly {user_id, by}.
      const events = await a.app.ctx.store.readStream(`user-${victim.id}`);
      expect(events.at(-1)).toMatchObject({ type: 'UserDeleted', data: { user_id: victim.id, by: a.adminUserId } });
      expect(Object.keys(events.at(-1)!.data).sort()).toEqual(['by', 'user_id']);
      await synced();

      for (const s of apps) {
        expect((await call(`${s.url}/v1/users/me`, { token: victim.tokens.access_token })).status, 'access token').toBe(401);
        expect((await call(`${s.url}/v1/models`, { token: victim.key })).status, 'API key').toBe(401);
        expect((await call(`${s.url}/v1/auth/login`, { body: { email: victim.email, password: TEST_USER_PASSWORD } })).status, 'login').toBe(401);
        expect((await call(`${s.url}/v1/auth/refresh`, { body: { refresh_token: victim.tokens.refresh_token } })).status, 'refresh').toBe(401);
        expect((await call(`${s.url}/v1/admin/users/${victim.id}`, { token: s.adminToken })).json.error.code).toBe('user_not_found');
        const list = (await call(`${s.url}/v1/admin/users`, { token: s.adminToken })).json.data as Array<{ id: string }>;
        expect(list.map((u) => u.id)).not.toContain(victim.id);
        expect(list.map((u) => u.id)).toContain(other.id);
        // Everyone else is untouched.
        expect((await call(`${s.url}/v1/users/me`, { token: other.tokens.access_token })).status).toBe(200);
        expect((await call(`${s.url}/v1/models`, { token: other.key })).status).toBe(200);
      }
      // The key is revoked in the keys' own history too (listed as such).
      const keys = (await call(`${a.url}/api/admin/keys`, { token: a.adminToken })).json.data as Array<{ user_id: string; revoked: boolean }>;
      expect(keys.filter((k) => k.user_id === victim.id).map((k) => k.revoked)).toEqual([true]);
      // No key can be made for the deleted user any more.
      expect((await call(`${b.url}/api/admin/keys`, { token: b.adminToken, body: { name: 'k2', user_id: victim.id } })).status).toBe(404);
    });

    it("destroys the data keys of the user's conversations, and no one else's", async () => {
      const victim = await member();
      const other = await member();
      const dataKeys = a.app.ctx.dataKeys;
      const mine = [`user:${victim.id}:conversation:c1`, `user:${victim.id}:conversation:c2`];
      // Scopes that only look alike: another user, and an id that merely starts with the victim's.
      const theirs = [`user:${other.id}:conversation:c3`, `user:${victim.id}0:conversation:c4`, `conversation:${victim.id}`];
      const before = new Map<string, Buffer>();
      for (const scope of [...mine, ...theirs]) before.set(scope, await dataKeys.create(scope));

      const res = await remove(b, b.adminToken, victim.id);
      expect(res.status).toBe(200);
      expect(res.json.data_keys_destroyed).toBe(2);

      for (const s of apps) {
        for (const scope of mine) {
          expect(await s.app.ctx.dataKeys.get(scope), scope).toBeNull();
          await expect(s.app.ctx.dataKeys.create(scope)).rejects.toBeInstanceOf(DataKeyDestroyedError);
        }
        for (const scope of theirs) expect((await s.app.ctx.dataKeys.get(scope))?.equals(before.get(scope)!), scope).toBe(true);
      }
    });

    it('lets the email be used again by a new user, who starts with nothing of the old one', async () => {
      const victim = await member();
      await call(`${a.url}/v1/users/me`, { method: 'PATCH', token: victim.tokens.access_token, body: { preferences: { theme: 'dark' } } });
      expect((await remove(a, a.adminToken, victim.id)).status).toBe(200);

      const again = await call(`${b.url}/v1/admin/users`, { token: b.adminToken, body: { email: victim.email, password: TEST_USER_PASSWORD } });
      expect(again.status).toBe(201);
      expect(again.json.id).not.toBe(victim.id);
      const tokens = await login(b.url, victim.email, TEST_USER_PASSWORD);
      const me = await call(`${a.url}/v1/users/me`, { token: tokens.access_token });
      expect(me.json).toMatchObject({ id: again.json.id, email: victim.email, preferences: {} });

      // Repeating the deletion finishes nothing new and leaves the new owner of the address alone.
      const repeat = await remove(b, b.adminToken, victim.id);
      expect(repeat.json).toEqual({ id: victim.id, object: 'user', deleted: true, sessions_revoked: 0, api_keys_revoked: 0, data_keys_destroyed: 0, files_deleted: 0 });
      expect((await call(`${a.url}/v1/auth/login`, { body: { email: victim.email, password: TEST_USER_PASSWORD } })).status).toBe(200);
      expect((await call(`${a.url}/v1/admin/users`, { token: a.adminToken, body: { email: victim.email, password: TEST_USER_PASSWORD } })).json.error.code).toBe('email_taken');
    });

    it('answers 404 for unknown users and for other tenants (to their admins), 403 for non-admins', async () => {
      expect((await remove(a, a.adminToken, 'usr_nobody')).json.error).toMatchObject({ code: 'user_not_found' });
      expect((await remove(a, a.adminToken, 'usr_nobody')).status).toBe(404);

      const victim = await member();
      const plain = await loggedInUser(a, 'user', 'default');
      const refusedUser = await remove(a, plain.token, victim.id);
      expect(refusedUser.status).toBe(403);
      expect(refusedUser.json.error.code).toBe('forbidden');

      const foreignAdmin = await loggedInUser(a, 'admin');
      const foreign = await remove(b, foreignAdmin.token, victim.id);
      expect(foreign.status).toBe(404);
      expect(foreign.json.error.code).toBe('user_not_found');
      expect((await remove(b, foreignAdmin.token, victim.id, '?tenant_id=default')).json.error.code).toBe('tenant_not_allowed');
      // Still there after all of that.
      expect((await call(`${a.url}/v1/users/me`, { token: victim.tokens.access_token })).status).toBe(200);

      // An operator may delete another tenant's user by naming the tenant.
      const elsewhere = await loggedInUser(a, 'user', foreignAdmin.tenantId);
      expect((await remove(a, a.adminToken, elsewhere.userId)).status).toBe(404);
      expect((await remove(a, a.adminToken, elsewhere.userId, `?tenant_id=${foreignAdmin.tenantId}`)).status).toBe(200);
      await synced();
      expect((await call(`${b.url}/v1/users/me`, { token: elsewhere.token })).status).toBe(401);
    });

    it('refuses an admin deleting themselves or the root admin', async () => {
      const self = await remove(a, a.adminToken, a.adminUserId);
      expect(self.status).toBe(422);
      expect(self.json.error.code).toBe('cannot_delete_self');
      const root = await remove(a, a.adminToken, 'usr_root');
      expect(root.json.error.code).toBe('cannot_delete_root_admin');
      expect((await call(`${a.url}/v1/users/me`, { token: a.adminToken })).status).toBe(200);
    });

    it('stays deleted through a rebuild of the accounts projection and a restart', async () => {
      const victim = await member();
      expect((await remove(a, a.adminToken, victim.id)).status).toBe(200);
      await a.app.ctx.runner.rebuild('accounts');
      expect((await call(`${a.url}/v1/admin/users/${victim.id}`, { token: a.adminToken })).status).toBe(404);
      expect((await call(`${a.url}/v1/auth/login`, { body: { email: victim.email, password: TEST_USER_PASSWORD } })).status).toBe(401);

      // The restarted instance loads its views from the read model (or a snapshot), not from the deletion's event.
      await b.app.close();
      keptDirs.push(b.dataDir);
      const restarted = await startApp(restartEnv, { keepDataDir: b.dataDir });
      apps[apps.indexOf(b)] = restarted;
      if (a === b) a = restarted;
      b = restarted;
      expect((await call(`${b.url}/v1/users/me`, { token: victim.tokens.access_token })).status).toBe(401);
      expect((await call(`${b.url}/v1/models`, { token: victim.key })).status).toBe(401);
      expect((await call(`${b.url}/v1/auth/refresh`, { body: { refresh_token: victim.tokens.refresh_token } })).status).toBe(401);
      const list = (await call(`${b.url}/v1/admin/users`, { token: b.adminToken })).json.data as Array<{ id: string }>;
      expect(list.map((u) => u.id)).not.toContain(victim.id);
    });

    it('is in the OpenAPI document', async () => {
      const doc = (await dereferencedOpenapi(a.url));
      const op = doc.paths['/v1/admin/users/{user_id}'].delete;
      expect(op.summary).toBeTruthy();
      expect(Object.keys(op.responses['200'].content['application/json'].schema.properties).sort()).toEqual(['api_keys_revoked', 'data_keys_destroyed', 'deleted', 'files_deleted', 'id', 'object', 'sessions_revoked']);
    });
  });
});
