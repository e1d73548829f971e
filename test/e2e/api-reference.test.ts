/**
 * /docs, the interactive API reference, in a real browser: it renders the operations of this
 * server's document (operation ids shown), loads nothing from another origin, fails no request
 * and breaks no rule of its Content-Security-Policy.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type RunningApp } from '../support/app.js';
import { chromiumAvailable, launchBrowser, newPage, pageErrors } from './support/browser.js';
import type { Browser } from 'playwright-core';

describe.runIf(chromiumAvailable)('API reference page (/docs)', () => {
  let s: RunningApp;
  let browser: Browser;
  beforeAll(async () => {
    s = await startApp({}, { anonymous: true });
    browser = await launchBrowser();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await s?.close();
  });

  it('renders the operations from this server alone, with no failed request and no CSP violation', async () => {
    const { context, page } = await newPage(browser);
    const origin = new URL(s.url).origin;
    const elsewhere: string[] = [];
    const failed: string[] = [];
    const consoleErrors: string[] = [];
    // On the context: both pages' requests.
    context.on('request', (request) => {
      const url = request.url();
      if (!url.startsWith(`${origin}/`) && !url.startsWith('data:')) elsewhere.push(url);
    });
    context.on('requestfailed', (request) => failed.push(`${request.url()}: ${request.failure()?.errorText}`));
    context.on('response', (response) => {
      if (response.status() >= 400) failed.push(`${response.url()}: ${response.status()}`);
    });
    context.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(message.text());
    });

    await page.goto(`${s.url}/docs`);
    // The first operations of the document, their summaries and operation ids as Swagger UI draws them.
    await page.locator('#operations-system-getHealth').getByText('getHealth', { exact: true }).waitFor();
    await page.getByText('Readiness of every configured dependency').first().waitFor();
    expect(await page.title()).toBe('Switchyard API reference');

    // A deep link opens an operation (Swagger UI draws the others as they are scrolled to): its
    // responses, the shared error schema among them.
    await page.waitForLoadState('load');
    const linked = await context.newPage();
    const linkedErrors: string[] = [];
    linked.on('pageerror', (error) => linkedErrors.push(String(error)));
    await linked.goto(`${s.url}/docs#/relay/createChatCompletion`);
    const chat = linked.locator('#operations-relay-createChatCompletion');
    await chat.getByText('createChatCompletion', { exact: true }).waitFor();
    await chat.locator('.responses-table').first().waitFor();
    const responses = await chat.locator('.responses-table').first().innerText();
    expect(responses).toContain('OpenAI-style error');
    expect(responses).toContain('model_not_found');

    expect(elsewhere).toEqual([]);
    expect(failed).toEqual([]);
    expect(consoleErrors.filter((e) => /Content Security Policy|Refused to/i.test(e))).toEqual([]);
    expect([...pageErrors(page), ...linkedErrors]).toEqual([]);
    await context.close();
  });
});
