/** Maintenance mode end to end: command -> event -> projection + live view -> 503 gate. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startApp, type RunningApp } from '../support/app.js';

describe('maintenance mode (embedded)', () => {
  let s: RunningApp;
  beforeAll(async () => {
    s = await startApp();
  });
  afterAll(async () => {
    await s.close();
  });

  it('validates the request and names the bad field', async () => {
    const res = await call(`${s.url}/v1/admin/maintenance`, { token: s.adminToken, body: { enabled: 'yes' } });
    expect(res.status).toBe(400);
    expect(res.json.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_request', param: 'enabled' });
    expect(res.json.error.message).toContain('enabled');
  });

  it('turns on, blocks non-admins with 503 and the message, keeps /health and admins working, turns off', async () => {
    const on = await call(`${s.url}/v1/admin/maintenance`, { token: s.adminToken, body: { enabled: true, message: 'Upgrading the database' } });
    expect(on.status).toBe(200);
    expect(on.json).toMatchObject({ enabled: true, message: 'Upgrading the database', changed_by: 'admin-1' });

    for (const token of [undefined, s.userToken, 'garbage']) {
      const blocked = await call(`${s.url}/v1/admin/maintenance`, { token });
      expect(blocked.status).toBe(503);
      expect(blocked.json).toEqual({ error: { message: 'Upgrading the database', type: 'service_unavailable', code: 'maintenance', param: null } });
      expect(blocked.headers.get('retry-after')).toBe('60');
    }
    const health = await call(`${s.url}/health`);
    expect(health.status).toBe(200);
    expect(health.json.maintenance).toBe(true);
    expect((await call(`${s.url}/v1/system/version`)).status).toBe(200);

    const asAdmin = await call(`${s.url}/v1/admin/maintenance`, { token: s.adminToken });
    expect(asAdmin.status).toBe(200);
    expect(asAdmin.json).toMatchObject({ enabled: true, message: 'Upgrading the database' });

    const off = await call(`${s.url}/v1/admin/maintenance`, { token: s.adminToken, body: { enabled: false } });
    expect(off.json).toMatchObject({ enabled: false, message: '' });
    expect((await call(`${s.url}/v1/admin/maintenance`, { token: s.userToken })).status).toBe(403); // past the gate again
  });

  it('records each change as an event in the log', async () => {
    // (The log also holds the bootstrap and the test users' logins.)
    const commits = (await s.app.ctx.store.readAll({ after: 0 })).filter((c) => c.stream === 'maintenance-global');
    const types = commits.flatMap((c) => c.events.map((e) => `${e.stream}:${e.type}:${e.tenant_id}`));
    expect(types).toEqual(['maintenance-global:MaintenanceEnabled:_system', 'maintenance-global:MaintenanceDisabled:_system']);
    expect(commits[0]!.events[0]!.causation_id).toBeTruthy();
  });

  it('survives a restart: the state comes back from the read model and the log', async () => {
    await call(`${s.url}/v1/admin/maintenance`, { token: s.adminToken, body: { enabled: true, message: 'Back soon' } });
    const dataDir = s.dataDir;
    await s.app.close();
    s = await startApp({}, { keepDataDir: dataDir });
    const blocked = await call(`${s.url}/v1/admin/maintenance`, { token: s.userToken });
    expect(blocked.status).toBe(503);
    expect(blocked.json.error.message).toBe('Back soon');
  });
});
