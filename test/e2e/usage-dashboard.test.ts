/**
 * Usage & billing, Account and the admin Dashboard in a real browser against the real server:
 * relay traffic first (a channel on the fake upstream, priced models, a user with credits), then
 * the pages' figures compared with the API's; the ledger after a top-up; subscribing to a plan;
 * chat defaults saved; two-factor login enrolled on the page and used at the next sign-in;
 * a password change; the dashboard's totals, channel health and a firing alert.
 */
import * as OTPAuth from 'otpauth';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createUser, login, TEST_USER_PASSWORD } from '../support/app.js';
import { createChannel } from '../support/relay.js';
import { chromiumAvailable, docScreenshot, newPage, pageErrors, signIn } from './support/browser.js';
import { startUiApp, type UiApp } from './support/ui-app.js';

/** Credits as the pages show them in English (2 to 6 decimals). */
const credits = (micro: number) => new Intl.NumberFormat('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 6 }).format(micro / 1_000_000);
const int = (n: number) => new Intl.NumberFormat('en-US').format(n);
/** How long a poll waits for the page (lazy chunks and uPlot load on a busy machine). */
const POLL = { timeout: 10_000 };
/** The value of a figure on the page (a <dt> name and its <dd>). */
const figure = (page: Page, name: string) => page.locator(`.stat:has(dt:text-is("${name}")) dd`).first();

describe.runIf(chromiumAvailable)('web UI: usage & billing, account, dashboard', () => {
  let ui: UiApp;
  let spender: { id: string; email: string; token: string };

  /** Usage and billing projected: what the pages read is there. */
  const settle = async () => {
    const { ctx } = ui.s.app;
    await ctx.usage.flush();
    const head = await ctx.store.headPosition();
    await ctx.runner.waitFor(head, { projections: ['usage', 'billing', 'alerts', 'channels'] });
  };
  const newUser = async () => {
    const user = await createUser(ui.url, ui.s.adminToken);
    return { ...user, token: (await login(ui.url, user.email, TEST_USER_PASSWORD)).access_token };
  };

  beforeAll(async () => {
    ui = await startUiApp({ MFA_ENABLED: 'true', ALERT_EVALUATION_INTERVAL: '1h', HEALTH_CHECK_ENABLED: 'false', RELAY_MAX_RETRIES: '0' });
    const { s } = ui;
    await createChannel(s, { type: 'openai', name: 'fake-openai', base_url: ui.fake.baseUrl, models: ['gpt-a', 'gpt-b'] });
    // Priced models: requests cost credits, so the ledger has charges and the pages a cost.
    const priced = await call(`${ui.url}/v1/admin/pricing`, { method: 'PUT', token: s.adminToken, body: { default: { input_price: '2', output_price: '4', per_request_price: '0.001' } } });
    expect(priced.status).toBe(200);
    spender = await newUser();
    expect((await call(`${ui.url}/v1/admin/credits/${spender.id}/topup`, { token: s.adminToken, body: { amount: '10', reason: 'welcome credits' } })).status).toBe(200);
    await settle();
    for (const model of ['gpt-a', 'gpt-a', 'gpt-a', 'gpt-b', 'gpt-b']) {
      const res = await call(`${ui.url}/v1/chat/completions`, { token: spender.token, body: { model, messages: [{ role: 'user', content: `hello ${model}` }] } });
      expect(res.status).toBe(200);
    }
    await settle();
  }, 120_000);
  afterAll(async () => ui?.close());

  it('shows the usage the API counts: figures, charts and the table per model, cost from the charges', async () => {
    const { context, page } = await newPage(ui.browser);
    await signIn(page, ui.url, spender.email, TEST_USER_PASSWORD);
    const asked = page.waitForResponse((r) => r.url().includes('/v1/usage?') && r.url().includes('group_by=model') && !r.url().includes('day'));
    await page.getByRole('navigation').getByRole('link', { name: 'Usage & billing' }).click();
    const query = new URL((await asked).url()).search;
    const api = (await call(`${ui.url}/v1/usage${query}`, { token: spender.token })).json as { data: Array<{ model: string; requests: number; errors: number; prompt_tokens: number; completion_tokens: number; total_tokens: number }>; totals: { requests: number; total_tokens: number } };
    expect(api.totals.requests).toBe(5);
    const ledger = (await call(`${ui.url}/v1/billing/ledger?type=charge`, { token: spender.token })).json.data as Array<{ model: string; amount_micro: number }>;
    const balance = (await call(`${ui.url}/v1/credits`, { token: spender.token })).json as { balance_micro: number };

    await expect.poll(() => figure(page, 'Requests').textContent(), POLL).toBe(int(api.totals.requests));
    expect(await figure(page, 'Tokens').textContent()).toBe(int(api.totals.total_tokens));
    await expect.poll(() => figure(page, 'Balance').textContent(), POLL).toBe(credits(balance.balance_micro));
    const spent = ledger.reduce((sum, e) => sum - e.amount_micro, 0);
    expect(spent).toBeGreaterThan(0);
    await expect.poll(() => figure(page, 'Cost').textContent(), POLL).toBe(credits(spent));

    const table = page.getByRole('table', { name: 'By model' });
    for (const line of api.data) {
      const cells = table.getByRole('row', { name: new RegExp(`^${line.model}\\b`) }).getByRole('cell');
      const cost = ledger.filter((e) => e.model === line.model).reduce((sum, e) => sum - e.amount_micro, 0);
      await expect.poll(() => cells.allTextContents(), POLL).toEqual([int(line.requests), int(line.errors), int(line.prompt_tokens), int(line.completion_tokens), int(line.total_tokens), credits(cost)]);
    }
    expect(api.data.map((l) => [l.model, l.requests])).toEqual([
      ['gpt-a', 3],
      ['gpt-b', 2],
    ]);

    // Three charts (requests, tokens, cost), each drawn on a canvas; the 24-hour view too.
    await expect.poll(() => page.locator('.chart canvas').count(), POLL).toBeGreaterThanOrEqual(3);
    await page.getByRole('button', { name: '24 hours' }).click();
    await expect.poll(() => page.getByRole('button', { name: '24 hours' }).getAttribute('aria-pressed'), POLL).toBe('true');
    await expect.poll(() => page.locator('.chart canvas').count(), POLL).toBeGreaterThanOrEqual(3);
    expect(await figure(page, 'Requests').textContent()).toBe('5');

    // The ledger: the charges and the welcome top-up, newest first, with the balance after each.
    const ledgerTable = page.getByRole('table', { name: 'Ledger' });
    await ledgerTable.getByRole('row', { name: /welcome credits/ }).waitFor();
    expect(await ledgerTable.getByRole('row').count()).toBe(1 + 6);
    expect(await ledgerTable.getByRole('row').nth(1).getByRole('cell').nth(4).textContent()).toBe(credits(balance.balance_micro));
    await docScreenshot(page, 'usage');
    expect(pageErrors(page)).toEqual([]);
    await context.close();
  });

  it('lists a top-up made by an admin in the ledger with the new balance; the type filter narrows it', async () => {
    const { context, page } = await newPage(ui.browser);
    await signIn(page, ui.url, spender.email, TEST_USER_PASSWORD);
    await page.goto(`${ui.url}/usage`);
    await page.getByRole('table', { name: 'Ledger' }).waitFor();
    const topped = await call(`${ui.url}/v1/admin/credits/${spender.id}/topup`, { token: ui.s.adminToken, body: { amount: '2.5', reason: 'bonus for testing' } });
    expect(topped.status).toBe(200);
    const after = topped.json.balance_micro as number;
    await page.reload();
    const row = page.getByRole('table', { name: 'Ledger' }).getByRole('row', { name: /bonus for testing/ });
    await row.waitFor();
    expect(await row.getByRole('cell').allTextContents()).toEqual([expect.any(String), 'Top-up', 'bonus for testing', credits(2_500_000), credits(after)]);
    await expect.poll(() => figure(page, 'Balance').textContent(), POLL).toBe(credits((await call(`${ui.url}/v1/credits`, { token: spender.token })).json.balance_micro));
    await page.getByLabel('Type').selectOption('topup');
    await expect.poll(() => page.getByRole('table', { name: 'Ledger' }).getByRole('row').count(), POLL).toBe(1 + 2);

    // Past 20 entries the ledger is paged: 16 more top-ups make 2 + 16 = 18 top-ups, 23 entries in all.
    for (let i = 0; i < 16; i++) await call(`${ui.url}/v1/admin/credits/${spender.id}/topup`, { token: ui.s.adminToken, body: { amount: '0.01', reason: `small ${i}` } });
    await page.reload();
    await page.getByRole('table', { name: 'Ledger' }).waitFor();
    const pager = page.getByRole('navigation', { name: 'Ledger' });
    await pager.getByText('Page 1 of 2').waitFor();
    expect(await page.getByRole('table', { name: 'Ledger' }).getByRole('row').nth(1).textContent()).toContain('small 15');
    await pager.getByRole('button', { name: 'Next' }).click();
    await pager.getByText('Page 2 of 2').waitFor();
    expect(await page.getByRole('table', { name: 'Ledger' }).getByRole('row').count()).toBe(1 + 3);
    await page.getByRole('table', { name: 'Ledger' }).getByRole('row', { name: /welcome credits/ }).waitFor();
    await page.getByLabel('Type').selectOption('topup');
    await expect.poll(() => page.getByRole('table', { name: 'Ledger' }).getByRole('row').count(), POLL).toBe(1 + 18);
    expect(await pager.count()).toBe(0);
    // This month's statement counts the top-ups and the 5 requests.
    await expect.poll(() => figure(page, 'Top-ups').textContent(), POLL).toBe(credits(12_660_000));
    expect(await figure(page, 'Billable requests').textContent()).toBe('5');
    await context.close();
  });

  it('subscribes to a plan from the page and shows its quota; refusals show the server error', async () => {
    const plan = await call(`${ui.url}/v1/admin/plans`, { token: ui.s.adminToken, body: { name: 'Starter', period: 'month', price: '1', quotas: [{ models: ['*'], requests: 100 }] } });
    expect(plan.status).toBe(201);
    const broke = await newUser();
    const { context, page } = await newPage(ui.browser);
    await signIn(page, ui.url, broke.email, TEST_USER_PASSWORD);
    await page.goto(`${ui.url}/usage`);
    await page.getByText('No subscription: requests are charged to your credits.').waitFor();
    // No credits: 402 insufficient_credits, shown with its code.
    await page.getByRole('button', { name: 'Subscribe to Starter' }).click();
    await expect.poll(() => page.getByRole('alert').textContent(), POLL).toContain('insufficient_credits');
    await call(`${ui.url}/v1/admin/credits/${broke.id}/topup`, { token: ui.s.adminToken, body: { amount: '5', reason: 'for the plan' } });
    await page.getByRole('button', { name: 'Subscribe to Starter' }).click();
    await expect.poll(() => figure(page, 'Status').textContent(), POLL).toBe('active');
    expect(await figure(page, 'Plan').textContent()).toBe('Starter');
    const sub = (await call(`${ui.url}/v1/subscriptions`, { token: broke.token })).json;
    expect(sub).toMatchObject({ status: 'active', plan_name: 'Starter', quotas: [{ requests: 100, remaining: 100 }] });
    await page.getByRole('table', { name: 'Ledger' }).getByRole('row', { name: /Subscription fee/ }).waitFor();
    await page.getByRole('button', { name: 'Cancel subscription' }).click();
    await page.getByRole('button', { name: 'Yes, cancel it now' }).click();
    await expect.poll(() => figure(page, 'Status').textContent(), POLL).toBe('canceled');
    expect((await call(`${ui.url}/v1/subscriptions`, { token: broke.token })).json.status).toBe('canceled');
    await context.close();
  });

  it('saves chat defaults (and keeps the form when the server refuses a value)', async () => {
    const user = await newUser();
    const { context, page } = await newPage(ui.browser);
    await signIn(page, ui.url, user.email, TEST_USER_PASSWORD);
    await page.getByRole('navigation').getByRole('link', { name: 'Account' }).click();
    await page.getByText(user.email, { exact: true }).last().waitFor();
    await page.getByLabel('Default model').fill('gpt-b');
    await page.getByLabel('Temperature').fill('5');
    await page.getByLabel('Max tokens').fill('512');
    await page.getByRole('button', { name: 'Save chat defaults' }).click();
    await expect.poll(() => page.getByRole('alert').textContent(), POLL).toMatch(/temperature/);
    expect(await page.getByLabel('Default model').inputValue()).toBe('gpt-b');
    await page.getByLabel('Temperature').fill('0.3');
    await page.getByRole('button', { name: 'Save chat defaults' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    const me = (await call(`${ui.url}/v1/users/me`, { token: user.token })).json;
    expect(me.chat_defaults).toMatchObject({ default_model: 'gpt-b', temperature: 0.3, max_tokens: 512 });
    // Emptied: the key is removed, the default applies again.
    await page.getByLabel('Max tokens').fill('');
    await page.getByRole('button', { name: 'Save chat defaults' }).click();
    await expect.poll(async () => (await call(`${ui.url}/v1/users/me`, { token: user.token })).json.chat_defaults.max_tokens, POLL).toBe(2048);
    await page.evaluate(() => window.scrollTo(0, 0));
    await docScreenshot(page, 'account');
    expect(pageErrors(page)).toEqual([]);
    await context.close();
  });

  it('enrolls two-factor login on the page, then signs in through the code step', async () => {
    const user = await newUser();
    const { context, page } = await newPage(ui.browser);
    await signIn(page, ui.url, user.email, TEST_USER_PASSWORD);
    await page.goto(`${ui.url}/account`);
    await page.getByRole('button', { name: 'Set up two-factor login' }).click();
    const secret = await page.getByLabel('Secret key').inputValue();
    expect(await page.getByLabel('Setup link (otpauth URI)').inputValue()).toContain(`secret=${secret}`);
    await expect.poll(() => page.getByRole('list', { name: 'Recovery codes' }).getByRole('listitem').count(), POLL).toBe(10);
    const totp = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret) });
    await page.getByLabel('Code from the app').fill('000000');
    await page.getByRole('button', { name: 'Verify and turn on' }).click();
    await expect.poll(() => page.getByRole('alert').textContent(), POLL).toContain('invalid_mfa_code');
    await page.getByLabel('Code from the app').fill(totp.generate());
    await page.getByRole('button', { name: 'Verify and turn on' }).click();
    await page.getByRole('status').filter({ hasText: 'Two-factor login is on.' }).waitFor();
    expect(await page.locator('dl.kv dt:text-is("Two-factor login") + dd').textContent()).toBe('On');
    expect((await call(`${ui.url}/v1/users/me`, { token: user.token })).json.mfa_enabled).toBe(true);
    // The recovery codes stay on screen after verifying (shown this once).
    expect(await page.getByRole('list', { name: 'Recovery codes' }).getByRole('listitem').count()).toBe(10);

    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByLabel('Email').fill(user.email);
    await page.getByLabel('Password').fill(TEST_USER_PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    // The code of the next step: the one used to verify cannot be used twice.
    await page.getByLabel('Authentication code').fill(totp.generate({ timestamp: Date.now() + 30_000 }));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('button', { name: 'Log out' }).waitFor();
    expect(pageErrors(page)).toEqual([]);
    await context.close();
  });

  it('changes the password: the new one signs in, the old one no longer', async () => {
    const user = await newUser();
    const { context, page } = await newPage(ui.browser, { phone: true });
    await signIn(page, ui.url, user.email, TEST_USER_PASSWORD);
    await page.goto(`${ui.url}/account`);
    const fresh = 'a brand new password 42';
    await page.getByLabel('Current password').fill('not my password');
    await page.getByLabel('New password', { exact: true }).fill(fresh);
    await page.getByLabel('Repeat the new password').fill(fresh);
    await page.getByRole('button', { name: 'Change password' }).click();
    await expect.poll(() => page.getByRole('alert').textContent(), POLL).toContain('invalid_password');
    await page.getByLabel('Current password').fill(TEST_USER_PASSWORD);
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByRole('status').filter({ hasText: 'Password changed.' }).waitFor();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await page.getByRole('button', { name: 'Log out' }).click();
    expect((await call(`${ui.url}/v1/auth/login`, { body: { email: user.email, password: TEST_USER_PASSWORD } })).status).toBe(401);
    await signIn(page, ui.url, user.email, fresh);
    await context.close();
  });

  it('shows the admin dashboard: totals as the API counts them, channel health, a firing alert', async () => {
    const { s } = ui;
    // A channel that cannot be reached, tested: unhealthy (cooling down).
    const dead = await createChannel(s, { type: 'openai', name: 'dead-end', base_url: 'http://127.0.0.1:9/v1', models: ['nowhere'] });
    await call(`${ui.url}/v1/admin/channels/${dead.id}/test`, { method: 'POST', token: s.adminToken });
    // A rule that fires at the first failed login of a user of the tenant.
    const victim = await createUser(ui.url, s.adminToken);
    const rule = await call(`${ui.url}/api/admin/alerts/rules`, { token: s.adminToken, body: { name: 'Password guessing', condition: { kind: 'failed_logins', threshold: 0, window: 300 }, severity: 'critical' } });
    expect(rule.status).toBe(201);
    expect((await call(`${ui.url}/v1/auth/login`, { body: { email: victim.email, password: 'wrong password!' } })).status).toBe(401);
    expect((await s.app.ctx.alerts!.evaluateOnce()).fired.length).toBeGreaterThanOrEqual(1);
    await settle();

    const { context, page } = await newPage(ui.browser);
    const asked = page.waitForResponse((r) => r.url().includes('/v1/admin/usage?'));
    await signIn(page, ui.url, ui.admin.email, ui.admin.password);
    await page.goto(`${ui.url}/admin/dashboard`);
    const query = new URL((await asked).url()).search;
    const api = (await call(`${ui.url}/v1/admin/usage${query}`, { token: s.adminToken })).json as { totals: { requests: number; errors: number; total_tokens: number } };
    expect(api.totals.requests).toBeGreaterThanOrEqual(5);
    await expect.poll(() => figure(page, 'Requests').textContent(), POLL).toBe(int(api.totals.requests));
    expect(await figure(page, 'Errors').textContent()).toBe(int(api.totals.errors));
    expect(await figure(page, 'Tokens').textContent()).toBe(int(api.totals.total_tokens));
    await expect.poll(() => page.locator('.chart canvas').count(), POLL).toBe(4);

    const channels = page.getByRole('table', { name: 'Channel health' });
    expect(await channels.getByRole('row', { name: /fake-openai/ }).getByRole('cell').first().textContent()).toBe('Healthy');
    expect(await channels.getByRole('row', { name: /dead-end/ }).getByRole('cell').first().textContent()).toMatch(/^(Cooling down until|Unhealthy)/);
    const listed = (await call(`${ui.url}/v1/admin/channels`, { token: s.adminToken })).json.data as Array<{ name: string; health: { healthy: boolean } }>;
    expect(listed.find((c) => c.name === 'dead-end')!.health.healthy).toBe(false);

    const alerts = page.getByRole('list', { name: 'Alerts firing' });
    await alerts.getByRole('listitem').filter({ hasText: 'Password guessing' }).waitFor();
    const firing = (await call(`${ui.url}/api/admin/alerts?state=firing`, { token: s.adminToken })).json.data as Array<{ rule_name: string; message: string }>;
    const alert = firing.find((a) => a.rule_name === 'Password guessing')!;
    expect(await alerts.getByRole('listitem').filter({ hasText: 'Password guessing' }).textContent()).toContain(alert.message);
    await docScreenshot(page, 'dashboard');

    await page.getByRole('navigation', { name: 'Administration' }).getByRole('link', { name: 'Channels' }).click();
    expect(new URL(page.url()).pathname).toBe('/admin/channels');
    expect(pageErrors(page)).toEqual([]);
    await context.close();
  });

  it('draws the dashboard in dark and fits a phone', async () => {
    const { context, page } = await newPage(ui.browser, { colorScheme: 'dark' });
    await signIn(page, ui.url, ui.admin.email, ui.admin.password);
    await page.goto(`${ui.url}/admin/dashboard`);
    await expect.poll(() => page.locator('.chart canvas').count(), POLL).toBe(4);
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe('dark');
    await docScreenshot(page, 'dashboard-dark');
    // In Chinese: the page's own words follow the language.
    await page.getByLabel('Language').selectOption('cn');
    await page.getByRole('heading', { name: '渠道健康状况' }).waitFor();
    await page.getByRole('button', { name: '7 天' }).click();
    await expect.poll(() => page.locator('.chart canvas').count(), POLL).toBe(4);
    await docScreenshot(page, 'dashboard-cn-dark');
    await page.getByLabel('语言').selectOption('en');
    await expect.poll(async () => (await call(`${ui.url}/v1/users/me`, { token: (await login(ui.url, ui.admin.email, ui.admin.password)).access_token })).json.preferences.language, POLL).toBe('en');
    await page.setViewportSize({ width: 390, height: 844 });
    await expect.poll(() => page.evaluate(() => document.documentElement.scrollWidth), POLL).toBeLessThanOrEqual(390);
    await page.goto(`${ui.url}/usage`);
    await page.getByRole('table', { name: 'Ledger' }).or(page.getByText('Nothing here yet.')).first().waitFor();
    await expect.poll(() => page.evaluate(() => document.documentElement.scrollWidth), POLL).toBeLessThanOrEqual(390);
    await context.close();
  });
});
