/**
 * Channel names are unique within a tenant (requests pick channels by name in provider_config and
 * fallback_for): 409 channel_name_taken on create and rename, case and surrounding space ignored,
 * freed by a rename or a delete, free in other tenants, one winner when creations race (across
 * instances in distributed mode), and channels made before names were reserved count too.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { channels } from '../../src/commands/channels/decider.js';
import { call, loggedInUser, startApp, type RunningApp } from '../support/app.js';
import { appModes, type ModeEnv } from '../support/modes.js';

const MODES = appModes(inject('services'), inject('serviceUrls'));

const body = (name: string) => ({ name, type: 'openai', base_url: 'http://127.0.0.1:9/v1', key: 'sk-test-key-0000', models: ['gpt-x'] });

describe.each(MODES.map((m) => [m.name, m] as const))('channel names (%s)', (name, mode) => {
  let stores: ModeEnv;
  let s: RunningApp;
  let other: RunningApp | null = null;

  beforeAll(async () => {
    stores = mode.env();
    s = await startApp({ ...stores.env, HEALTH_CHECK_ENABLED: 'false' });
    // Distributed: a second instance on the same stores, for creations racing across instances.
    if (name === 'distributed') other = await startApp({ ...stores.env, HEALTH_CHECK_ENABLED: 'false' });
  }, 60_000);
  afterAll(async () => {
    await other?.close();
    await s?.close();
    await stores?.cleanup();
  });

  const create = (app: RunningApp, channelName: string, token = app.adminToken) => call(`${app.url}/v1/admin/channels`, { token, body: body(channelName) });
  const rename = (id: string, channelName: string) => call(`${s.url}/v1/admin/channels/${id}`, { method: 'PATCH', token: s.adminToken, body: { name: channelName } });

  it.runIf(mode.enabled)('refuses a second channel of the same name, whatever its case and surrounding space', async () => {
    const first = await create(s, 'Primary');
    expect(first.status).toBe(201);
    for (const taken of ['Primary', 'primary', '  PRIMARY ']) {
      const again = await create(s, taken);
      expect(again.status).toBe(409);
      expect(again.json).toEqual({ error: { message: `a channel named "${taken}" already exists`, type: 'conflict_error', code: 'channel_name_taken', param: 'name' } });
    }
    const list = await call(`${s.url}/v1/admin/channels`, { token: s.adminToken });
    expect(list.json.data.filter((c: { name: string }) => c.name.trim().toLowerCase() === 'primary')).toHaveLength(1);
  });

  it.runIf(mode.enabled)('refuses a rename onto a taken name; a rename and a delete free the old name', async () => {
    const a = (await create(s, 'alpha')).json.id as string;
    const b = (await create(s, 'beta')).json.id as string;
    const clash = await rename(b, 'ALPHA');
    expect(clash.status).toBe(409);
    expect(clash.json.error.code).toBe('channel_name_taken');
    expect((await call(`${s.url}/v1/admin/channels/${b}`, { token: s.adminToken })).json.name).toBe('beta');

    // Renaming to its own name in another case is allowed (the name stays the channel's).
    expect((await rename(a, 'Alpha')).status).toBe(200);
    expect((await rename(a, 'gamma')).status).toBe(200);
    expect((await create(s, 'alpha')).status).toBe(201); // freed by the rename
    expect((await create(s, 'gamma')).status).toBe(409);

    expect((await call(`${s.url}/v1/admin/channels/${b}`, { method: 'DELETE', token: s.adminToken })).status).toBe(200);
    expect((await create(s, 'beta')).status).toBe(201); // freed by the delete
  });

  it.runIf(mode.enabled)('lets another tenant use the same name', async () => {
    expect((await create(s, 'shared-name')).status).toBe(201);
    const otherTenantAdmin = await loggedInUser(s, 'admin');
    expect((await create(s, 'shared-name', otherTenantAdmin.token)).status).toBe(201);
    expect((await create(s, 'shared-name', otherTenantAdmin.token)).status).toBe(409);
  });

  it.runIf(mode.enabled)('gives one winner to creations racing for a name', async () => {
    const apps = other ? [s, other, s, other, s, other] : [s, s, s, s, s, s];
    const results = await Promise.all(apps.map((app) => create(app, 'raced')));
    expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
  });

  it.runIf(mode.enabled)('counts channels created before names were reserved', async () => {
    // What an installation from before the reservations holds: the channel's own events only.
    const id = 'ch_legacyname01';
    const settings = { name: 'Legacy', type: 'openai' as const, base_url: null, models: ['gpt-x'], model_mapping: {}, priority: 0, weight: 1, enabled: true, config: {} };
    const result = await s.app.ctx.commands.execute(channels, id, { type: 'CreateChannel', channelId: id, settings, key: { sealed: s.app.ctx.secrets.seal('sk-x'), masked: 'sk-****' } }, { tenantId: 'default' });
    await s.app.ctx.runner.waitFor(result.position!, { projections: ['channels'] });
    const clash = await create(s, 'legacy');
    expect(clash.status).toBe(409);
    expect(clash.json.error.code).toBe('channel_name_taken');
    // And renaming onto it.
    const mine = (await create(s, 'not-legacy')).json.id as string;
    expect((await rename(mine, 'LEGACY')).json.error.code).toBe('channel_name_taken');
  });
});
