/**
 * The admin's billing, logs, alerts and webhooks pages in a real browser against the real server:
 * each test does the thing through the UI and checks the result on the page and through the API
 * (or what the local webhook receiver got).
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, TEST_USER_PASSWORD } from '../support/app.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';
import { chromiumAvailable, docScreenshot, newPage, pageErrors, signIn } from './support/browser.js';
import { startUiApp, type UiApp } from './support/ui-app.js';

describe.runIf(chromiumAvailable)('admin billing, logs, alerts and webhooks', () => {
  let ui: UiApp;
  let receiver: WebhookReceiver;
  let userId: string;
  const marker = `mk${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    // Alerts are evaluated by the test (evaluateOnce), not the timer; webhooks may reach 127.0.0.1;
    // warnings logged (the failed logins the logs page finds; the test default is silent).
    [ui, receiver] = await Promise.all([startUiApp({ LOG_LEVEL: 'warn', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', ALERT_EVALUATION_INTERVAL: '1h', WEBHOOK_POLL_INTERVAL: '200ms' }), startWebhookReceiver()]);
    userId = (await call(`${ui.url}/v1/users/me`, { token: ui.s.userToken })).json.id as string;
  }, 120_000);
  afterAll(async () => {
    await receiver?.close();
    await ui?.close();
  });

  const api = (path: string, init: { method?: string; body?: unknown } = {}) => call(`${ui.url}${path}`, { token: ui.s.adminToken, ...init });
  const adminPage = async (path: string, phone = false): Promise<Page> => {
    const { page } = await newPage(ui.browser, { phone });
    await signIn(page, ui.url, ui.admin.email, ui.admin.password);
    await page.goto(`${ui.url}${path}`);
    return page;
  };
  const done = async (page: Page) => {
    expect(pageErrors(page)).toEqual([]);
    await page.context().close();
  };
  /** Failed logins of an unknown email holding the marker (security WARNING entries). */
  const failLogins = async (n: number) => {
    for (let i = 0; i < n; i++) expect((await call(`${ui.url}/v1/auth/login`, { body: { email: `${marker}@nowhere.test`, password: 'wrong-password' } })).status).toBe(401);
  };

  it('sets a default and a model price, edits and deletes one', async () => {
    const page = await adminPage('/admin/billing');
    const defaults = page.getByRole('form', { name: 'Default price' });
    await defaults.getByLabel('Input price (per 1M tokens)').fill('1');
    await defaults.getByLabel('Output price (per 1M tokens)').fill('2');
    await defaults.getByRole('button', { name: 'Save default price' }).click();
    const form = page.getByRole('form', { name: 'Set model price' });
    for (const [model, input] of [
      ['gpt-e2e', '2.5'],
      ['gpt-gone', '3'],
    ]) {
      await form.getByLabel('Model').fill(model!);
      await form.getByLabel('Input price (per 1M tokens)').fill(input!);
      await form.getByLabel('Output price (per 1M tokens)').fill('10');
      await form.getByLabel('Price per request').fill('0.001');
      await form.getByRole('button', { name: 'Save model price' }).click();
      await page.getByRole('cell', { name: model, exact: true }).waitFor();
    }
    page.once('dialog', (d) => void d.accept());
    await page.getByRole('button', { name: 'Delete price of gpt-gone' }).click();
    await expect.poll(() => page.getByRole('cell', { name: 'gpt-gone', exact: true }).count()).toBe(0);
    // Bad input: the server's error next to the form, the values kept.
    await form.getByLabel('Model').fill('gpt-bad');
    await form.getByLabel('Input price (per 1M tokens)').fill('1.1234567');
    await form.getByLabel('Output price (per 1M tokens)').fill('1');
    await form.getByRole('button', { name: 'Save model price' }).click();
    await form.getByRole('alert').waitFor();
    await expect(form.getByLabel('Model').inputValue()).resolves.toBe('gpt-bad');

    const pricing = (await api('/v1/admin/pricing')).json;
    expect(pricing.default).toMatchObject({ input_price: '1.000000', output_price: '2.000000' });
    expect(pricing.models).toEqual([expect.objectContaining({ model: 'gpt-e2e', input_price: '2.500000', output_price: '10.000000', per_request_price: '0.001000' })]);
    await done(page);
  });

  it('creates a plan with a quota, then edits it', async () => {
    const page = await adminPage('/admin/billing/plans');
    await page.getByRole('button', { name: 'New plan' }).click();
    const dialog = page.getByRole('dialog', { name: 'New plan' });
    await dialog.getByLabel('Name').fill('Pro e2e');
    await dialog.getByLabel('Price (credits per period)').fill('5');
    await dialog.getByLabel('Period', { exact: true }).selectOption('days');
    await dialog.getByLabel('Days', { exact: true }).fill('10');
    await dialog.getByRole('button', { name: 'Add quota' }).click();
    const quota = dialog.getByRole('group', { name: 'Quota 1' });
    await quota.getByLabel('Models (comma-separated, * for all)').fill('gpt-e2e, gpt-mini');
    await quota.getByLabel('Allowance per period').fill('1.5');
    await dialog.getByRole('button', { name: 'Create' }).click();
    await dialog.getByText('The allowance must be a whole number above 0.').waitFor();
    await quota.getByLabel('Allowance per period').fill('100');
    await dialog.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('cell', { name: 'Pro e2e', exact: true }).waitFor();
    await page.getByText('10 days').waitFor();

    const [plan] = (await api('/v1/admin/plans')).json.data as Array<Record<string, unknown>>;
    expect(plan).toMatchObject({ name: 'Pro e2e', period: { days: 10 }, price: '5.000000', quotas: [{ models: ['gpt-e2e', 'gpt-mini'], requests: 100, tokens: null }] });

    await page.getByRole('button', { name: 'Edit Pro e2e' }).click();
    const edit = page.getByRole('dialog', { name: 'Edit plan' });
    await edit.getByLabel('Counts').selectOption('tokens');
    await edit.getByRole('button', { name: 'Save' }).click();
    await expect.poll(async () => (await api(`/v1/admin/plans/${plan!.id as string}`)).json.quotas).toEqual([{ models: ['gpt-e2e', 'gpt-mini'], requests: null, tokens: 100 }]);
    await done(page);
  });

  it('tops a user up, subscribes them to a plan, shows both in the ledger and exports it as CSV', async () => {
    const plan = (await api('/v1/admin/plans', { body: { name: `Basic ${marker}`, period: 'month', quotas: [{ models: ['*'], requests: 50 }], price: '2' } })).json;
    const page = await adminPage('/admin/billing/credits');
    const form = page.getByRole('form', { name: 'Top up or adjust' });
    await form.getByLabel('User').selectOption({ label: ui.s.userEmail });
    await form.getByLabel('Amount (credits)').fill('12.5');
    await form.getByLabel('Reason').fill(`welcome ${marker}`);
    await form.getByRole('button', { name: 'Apply' }).click();
    await form.getByRole('status').getByText(`${ui.s.userEmail}: balance now 12.500000`).waitFor();
    expect((await api(`/v1/admin/credits/${userId}`)).json).toMatchObject({ balance: '12.500000' });
    await page.getByRole('row', { name: new RegExp(`${ui.s.userEmail}.*12\\.500000`) }).waitFor();

    await page.getByRole('navigation', { name: 'Billing sections' }).getByRole('link', { name: 'Subscriptions' }).click();
    const assign = page.getByRole('form', { name: 'Subscribe a user' });
    await assign.getByLabel('User').selectOption({ label: ui.s.userEmail });
    await assign.getByLabel('Plan').selectOption(plan.id as string);
    await assign.getByRole('button', { name: 'Subscribe' }).click();
    await page.getByRole('cell', { name: new RegExp(`Basic ${marker}`) }).waitFor();
    expect((await api(`/v1/admin/subscriptions/${userId}`)).json).toMatchObject({ plan_id: plan.id, status: 'active' });

    await page.getByRole('navigation', { name: 'Billing sections' }).getByRole('link', { name: 'Ledger' }).click();
    await page.getByLabel('User').selectOption({ label: ui.s.userEmail });
    await page.getByRole('row', { name: new RegExp(`Top-up.*12\\.500000.*welcome ${marker}`) }).waitFor();
    await page.getByRole('row', { name: /Subscription fee.*-2\.000000.*10\.500000/ }).waitFor();
    await page.getByLabel('Type').selectOption('topup');
    await expect.poll(() => page.getByRole('row', { name: /Subscription fee/ }).count()).toBe(0);
    await page.getByLabel('Type').selectOption('');
    await docScreenshot(page, 'billing');
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export CSV' }).click()]);
    expect(download.suggestedFilename()).toBe(`ledger-default-${userId}.csv`);
    const csv = readFileSync((await download.path())!, 'utf8');
    expect(csv).toContain(`welcome ${marker}`);
    expect(csv).toContain('subscription_fee');
    expect(csv.split(/\r?\n/).filter(Boolean)).toHaveLength(1 + (await api(`/v1/admin/billing/ledger?user_id=${userId}`)).json.data.length);

    await page.getByRole('navigation', { name: 'Billing sections' }).getByRole('link', { name: 'Statements' }).click();
    await page.getByRole('row', { name: new RegExp(`${ui.s.userEmail}.*12\\.500000`) }).waitFor();

    // An adjustment down; a bad amount shows the server's error and keeps the form.
    await page.getByRole('navigation', { name: 'Billing sections' }).getByRole('link', { name: 'Credits' }).click();
    await form.getByLabel('User').selectOption({ label: ui.s.userEmail });
    await form.getByLabel('Movement').selectOption('adjust');
    await form.getByLabel('Amount (credits)').fill('-0.5x');
    await form.getByLabel('Reason').fill(`correction ${marker}`);
    await form.getByRole('button', { name: 'Apply' }).click();
    await form.getByRole('alert').waitFor();
    await expect(form.getByLabel('Reason').inputValue()).resolves.toBe(`correction ${marker}`);
    await form.getByLabel('Amount (credits)').fill('-0.5');
    await form.getByRole('button', { name: 'Apply' }).click();
    await form.getByRole('status').getByText(`${ui.s.userEmail}: balance now 10.000000`).waitFor();
    expect((await api(`/v1/admin/credits/${userId}`)).json).toMatchObject({ balance: '10.000000' });
    const [adjustment] = (await api(`/v1/admin/billing/ledger?user_id=${userId}&type=adjustment`)).json.data;
    expect(adjustment).toMatchObject({ amount: '-0.500000', reason: `correction ${marker}` });
    await done(page);
  });

  it('finds failed logins by text and level, shows an entry in the drawer, and exports them as CSV', async () => {
    await failLogins(3);
    const page = await adminPage('/admin/logs');
    const filters = page.getByRole('search', { name: 'Log filters' });
    await filters.getByLabel('Text').fill(marker);
    await filters.getByLabel('Level').selectOption('WARNING');
    await filters.getByLabel('Category').selectOption('security');
    const rows = page.getByRole('row', { name: new RegExp(`login failed for ${marker}`) });
    // The index is written in batches: search again until the three are in.
    await expect
      .poll(
        async () => {
          await filters.getByRole('button', { name: 'Search' }).click();
          await page.getByRole('button', { name: 'Search' }).and(page.locator(':enabled')).waitFor();
          return rows.count();
        },
        { timeout: 15_000, interval: 300 },
      )
      .toBe(3);
    await filters.getByLabel('Level').selectOption('ERROR');
    await filters.getByRole('button', { name: 'Search' }).click();
    await page.getByText('No entries match.').waitFor();
    await filters.getByLabel('Level').selectOption('WARNING');
    await filters.getByRole('button', { name: 'Search' }).click();
    await rows.first().waitFor();

    await rows.first().getByRole('button', { name: /Details of the entry/ }).click();
    const drawer = page.getByRole('dialog', { name: 'Log entry' });
    await drawer.getByText('"event": "login_failed"').waitFor();
    await drawer.getByText('"reason": "unknown user"').waitFor();
    await drawer.getByRole('button', { name: 'Close' }).click();

    const [download] = await Promise.all([page.waitForEvent('download'), filters.getByRole('button', { name: 'Export' }).click()]);
    expect(download.suggestedFilename()).toMatch(/^switchyard-logs-.*\.csv$/);
    const lines = readFileSync((await download.path())!, 'utf8').split(/\r?\n/).filter(Boolean);
    expect(lines[0]).toContain('timestamp,level,category');
    expect(lines.slice(1)).toHaveLength(3);
    for (const line of lines.slice(1)) expect(line).toMatch(new RegExp(`WARNING,security,auth,login_failed.*login failed for ${marker}`));

    const found = await api('/api/admin/logs/search', { body: { query: marker, filters: { level: 'WARNING' } } });
    expect(found.json.data).toHaveLength(3);
    await docScreenshot(page, 'logs');
    await done(page);
  });

  it('pages the results with "load more"', async () => {
    // 60 entries through the app's own log hub (as its logger would write them), a minute apart.
    const base = Date.now() - 3_600_000;
    for (let i = 0; i < 60; i++) {
      ui.s.app.ctx.logs.hub.publish({ id: `e2e-${marker}-${i}`, timestamp: new Date(base + i * 60_000).toISOString(), level: 'INFO', category: 'system', component: 'e2e', event: 'test', message: `paged ${marker}p entry ${i}`, details: {}, instance: 'e2e' });
    }
    await ui.s.app.ctx.logs.index.flush();
    const page = await adminPage('/admin/logs');
    const filters = page.getByRole('search', { name: 'Log filters' });
    await filters.getByLabel('Text').fill(`${marker}p`);
    await filters.getByRole('button', { name: 'Search' }).click();
    await page.getByText('50 entries shown').waitFor();
    await page.getByRole('row', { name: new RegExp(`paged ${marker}p entry 59 `) }).waitFor();
    await page.getByRole('button', { name: 'Load more' }).click();
    await page.getByText('60 entries shown').waitFor();
    await page.getByRole('row', { name: new RegExp(`paged ${marker}p entry 0 `) }).waitFor();
    await expect(page.getByRole('button', { name: 'Load more' }).count()).resolves.toBe(0);
    await done(page);
  });

  it('creates an alert rule, sees it fire in the firing list, and disables it', async () => {
    const page = await adminPage('/admin/alerts/rules');
    await page.getByRole('button', { name: 'New rule' }).click();
    const dialog = page.getByRole('dialog', { name: 'New rule' });
    await dialog.getByLabel('Name').fill(`Guessing ${marker}`);
    await dialog.getByLabel('Kind').selectOption('failed_logins');
    await dialog.getByLabel('Severity').selectOption('critical');
    await dialog.getByLabel('Threshold (count)').fill('0.5');
    await dialog.getByLabel('Window (seconds)').fill('600');
    await dialog.getByRole('button', { name: 'Create' }).click();
    await dialog.getByText('This kind counts: the threshold is a whole number.').waitFor();
    await dialog.getByLabel('Threshold (count)').fill('0');
    await dialog.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('cell', { name: `Guessing ${marker}`, exact: true }).waitFor();
    const rules = (await api('/api/admin/alerts/rules')).json.data as Array<Record<string, any>>; // eslint-disable-line @typescript-eslint/no-explicit-any
    const rule = rules.find((r) => r.name === `Guessing ${marker}`)!;
    expect(rule).toMatchObject({ condition: { kind: 'failed_logins', threshold: 0, window: 600 }, severity: 'critical', enabled: true, state: 'ok' });

    await failLogins(1);
    const round = await ui.s.app.ctx.alerts!.evaluateOnce();
    expect(round.fired.length).toBeGreaterThanOrEqual(1);
    await ui.s.app.ctx.runner.waitFor(await ui.s.app.ctx.store.headPosition(), { projections: ['alerts'] });

    await page.getByRole('navigation', { name: 'Alert sections' }).getByRole('link', { name: 'Alerts' }).click();
    await expect(page.getByLabel('State').inputValue()).resolves.toBe('firing');
    await page.getByRole('row', { name: new RegExp(`Guessing ${marker}.*Critical.*Firing`) }).waitFor();
    await docScreenshot(page, 'alerts');
    await page.getByLabel('State').selectOption('resolved');
    await expect.poll(() => page.getByRole('row', { name: new RegExp(`Guessing ${marker}`) }).count()).toBe(0);

    await page.getByRole('navigation', { name: 'Alert sections' }).getByRole('link', { name: 'Rules' }).click();
    await page.getByRole('row', { name: new RegExp(`Guessing ${marker}.*Firing`) }).waitFor();
    await page.getByRole('switch', { name: `Enable rule Guessing ${marker}` }).uncheck();
    await page.getByRole('row', { name: new RegExp(`Guessing ${marker}.*OK`) }).waitFor();
    expect((await api(`/api/admin/alerts/rules/${rule.id as string}`)).json).toMatchObject({ enabled: false, state: 'ok' });
    await done(page);
  });

  it('creates a webhook (secret shown once), sends a test that arrives signed, and redelivers it', async () => {
    const page = await adminPage('/admin/alerts/webhooks');
    const url = `${receiver.url}/hook-${marker}`;
    await page.getByRole('button', { name: 'New webhook' }).click();
    const dialog = page.getByRole('dialog', { name: 'New webhook' });
    await dialog.getByLabel('URL').fill(url);
    await dialog.getByLabel('All events (new ones included)').uncheck();
    await dialog.getByLabel('key.created').check();
    await dialog.getByLabel('alert.fired').check();
    // A receiver written for 1.x: the legacy payload format (docs/api-versions.md).
    await dialog.getByLabel('Payload format', { exact: true }).selectOption('v1');
    await dialog.getByRole('button', { name: 'Create' }).click();
    const secretDialog = page.getByRole('dialog', { name: 'Secret' });
    const secret = (await secretDialog.getByLabel('Secret', { exact: true }).textContent())!.trim();
    expect(secret).toMatch(/^whsec_/);
    await secretDialog.getByRole('button', { name: 'Copy secret' }).click();
    await expect(page.evaluate(() => navigator.clipboard.readText())).resolves.toBe(secret);
    await secretDialog.getByRole('button', { name: 'Done' }).click();
    receiver.secret = secret;

    const hooks = (await api('/v1/admin/webhooks')).json.data as Array<Record<string, unknown>>;
    const hook = hooks.find((h) => h.url === url)!;
    expect(hook).toMatchObject({ events: ['alert.fired', 'key.created'], enabled: true, api_version: 'v1' });
    expect(hook).not.toHaveProperty('secret');

    await page.getByRole('button', { name: `Send a test to ${url}` }).click();
    await page.getByRole('status').getByText('Test delivery queued.').waitFor();
    await page.getByRole('link', { name: `Deliveries of ${url}` }).click();
    // The page looks again while the delivery is pending.
    await page.getByRole('row', { name: /webhook\.test.*delivered.*200/ }).waitFor({ timeout: 15_000 });
    const arrived = receiver.received.filter((r) => r.path === `/hook-${marker}`);
    expect(arrived).toHaveLength(1);
    expect(arrived[0]).toMatchObject({ signatureValid: true, json: { event: 'webhook.test', api_version: 'v1', data: { webhook_id: hook.id } } });
    await docScreenshot(page, 'webhooks');

    await page.getByRole('button', { name: /^Redeliver / }).click();
    await expect.poll(() => receiver.received.filter((r) => r.path === `/hook-${marker}`).length, { timeout: 15_000 }).toBe(2);
    const [first, second] = receiver.received.filter((r) => r.path === `/hook-${marker}`);
    expect(second!.headers['x-switchyard-event-id']).toBe(first!.headers['x-switchyard-event-id']);
    expect(second!.signatureValid).toBe(true);
    await expect
      .poll(async () => ((await api(`/v1/admin/webhooks/${hook.id as string}/deliveries`)).json.data as Array<{ status: string; attempts: number }>)[0])
      .toMatchObject({ status: 'delivered', attempts: 2 });
    await page.getByRole('row', { name: /webhook\.test.*delivered.*2.*200/ }).waitFor({ timeout: 10_000 });
    await done(page);
  });

  it('fits a phone: no page-wide horizontal scroll on the ledger, logs and webhooks', async () => {
    const page = await adminPage('/admin/billing/ledger', true);
    for (const path of ['/admin/billing/ledger', '/admin/logs', '/admin/alerts/webhooks', '/admin/billing/plans']) {
      await page.goto(`${ui.url}${path}`);
      await page.getByRole('heading', { level: 1 }).waitFor();
      await page.getByRole('table').first().waitFor();
      expect(await page.evaluate(() => document.documentElement.scrollWidth), path).toBeLessThanOrEqual(390);
    }
    await done(page);
  });

  it('refuses the pages to users', async () => {
    const { page } = await newPage(ui.browser);
    await signIn(page, ui.url, ui.s.userEmail, TEST_USER_PASSWORD);
    await page.goto(`${ui.url}/admin/billing`);
    await page.getByText('Only administrators can open this page.').waitFor();
    await done(page);
  });
});
