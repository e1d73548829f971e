/**
 * Headless Chromium for the end-to-end tests: Debian's `chromium` (/usr/bin/chromium) driven by
 * playwright-core, kept off the network (no background services, every host name but the local
 * ones unresolvable). Playwright gives each launch a fresh temporary profile.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { ROOT } from './web-build.js';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** False where Chromium is not installed (its suites are skipped; under CI=true they fail instead). */
export const chromiumAvailable = existsSync(CHROMIUM) || process.env.CI === 'true';

export const CHROMIUM_FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-default-apps',
  '--disable-extensions',
  '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1',
];

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS });
}

export interface PageOptions {
  /** Narrow viewport (a phone). */
  phone?: boolean;
  colorScheme?: 'light' | 'dark';
}

/** A new browser context (its own cookies and storage: one "device") and a page in it. */
export async function newPage(browser: Browser, options: PageOptions = {}): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({
    viewport: options.phone ? { width: 390, height: 844 } : { width: 1280, height: 800 },
    colorScheme: options.colorScheme ?? 'light',
    locale: 'en-US',
    permissions: ['clipboard-read', 'clipboard-write'],
  });
  const page = await context.newPage();
  // A failure on the page is a test failure: collect what the app logs as errors.
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(String(error)));
  thrown.set(page, errors);
  return { context, page };
}

const thrown = new WeakMap<Page, string[]>();
/** Uncaught errors the page has thrown so far. */
export const pageErrors = (page: Page): string[] => thrown.get(page) ?? [];

/** Signs in through the login form and waits for the shell. */
export async function signIn(page: Page, url: string, email: string, password: string): Promise<void> {
  await page.goto(url);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: /Log out|退出登录/ }).waitFor();
}

/**
 * Saves a screenshot for the docs (docs/screenshots/<name>.png) when UPDATE_SCREENSHOTS=1; a
 * normal test run leaves the checked-in images alone.
 */
export async function docScreenshot(page: Page, name: string): Promise<void> {
  if (process.env.UPDATE_SCREENSHOTS !== '1') return;
  const dir = join(ROOT, 'docs', 'screenshots');
  mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: join(dir, `${name}.png`), fullPage: false });
}
