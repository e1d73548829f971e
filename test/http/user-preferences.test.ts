/**
 * Chat preferences (issue 17) end to end, in both modes: PATCH /v1/users/me validates the known
 * chat keys (400 invalid_request naming `preferences.<key>`), keeps other keys free-form, and GET
 * shows the stored preferences with `chat_defaults`, the settings in effect. In the distributed
 * mode the preferences are set on one instance and read on the other.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { call, createUser, login, startApp, TEST_USER_PASSWORD, type RunningApp } from '../support/app.js';
import { dereferencedOpenapi } from '../support/openapi.js';
import { appModes } from '../support/modes.js';

const services = inject('services');
const urls = inject('serviceUrls');
const MODES = appModes(services, urls).map((mode) => ({ ...mode, instances: mode.name === 'distributed' ? 2 : 1 }));

const DEFAULTS = { theme: 'system', language: 'en', default_model: null, temperature: 0.7, max_tokens: 2048 };

describe.each(MODES.map((m) => [m.name, m] as const))('chat preferences (%s)', (_name, mode) => {
  let apps: RunningApp[] = [];
  let a: RunningApp;
  let b: RunningApp;
  let cleanup: () => Promise<void> = async () => undefined;

  beforeAll(async () => {
    if (!mode.enabled) return;
    const { env, cleanup: drop } = mode.env();
    cleanup = drop;
    a = await startApp(env);
    apps = [a];
    for (let i = 1; i < mode.instances; i++) apps.push(await startApp(env));
    b = apps.at(-1)!;
  });
  afterAll(async () => {
    for (const s of apps) await s.close();
    await cleanup();
  });

  /** A fresh user of the default tenant, logged in. */
  async function freshUser(): Promise<string> {
    const user = await createUser(a.url, a.adminToken);
    return (await login(a.url, user.email, TEST_USER_PASSWORD)).access_token;
  }

  const patch = (s: RunningApp, token: string, preferences: Record<string, unknown>) => call(`${s.url}/v1/users/me`, { method: 'PATCH', token, body: { preferences } });

  describe.runIf(mode.enabled)('users/me', () => {
    it('shows the defaults for a user who set nothing', async () => {
      const token = await freshUser();
      const me = await call(`${b.url}/v1/users/me`, { token });
      expect(me.status).toBe(200);
      expect(me.json.preferences).toEqual({});
      expect(me.json.chat_defaults).toEqual(DEFAULTS);
    });

    it('stores the chat keys, keeps other keys free-form, and shows what is in effect on every instance', async () => {
      const token = await freshUser();
      const set = await patch(a, token, { theme: 'dark', language: 'pt-BR', temperature: 0.2, sidebar: { collapsed: true } });
      expect(set.status).toBe(200);
      expect(set.json.preferences).toEqual({ theme: 'dark', language: 'pt-BR', temperature: 0.2, sidebar: { collapsed: true } });
      expect(set.json.chat_defaults).toEqual({ ...DEFAULTS, theme: 'dark', language: 'pt-BR', temperature: 0.2 });

      const more = await patch(b, token, { default_model: 'gpt-4o', max_tokens: 4096, temperature: null });
      expect(more.status).toBe(200);
      expect(more.json.preferences).toEqual({ theme: 'dark', language: 'pt-BR', sidebar: { collapsed: true }, default_model: 'gpt-4o', max_tokens: 4096 });
      const me = await call(`${a.url}/v1/users/me`, { token });
      expect(me.json.chat_defaults).toEqual({ theme: 'dark', language: 'pt-BR', default_model: 'gpt-4o', temperature: 0.7, max_tokens: 4096 });
    });

    it('refuses invalid chat keys with 400 invalid_request naming the key, and changes nothing', async () => {
      const token = await freshUser();
      await patch(a, token, { theme: 'light' });
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ temperature: 2.5 }, 'preferences.temperature'],
        [{ temperature: -1 }, 'preferences.temperature'],
        [{ temperature: '0.5' }, 'preferences.temperature'],
        [{ max_tokens: 0 }, 'preferences.max_tokens'],
        [{ max_tokens: 12.5 }, 'preferences.max_tokens'],
        [{ max_tokens: 1e9 }, 'preferences.max_tokens'],
        [{ theme: 'neon' }, 'preferences.theme'],
        [{ language: 'english please' }, 'preferences.language'],
        [{ language: 'en_US' }, 'preferences.language'],
        [{ default_model: '' }, 'preferences.default_model'],
        [{ default_model: 7 }, 'preferences.default_model'],
        [{ sidebar: 'ok', temperature: 9 }, 'preferences.temperature'],
      ];
      for (const [preferences, param] of cases) {
        const res = await patch(b, token, preferences);
        expect(res.status, JSON.stringify(preferences)).toBe(400);
        expect(res.json.error, JSON.stringify(preferences)).toMatchObject({ code: 'invalid_request', type: 'invalid_request_error', param });
      }
      const me = await call(`${a.url}/v1/users/me`, { token });
      expect(me.json.preferences).toEqual({ theme: 'light' });
    });

    it('needs a signed-in user', async () => {
      expect((await call(`${a.url}/v1/users/me`, { method: 'PATCH', body: { preferences: { theme: 'dark' } } })).status).toBe(401);
    });

    it('documents the chat keys and chat_defaults in the OpenAPI document', async () => {
      const doc = (await dereferencedOpenapi(a.url));
      const body = doc.paths['/v1/users/me'].patch.requestBody.content['application/json'].schema;
      expect(Object.keys(body.properties.preferences.properties).sort()).toEqual(['default_model', 'language', 'max_tokens', 'temperature', 'theme']);
      expect(body.properties.preferences.additionalProperties).toEqual({});
      const view = doc.paths['/v1/users/me'].get.responses['200'].content['application/json'].schema;
      expect(Object.keys(view.properties.chat_defaults.properties).sort()).toEqual(['default_model', 'language', 'max_tokens', 'temperature', 'theme']);
    });
  });
});
