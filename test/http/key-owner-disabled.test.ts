/**
 * An API key works only while its user and its tenant are enabled: disabling either stops the key
 * at once (401 account_deactivated, on every instance), enabling it again restores it. Sessions
 * already behaved so; keys did not.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { call, createUser, login, startApp, TEST_USER_PASSWORD, type RunningApp } from '../support/app.js';
import { startOpenAiFake, type OpenAiFake } from '../support/fake-upstreams/openai.js';
import { appModes, type ModeEnv } from '../support/modes.js';
import { createChannel, sdk } from '../support/relay.js';

const MODES = appModes(inject('services'), inject('serviceUrls'));

describe.each(MODES.map((m) => [m.name, m] as const))('keys of disabled users and tenants (%s)', (name, mode) => {
  let stores: ModeEnv;
  let a: RunningApp;
  /** Where the keys are used: another instance in distributed mode. */
  let b: RunningApp;
  let upstream: OpenAiFake;

  beforeAll(async () => {
    stores = mode.env();
    upstream = await startOpenAiFake();
    a = await startApp({ ...stores.env, HEALTH_CHECK_ENABLED: 'false' });
    b = name === 'distributed' ? await startApp({ ...stores.env, HEALTH_CHECK_ENABLED: 'false' }) : a;
  }, 60_000);
  afterAll(async () => {
    if (b !== a) await b?.close();
    await a?.close();
    await upstream?.close();
    await stores?.cleanup();
  });

  /** A chat through `app` with `key`: the status the SDK met (200 when it answered). */
  async function chatStatus(app: RunningApp, key: string, model: string): Promise<{ status: number; code?: string }> {
    try {
      await sdk(app, key).chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] });
      return { status: 200 };
    } catch (error) {
      const e = error as { status: number; code?: string };
      return { status: e.status, code: e.code };
    }
  }
  /** Polls until `app` gives `status` (the other instance learns of the change from the log). */
  async function eventually(app: RunningApp, key: string, model: string, status: number) {
    const until = Date.now() + 10_000;
    let last = await chatStatus(app, key, model);
    while (last.status !== status && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 100));
      last = await chatStatus(app, key, model);
    }
    return last;
  }

  it.runIf(mode.enabled)("a disabled user's key is refused until the user is enabled again", async () => {
    await createChannel(a, { type: 'openai', base_url: upstream.baseUrl, models: ['owner-model'] });
    const user = await createUser(a.url, a.adminToken, { role: 'user' });
    const key = (await call(`${a.url}/api/admin/keys`, { token: a.adminToken, body: { name: 'owner key', user_id: user.id } })).json.key as string;
    expect(await eventually(b, key, 'owner-model', 200)).toEqual({ status: 200 });

    expect((await call(`${a.url}/v1/admin/users/${user.id}/disable`, { method: 'POST', token: a.adminToken })).status).toBe(200);
    expect(await eventually(b, key, 'owner-model', 401)).toEqual({ status: 401, code: 'account_deactivated' });
    const raw = await call(`${b.url}/v1/chat/completions`, { token: key, body: { model: 'owner-model', messages: [{ role: 'user', content: 'hi' }] } });
    expect(raw.json.error).toEqual({ message: "This API key's user is disabled: an admin of the tenant can enable the account again.", type: 'authentication_error', code: 'account_deactivated', param: null });

    expect((await call(`${a.url}/v1/admin/users/${user.id}/enable`, { method: 'POST', token: a.adminToken })).status).toBe(200);
    expect(await eventually(b, key, 'owner-model', 200)).toEqual({ status: 200 });
  });

  it.runIf(mode.enabled)("a disabled tenant's keys are refused until the tenant is enabled again", async () => {
    const tenant = (await call(`${a.url}/v1/admin/tenants`, { token: a.adminToken, body: { name: `keys-${name}` } })).json.id as string;
    const admin = await createUser(a.url, a.adminToken, { role: 'admin', tenant_id: tenant });
    const token = (await login(a.url, admin.email, TEST_USER_PASSWORD)).access_token;
    await createChannel(a, { type: 'openai', base_url: upstream.baseUrl, models: ['tenant-model'] }, token);
    const key = (await call(`${a.url}/v1/keys`, { token, body: { name: 'tenant key' } })).json.key as string;
    expect(await eventually(b, key, 'tenant-model', 200)).toEqual({ status: 200 });

    expect((await call(`${a.url}/v1/admin/tenants/${tenant}/disable`, { method: 'POST', token: a.adminToken })).status).toBe(200);
    const refused = await eventually(b, key, 'tenant-model', 401);
    expect(refused).toEqual({ status: 401, code: 'account_deactivated' });

    expect((await call(`${a.url}/v1/admin/tenants/${tenant}/enable`, { method: 'POST', token: a.adminToken })).status).toBe(200);
    expect(await eventually(b, key, 'tenant-model', 200)).toEqual({ status: 200 });
  });
});
