/**
 * The admin pages in a real browser: channels (create against the fake upstream, test, edit,
 * disable, delete), users and tenants (create, sign in as the new user, disable, MFA reset, keys),
 * Operations (the Relay API switch and subscription coverage applied with Save) and maintenance
 * mode — each checked on the page and through the API.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { base32Decode, totp } from '../../src/auth/totp.js';
import { call, createUser, login, TEST_USER_PASSWORD } from '../support/app.js';
import { createChannel, sdk } from '../support/relay.js';
import { chromiumAvailable, docScreenshot, newPage, pageErrors, signIn } from './support/browser.js';
import { startUiApp, type UiApp } from './support/ui-app.js';

const MODEL = 'gpt-4o-mini';

describe.runIf(chromiumAvailable)('web UI: admin channels, users, settings', () => {
  let ui: UiApp;
  let adminApi: (path: string, init?: { method?: string; body?: unknown }) => ReturnType<typeof call>;
  beforeAll(async () => {
    ui = await startUiApp({ MFA_ENABLED: 'true' });
    adminApi = (path, init = {}) => call(`${ui.url}${path}`, { token: ui.s.adminToken, ...init });
  }, 120_000);
  afterAll(async () => ui?.close());

  const adminPage = async (path: string, options: { phone?: boolean } = {}) => {
    const opened = await newPage(ui.browser, options);
    await signIn(opened.page, ui.url, ui.admin.email, ui.admin.password);
    await opened.page.goto(`${ui.url}${path}`);
    return opened;
  };
  const noHorizontalScroll = async (page: Page) => expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);

  it('creates a channel on the fake upstream, tests it, edits it, disables it and deletes another', async () => {
    const { context, page } = await adminPage('/admin/channels');
    await page.getByRole('heading', { name: 'Channels' }).waitFor();
    await page.getByRole('button', { name: 'Add channel' }).click();
    const dialog = page.getByRole('dialog', { name: 'New channel' });
    await dialog.getByLabel('Name', { exact: true }).fill('fake-openai');
    await dialog.getByLabel('Type', { exact: true }).selectOption('openai');
    await expect(dialog.getByLabel('Base URL').getAttribute('placeholder')).resolves.toBe('https://api.openai.com/v1');
    await dialog.getByLabel('Base URL').fill(ui.fake.baseUrl);
    await dialog.getByLabel('API key').fill('sk-wrong-key');
    await dialog.getByLabel('Model to add').fill(MODEL);
    await dialog.getByRole('button', { name: 'Add model' }).click();
    await dialog.getByLabel('Model to add').fill('gpt-4o');
    await dialog.getByLabel('Model to add').press('Enter'); // Enter adds, it does not submit
    await dialog.getByRole('button', { name: 'Remove gpt-4o', exact: true }).click();
    // A broken JSON config is refused before sending, next to the form, nothing lost.
    await dialog.getByLabel('Other settings (JSON)').fill('{broken');
    await dialog.getByRole('button', { name: 'Create channel' }).click();
    await dialog.getByText('Other settings (JSON): not a JSON object.').waitFor();
    await expect(dialog.getByLabel('Name', { exact: true }).inputValue()).resolves.toBe('fake-openai');
    await dialog.getByLabel('Other settings (JSON)').fill('{"note": "e2e"}');
    await dialog.getByLabel('Organization').fill('org-e2e');
    await dialog.getByRole('button', { name: 'Create channel' }).click();
    await dialog.waitFor({ state: 'hidden' });

    const row = page.getByRole('row', { name: /fake-openai/ });
    await row.waitFor();
    const created = (await adminApi('/v1/admin/channels')).json.data.find((c: { name: string }) => c.name === 'fake-openai');
    expect(created).toMatchObject({ type: 'openai', base_url: ui.fake.baseUrl, models: [MODEL], enabled: true, config: { note: 'e2e', organization: 'org-e2e' } });
    expect(created.key).not.toContain('sk-wrong-key'); // shown masked only

    // A wrong key: the probe's failure is shown (and the channel cools down).
    await row.getByRole('button', { name: 'Test fake-openai' }).click();
    await page.getByRole('status', { name: 'Probe of fake-openai: Failed · Incorrect API key provided' }).waitFor();
    await row.getByText('Cooling down').waitFor();
    // The right key through the edit form (write-only: the field starts empty), then the probe succeeds.
    await row.getByRole('button', { name: 'Edit fake-openai' }).click();
    const fix = page.getByRole('dialog', { name: 'Edit channel fake-openai' });
    await expect(fix.getByLabel('API key').inputValue()).resolves.toBe('');
    await fix.getByLabel('API key').fill('test-key');
    await fix.getByRole('button', { name: 'Save channel' }).click();
    await fix.waitFor({ state: 'hidden' });
    const before = ui.fake.requests.length;
    await row.getByRole('button', { name: 'Test fake-openai' }).click();
    await page.getByRole('status', { name: /Probe of fake-openai: OK · \d+ ms/ }).waitFor();
    const probe = ui.fake.requests.slice(before).find((r) => r.path === '/v1/chat/completions');
    expect(probe?.headers.authorization).toBe('Bearer test-key');
    const tested = (await adminApi(`/v1/admin/channels/${created.id}`)).json;
    expect(tested.last_test).toMatchObject({ ok: true });
    expect(tested.health.healthy).toBe(true);
    await expect(row.getByText('Healthy').isVisible()).resolves.toBe(true);
    await docScreenshot(page, 'channels');

    // Edit: priority and a mapping; the key stays as stored when left empty.
    await row.getByRole('button', { name: 'Edit fake-openai' }).click();
    const edit = page.getByRole('dialog', { name: 'Edit channel fake-openai' });
    await expect(edit.getByLabel('Organization').inputValue()).resolves.toBe('org-e2e');
    await edit.getByLabel('Priority').fill('3');
    await edit.getByRole('button', { name: 'Add mapping' }).click();
    await edit.getByLabel('Alias 1').fill('fast');
    await edit.getByLabel('Upstream model 1').fill(MODEL);
    await docScreenshot(page, 'channel-edit');
    await edit.getByRole('button', { name: 'Save channel' }).click();
    await edit.waitFor({ state: 'hidden' });
    await expect
      .poll(async () => (await adminApi(`/v1/admin/channels/${created.id}`)).json)
      .toMatchObject({ priority: 3, model_mapping: { fast: MODEL }, key: tested.key });
    await row.getByText('3 / 1').waitFor();

    // Server-side refusal shown in the form, values kept: a weight out of range.
    await row.getByRole('button', { name: 'Edit fake-openai' }).click();
    await edit.getByLabel('Weight').fill('5000');
    await edit.getByRole('button', { name: 'Save channel' }).click();
    await edit.getByRole('alert').waitFor();
    await expect(edit.getByLabel('Weight').inputValue()).resolves.toBe('5000');
    await edit.getByRole('button', { name: 'Cancel' }).click();

    // Disable with the switch: the API says disabled.
    const enabled = row.getByRole('switch', { name: 'Enable fake-openai' });
    await enabled.click(); // the switch follows the API's answer, so it flips once the PATCH is done
    await expect.poll(async () => (await adminApi(`/v1/admin/channels/${created.id}`)).json.enabled).toBe(false);
    await row.getByText('Disabled').waitFor();
    await enabled.click();
    await expect.poll(async () => (await adminApi(`/v1/admin/channels/${created.id}`)).json.enabled).toBe(true);
    await expect.poll(() => enabled.isChecked()).toBe(true);

    // Delete (confirmed) another channel.
    const spare = await createChannel(ui.s, { name: 'spare', type: 'groq', base_url: ui.fake.baseUrl, models: ['spare-model'] });
    await page.reload();
    await page.getByLabel('Search channels (name, type, model)').fill('spare-model');
    await expect.poll(() => page.getByRole('row', { name: /fake-openai/ }).count()).toBe(0);
    await page.getByLabel('Search channels (name, type, model)').fill('');
    await row.waitFor();
    await page.getByRole('button', { name: 'Delete spare' }).click();
    await page.getByRole('dialog', { name: 'Delete spare' }).getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('row', { name: /spare/ }).waitFor({ state: 'detached' });
    expect((await adminApi(`/v1/admin/channels/${spare.id}`)).status).toBe(404);
    expect(pageErrors(page)).toEqual([]);
    await context.close();
  });

  it('offers the fields of each provider kind (azure, bedrock) and fits a phone', async () => {
    const { context, page } = await adminPage('/admin/channels', { phone: true });
    await page.getByRole('button', { name: 'Add channel' }).click();
    const dialog = page.getByRole('dialog', { name: 'New channel' });
    await dialog.getByLabel('Type', { exact: true }).selectOption('azure');
    await dialog.getByText('Required for this type').waitFor();
    await dialog.getByLabel('Deployment').waitFor();
    await expect(dialog.getByLabel('API version').getAttribute('placeholder')).resolves.toBe('2024-10-21');
    await dialog.getByLabel('Type', { exact: true }).selectOption('bedrock');
    await dialog.getByLabel('AWS region').fill('eu-west-1');
    await expect(dialog.getByLabel('Base URL').getAttribute('placeholder')).resolves.toBe('https://bedrock-runtime.eu-west-1.amazonaws.com');
    await dialog.getByLabel('Name', { exact: true }).fill('bedrock-e2e');
    await dialog.getByLabel('AWS access key ID').fill('AKIAE2E');
    await dialog.getByLabel('AWS secret access key').fill('secret-e2e');
    await dialog.getByLabel('Model to add').fill('anthropic.claude-3-haiku');
    await dialog.getByRole('button', { name: 'Add model' }).click();
    await dialog.getByRole('button', { name: 'Create channel' }).click();
    await dialog.waitFor({ state: 'hidden' });
    const channel = (await adminApi('/v1/admin/channels')).json.data.find((c: { name: string }) => c.name === 'bedrock-e2e');
    expect(channel).toMatchObject({ type: 'bedrock', config: { region: 'eu-west-1' }, effective_base_url: 'https://bedrock-runtime.eu-west-1.amazonaws.com' });
    expect(channel.key).not.toContain('secret-e2e');
    await noHorizontalScroll(page);
    await adminApi(`/v1/admin/channels/${channel.id}`, { method: 'DELETE' });
    await context.close();
  });

  it('creates a user who can sign in, disables them (login refused), resets MFA, manages tenants and keys', async () => {
    const { context, page } = await adminPage('/admin/users');
    await page.getByRole('heading', { name: 'Users & tenants' }).waitFor();
    const email = `ui-${Date.now()}@switchyard.test`;
    const form = page.getByRole('form', { name: 'New user' });
    await form.getByLabel('Email').fill(email);
    await form.getByLabel('Password').fill('short');
    await form.getByRole('button', { name: 'Create user' }).click();
    await form.getByRole('alert').waitFor(); // the server's 400, the email kept
    await expect(form.getByLabel('Email').inputValue()).resolves.toBe(email);
    await form.getByLabel('Password').fill(TEST_USER_PASSWORD);
    await form.getByRole('button', { name: 'Create user' }).click();
    await page.getByRole('status').filter({ hasText: `User ${email} created.` }).waitFor();
    const user = (await adminApi('/v1/admin/users')).json.data.find((u: { email: string }) => u.email === email);
    expect(user).toMatchObject({ role: 'user', disabled: false, tenant_id: 'default' });

    // The new user signs in on another device.
    const other = await newPage(ui.browser);
    await signIn(other.page, ui.url, email, TEST_USER_PASSWORD);
    await other.context.close();

    // Role change (PATCH) and back.
    await page.getByLabel(`Role of ${email}`).selectOption('admin');
    await expect.poll(async () => (await adminApi(`/v1/admin/users/${user.id}`)).json.role).toBe('admin');
    await page.getByLabel(`Role of ${email}`).selectOption('user');
    await expect.poll(async () => (await adminApi(`/v1/admin/users/${user.id}`)).json.role).toBe('user');

    // Disable: the API says so and the login is refused.
    await page.getByRole('button', { name: `Disable ${email}` }).click();
    await page.getByRole('button', { name: `Enable ${email}` }).waitFor();
    expect((await adminApi(`/v1/admin/users/${user.id}`)).json.disabled).toBe(true);
    const refused = await newPage(ui.browser);
    await refused.page.goto(ui.url);
    await refused.page.getByLabel('Email').fill(email);
    await refused.page.getByLabel('Password').fill(TEST_USER_PASSWORD);
    await refused.page.getByRole('button', { name: 'Sign in' }).click();
    await refused.page.getByRole('alert').waitFor();
    await expect(refused.page.getByRole('button', { name: 'Log out' }).count()).resolves.toBe(0);
    await refused.context.close();
    await page.getByRole('button', { name: `Enable ${email}` }).click();
    await page.getByRole('button', { name: `Disable ${email}` }).waitFor();

    // MFA reset: the user enrols through the API; the admin's button turns it off.
    const token = (await login(ui.url, email, TEST_USER_PASSWORD)).access_token;
    const enroll = await call(`${ui.url}/v1/users/me/mfa/enroll`, { method: 'POST', token });
    const verified = await call(`${ui.url}/v1/users/me/mfa/verify`, { token, body: { code: totp(base32Decode(enroll.json.secret), Date.now()) } });
    expect(verified.json.mfa_enabled).toBe(true);
    await page.reload();
    await page.getByRole('button', { name: `Reset MFA of ${email}` }).click();
    await page.getByText(`Multi-factor login of ${email} is off`).waitFor();
    expect((await adminApi(`/v1/admin/users/${user.id}`)).json.mfa_enabled).toBe(false);

    // Keys of the tenant: the user's key is listed and revoked from here.
    const key = await call(`${ui.url}/v1/keys`, { token, body: { name: 'ui-listed-key' } });
    expect(key.status).toBe(201);
    await page.reload();
    await page.getByRole('button', { name: 'Revoke key ui-listed-key' }).click();
    await page.getByRole('dialog', { name: 'Revoke key ui-listed-key' }).getByRole('button', { name: 'Revoke' }).click();
    await page.getByRole('row', { name: /ui-listed-key/ }).getByText('Revoked').waitFor();
    expect((await adminApi(`/api/admin/keys/${key.json.id}`)).json.revoked).toBe(true);

    // Tenants: create, then disable; a user created in it is listed under it.
    const tenantForm = page.getByRole('form', { name: 'New tenant' });
    await tenantForm.getByLabel('Tenant name').fill('Acme UI');
    await tenantForm.getByRole('button', { name: 'Create tenant' }).click();
    await page.getByRole('row', { name: /Acme UI/ }).waitFor();
    const tenant = (await adminApi('/v1/admin/tenants')).json.data.find((x: { name: string }) => x.name === 'Acme UI');
    expect(tenant.disabled).toBe(false);
    await createUser(ui.url, ui.s.adminToken, { email: 'acme-user@switchyard.test', tenant_id: tenant.id });
    await page.getByLabel('Tenant shown').selectOption(tenant.id);
    await page.getByRole('cell', { name: 'acme-user@switchyard.test', exact: true }).waitFor();
    await page.getByRole('button', { name: 'Disable tenant Acme UI' }).click();
    await page.getByRole('button', { name: 'Enable tenant Acme UI' }).waitFor();
    expect((await adminApi(`/v1/admin/tenants/${tenant.id}`)).json.disabled).toBe(true);

    // Delete the user (confirmed): gone from the API.
    await page.getByLabel('Tenant shown').selectOption('default');
    await page.getByRole('cell', { name: email, exact: true }).first().waitFor();
    await page.evaluate(() => window.scrollTo(0, 0));
    await docScreenshot(page, 'users');
    await page.getByRole('button', { name: `Delete ${email}` }).click();
    await page.getByRole('dialog', { name: `Delete ${email}` }).getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('region', { name: 'Users', exact: true }).getByRole('cell', { name: email, exact: true }).waitFor({ state: 'detached' });
    expect((await adminApi(`/v1/admin/users/${user.id}`)).status).toBe(404);
    expect(pageErrors(page)).toEqual([]);
    await context.close();
  });

  it('Operations: Relay API off + Save refuses API keys (the web chat keeps working); coverage saved; nothing changes before Save', async () => {
    await createChannel(ui.s, { name: 'relay-check', type: 'openai', base_url: ui.fake.baseUrl, models: ['relay-model'] });
    const keyRes = await call(`${ui.url}/v1/keys`, { token: ui.s.userToken, body: { name: 'sdk-key' } });
    const client = sdk(ui.s, keyRes.json.key as string);
    const ask = () => client.chat.completions.create({ model: 'relay-model', messages: [{ role: 'user', content: 'hi' }] });
    const webChat = async () => {
      const conversation = await call(`${ui.url}/v1/conversations`, { token: ui.s.userToken, body: { model: 'relay-model' } });
      return call(`${ui.url}/v1/conversations/${conversation.json.id}/messages`, { token: ui.s.userToken, body: { content: 'hello', stream: false } });
    };
    await expect(ask()).resolves.toMatchObject({ object: 'chat.completion' });

    const { context, page } = await adminPage('/admin/settings');
    const relay = page.getByRole('switch', { name: 'Relay API' });
    await expect(relay.isChecked()).resolves.toBe(true);

    // Toggling without Save changes nothing, and a reload forgets it.
    await relay.uncheck();
    await page.getByRole('radio', { name: /Excluded/ }).check();
    await page.getByText('Unsaved changes').waitFor();
    expect((await adminApi('/v1/admin/settings')).json).toMatchObject({ relay_api_enabled: true, subscription_covers_relay: 'hybrid' });
    await page.reload();
    await expect(page.getByRole('switch', { name: 'Relay API' }).isChecked()).resolves.toBe(true);
    await expect(page.getByRole('radio', { name: /Hybrid/ }).isChecked()).resolves.toBe(true);

    await relay.uncheck();
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    expect((await adminApi('/v1/admin/settings')).json.relay_api_enabled).toBe(false);
    await expect(ask()).rejects.toMatchObject({ status: 403, code: 'relay_disabled' });
    const chatted = await webChat();
    expect(chatted.status).toBe(200);
    expect(chatted.json.assistant_message).toBeTruthy();

    await relay.check();
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    await expect(ask()).resolves.toMatchObject({ object: 'chat.completion' });

    // Coverage: excluded, then hybrid, each applied by Save.
    for (const [option, mode] of [
      [/Excluded/, 'excluded'],
      [/Hybrid/, 'hybrid'],
    ] as const) {
      await page.getByRole('radio', { name: option }).check();
      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
      expect((await adminApi('/v1/admin/settings')).json.subscription_covers_relay).toBe(mode);
    }

    // Another relay setting and the storage quota; a bad quota is refused next to the form.
    await page.getByLabel('Fallback providers').fill('openai, groq');
    await page.getByLabel('File storage quota').fill('-2');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('File storage quota: give a number').waitFor();
    await page.getByLabel('File storage quota').fill('2');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    expect((await adminApi('/v1/admin/settings')).json).toMatchObject({ relay_settings: { fallback_providers: ['openai', 'groq'] }, storage_quota_bytes: 2 * 1024 ** 3 });
    await page.getByRole('heading', { name: 'Operations' }).scrollIntoViewIfNeeded();
    await docScreenshot(page, 'settings-operations');
    expect(pageErrors(page)).toEqual([]);
    await context.close();
  });

  it("shows a tenant's own admin their tenant only: no other tenants, no tenant actions", async () => {
    const tenant = (await adminApi('/v1/admin/tenants', { body: { name: 'Solo Co' } })).json;
    const admin = await createUser(ui.url, ui.s.adminToken, { role: 'admin', tenant_id: tenant.id });
    const member = await createUser(ui.url, ui.s.adminToken, { tenant_id: tenant.id });
    const { context, page } = await newPage(ui.browser);
    await signIn(page, ui.url, admin.email, TEST_USER_PASSWORD);
    await page.goto(`${ui.url}/admin/users`);
    const users = page.getByRole('region', { name: 'Users', exact: true });
    await users.getByRole('cell', { name: member.email, exact: true }).waitFor();
    await expect(users.getByRole('cell', { name: ui.s.userEmail, exact: true }).count()).resolves.toBe(0);
    const tenants = page.getByRole('region', { name: 'Tenants', exact: true });
    await tenants.getByRole('cell', { name: 'Solo Co' }).waitFor();
    await expect(tenants.getByRole('row').count()).resolves.toBe(2); // the header and its own tenant
    await expect(page.getByRole('form', { name: 'New tenant' }).count()).resolves.toBe(0);
    await expect(page.getByLabel('Tenant shown').count()).resolves.toBe(0);
    // Its user is created in its own tenant.
    const form = page.getByRole('form', { name: 'New user' });
    await form.getByLabel('Email').fill('solo-new@switchyard.test');
    await form.getByLabel('Password').fill(TEST_USER_PASSWORD);
    await form.getByRole('button', { name: 'Create user' }).click();
    await users.getByRole('cell', { name: 'solo-new@switchyard.test', exact: true }).waitFor();
    const listed = await call(`${ui.url}/v1/admin/users?tenant_id=${tenant.id}`, { token: ui.s.adminToken });
    expect(listed.json.data.map((u: { email: string }) => u.email)).toContain('solo-new@switchyard.test');
    expect(pageErrors(page)).toEqual([]);
    await context.close();
  });

  it('fits a phone: users and settings pages scroll only vertically', async () => {
    const { context, page } = await adminPage('/admin/users', { phone: true });
    await page.getByRole('heading', { name: 'Users & tenants' }).waitFor();
    await page.getByRole('region', { name: 'Users', exact: true }).getByRole('table').waitFor();
    await noHorizontalScroll(page);
    await page.goto(`${ui.url}/admin/settings`);
    await page.getByRole('switch', { name: 'Relay API' }).waitFor();
    await noHorizontalScroll(page);
    // In Chinese, dark: the page follows (and the admin's preference is put back afterwards).
    await page.getByLabel('Language').selectOption('cn');
    await page.getByRole('heading', { name: '系统设置' }).waitFor();
    await page.getByRole('switch', { name: '中转 API' }).waitFor();
    await page.getByRole('radio', { name: /混合/ }).waitFor();
    await page.getByLabel('主题').selectOption('dark');
    await expect.poll(() => page.evaluate(() => document.documentElement.dataset.theme)).toBe('dark');
    await noHorizontalScroll(page);
    await page.getByLabel('语言').selectOption('en');
    await page.getByLabel('Theme').selectOption('system');
    await page.getByRole('heading', { name: 'System settings' }).waitFor();
    expect(pageErrors(page)).toEqual([]);
    await context.close();
  });

  it('maintenance on with a message: a user sees it (API 503 maintenance) while the admin works; off again', async () => {
    const user = await newPage(ui.browser);
    await signIn(user.page, ui.url, ui.s.userEmail, TEST_USER_PASSWORD);
    const { context, page } = await adminPage('/admin/settings');
    await page.getByText('Maintenance mode is off').waitFor();
    await page.getByLabel('Message shown to users').fill('Back at five o’clock');
    await page.getByRole('button', { name: 'Turn maintenance on' }).click();
    try {
      await page.getByText('Maintenance mode is ON').waitFor();
      const refused = await call(`${ui.url}/v1/users/me`, { token: ui.s.userToken });
      expect(refused.status).toBe(503);
      expect(refused.json.error).toMatchObject({ code: 'maintenance', message: 'Back at five o’clock' });
      await user.page.reload();
      await user.page.getByRole('alert').getByText('Maintenance: Back at five o’clock').waitFor();
      // The admin still works, on the page and through the API.
      await page.reload();
      await page.getByRole('switch', { name: 'Relay API' }).waitFor();
      expect((await adminApi('/v1/admin/channels')).status).toBe(200);
      // A visitor who is not signed in sees the message too, and an admin can still sign in there.
      const visitor = await newPage(ui.browser);
      await visitor.page.goto(ui.url);
      await visitor.page.getByRole('alert').getByText('Maintenance: Back at five o’clock').waitFor();
      await signIn(visitor.page, ui.url, ui.admin.email, ui.admin.password);
      await expect(visitor.page.getByText('Maintenance: Back at five o’clock').count()).resolves.toBe(0);
      await visitor.context.close();
    } finally {
      await page.getByRole('button', { name: 'Turn maintenance off' }).click();
    }
    await page.getByText('Maintenance mode is off').waitFor();
    expect((await adminApi('/v1/admin/maintenance')).json.enabled).toBe(false);
    await user.page.getByRole('button', { name: 'Try again' }).click();
    await user.page.getByRole('button', { name: 'Log out' }).waitFor();
    expect((await call(`${ui.url}/v1/users/me`, { token: ui.s.userToken })).status).toBe(200);
    await Promise.all([context.close(), user.context.close()]);
  });
});
