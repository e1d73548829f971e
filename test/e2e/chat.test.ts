/**
 * The chat in a real browser against the real server and the fake OpenAI upstream (it answers
 * "Hello! You said: <the last user text>"): a streamed reply rendered as Markdown (code block with a
 * copy button, raw HTML shown as text), usage; stop; regenerate; edit and re-send; an attached
 * file's text reaching the upstream; the list's search, rename, pin, archive, delete; presets and
 * settings; two devices of one user kept in sync. Each test has a user of its own.
 */
import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createUser, login, TEST_USER_PASSWORD } from '../support/app.js';
import { createChannel } from '../support/relay.js';
import { chromiumAvailable, docScreenshot, newPage, pageErrors, signIn } from './support/browser.js';
import { startUiApp, type UiApp } from './support/ui-app.js';

const MODEL = 'gpt-chat-fake';

describe.runIf(chromiumAvailable)('web UI chat', () => {
  let ui: UiApp;
  beforeAll(async () => {
    ui = await startUiApp();
    await createChannel(ui.s, { type: 'openai', base_url: ui.fake.baseUrl, models: [MODEL] });
  }, 120_000);
  afterAll(async () => ui?.close());

  /** A user of its own (conversations do not mix between tests), signed in on a new page. */
  const user = async (options: { phone?: boolean; colorScheme?: 'light' | 'dark' } = {}) => {
    const created = await createUser(ui.url, ui.s.adminToken);
    const token = (await login(ui.url, created.email, TEST_USER_PASSWORD)).access_token;
    const { context, page } = await newPage(ui.browser, options);
    await signIn(page, ui.url, created.email, TEST_USER_PASSWORD);
    return { email: created.email, token, context, page };
  };
  const conversation = async (token: string, id: string) => (await call(`${ui.url}/v1/conversations/${id}`, { token })).json;
  const idOf = (page: Page) => new URL(page.url()).pathname.split('/')[2]!;
  const chatRequests = () => ui.fake.requests.filter((r) => r.path === '/v1/chat/completions');
  const assistant = (page: Page) => page.locator('article.msg.assistant:not(.streaming)');

  /** Types a message and sends it. */
  const say = async (page: Page, text: string) => {
    await page.getByLabel('Message', { exact: true }).fill(text);
    await page.getByRole('button', { name: 'Send' }).click();
  };

  it('streams a reply rendered as Markdown: a code block with its copy button, raw HTML as text, usage', async () => {
    const { page, context, token } = await user();
    await page.goto(`${ui.url}/chat`);
    await expect.poll(() => page.getByLabel('Model').inputValue()).toBe(MODEL);
    const code = 'const answer: number = 42;\nconsole.log(`The answer is ${answer}`);';
    const text = `Show me a **TypeScript** example:\n\n\`\`\`ts\n${code}\n\`\`\``;
    await say(page, text);
    const reply = assistant(page).last();
    await reply.getByText('Hello! You said: Show me a').waitFor();
    await expect.poll(() => new URL(page.url()).pathname).toMatch(/^\/chat\/conv_/);
    // Markdown: bold, a highlighted code block with its copy button; the usage of the reply.
    await expect(reply.locator('.markdown strong').textContent()).resolves.toBe('TypeScript');
    await reply.locator('code.hljs .hljs-keyword').first().waitFor();
    await reply.getByText('18 tokens (11 in, 7 out)').waitFor();
    await docScreenshot(page, 'chat');
    await reply.getByRole('button', { name: 'Copy code' }).click();
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe(code);

    const stored = await conversation(token, idOf(page));
    expect(stored.model).toBe(MODEL);
    expect(stored.messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant']);
    expect(stored.messages[0].content).toBe(text);
    expect(stored.messages[1]).toMatchObject({ content: `Hello! You said: ${text}`, usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 } });
    expect(chatRequests().at(-1)!.json).toMatchObject({ model: MODEL, stream: true });

    // The same conversation on a phone, and in the dark.
    for (const options of [{ phone: true }, { colorScheme: 'dark' as const }]) {
      const other = await newPage(ui.browser, options);
      await other.context.addCookies(await context.cookies());
      await other.page.goto(page.url());
      await assistant(other.page).last().locator('code.hljs').waitFor();
      if (options.phone) {
        expect(await other.page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
        await expect(other.page.getByRole('complementary', { name: 'Conversations' }).isVisible()).resolves.toBe(false);
        await docScreenshot(other.page, 'chat-phone');
        await other.page.getByRole('button', { name: 'Show conversations' }).click();
        await other.page.getByRole('complementary', { name: 'Conversations' }).getByRole('link').first().waitFor();
      } else {
        await expect.poll(() => other.page.evaluate(() => document.documentElement.dataset.theme)).toBe('dark');
        await docScreenshot(other.page, 'chat-dark');
      }
      expect(pageErrors(other.page)).toEqual([]);
      await other.context.close();
    }

    // Raw HTML in a reply is shown as text and never runs.
    await say(page, 'Look <img src=x onerror="window.__pwned=1"> <script>window.__pwned=2</script>');
    const second = assistant(page).nth(1);
    await second.getByText('<img src=x onerror="window.__pwned=1">').waitFor();
    await second.getByText('<script>window.__pwned=2</script>').waitFor();
    await expect(page.locator('.markdown img, .markdown script').count()).resolves.toBe(0);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(pageErrors(page)).toEqual([]);
    await context.close();
  });

  it('stops a reply: it stops growing and is stored as stopped', async () => {
    const { page, context, token } = await user();
    await page.goto(`${ui.url}/chat`);
    await expect.poll(() => page.getByLabel('Model').inputValue()).toBe(MODEL);
    ui.fake.mode = { kind: 'slow', delayMs: 1500 };
    try {
      await say(page, 'tell me a very long story about trains');
      const streaming = page.locator('article.msg.streaming');
      await streaming.getByText('Hello! You sa').waitFor();
      const stopAnswer = page.waitForResponse((r) => r.url().endsWith('/stop'));
      await page.getByRole('button', { name: 'Stop' }).click();
      expect(await (await stopAnswer).json()).toMatchObject({ object: 'conversation.stop', stopped: true });
      const reply = assistant(page).last();
      await reply.getByText('Stopped').waitFor();
      const shown = (await reply.locator('.markdown').textContent())!.trim();
      expect(shown!.length).toBeLessThan('Hello! You said: tell me a very long story about trains'.length);
      const stored = await conversation(token, idOf(page));
      expect(stored.messages.at(-1)).toMatchObject({ role: 'assistant', finish_reason: 'aborted' });
      expect(stored.messages.at(-1).content.trim()).toBe(shown);
      await page.getByRole('button', { name: 'Send' }).waitFor();
    } finally {
      ui.fake.mode = { kind: 'reply' };
    }
    await context.close();
  });

  it('shows an upstream failure and answers the question again with Regenerate', async () => {
    const { page, context, token } = await user();
    await page.goto(`${ui.url}/chat`);
    await expect.poll(() => page.getByLabel('Model').inputValue()).toBe(MODEL);
    ui.fake.mode = { kind: 'error', status: 500, message: 'the fake is down' };
    try {
      await say(page, 'are you there?');
      await page.locator('.conversation').getByRole('alert').waitFor();
    } finally {
      ui.fake.mode = { kind: 'reply' };
    }
    await page.locator('article.msg.user').getByText('are you there?').waitFor();
    await page.locator('article.msg.user').getByRole('button', { name: 'Regenerate' }).click();
    await assistant(page).getByText('Hello! You said: are you there?').waitFor();
    await expect(page.locator('.conversation').getByRole('alert').count()).resolves.toBe(0);
    const stored = await conversation(token, idOf(page));
    expect(stored.messages.map((m: { role: string; content: string }) => [m.role, m.content])).toEqual([
      ['user', 'are you there?'],
      ['assistant', 'Hello! You said: are you there?'],
    ]);
    await context.close();
  });

  it('regenerates the last reply, edits a message to re-send it, and exports the conversation', async () => {
    const { page, context, token } = await user();
    await page.goto(`${ui.url}/chat`);
    await expect.poll(() => page.getByLabel('Model').inputValue()).toBe(MODEL);
    await say(page, 'first question');
    await assistant(page).getByText('Hello! You said: first question').waitFor();
    const id = idOf(page);
    const before = await conversation(token, id);
    const requests = chatRequests().length;

    await page.getByRole('button', { name: 'Regenerate' }).click();
    await expect.poll(async () => (await conversation(token, id)).messages.at(-1).id).not.toBe(before.messages[1].id);
    await expect.poll(() => chatRequests().length).toBeGreaterThan(requests);
    expect(chatRequests().at(-1)!.body).toContain('first question');
    await assistant(page).getByText('Hello! You said: first question').waitFor();
    await expect(page.locator('article.msg').count()).resolves.toBe(2);

    await page.locator('article.msg.user').getByRole('button', { name: 'Edit' }).click();
    await page.getByLabel('Edit', { exact: true }).fill('a better question');
    await page.getByRole('button', { name: 'Save & send' }).click();
    await assistant(page).getByText('Hello! You said: a better question').waitFor();
    await expect.poll(() => page.locator('article.msg').count()).toBe(2);
    await page.locator('article.msg.user').getByText('edited').waitFor();
    const after = await conversation(token, id);
    expect(after.messages).toHaveLength(2);
    expect(after.messages[0]).toMatchObject({ id: before.messages[0].id, content: 'a better question' });
    expect(after.messages[0].edited_at).not.toBeNull();
    expect(after.messages[1].content).toBe('Hello! You said: a better question');

    // Export: the conversation as a Markdown download.
    const downloading = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Export' }).click();
    const file = await (await downloading).path();
    const exported = readFileSync(file, 'utf8');
    expect(exported).toContain('a better question');
    expect(exported).toContain('Hello! You said: a better question');
    expect(pageErrors(page)).toEqual([]);
    await context.close();
  });

  it('attaches text files (button and drag and drop): upload, processing, the text viewable, and sent to the model', async () => {
    const { page, context, token } = await user();
    await page.goto(`${ui.url}/chat`);
    await expect.poll(() => page.getByLabel('Model').inputValue()).toBe(MODEL);
    await page.locator('input[type=file]').setInputFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('The secret word is pineapple.\n') });
    const chip = page.locator('.attachments li').filter({ hasText: 'notes.txt' });
    await chip.getByText('Ready').waitFor();
    await chip.getByRole('button', { name: 'View text: notes.txt' }).click();
    const dialog = page.getByRole('dialog', { name: 'Text of notes.txt' });
    await dialog.getByText('The secret word is pineapple.').waitFor();
    await dialog.getByRole('button', { name: 'Close' }).click();
    // A second file dropped onto the composer.
    const files = await page.evaluateHandle(() => {
      const data = new DataTransfer();
      data.items.add(new File(['The dropped word is mango.\n'], 'dropped.txt', { type: 'text/plain' }));
      return data;
    });
    await page.locator('form.composer').dispatchEvent('drop', { dataTransfer: files });
    await page.locator('.attachments li').filter({ hasText: 'dropped.txt' }).getByText('Ready').waitFor();
    await say(page, 'What is the secret word?');
    await assistant(page).getByText('Hello! You said: What is the secret word?').waitFor();
    expect(chatRequests().at(-1)!.body).toContain('pineapple');
    expect(chatRequests().at(-1)!.body).toContain('mango');
    const stored = await conversation(token, idOf(page));
    expect(stored.messages[0].file_ids).toHaveLength(2);
    // The message shows its file, with the text viewable.
    await page.locator('article.msg.user .file-name').getByText('notes.txt').waitFor();
    await page.locator('article.msg.user .file-name').getByText('dropped.txt').waitFor();
    await expect(page.locator('.attachments li').count()).resolves.toBe(0);
    expect(pageErrors(page)).toEqual([]);
    await context.close();
  });

  it('finds, renames, pins, archives and deletes conversations', async () => {
    const { page, context, token } = await user();
    const make = async (title: string) => (await call(`${ui.url}/v1/conversations`, { token, body: { title } })).json.id as string;
    const alpha = await make('Alpha planning');
    const beta = await make('Beta notes');
    await page.goto(`${ui.url}/chat`);
    const list = page.getByRole('complementary', { name: 'Conversations' });
    const item = (name: string | RegExp) => list.getByRole('listitem').filter({ hasText: name });
    await item('Beta notes').waitFor();
    await expect(list.getByRole('listitem').first().textContent()).resolves.toContain('Beta notes');

    await list.getByLabel('Search conversations').fill('alpha');
    await expect.poll(() => list.getByRole('listitem').count()).toBe(1);
    await item('Alpha planning').waitFor();
    await list.getByLabel('Search conversations').fill('');
    await item('Beta notes').waitFor();

    await item('Beta notes').getByRole('button', { name: 'Rename' }).click();
    await list.getByLabel('Title').fill('Gamma notes');
    await list.getByRole('button', { name: 'Save' }).click();
    await item('Gamma notes').waitFor();
    expect((await conversation(token, beta)).title).toBe('Gamma notes');

    await item('Alpha planning').getByRole('button', { name: 'Pin' }).click();
    await item('Alpha planning').getByRole('button', { name: 'Unpin' }).waitFor();
    await expect(list.getByRole('listitem').first().textContent()).resolves.toContain('Alpha planning');
    expect((await conversation(token, alpha)).pinned).toBe(true);

    await item('Gamma notes').getByRole('button', { name: 'Archive' }).click();
    await expect.poll(() => item('Gamma notes').count()).toBe(0);
    expect((await conversation(token, beta)).archived).toBe(true);
    await list.getByRole('switch', { name: 'Show archived' }).check();
    await item('Gamma notes').getByRole('button', { name: 'Unarchive' }).waitFor();
    await list.getByRole('switch', { name: 'Show archived' }).uncheck();

    await item('Alpha planning').getByRole('link').click();
    await page.getByRole('heading', { name: 'Alpha planning' }).waitFor();
    await item('Alpha planning').getByRole('button', { name: 'Delete' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete this conversation?' });
    await dialog.getByRole('button', { name: 'Delete' }).click();
    await expect.poll(() => item('Alpha planning').count()).toBe(0);
    await expect.poll(() => new URL(page.url()).pathname).toMatch(/^\/chat\/?$/);
    expect((await call(`${ui.url}/v1/conversations/${alpha}`, { token })).status).toBe(404);
    expect(pageErrors(page)).toEqual([]);
    await context.close();
  });

  it('saves conversation settings and shows the server refusing a bad value without losing the form', async () => {
    const { page, context, token } = await user();
    const id = (await call(`${ui.url}/v1/conversations`, { token, body: { title: 'Tuned', model: MODEL } })).json.id as string;
    await page.goto(`${ui.url}/chat/${id}`);
    await page.getByRole('button', { name: 'Settings' }).click();
    const dialog = page.getByRole('dialog', { name: 'Conversation settings' });
    await dialog.getByLabel('System prompt').fill('Answer like a pirate.');
    await dialog.getByLabel('Temperature').fill('7');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.getByRole('alert').waitFor();
    await expect(dialog.getByLabel('System prompt').inputValue()).resolves.toBe('Answer like a pirate.');
    await dialog.getByLabel('Temperature').fill('0.3');
    await dialog.getByLabel('Max tokens').fill('256');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => dialog.isVisible()).toBe(false);
    expect(await conversation(token, id)).toMatchObject({ system_prompt: 'Answer like a pirate.', temperature: 0.3, max_tokens: 256 });
    await say(page, 'ahoy');
    await assistant(page).getByText('Hello! You said: ahoy').waitFor();
    const sent = chatRequests().at(-1)!.json as { messages: Array<{ role: string; content: string }>; temperature: number; max_tokens?: number; max_completion_tokens?: number };
    expect(sent.messages[0]).toMatchObject({ role: 'system', content: 'Answer like a pirate.' });
    expect(sent.temperature).toBe(0.3);
    await context.close();
  });

  it('starts a chat from a preset chosen by search', async () => {
    const { page, context, token } = await user();
    const preset = await call(`${ui.url}/api/presets`, { token, body: { name: 'Haiku helper', description: 'Answers in haiku', tags: ['poetry'], category: 'Creative', system_prompt: 'Answer in haiku.' } });
    expect(preset.status, preset.text).toBe(201);
    await page.goto(`${ui.url}/chat`);
    await expect.poll(() => page.getByLabel('Model').inputValue()).toBe(MODEL);
    await page.getByRole('button', { name: 'Choose a preset' }).click();
    const dialog = page.getByRole('dialog', { name: 'Choose a preset' });
    await dialog.getByLabel('Search presets').fill('haiku');
    await dialog.getByRole('button', { name: 'Use: Haiku helper' }).click();
    await page.getByText('Haiku helper').waitFor();
    await say(page, 'write about rain');
    await assistant(page).getByText('Hello! You said: write about rain').waitFor();
    expect((await conversation(token, idOf(page))).preset_id).toBe(preset.json.id);
    expect(chatRequests().at(-1)!.body).toContain('Answer in haiku.');
    await context.close();
  });

  it('keeps two devices of one user in sync without a reload', async () => {
    const one = await user();
    const two = await newPage(ui.browser);
    await signIn(two.page, ui.url, one.email, TEST_USER_PASSWORD);
    const id = (await call(`${ui.url}/v1/conversations`, { token: one.token, body: { title: 'Shared chat', model: MODEL } })).json.id as string;
    await Promise.all([one.page.goto(`${ui.url}/chat/${id}`), two.page.goto(`${ui.url}/chat/${id}`)]);
    await two.page.getByRole('heading', { name: 'Shared chat' }).waitFor();
    await say(one.page, 'sent from the first device');
    await assistant(two.page).getByText('Hello! You said: sent from the first device').waitFor();
    await two.page.locator('article.msg.user').getByText('sent from the first device').waitFor();
    // A new conversation made elsewhere shows in the list.
    await call(`${ui.url}/v1/conversations`, { token: one.token, body: { title: 'Made on the phone' } });
    await two.page.getByRole('complementary', { name: 'Conversations' }).getByRole('link', { name: 'Made on the phone' }).waitFor();
    expect(pageErrors(two.page)).toEqual([]);
    await Promise.all([one.context.close(), two.context.close()]);
  });
});
