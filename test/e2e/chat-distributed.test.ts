/**
 * The chat's two-device sync on two app instances sharing NATS + MariaDB + Redis: the user's first
 * device talks to one instance, the second to the other; the message sent on the first, its
 * streamed reply and a new conversation show on the second without a reload.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { call, createUser, login, startApp, TEST_USER_PASSWORD, type RunningApp } from '../support/app.js';
import { appModes } from '../support/modes.js';
import { createChannel } from '../support/relay.js';
import { chromiumAvailable, newPage, pageErrors, signIn } from './support/browser.js';
import { startUiApp, type UiApp } from './support/ui-app.js';
import { WEB_DIST } from './support/web-build.js';

const distributed = appModes(inject('services'), inject('serviceUrls')).find((m) => m.name === 'distributed')!;
const MODEL = 'gpt-chat-fake';

describe.runIf(chromiumAvailable && distributed.enabled)('web UI chat on two instances (distributed)', () => {
  let ui: UiApp;
  let b: RunningApp;
  let cleanup: () => Promise<void> = async () => undefined;
  beforeAll(async () => {
    const mode = distributed.env();
    cleanup = mode.cleanup;
    ui = await startUiApp({ ...mode.env, HEALTH_CHECK_ENABLED: 'false' });
    b = await startApp({ ...mode.env, HEALTH_CHECK_ENABLED: 'false', WEB_DIR: WEB_DIST });
    await createChannel(ui.s, { type: 'openai', base_url: ui.fake.baseUrl, models: [MODEL] });
  }, 180_000);
  afterAll(async () => {
    await b?.close();
    await ui?.close();
    await cleanup();
  });

  it('keeps a device on each instance in sync without a reload', async () => {
    const created = await createUser(ui.url, ui.s.adminToken);
    const token = (await login(ui.url, created.email, TEST_USER_PASSWORD)).access_token;
    // The second instance knows the user once its read model has caught up.
    await expect.poll(async () => (await call(`${b.url}/v1/auth/login`, { body: { email: created.email, password: TEST_USER_PASSWORD } })).status, { timeout: 15_000 }).toBe(200);
    const id = (await call(`${ui.url}/v1/conversations`, { token, body: { title: 'Across instances', model: MODEL } })).json.id as string;

    const one = await newPage(ui.browser);
    const two = await newPage(ui.browser);
    await signIn(one.page, ui.url, created.email, TEST_USER_PASSWORD);
    await signIn(two.page, b.url, created.email, TEST_USER_PASSWORD);
    await one.page.goto(`${ui.url}/chat/${id}`);
    await two.page.goto(`${b.url}/chat/${id}`);
    await two.page.getByRole('heading', { name: 'Across instances' }).waitFor();

    await one.page.getByLabel('Message', { exact: true }).fill('hello from instance one');
    await one.page.getByRole('button', { name: 'Send' }).click();
    await one.page.locator('article.msg.assistant:not(.streaming)').getByText('Hello! You said: hello from instance one').waitFor();
    await two.page.locator('article.msg.user').getByText('hello from instance one').waitFor();
    await two.page.locator('article.msg.assistant:not(.streaming)').getByText('Hello! You said: hello from instance one').waitFor();
    expect((await call(`${b.url}/v1/conversations/${id}`, { token })).json.messages).toHaveLength(2);

    await call(`${ui.url}/v1/conversations`, { token, body: { title: 'Started on instance one' } });
    await two.page.getByRole('complementary', { name: 'Conversations' }).getByRole('link', { name: 'Started on instance one' }).waitFor();
    expect(pageErrors(one.page)).toEqual([]);
    expect(pageErrors(two.page)).toEqual([]);
    await Promise.all([one.context.close(), two.context.close()]);
  });
});
