/**
 * The app shell in a real browser: sign in (and the MFA step), navigation by role, deep links,
 * refresh after the access token is gone, logout; English/Chinese and light/dark kept as the
 * user's preferences.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, TEST_USER_PASSWORD } from '../support/app.js';
import { chromiumAvailable, newPage, pageErrors, signIn } from './support/browser.js';
import { startUiApp, type UiApp } from './support/ui-app.js';

describe.runIf(chromiumAvailable)('web UI shell', () => {
  let ui: UiApp;
  beforeAll(async () => {
    ui = await startUiApp();
  }, 120_000);
  afterAll(async () => ui?.close());

  it('shows the login page at any path, signs the root admin in, and lands on the deep link', async () => {
    const { context, page } = await newPage(ui.browser);
    await page.goto(`${ui.url}/admin/channels`);
    await page.getByRole('heading', { name: 'Sign in to Switchyard' }).waitFor();
    await page.getByLabel('Email').fill(ui.admin.email);
    await page.getByLabel('Password').fill('wrong password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').waitFor();
    await page.getByLabel('Password').fill(ui.admin.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Log out' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/admin/channels');
    await page.getByRole('navigation').getByRole('link', { name: 'Channels' }).waitFor();
    expect(pageErrors(page)).toEqual([]);
    await context.close();
  });

  it('hides the administration from users and refuses its pages', async () => {
    const { context, page } = await newPage(ui.browser);
    await signIn(page, ui.url, ui.s.userEmail, TEST_USER_PASSWORD);
    expect(new URL(page.url()).pathname).toBe('/chat');
    await expect(page.getByRole('navigation').getByRole('link', { name: 'Channels' }).count()).resolves.toBe(0);
    await page.goto(`${ui.url}/admin/settings`);
    await page.getByText('Only administrators can open this page.').waitFor();
    await context.close();
  });

  it('renews the session from the refresh cookie when the access cookie is gone, and logs out for good', async () => {
    const { context, page } = await newPage(ui.browser);
    await signIn(page, ui.url, ui.s.userEmail, TEST_USER_PASSWORD);
    const cookies = await context.cookies();
    expect(cookies.map((c) => c.name).sort()).toEqual(['sy_refresh', 'sy_session']);
    expect(cookies.find((c) => c.name === 'sy_refresh')).toMatchObject({ httpOnly: true, path: '/v1/auth' });
    await context.clearCookies({ name: 'sy_session' });
    await page.reload();
    await page.getByRole('button', { name: 'Log out' }).waitFor();
    expect((await context.cookies()).some((c) => c.name === 'sy_session')).toBe(true);
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByRole('heading', { name: 'Sign in to Switchyard' }).waitFor();
    expect(await context.cookies()).toEqual([]);
    await page.reload();
    await page.getByRole('heading', { name: 'Sign in to Switchyard' }).waitFor();
    await context.close();
  });

  it('switches to Chinese and dark, keeps both as preferences, and follows them on another device', async () => {
    const { context, page } = await newPage(ui.browser);
    await signIn(page, ui.url, ui.s.userEmail, TEST_USER_PASSWORD);
    await page.getByLabel('Language').selectOption('cn');
    await page.getByRole('button', { name: '退出登录' }).waitFor();
    await page.getByLabel('主题').selectOption('dark');
    await expect.poll(() => page.evaluate(() => document.documentElement.dataset.theme)).toBe('dark');
    const background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    expect(background).toBe('rgb(21, 24, 29)');
    await expect
      .poll(async () => (await call(`${ui.url}/v1/users/me`, { token: ui.s.userToken })).json.preferences)
      .toMatchObject({ language: 'zh-CN', theme: 'dark' });
    const other = await newPage(ui.browser);
    await signIn(other.page, ui.url, ui.s.userEmail, TEST_USER_PASSWORD);
    await other.page.getByRole('navigation').getByRole('link', { name: '对话' }).waitFor();
    expect(await other.page.evaluate(() => document.documentElement.dataset.theme)).toBe('dark');
    expect(await other.page.evaluate(() => document.documentElement.lang)).toBe('zh-CN');
    await other.page.getByLabel('语言').selectOption('en');
    await other.page.getByLabel('Theme').selectOption('light');
    await expect.poll(() => other.page.evaluate(() => document.documentElement.dataset.theme)).toBe('light');
    await Promise.all([context.close(), other.context.close()]);
  });

  it('fits a phone: the navigation opens from the menu button', async () => {
    const { context, page } = await newPage(ui.browser, { phone: true });
    await signIn(page, ui.url, ui.s.userEmail, TEST_USER_PASSWORD);
    const nav = page.getByRole('navigation');
    await expect(nav.isVisible()).resolves.toBe(false);
    await page.getByRole('button', { name: 'Menu' }).click();
    await nav.getByRole('link', { name: 'Presets' }).click();
    expect(new URL(page.url()).pathname).toBe('/presets');
    await expect.poll(() => nav.isVisible()).toBe(false);
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    expect(width).toBeLessThanOrEqual(390);
    await context.close();
  });
});
