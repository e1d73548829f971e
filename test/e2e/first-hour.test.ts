/**
 * The "done when": on a fresh installation, the root admin signs in, adds a channel and
 * chats — all in the browser, nothing through the API. Embedded, and distributed with the channel
 * added on one instance and the chat on another (NATS + MariaDB + Redis).
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { call, loginAsAdmin, startApp, type RunningApp } from '../support/app.js';
import { appModes } from '../support/modes.js';
import { chromiumAvailable, newPage, pageErrors, signIn } from './support/browser.js';
import { startUiApp, type UiApp } from './support/ui-app.js';
import { WEB_DIST } from './support/web-build.js';

const MODES = appModes(inject('services'), inject('serviceUrls'));
const MODEL = 'gpt-first-hour';

async function addChannel(page: Page, url: string, upstream: string): Promise<void> {
  await page.goto(`${url}/admin/channels`);
  await page.getByRole('button', { name: 'Add channel' }).click();
  const dialog = page.getByRole('dialog', { name: 'New channel' });
  await dialog.getByLabel('Name', { exact: true }).fill('my-openai');
  await dialog.getByLabel('Type', { exact: true }).selectOption('openai');
  await dialog.getByLabel('Base URL').fill(upstream);
  await dialog.getByLabel('API key').fill('test-key');
  await dialog.getByLabel('Model to add').fill(MODEL);
  await dialog.getByRole('button', { name: 'Add model' }).click();
  await dialog.getByRole('button', { name: 'Create channel' }).click();
  await dialog.waitFor({ state: 'hidden' });
  await page.getByRole('row', { name: /my-openai/ }).waitFor();
}

async function chat(page: Page, url: string, text: string): Promise<string> {
  await page.getByRole('navigation').getByRole('link', { name: 'Chat' }).click();
  await expect.poll(() => page.getByLabel('Model').inputValue(), { timeout: 15_000 }).toBe(MODEL);
  await page.getByLabel('Message', { exact: true }).fill(text);
  await page.getByRole('button', { name: 'Send' }).click();
  await page.locator('article.msg.assistant:not(.streaming)').getByText(`Hello! You said: ${text}`).waitFor();
  await expect.poll(() => new URL(page.url()).pathname).toMatch(/^\/chat\/conv_/);
  return new URL(page.url()).pathname.split('/')[2]!;
}

describe.each(MODES.map((m) => [m.name, m] as const))('first hour in the browser (%s)', (name, mode) => {
  let ui: UiApp;
  let other: RunningApp | null = null;
  let cleanup: () => Promise<void> = async () => undefined;
  beforeAll(async () => {
    if (!chromiumAvailable || !mode.enabled) return;
    const env = mode.env();
    cleanup = env.cleanup;
    ui = await startUiApp(env.env);
    if (name === 'distributed') other = await startApp({ ...env.env, WEB_DIR: WEB_DIST });
  }, 180_000);
  afterAll(async () => {
    await other?.close();
    await ui?.close();
    await cleanup();
  });

  it.runIf(chromiumAvailable && mode.enabled)('signs the root admin in, adds a channel and chats with a streamed reply', async () => {
    const { context, page } = await newPage(ui.browser);
    await signIn(page, ui.url, ui.admin.email, ui.admin.password);
    await addChannel(page, ui.url, ui.fake.baseUrl);

    // Distributed: the chat goes to the other instance, which learns of the channel from the bus.
    const chatUrl = other?.url ?? ui.url;
    let chatPage = page;
    if (other) {
      chatPage = (await newPage(ui.browser)).page;
      await signIn(chatPage, chatUrl, ui.admin.email, ui.admin.password);
    }
    const id = await chat(chatPage, chatUrl, 'my first message');
    const upstream = ui.fake.requests.filter((r) => r.path === '/v1/chat/completions').at(-1);
    expect(upstream?.headers.authorization).toBe('Bearer test-key');
    expect(JSON.stringify(upstream?.json)).toContain('my first message');

    const token = (await loginAsAdmin(ui.s)).access_token;
    const stored = (await call(`${ui.url}/v1/conversations/${id}`, { token })).json;
    expect(stored.messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant']);
    expect(pageErrors(page)).toEqual([]);
    expect(pageErrors(chatPage)).toEqual([]);
    await context.close();
  });
});
