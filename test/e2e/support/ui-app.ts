/**
 * A real Switchyard serving the built UI (dist/web) with a fake OpenAI upstream, and a browser:
 * what every end-to-end test starts from. `env` adds settings (e.g. a distributed mode's).
 */
import type { Browser } from 'playwright-core';
import { startApp, TEST_ADMIN, type RunningApp } from '../../support/app.js';
import { startOpenAiFake, type OpenAiFake } from '../../support/fake-upstreams/openai.js';
import { launchBrowser } from './browser.js';
import { ensureWebBuilt } from './web-build.js';

export interface UiApp {
  s: RunningApp;
  url: string;
  fake: OpenAiFake;
  browser: Browser;
  /** The bootstrap root admin's login. */
  admin: typeof TEST_ADMIN;
  close(): Promise<void>;
}

export async function startUiApp(env: Record<string, string> = {}): Promise<UiApp> {
  const webDir = await ensureWebBuilt();
  const [s, fake, browser] = await Promise.all([startApp({ WEB_DIR: webDir, ...env }), startOpenAiFake(), launchBrowser()]);
  return {
    s,
    url: s.url,
    fake,
    browser,
    admin: TEST_ADMIN,
    async close() {
      await browser.close();
      await Promise.all([s.close(), fake.close()]);
    },
  };
}
