/**
 * Chatting in a conversation end to end, on the real server with a fake OpenAI upstream, embedded
 * and on two distributed instances (NATS + MariaDB + Redis): the reply streamed (read by the
 * official SDK and as raw SSE) or whole, stored before its last bytes; abort on disconnect and
 * stop (same instance, other instance) storing the partial text once with finish_reason aborted;
 * regenerate; edit and re-send; titles (first words, the tenant's title model); trimming to a
 * small context window; the usage event's request id on the reply; preset context and system
 * prompt in the upstream request; fallback to a second channel; 404 for anyone but the owner.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { call, loggedInUser, startApp, type RunningApp } from '../support/app.js';
import { dereferencedOpenapi } from '../support/openapi.js';
import { replyText, type FakeUpstream } from '../support/fake-upstreams/fake.js';
import { startOpenAiFake } from '../support/fake-upstreams/openai.js';
import { appModes } from '../support/modes.js';
import { createChannel, sdk, usageEvents } from '../support/relay.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const services = inject('services');
const urls = inject('serviceUrls');

/** The data of each SSE event of a text/event-stream body, parsed (`[DONE]` kept as a string). */
function sseEvents(text: string): Array<Json | '[DONE]'> {
  return text
    .split('\n\n')
    .filter((block) => block.startsWith('data: '))
    .map((block) => block.slice(6))
    .map((data) => (data === '[DONE]' ? '[DONE]' : (JSON.parse(data) as Json)));
}

/** Waits (without a clock) until `check` returns a value, polling the server. */
async function until<T>(check: () => Promise<T | undefined>, what: string, tries = 400): Promise<T> {
  for (let i = 0; i < tries; i++) {
    const value = await check();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`gave up waiting for ${what}`);
}

