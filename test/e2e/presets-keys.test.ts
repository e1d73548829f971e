/**
 * Presets and API keys in a real browser: a preset created, found by search, a built-in cloned
 * into "my presets", edited and shared; a key created with models, quota and a rate limit, its
 * secret read from the page and used with the OpenAI SDK (a model outside the list refused),
 * edited, then revoked in the UI (the SDK gets 401). Each result is checked through the API too.
 */
import { APIError } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createUser, login, TEST_USER_PASSWORD } from '../support/app.js';
import { createChannel, sdk } from '../support/relay.js';
import { chromiumAvailable, docScreenshot, newPage, pageErrors, signIn } from './support/browser.js';
import { startUiApp, type UiApp } from './support/ui-app.js';

describe.runIf(chromiumAvailable)('web UI: presets and API keys', () => {
  let ui: UiApp;
  beforeAll(async () => {
    ui = await startUiApp();
    await createChannel(ui.s, { type: 'openai', base_url: ui.fake.baseUrl, models: ['gpt-a', 'gpt-b'] });
    // gpt-a has a price, so a key's used quota shows on the keys page.
    expect((await call(`${ui.s.url}/v1/admin/pricing/models/gpt-a`, { method: 'PUT', token: ui.s.adminToken, body: { input_price: '1000', output_price: '1000' } })).status).toBe(200);
    expect((await call(`${ui.s.url}/v1/admin/credits/${ui.s.userId}/topup`, { token: ui.s.adminToken, body: { amount: '100', reason: 'e2e' } })).status).toBe(200);
  }, 120_000);
  afterAll(async () => ui?.close());

  const userKeys = async () => (await call(`${ui.s.url}/v1/keys`, { token: ui.s.userToken })).json.data as Array<Record<string, any>>; // eslint-disable-line @typescript-eslint/no-explicit-any
  const chat = (secret: string, model: string) => sdk(ui.s, secret).chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] });
  const statusOf = async (promise: Promise<unknown>) => {
    try {
      await promise;
      return 200;
    } catch (error) {
      if (error instanceof APIError) return error.status;
      throw error;
    }
  };

  type PresetJson = { id: string; name: string; visibility: string; builtin: boolean; cloned_from: string | null; [k: string]: unknown };
  const myPresets = async (token = ui.s.userToken) => (await call(`${ui.s.url}/api/presets/user/me?limit=100`, { token })).json.data as PresetJson[];

  it('creates a preset in the editor, finds it by search, edits and shares it, then deletes it', async () => {
    const { context, page } = await newPage(ui.browser);
    await signIn(page, ui.url, ui.s.userEmail, TEST_USER_PASSWORD);
    await page.goto(`${ui.url}/presets`);
    await page.getByRole('link', { name: /^Open / }).first().waitFor();
    await docScreenshot(page, 'presets');

    await page.getByRole('link', { name: 'New preset' }).click();
    await page.getByLabel('Name').fill('Quarterly SQL helper');
    await page.getByLabel('Avatar').fill('1f5c4');
    await page.getByLabel('Category').selectOption('Technical');
    await page.getByLabel('Tags').fill('sql, reports');
    await page.getByLabel('Description').fill('Writes the quarterly report queries.');
    await page.getByLabel('System prompt').fill('You write careful PostgreSQL.');
    await page.getByRole('button', { name: 'Add message' }).click();
    await page.getByLabel('Role of message 1').selectOption('user');
    await page.getByLabel('Content of message 1').fill('Revenue per region, please.');
    await page.getByLabel('Preferred models').fill('gpt-a');
    await page.getByLabel('Temperature').fill('5');
    await page.getByLabel('Max tokens').fill('700');
    await page.getByRole('button', { name: 'Create preset' }).click();
    // Refused in place; nothing typed is lost.
    await page.getByText('“5” is not a number from 0 to 2.').waitFor();
    expect(await page.getByLabel('System prompt').inputValue()).toBe('You write careful PostgreSQL.');
    await page.getByLabel('Temperature').fill('0.3');
    await page.getByRole('button', { name: 'Create preset' }).click();
    await page.getByRole('heading', { name: 'Quarterly SQL helper' }).waitFor();
    await page.getByText('You write careful PostgreSQL.').waitFor();

    const created = (await myPresets()).find((p) => p.name === 'Quarterly SQL helper')!;
    expect(created).toMatchObject({
      avatar: '1f5c4',
      category: 'Technical',
      tags: ['sql', 'reports'],
      visibility: 'private',
      system_prompt: 'You write careful PostgreSQL.',
      context: [{ role: 'user', content: 'Revenue per region, please.' }],
      model_preferences: ['gpt-a'],
      temperature: 0.3,
      max_tokens: 700,
    });
    expect(new URL(page.url()).pathname).toBe(`/presets/${created.id}`);
    expect(await page.getByRole('link', { name: 'Start chat with this preset' }).getAttribute('href')).toBe(`/chat?preset=${created.id}`);

    await page.getByRole('link', { name: 'All presets' }).click();
    await page.getByLabel('Search presets').fill('quarterly');
    await expect.poll(() => page.getByRole('link', { name: /^Open / }).allTextContents()).toEqual(['Quarterly SQL helper']);

    await page.getByRole('link', { name: 'Open Quarterly SQL helper' }).click();
    await page.getByRole('link', { name: 'Edit preset' }).click();
    await page.getByLabel('Name').fill('Quarterly SQL report helper');
    await page.getByRole('radio', { name: /^Team/ }).check();
    await docScreenshot(page, 'preset-edit');
    await page.getByRole('button', { name: 'Save preset' }).click();
    await page.getByRole('heading', { name: 'Quarterly SQL report helper' }).waitFor();
    expect((await call(`${ui.s.url}/api/presets/${created.id}`, { token: ui.s.userToken })).json).toMatchObject({ name: 'Quarterly SQL report helper', visibility: 'team', max_tokens: 700 });
    // Shared with the team: another user of the tenant finds it among what is shared with them.
    const colleague = await createUser(ui.s.url, ui.s.adminToken, { tenant_id: 'default' });
    const colleagueToken = (await login(ui.s.url, colleague.email, TEST_USER_PASSWORD)).access_token;
    const shared = (await call(`${ui.s.url}/api/presets/search?scope=shared&q=quarterly`, { token: colleagueToken })).json.data as PresetJson[];
    expect(shared.map((p) => p.id)).toEqual([created.id]);

    await page.getByLabel('Visibility').selectOption('public');
    await page.getByText('Visibility saved.').waitFor();
    expect((await call(`${ui.s.url}/api/presets/${created.id}`, { token: ui.s.userToken })).json.visibility).toBe('public');

    await page.getByRole('button', { name: 'Delete preset' }).click();
    await page.getByRole('dialog', { name: 'Delete this preset?' }).getByRole('button', { name: 'Delete' }).click();
    await page.getByLabel('Search presets').waitFor();
    expect((await call(`${ui.s.url}/api/presets/${created.id}`, { token: ui.s.userToken })).status).toBe(404);
    expect(pageErrors(page)).toEqual([]);
    await context.close();
  });

  it('clones a built-in preset from the gallery into "My presets"', async () => {
    const { context, page } = await newPage(ui.browser, { phone: true });
    await signIn(page, ui.url, ui.s.userEmail, TEST_USER_PASSWORD);
    await page.goto(`${ui.url}/presets`);
    await page.getByRole('button', { name: 'Built-in' }).click();
    await page.getByLabel('Category').selectOption('Legal');
    const builtins = (await call(`${ui.s.url}/api/presets/search?scope=builtin&category=legal&limit=100`, { token: ui.s.userToken })).json.data as PresetJson[];
    expect(builtins.length).toBeGreaterThan(1);
    await expect.poll(() => page.getByRole('link', { name: /^Open / }).allTextContents()).toEqual(builtins.map((p) => p.name));
    const original = builtins[0]!;
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);

    await page.getByRole('button', { name: `Clone ${original.name}` }).click();
    await page.getByText('Cloned into your presets.').waitFor();
    await page.getByRole('heading', { name: original.name }).waitFor();
    const clone = (await myPresets()).find((p) => p.cloned_from === original.id)!;
    expect(clone).toMatchObject({ name: original.name, builtin: false, visibility: 'private' });
    expect(new URL(page.url()).pathname).toBe(`/presets/${clone.id}`);
    // The clone is the user's own: its page offers edit (and the editor fits the phone too).
    await page.getByRole('link', { name: 'Edit preset' }).click();
    await page.getByRole('button', { name: 'Save preset' }).waitFor();
    expect(await page.getByLabel('Content of message 1').inputValue()).not.toBe('');
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await page.getByRole('link', { name: 'Cancel' }).click();

    await page.getByRole('link', { name: 'All presets' }).click();
    await page.getByRole('button', { name: 'My presets' }).click();
    await page.getByRole('button', { name: 'Clear filters' }).waitFor();
    await expect.poll(() => page.getByRole('link', { name: `Open ${original.name}` }).count()).toBe(1);
    expect(pageErrors(page)).toEqual([]);
    await context.close();
  });

  it('creates a key with models, quota and a rate limit, shows the secret once, and the SDK can use it within those rules', async () => {
    const { context, page } = await newPage(ui.browser);
    await signIn(page, ui.url, ui.s.userEmail, TEST_USER_PASSWORD);
    await page.goto(`${ui.url}/keys`);
    await page.getByRole('button', { name: 'New key' }).click();
    const dialog = page.getByRole('dialog', { name: 'New API key' });
    await dialog.getByLabel('Name').fill('ci pipeline');
    await dialog.getByLabel('Allowed models').fill('gpt-a');
    await dialog.getByLabel('Quota (credits)').fill('5');
    await dialog.getByLabel('Requests per minute').fill('30');
    // A bad rule is refused in place, and nothing typed is lost.
    await dialog.getByLabel('Allowed IP addresses').fill('not-an-ip');
    await dialog.getByRole('button', { name: 'Create key' }).click();
    await dialog.getByText('“not-an-ip” is not an IP address or CIDR range.').waitFor();
    expect(await dialog.getByLabel('Name').inputValue()).toBe('ci pipeline');
    expect(await userKeys()).toEqual([]);
    await dialog.getByLabel('Allowed IP addresses').fill('127.0.0.1\n::1');
    await dialog.getByRole('button', { name: 'Create key' }).click();

    const shown = page.getByRole('dialog', { name: 'Your new key' });
    await shown.getByText('It is shown only once').waitFor();
    const secret = await shown.getByLabel('Secret key').inputValue();
    expect(secret).toMatch(/^sk-/);
    await shown.getByRole('button', { name: 'Copy key' }).click();
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
    await docScreenshot(page, 'key-created');

    const [key] = await userKeys();
    expect(key).toMatchObject({
      name: 'ci pipeline',
      key_prefix: secret.slice(0, 8),
      permissions: { models: ['gpt-a'], quota_limit: 5 },
      rate_limits: { requests_per_minute: 30 },
      ip_restrictions: { allowed_ips: ['127.0.0.1', '::1'] },
    });
    expect(JSON.stringify(key)).not.toContain(secret);

    const answer = await chat(secret, 'gpt-a');
    expect(answer.choices[0]?.message.content).toBeTruthy();
    expect(ui.fake.requests.some((r) => (r.json as { model?: string } | undefined)?.model === 'gpt-a')).toBe(true);
    expect(await statusOf(chat(secret, 'gpt-b'))).toBe(403);

    await shown.getByRole('button', { name: 'I have copied it' }).click();
    const row = page.getByRole('row').filter({ hasText: 'ci pipeline' });
    await row.getByText('Active').waitFor();
    // Its use shows up: last used no longer "Never", quota used above 0 (of 5).
    await expect
      .poll(async () => {
        await page.reload();
        return page.getByRole('row').filter({ hasText: 'ci pipeline' }).innerText({ timeout: 5_000 });
      })
      .toMatch(/0\.0\d+ \/ 5(?![\s\S]*Never)/);
    expect((await userKeys())[0]?.usage.quota_used).toBeGreaterThan(0);
    await docScreenshot(page, 'keys');
    expect(pageErrors(page)).toEqual([]);
    await context.close();
  });

  it('edits a key (PATCH) and revokes it after a confirmation: the SDK then gets 401', async () => {
    const created = await call(`${ui.s.url}/v1/keys`, { token: ui.s.userToken, body: { name: 'to revoke', permissions: { models: ['gpt-a'] } } });
    expect(created.status).toBe(201);
    const secret = created.json.key as string;
    expect(await statusOf(chat(secret, 'gpt-a'))).toBe(200);

    const { context, page } = await newPage(ui.browser, { phone: true });
    await signIn(page, ui.url, ui.s.userEmail, TEST_USER_PASSWORD);
    await page.goto(`${ui.url}/keys`);
    await page.getByRole('button', { name: 'Edit to revoke' }).click();
    const dialog = page.getByRole('dialog', { name: 'Edit API key' });
    expect(await dialog.getByLabel('Allowed models').inputValue()).toBe('gpt-a');
    await dialog.getByLabel('Allowed models').fill('gpt-a, gpt-b');
    await dialog.getByLabel('Concurrent requests').fill('2');
    await dialog.getByRole('button', { name: 'Save changes' }).click();
    await dialog.waitFor({ state: 'hidden' });
    const edited = (await userKeys()).find((k) => k.id === created.json.id);
    expect(edited).toMatchObject({ permissions: { models: ['gpt-a', 'gpt-b'] }, rate_limits: { concurrent_requests: 2 } });
    expect(await statusOf(chat(secret, 'gpt-b'))).toBe(200);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);

    await page.getByRole('button', { name: 'Revoke to revoke' }).click();
    const confirm = page.getByRole('dialog', { name: 'Revoke this key?' });
    await confirm.getByRole('button', { name: 'Revoke' }).click();
    await page.getByRole('row').filter({ hasText: 'to revoke' }).getByText('Revoked').waitFor();
    expect((await userKeys()).find((k) => k.id === created.json.id)?.revoked).toBe(true);
    await expect.poll(() => statusOf(chat(secret, 'gpt-a'))).toBe(401);
    expect(pageErrors(page)).toEqual([]);
    await context.close();
  });

  it('speaks Chinese and stays readable in dark mode on both pages', async () => {
    // A user of its own: the language and theme chosen become account preferences.
    const user = await createUser(ui.s.url, ui.s.adminToken, { tenant_id: 'default' });
    const { context, page } = await newPage(ui.browser, { colorScheme: 'dark' });
    await signIn(page, ui.url, user.email, TEST_USER_PASSWORD);
    await page.goto(`${ui.url}/presets`);
    await page.getByLabel('Language').selectOption('cn');
    await page.getByLabel('主题').selectOption('dark');
    await page.getByRole('heading', { name: '预设' }).waitFor();
    await page.getByRole('button', { name: '我的预设' }).waitFor();
    expect(await page.getByLabel('分类').locator('option').allTextContents()).toContain('法律');
    const card = await page.locator('.preset-card').first().evaluate((e) => getComputedStyle(e).backgroundColor);
    expect(card).toBe('rgb(29, 33, 40)'); // --bg-soft of the dark theme
    await page.getByRole('navigation').getByRole('link', { name: 'API 密钥' }).click();
    await page.getByRole('button', { name: '新建密钥' }).click();
    await page.getByRole('dialog', { name: '新建 API 密钥' }).getByLabel('每分钟请求数').waitFor();
    expect(pageErrors(page)).toEqual([]);
    await context.close();
  });
});
