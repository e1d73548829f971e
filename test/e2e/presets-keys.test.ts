/**
 * Presets and API keys in a real browser: a preset created, found by search, a built-in cloned
 * into "my presets", edited and shared; a key created with models, quota and a rate limit, its
 * secret read from the page and used with the OpenAI SDK (a model outside the list refused),
 * edited, then revoked in the UI (the SDK gets 401). Each result is checked through the API too.
 */
import { APIError } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, TEST_USER_PASSWORD } from '../support/app.js';
import { createChannel, sdk } from '../support/relay.js';
import { chromiumAvailable, docScreenshot, newPage, pageErrors, signIn } from './support/browser.js';
import { startUiApp, type UiApp } from './support/ui-app.js';

describe.runIf(chromiumAvailable)('web UI: presets and API keys', () => {
  let ui: UiApp;
  beforeAll(async () => {
    ui = await startUiApp();
    await createChannel(ui.s, { type: 'openai', base_url: ui.fake.baseUrl, models: ['gpt-a', 'gpt-b'] });
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
    await expect.poll(async () => (await page.reload(), await page.getByRole('row').filter({ hasText: 'ci pipeline' }).getByText('Never').count())).toBe(0);
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
});