describe.each(appModes(services, urls))('conversation messages ($name)', (mode) => {
  let a: RunningApp;
  /** A second instance on the same stores (distributed only). */
  let b: RunningApp | null = null;
  let fake: FakeUpstream;
  let broken: FakeUpstream;
  let cleanup: () => Promise<void> = async () => undefined;

  const api = (s: RunningApp, path: string, token: string, init: { method?: string; body?: unknown } = {}) => call(`${s.url}${path}`, { token, ...init });
  const create = async (body: Json = {}, token = a.userToken) => {
    const res = await api(a, '/v1/conversations', token, { body: { model: 'conv-model', ...body } });
    expect(res.status, res.text).toBe(201);
    return res.json.id as string;
  };
  const read = async (id: string, token = a.userToken, s = a) => {
    const res = await api(s, `/v1/conversations/${id}`, token);
    expect(res.status, res.text).toBe(200);
    return res.json;
  };
  const send = (id: string, body: Json, token = a.userToken, s = a) => api(s, `/v1/conversations/${id}/messages`, token, { body });

  /** Starts a streamed reply; resolves once its first text arrived, with the rest to read. */
  async function streamUntilText(id: string, content: string, signal?: AbortSignal) {
    const res = await fetch(`${a.url}/v1/conversations/${id}/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${a.userToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ content }),
      signal,
    });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    while (!/"content":"[^"]+"/.test(text)) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the stream ended before any text: ${text}`);
      text += decoder.decode(value, { stream: true });
    }
    const rest = async () => {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return text;
        text += decoder.decode(value, { stream: true });
      }
    };
    return { res, rest };
  }

  beforeAll(async () => {
    if (!mode.enabled) return;
    [fake, broken] = await Promise.all([startOpenAiFake(), startOpenAiFake()]);
    broken.mode = { kind: 'error', status: 500, message: 'broken channel' };
    const env = mode.env();
    cleanup = env.cleanup;
    const settings = {
      ...env.env,
      HEALTH_CHECK_ENABLED: 'false',
      RELAY_MAX_RETRIES: '1',
      RELAY_BACKOFF_BASE: '5ms',
      CHANNEL_FAILURE_THRESHOLD: '1000',
      CONVERSATION_CONTEXT_LENGTHS: 'tiny-model=400',
      CONVERSATION_STOP_POLL: '20ms',
    };
    a = await startApp(settings);
    if (mode.name === 'distributed') b = await startApp(settings);
    await createChannel(a, { type: 'openai', name: 'good', base_url: fake.baseUrl, models: ['conv-model', 'tiny-model', 'title-model', 'fb-model'], priority: 5 });
    await createChannel(a, { type: 'openai', name: 'broken', base_url: broken.baseUrl, models: ['fb-model', 'down-model'], priority: 1 });
    if (b !== null) await until(async () => ((await sdk(b!).models.list()).data.some((m) => m.id === 'fb-model') ? true : undefined), 'the channels on the second instance');
  });
  afterAll(async () => {
    if (!mode.enabled) return;
    await b?.close();
    await a?.close();
    await Promise.all([fake?.close(), broken?.close()]);
    await cleanup();
  });

  describe.runIf(mode.enabled)('', () => {
    it('streams chat.completion.chunk events, then the stored messages, then [DONE] (the official SDK reads it)', async () => {
      const id = await create();
      const stream = await sdk(a).post(`/conversations/${id}/messages`, { body: { content: 'Hello there' }, stream: true });
      const events: Json[] = [];
      for await (const event of stream as unknown as AsyncIterable<Json>) events.push(event);
      const chunks = events.filter((e) => e.object === 'chat.completion.chunk');
      const final = events.at(-1)!;
      expect(chunks.length).toBeGreaterThan(2);
      expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe(replyText('Hello there'));
      expect(final).toMatchObject({
        object: 'conversation.reply',
        conversation_id: id,
        user_message: { object: 'conversation.message', role: 'user', content: 'Hello there' },
        assistant_message: { object: 'conversation.message', role: 'assistant', content: replyText('Hello there'), finish_reason: 'stop', model: 'conv-model' },
        omitted_messages: 0,
        stopped: false,
      });
      expect(final.usage.total_tokens).toBeGreaterThan(0);
      expect(events.filter((e) => e.object === 'conversation.reply')).toHaveLength(1);
      // Stored before the last bytes went out: readable at once, on any instance.
      const stored = await read(id, a.userToken, b ?? a);
      expect(stored.messages.map((m: Json) => [m.id, m.role, m.content])).toEqual([
        [final.user_message.id, 'user', 'Hello there'],
        [final.assistant_message.id, 'assistant', replyText('Hello there')],
      ]);
    });

    it('raw SSE: the same events, [DONE] last; the usage event carries the request id kept on the reply', async () => {
      const id = await create();
      const res = await send(id, { content: 'Raw please' });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
      const events = sseEvents(res.text);
      expect(events.at(-1)).toBe('[DONE]');
      const final = events.at(-2) as Json;
      expect(final.object).toBe('conversation.reply');
      const usage = (await usageEvents(a)).find((e) => e.request_id === final.usage_request_id);
      expect(usage).toMatchObject({ status: 200, model_requested: 'conv-model' });
      const row = await a.app.ctx.sql.db.selectFrom('conversation_messages').selectAll().where('id', '=', final.assistant_message.id).executeTakeFirstOrThrow();
      expect(row.usage_request_id).toBe(final.usage_request_id);
      expect(Number(row.total_tokens)).toBe(usage!.total_tokens);
    });

    it('stream: false answers JSON with both stored messages', async () => {
      const id = await create();
      const res = await send(id, { content: 'Not streamed', stream: false });
      expect(res.status, res.text).toBe(200);
      expect(res.json).toMatchObject({ object: 'conversation.reply', user_message: { content: 'Not streamed' }, assistant_message: { content: replyText('Not streamed'), finish_reason: 'stop' } });
      expect((await read(id)).messages).toHaveLength(2);
    });

    it('sends the preset system prompt and context... and the conversation system prompt, history and new message upstream', async () => {
      const preset = await api(a, '/api/presets', a.userToken, {
        body: { name: 'Tester', system_prompt: 'Preset prompt', context: [{ role: 'user', content: 'Preset question' }, { role: 'assistant', content: 'Preset answer' }], model_preferences: ['conv-model'] },
      });
      expect(preset.status, preset.text).toBe(201);
      const id = await create({ model: undefined, preset_id: preset.json.id, system_prompt: 'Conversation prompt', temperature: 0.3, max_tokens: 77 });
      expect((await send(id, { content: 'First', stream: false })).status).toBe(200);
      expect((await send(id, { content: 'Second', stream: false })).status).toBe(200);
      const upstream = fake.requests.at(-1)!.json as Json;
      expect(upstream).toMatchObject({ model: 'conv-model', temperature: 0.3, max_tokens: 77 });
      expect(upstream.messages).toEqual([
        { role: 'system', content: 'Conversation prompt' },
        { role: 'user', content: 'Preset question' },
        { role: 'assistant', content: 'Preset answer' },
        { role: 'user', content: 'First' },
        { role: 'assistant', content: replyText('First') },
        { role: 'user', content: 'Second' },
      ]);
    });

    it("takes the user's default model and temperature when the conversation sets none", async () => {
      const user = await loggedInUser(a, 'user', 'default');
      const prefs = await api(a, '/v1/users/me', user.token, { method: 'PATCH', body: { preferences: { default_model: 'tiny-model', temperature: 1.1 } } });
      expect(prefs.status, prefs.text).toBe(200);
      const id = await create({ model: undefined }, user.token);
      const res = await send(id, { content: 'Defaults', stream: false }, user.token);
      expect(res.status, res.text).toBe(200);
      expect(fake.requests.at(-1)!.json).toMatchObject({ model: 'tiny-model', temperature: 1.1, max_tokens: 2048 });
    });

    it('trims the oldest turns to the context window and says how many were left out', async () => {
      const id = await create({ model: 'tiny-model', max_tokens: 50 });
      const long = (n: number) => `message ${n}: ${'lorem ipsum dolor sit amet '.repeat(12)}`;
      let last: Json = {};
      for (let n = 1; n <= 4; n++) last = (await send(id, { content: long(n), stream: false })).json;
      expect(last.omitted_messages).toBeGreaterThan(0);
      const upstream = (fake.requests.at(-1)!.json as Json).messages as Json[];
      expect(upstream.at(-1)).toEqual({ role: 'user', content: long(4) });
      expect(upstream[0]!.role).toBe('user');
      expect(upstream).toHaveLength(7 - last.omitted_messages);
      expect(upstream.some((m) => m.content === long(1))).toBe(false);
    });

    it('regenerates the last reply (another model), superseding the old one', async () => {
      const id = await create();
      const first = (await send(id, { content: 'Regenerate me', stream: false })).json;
      const again = await api(a, `/v1/conversations/${id}/regenerate`, a.userToken, { body: { model: 'tiny-model', stream: false } });
      expect(again.status, again.text).toBe(200);
      expect(again.json).toMatchObject({ user_message: { id: first.user_message.id }, assistant_message: { model: 'tiny-model' } });
      expect(again.json.assistant_message.id).not.toBe(first.assistant_message.id);
      expect((fake.requests.at(-1)!.json as Json).messages).toEqual([{ role: 'user', content: 'Regenerate me' }]);
      const stored = await read(id);
      expect(stored.messages.map((m: Json) => m.id)).toEqual([first.user_message.id, again.json.assistant_message.id]);
    });

    it('edits a message and re-sends it: later messages are superseded', async () => {
      const id = await create();
      const first = (await send(id, { content: 'Original question', stream: false })).json;
      await send(id, { content: 'Follow-up', stream: false });
      const res = await api(a, `/v1/conversations/${id}/messages/${first.user_message.id}`, a.userToken, { method: 'PUT', body: { content: 'Edited question' } });
      expect(res.status, res.text).toBe(200);
      const final = sseEvents(res.text).at(-2) as Json;
      expect(final).toMatchObject({ user_message: { id: first.user_message.id, content: 'Edited question' }, assistant_message: { content: replyText('Edited question') } });
      expect((fake.requests.at(-1)!.json as Json).messages).toEqual([{ role: 'user', content: 'Edited question' }]);
      const stored = await read(id);
      expect(stored.messages.map((m: Json) => m.content)).toEqual(['Edited question', replyText('Edited question')]);
      const notUser = await api(a, `/v1/conversations/${id}/messages/${final.assistant_message.id}`, a.userToken, { method: 'PUT', body: { content: 'x' } });
      expect([notUser.status, notUser.json.error.code]).toEqual([400, 'message_not_editable']);
    });

    it('titles an untitled conversation with the first words of its first message', async () => {
      const id = await create();
      await send(id, { content: 'Please explain how rainbows form in the sky after rain', stream: false });
      const title = await until(async () => (await read(id)).title ?? undefined, 'the title');
      expect(title).toBe('Please explain how rainbows form in');
      const titled = await create({ title: 'Mine' });
      await send(titled, { content: 'Anything at all here', stream: false });
      expect((await read(titled)).title).toBe('Mine');
    });

    it("titles with the tenant's title model, through the relay (a usage event of its own)", async () => {
      const set = await api(a, '/v1/admin/settings', a.adminToken, { method: 'PATCH', body: { relay_settings: { conversation_title_model: 'title-model' } } });
      expect(set.status, set.text).toBe(200);
      try {
        await until(async () => (a.app.ctx.billing.settings('default').relay_settings.conversation_title_model === 'title-model' ? true : undefined), 'the setting');
        const id = await create();
        await send(id, { content: 'Tell me about volcanoes', stream: false });
        const title = await until(async () => (await read(id)).title ?? undefined, 'the title');
        // The fake echoes the request's last message: the title request's excerpt of the exchange.
        expect(title).toMatch(/^Hello! You said: User: Tell/);
        expect((await usageEvents(a)).some((e) => e.model_requested === 'title-model')).toBe(true);
      } finally {
        await api(a, '/v1/admin/settings', a.adminToken, { method: 'PATCH', body: { relay_settings: { conversation_title_model: null } } });
      }
    });

    it('falls back to a second channel when the first fails', async () => {
      const id = await create({ model: 'fb-model' });
      const before = broken.requests.length;
      const res = await send(id, { content: 'Fall back', stream: false });
      expect(res.status, res.text).toBe(200);
      expect(broken.requests.length).toBe(before + 1);
      expect(res.json.assistant_message.content).toBe(replyText('Fall back'));
    });

    it('an upstream failure before any text: the error in the OpenAI shape, the user message kept, no reply', async () => {
      const id = await create({ model: 'down-model' });
      const res = await send(id, { content: 'Nobody answers' });
      expect(res.status).toBe(502);
      expect(res.json.error).toMatchObject({ type: expect.any(String), code: expect.any(String) });
      const stored = await read(id);
      expect(stored.messages.map((m: Json) => [m.role, m.content])).toEqual([['user', 'Nobody answers']]);
    });

    it('a client that disconnects: the partial text is stored once, finish_reason aborted', async () => {
      const id = await create();
      fake.mode = { kind: 'slow', delayMs: 300 };
      const aborted = fake.aborted;
      try {
        const controller = new AbortController();
        await streamUntilText(id, 'Disconnect me', controller.signal);
        controller.abort();
        const reply = await until(async () => (await read(id)).messages.find((m: Json) => m.role === 'assistant') as Json | undefined, 'the aborted reply');
        expect(reply.finish_reason).toBe('aborted');
        expect(reply.content.length).toBeGreaterThan(0);
        expect(replyText('Disconnect me').startsWith(reply.content)).toBe(true);
        expect(reply.content).not.toBe(replyText('Disconnect me'));
        await until(async () => (fake.aborted > aborted ? true : undefined), 'the upstream request aborted');
      } finally {
        fake.mode = { kind: 'reply' };
      }
      expect((await read(id)).messages.filter((m: Json) => m.role === 'assistant')).toHaveLength(1);
    });

    const stopCases = [{ from: 'the same instance', other: false }, ...(mode.name === 'distributed' ? [{ from: 'a second instance', other: true }] : [])];
    it.each(stopCases)('stop from $from ends the stream with the partial reply stored (aborted)', async ({ other }) => {
      const id = await create();
      fake.mode = { kind: 'slow', delayMs: 400 };
      try {
        const { rest } = await streamUntilText(id, 'Stop me');
        const stop = await api(other ? b! : a, `/v1/conversations/${id}/stop`, a.userToken, { method: 'POST' });
        expect(stop.status, stop.text).toBe(200);
        expect(stop.json).toEqual({ object: 'conversation.stop', conversation_id: id, stopped: true });
        const events = sseEvents(await rest());
        expect(events.at(-1)).toBe('[DONE]');
        const final = events.at(-2) as Json;
        expect(final).toMatchObject({ object: 'conversation.reply', stopped: true, assistant_message: { finish_reason: 'aborted' } });
        expect(replyText('Stop me').startsWith(final.assistant_message.content)).toBe(true);
        expect(final.assistant_message.content).not.toBe(replyText('Stop me'));
        const stored = await read(id);
        expect(stored.messages.map((m: Json) => [m.role, m.finish_reason])).toEqual([
          ['user', null],
          ['assistant', 'aborted'],
        ]);
      } finally {
        fake.mode = { kind: 'reply' };
      }
      // Nothing runs any more.
      expect((await api(a, `/v1/conversations/${id}/stop`, a.userToken, { method: 'POST' })).json.stopped).toBe(false);
    });

    it('a conversation deleted during its reply: the stream ends with an error event, not a final event', async () => {
      const id = await create();
      fake.mode = { kind: 'slow', delayMs: 300 };
      try {
        const { rest } = await streamUntilText(id, 'Delete me meanwhile');
        expect((await api(a, `/v1/conversations/${id}`, a.userToken, { method: 'DELETE' })).status).toBe(200);
        const events = sseEvents(await rest());
        expect(events.at(-1)).toBe('[DONE]');
        expect(events.at(-2)).toMatchObject({ error: { code: 'conversation_not_found' } });
        expect(events.some((e) => e !== '[DONE]' && e.object === 'conversation.reply')).toBe(false);
      } finally {
        fake.mode = { kind: 'reply' };
      }
      expect((await api(a, `/v1/conversations/${id}`, a.userToken)).status).toBe(404);
    });

    it('is in the OpenAPI document', async () => {
      const doc = (await dereferencedOpenapi(a.url));
      expect(doc.paths['/v1/conversations/{id}/messages'].post.summary).toBeTruthy();
      expect(doc.paths['/v1/conversations/{id}/regenerate'].post.summary).toBeTruthy();
      expect(doc.paths['/v1/conversations/{id}/messages/{message_id}'].put.summary).toBeTruthy();
      expect(doc.paths['/v1/conversations/{id}/stop'].post.summary).toBeTruthy();
      const reply = doc.paths['/v1/conversations/{id}/messages'].post.responses['200'].content['application/json'].schema;
      expect(Object.keys(reply.properties)).toEqual(expect.arrayContaining(['object', 'user_message', 'assistant_message', 'usage', 'usage_request_id', 'omitted_messages', 'stopped']));
    });

    it("answers 404 to anyone but the owner, for every route; 404 file_not_found for an unknown file id", async () => {
      const id = await create();
      await send(id, { content: 'Mine', stream: false });
      const other = await loggedInUser(a, 'user', 'default');
      const elsewhere = await loggedInUser(a, 'user');
      const admin = await loggedInUser(a, 'admin', 'default');
      const messageId = (await read(id)).messages[0].id as string;
      for (const token of [other.token, elsewhere.token, admin.token, a.adminToken]) {
        for (const [method, path, body] of [
          ['POST', `/v1/conversations/${id}/messages`, { content: 'x' }],
          ['POST', `/v1/conversations/${id}/regenerate`, {}],
          ['PUT', `/v1/conversations/${id}/messages/${messageId}`, { content: 'x' }],
          ['POST', `/v1/conversations/${id}/stop`, undefined],
        ] as const) {
          const res = await api(a, path, token, { method, body });
          expect([path, res.status, res.json?.error?.code]).toEqual([path, 404, 'conversation_not_found']);
        }
      }
      const file = await send(id, { content: 'With a file', file_ids: ['file-abc'] });
      expect([file.status, file.json.error.code, file.json.error.param]).toEqual([404, 'file_not_found', 'file_ids[0]']);
      expect((await read(id)).messages).toHaveLength(2);
    });
  });
});
