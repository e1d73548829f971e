/**
 * Files used in chat (issue 18), end to end on the real server, embedded and on two distributed
 * instances (NATS + MariaDB + Redis; the file uploaded on one, used on the other): files uploaded
 * with the official `openai` SDK, then named by a chat-completions `file` part or a conversation
 * message's `file_ids`. The fake upstreams record what really reached them: a text file's text
 * (chat's truncated form for a long one), an image as an image part for an openai channel and as
 * its text for a text-only (deepseek) one; 404 for another user's, another tenant's or an unknown
 * file, 409 file_not_ready for a file not processed (FILE_PROCESSING_ENGINE=none), 400 for inline
 * file_data.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type OpenAI from 'openai';
import { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { call, loggedInUser, startApp, type RunningApp } from '../support/app.js';
import { dereferencedOpenapi } from '../support/openapi.js';
import type { FakeUpstream } from '../support/fake-upstreams/fake.js';
import { startOpenAiFake } from '../support/fake-upstreams/openai.js';
import { gifBytes, pngBytes } from '../support/files.js';
import { appModes } from '../support/modes.js';
import { createChannel, sdk } from '../support/relay.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const services = inject('services');
const urls = inject('serviceUrls');

/** A text longer than the FILE_TEXT_LIMIT the apps run with (1000 characters): its end is cut for chat. */
const TEXT_LIMIT = 1000;
const longText = () => Array.from({ length: 120 }, (_, i) => `Line ${String(i).padStart(3, '0')} of the long report.`).join('\n');

/**
 * Uploads `content` with the SDK; unless `until` is `uploaded` (an app that processes nothing),
 * waits (polling files.retrieve) until processing ended as `until` says.
 */
async function upload(client: OpenAI, content: Buffer | string, filename: string, until: 'processed' | 'error' | 'uploaded' = 'processed') {
  const file = await client.files.create({ file: await toFile(typeof content === 'string' ? Buffer.from(content) : content, filename), purpose: 'user_data' });
  if (until === 'uploaded') return file.id;
  for (let i = 0; i < 400; i++) {
    const { status, status_details: details } = await client.files.retrieve(file.id);
    if (status === until) return file.id;
    if (status === 'processed' || status === 'error') throw new Error(`file ${filename} ended ${status} (${details ?? ''}), not ${until}`);
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`file ${filename} was not ${until} in time`);
}

/** The text parts of the last user message an upstream received, joined. */
function lastUserText(upstream: FakeUpstream): string {
  const body = upstream.requests.at(-1)!.json as Json;
  const message = (body.messages as Json[]).filter((m) => m.role === 'user').at(-1)!;
  return typeof message.content === 'string' ? message.content : (message.content as Json[]).map((p) => (p.type === 'text' ? p.text : '')).join('\n');
}

describe.each(appModes(services, urls))('files in chat ($name)', (mode) => {
  let a: RunningApp;
  /** Where chat requests go: a second instance on the same stores (distributed), else `a`. */
  let b: RunningApp;
  /** An app that keeps files unprocessed (FILE_PROCESSING_ENGINE=none), embedded. */
  let unprocessed: RunningApp;
  let vision: FakeUpstream;
  let textOnly: FakeUpstream;
  const cleanups: Array<() => Promise<void>> = [];

  beforeAll(async () => {
    if (!mode.enabled) return;
    [vision, textOnly] = await Promise.all([startOpenAiFake(), startOpenAiFake()]);
    const env = mode.env();
    cleanups.push(env.cleanup);
    // One storage directory for both instances (local storage across instances must be shared).
    const settings = { ...env.env, HEALTH_CHECK_ENABLED: 'false', FILE_TEXT_LIMIT: String(TEXT_LIMIT), STORAGE_DIR: mkdtempSync(join(tmpdir(), 'sy-files-')) };
    a = await startApp(settings);
    b = mode.name === 'distributed' ? await startApp(settings) : a;
    // Embedded in both modes: what it shows (a file left `uploaded` is not ready) does not depend
    // on the stores, and a second set of distributed stores costs seconds.
    unprocessed = await startApp({ HEALTH_CHECK_ENABLED: 'false', FILE_PROCESSING_ENGINE: 'none' });
    await createChannel(a, { type: 'openai', name: 'vision', base_url: vision.baseUrl, models: ['vision-model'] });
    await createChannel(a, { type: 'deepseek', name: 'text-only', base_url: textOnly.baseUrl, models: ['text-model'] });
    await createChannel(unprocessed, { type: 'openai', name: 'vision', base_url: vision.baseUrl, models: ['vision-model'] });
    for (let i = 0; i < 400 && b !== a; i++) {
      if ((await sdk(b).models.list()).data.some((m) => m.id === 'text-model')) break;
      await new Promise((r) => setTimeout(r, 25));
    }
  });
  afterAll(async () => {
    if (!mode.enabled) return;
    await Promise.all([...new Set([a, b, unprocessed])].map((s) => s.close()));
    await Promise.all([vision.close(), textOnly.close(), ...cleanups.map((c) => c())]);
  });

  describe.skipIf(!mode.enabled)('chat completions', () => {
    it("replaces a file part with the file's text, named, before the request reaches the provider", async () => {
      const id = await upload(sdk(a), 'The launch code is PELICAN-7.\nBring snacks.', 'orders.txt');
      const completion = await sdk(b).chat.completions.create({
        model: 'vision-model',
        messages: [{ role: 'user', content: [{ type: 'text', text: 'What is the code?' }, { type: 'file', file: { file_id: id } }] }],
      });
      expect(completion.choices[0]!.message.content).toContain('What is the code?');
      const parts = (vision.requests.at(-1)!.json as Json).messages[0].content as Json[];
      expect(parts[0]).toEqual({ type: 'text', text: 'What is the code?' });
      expect(parts[1]!.type).toBe('text');
      expect(parts[1]!.text).toContain('The launch code is PELICAN-7.\nBring snacks.');
      expect(parts[1]!.text).toContain(`"orders.txt" (${id})`);
      expect(parts).toHaveLength(2);
    });

    it('sends an image as an image part (data URL) to a channel that takes images, as text to one that does not', async () => {
      const png = pngBytes(64, 64);
      const id = await upload(sdk(a), png, 'chart.png');
      const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: [{ type: 'text', text: 'Describe it' }, { type: 'file', file: { file_id: id } }] }];
      await sdk(b).chat.completions.create({ model: 'vision-model', messages });
      const image = ((vision.requests.at(-1)!.json as Json).messages[0].content as Json[])[1];
      expect(image).toEqual({ type: 'image_url', image_url: { url: `data:image/png;base64,${png.toString('base64')}` } });

      await sdk(b).chat.completions.create({ model: 'text-model', messages });
      const parts = (textOnly.requests.at(-1)!.json as Json).messages[0].content as Json[];
      expect(parts.map((p) => p.type)).toEqual(['text', 'text']);
      expect(parts[1]!.text).toContain(`"chart.png" (${id})`);
    });

    it("uses the API key's user's files", async () => {
      const id = await upload(sdk(a), 'Key owner notes: ZEBRA', 'key-notes.txt');
      const key = await call(`${a.url}/api/admin/keys`, { token: a.adminToken, body: { name: 'files', user_id: a.userId } });
      expect(key.status, key.text).toBe(201);
      await sdk(b, key.json.key as string).chat.completions.create({ model: 'vision-model', messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: id } }] }] });
      expect(lastUserText(vision)).toContain('Key owner notes: ZEBRA');
    });

    it("answers 404 file_not_found for another user's, another tenant's or an unknown file, naming the part", async () => {
      const mine = await upload(sdk(a), 'private', 'private.txt');
      const neighbour = await loggedInUser(a, 'user', 'default');
      const stranger = await loggedInUser(a, 'user');
      for (const [token, fileId] of [
        [neighbour.token, mine],
        [stranger.token, mine],
        [a.userToken, 'file-does-not-exist'],
      ] as const) {
        const res = await call(`${b.url}/v1/chat/completions`, {
          token,
          body: { model: 'vision-model', messages: [{ role: 'system', content: 'x' }, { role: 'user', content: [{ type: 'text', text: 'read' }, { type: 'file', file: { file_id: fileId } }] }] },
        });
        expect([res.status, res.json.error.code, res.json.error.type, res.json.error.param]).toEqual([404, 'file_not_found', 'not_found_error', 'messages[1].content[1].file.file_id']);
      }
      // Through the SDK: its NotFoundError.
      await expect(sdk(b, neighbour.token).chat.completions.create({ model: 'vision-model', messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: mine } }] }] })).rejects.toMatchObject({ status: 404, code: 'file_not_found' });
    });

    it('answers 409 file_not_ready for a file not processed yet, and for one whose processing failed (saying why)', async () => {
      const id = await upload(sdk(unprocessed), 'not yet', 'pending.txt', 'uploaded');
      const before = vision.requests.length;
      const res = await call(`${unprocessed.url}/v1/chat/completions`, { token: unprocessed.userToken, body: { model: 'vision-model', messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: id } }] }] } });
      expect([res.status, res.json.error.code, res.json.error.param]).toEqual([409, 'file_not_ready', 'messages[0].content[0].file.file_id']);

      // A GIF is stored but not processed (an image type OCR does not read): status error.
      const failed = await upload(sdk(a), gifBytes(), 'anim.gif', 'error');
      const reason = (await sdk(a).files.retrieve(failed)).status_details!;
      const refused = await call(`${b.url}/v1/chat/completions`, { token: b.userToken, body: { model: 'vision-model', messages: [{ role: 'user', content: [{ type: 'text', text: 'x' }, { type: 'file', file: { file_id: failed } }] }] } });
      expect([refused.status, refused.json.error.code, refused.json.error.param]).toEqual([409, 'file_not_ready', 'messages[0].content[1].file.file_id']);
      expect(refused.json.error.message).toContain(reason);
      expect(vision.requests.length).toBe(before);
    });

    it('sends the truncated form of a long text, with the note saying so', async () => {
      const text = longText();
      const id = await upload(sdk(a), text, 'long-report.txt');
      await sdk(b).chat.completions.create({ model: 'vision-model', messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: id } }] }] });
      const sent = lastUserText(vision);
      expect(sent).toContain('Line 000 of the long report.');
      expect(sent).not.toContain('Line 119 of the long report.');
      expect(sent.length).toBeLessThan(TEXT_LIMIT + 400);
      expect(sent).toContain(`it is ${text.length} characters long and only the first ${TEXT_LIMIT} are included`);
    });

    it('documents file parts, file_ids and their errors in the OpenAPI document', async () => {
      const doc = (await dereferencedOpenapi(a.url));
      const chat = doc.paths['/v1/chat/completions'].post;
      const parts = chat.requestBody.content['application/json'].schema.properties.messages.items.properties.content.anyOf.find((s: Json) => s.type === 'array').items.oneOf as Json[];
      const file = parts.find((p) => p.properties.type.enum[0] === 'file')!;
      expect(file.properties.file.required).toEqual(['file_id']);
      expect(Object.keys(chat.responses)).toEqual(expect.arrayContaining(['404', '409']));
      const send = doc.paths['/v1/conversations/{id}/messages'].post;
      expect(send.requestBody.content['application/json'].schema.properties.file_ids.description).toContain('POST /v1/files');
      const userMessage = send.responses['200'].content['application/json'].schema.properties.user_message;
      expect((userMessage.allOf?.[0] ?? userMessage).properties.file_ids.type).toBe('array'); // a described named schema: allOf [Message]
      expect(Object.keys(send.responses)).toEqual(expect.arrayContaining(['404', '409']));
    });

    it('refuses inline file_data with a 400 that says to upload the file', async () => {
      const res = await call(`${b.url}/v1/chat/completions`, {
        token: b.userToken,
        body: { model: 'vision-model', messages: [{ role: 'user', content: [{ type: 'file', file: { file_data: 'data:text/plain;base64,aGk=', filename: 'hi.txt' } }] }] },
      });
      expect([res.status, res.json.error.code, res.json.error.param]).toEqual([400, 'unsupported_parameter', 'messages[0].content[0].file.file_id']);
      expect(res.json.error.message).toContain('file_id');
      expect(res.json.error.message).toContain('POST /v1/files');
    });
  });

  describe.skipIf(!mode.enabled)('responses', () => {
    it('replaces input_file and input_image file_id parts: converted through chat, and natively for an openai channel', async () => {
      const notes = await upload(sdk(a), 'Delivery window: 9 to 11.', 'delivery.txt');
      const png = pngBytes(64, 64);
      const picture = await upload(sdk(a), png, 'dot.png');
      const input = [{ role: 'user' as const, content: [{ type: 'input_text' as const, text: 'Check' }, { type: 'input_file' as const, file_id: notes }, { type: 'input_image' as const, file_id: picture, detail: 'low' as const }] }];

      // A deepseek channel: through the chat form, the image as its text.
      const converted = await sdk(b).responses.create({ model: 'text-model', input, store: false });
      expect(converted.status).toBe('completed');
      const parts = ((textOnly.requests.at(-1)!.json as Json).messages as Json[])[0]!.content as Json[];
      expect(parts.map((p) => p.type)).toEqual(['text', 'text', 'text']);
      expect(parts[1]!.text).toContain(`"delivery.txt" (${notes}) ---\nDelivery window: 9 to 11.`);
      expect(parts[2]!.text).toContain(`"dot.png" (${picture})`);

      // An openai channel: the Responses request itself, the file as input_text, the image as a data URL.
      await sdk(b).responses.create({ model: 'vision-model', input, store: false });
      const sent = vision.requests.at(-1)!;
      expect(sent.path).toBe('/v1/responses');
      const content = ((sent.json as Json).input as Json[])[0]!.content as Json[];
      expect(content[1]!.type).toBe('input_text');
      expect(content[1]!.text).toContain('Delivery window: 9 to 11.');
      expect(content[2]).toEqual({ type: 'input_image', image_url: `data:image/png;base64,${png.toString('base64')}`, detail: 'low' });
    });

    it("answers 404 for another user's file and 400 for an input_file without file_id, naming the part", async () => {
      const mine = await upload(sdk(a), 'mine', 'mine.txt');
      const neighbour = await loggedInUser(a, 'user', 'default');
      const foreign = await call(`${b.url}/v1/responses`, { token: neighbour.token, body: { model: 'text-model', input: [{ role: 'user', content: [{ type: 'input_text', text: 'x' }, { type: 'input_file', file_id: mine }] }] } });
      expect([foreign.status, foreign.json.error.code, foreign.json.error.param]).toEqual([404, 'file_not_found', 'input[0].content[1].file_id']);
      const inline = await call(`${b.url}/v1/responses`, { token: b.userToken, body: { model: 'text-model', input: [{ role: 'user', content: [{ type: 'input_file', file_data: 'data:text/plain;base64,aGk=', filename: 'hi.txt' }] }] } });
      expect([inline.status, inline.json.error.code, inline.json.error.param]).toEqual([400, 'unsupported_parameter', 'input[0].content[0].file_id']);
    });
  });

  describe.skipIf(!mode.enabled)('conversations', () => {
    const newConversation = async (s: RunningApp, model = 'vision-model') => {
      const res = await call(`${s.url}/v1/conversations`, { token: s.userToken, body: { model } });
      expect(res.status, res.text).toBe(201);
      return res.json.id as string;
    };
    const send = (s: RunningApp, id: string, body: Json, token = s.userToken) => call(`${s.url}/v1/conversations/${id}/messages`, { token, body: { stream: false, ...body } });

    it('sends the files of a message after its text, stores their ids, and sends them again on later turns', async () => {
      const notes = await upload(sdk(a), 'Meeting moved to Thursday.', 'memo.txt');
      const agenda = await upload(sdk(a), '1. Budget\n2. Hiring', 'agenda.md');
      const id = await newConversation(a);
      const first = await send(b, id, { content: 'Summarise these', file_ids: [notes, agenda] });
      expect(first.status, first.text).toBe(200);
      expect(first.json.user_message).toMatchObject({ role: 'user', content: 'Summarise these', file_ids: [notes, agenda] });
      expect(first.json.assistant_message.file_ids).toEqual([]);
      const parts = ((vision.requests.at(-1)!.json as Json).messages as Json[]).at(-1)!.content as Json[];
      expect(parts[0]).toEqual({ type: 'text', text: 'Summarise these' });
      expect(parts[1]!.text).toContain(`"memo.txt" (${notes}) ---\nMeeting moved to Thursday.`);
      expect(parts[2]!.text).toContain('1. Budget\n2. Hiring');
      expect(parts).toHaveLength(3);

      const read = await call(`${a.url}/v1/conversations/${id}`, { token: a.userToken });
      expect(read.json.messages.map((m: Json) => m.file_ids)).toEqual([[notes, agenda], []]);

      // The next turn: the earlier message still carries its files; the new one has none.
      const second = await send(b, id, { content: 'And the date?' });
      expect(second.status, second.text).toBe(200);
      const history = (vision.requests.at(-1)!.json as Json).messages as Json[];
      expect(history.map((m) => (typeof m.content === 'string' ? m.content : m.content.length))).toEqual([3, expect.any(String), 'And the date?']);
      expect(history[0]!.content[1].text).toContain('Meeting moved to Thursday.');

      // Regenerate answers the last message again, with no files; a deleted file becomes a note.
      await sdk(a).files.delete(agenda);
      const again = await call(`${b.url}/v1/conversations/${id}/regenerate`, { token: b.userToken, body: { stream: false } });
      expect(again.status, again.text).toBe(200);
      const regenerated = (vision.requests.at(-1)!.json as Json).messages as Json[];
      expect(regenerated[0]!.content[2]).toEqual({ type: 'text', text: `[file ${agenda} is no longer available]` });
      expect(regenerated.at(-1)!.content).toBe('And the date?');

      // Editing the message with files re-sends it with them.
      const edited = await call(`${b.url}/v1/conversations/${id}/messages/${first.json.user_message.id}`, { method: 'PUT', token: b.userToken, body: { content: 'Summarise again', stream: false } });
      expect(edited.status, edited.text).toBe(200);
      expect(edited.json.user_message).toMatchObject({ content: 'Summarise again', file_ids: [notes, agenda] });
      const resent = ((vision.requests.at(-1)!.json as Json).messages as Json[]).at(-1)!.content as Json[];
      expect(resent.map((p) => p.text.split('\n')[0])).toEqual(['Summarise again', `--- file "memo.txt" (${notes}) ---`, `[file ${agenda} is no longer available]`]);
    });

    it('sends an image of a message as an image part, and as text to a text-only model', async () => {
      const png = pngBytes(64, 64);
      const picture = await upload(sdk(a), png, 'photo.png');
      const id = await newConversation(a);
      const first = await send(b, id, { content: 'What is this?', file_ids: [picture] });
      expect(first.status, first.text).toBe(200);
      const parts = ((vision.requests.at(-1)!.json as Json).messages as Json[]).at(-1)!.content as Json[];
      expect(parts).toEqual([{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${png.toString('base64')}` } }]);

      const second = await send(b, id, { content: 'And now?', model: 'text-model' });
      expect(second.status, second.text).toBe(200);
      const earlier = ((textOnly.requests.at(-1)!.json as Json).messages as Json[])[0]!.content as Json[];
      expect(earlier.map((p) => p.type)).toEqual(['text', 'text']);
      expect(earlier[1]!.text).toContain(`"photo.png" (${picture})`);
    });

    it('answers 404 and 409 for files that cannot be used, naming file_ids[i], and stores nothing', async () => {
      const mine = await upload(sdk(a), 'ok', 'ok.txt');
      const other = await loggedInUser(a, 'user', 'default');
      const id = await newConversation(a);
      const missing = await send(b, id, { content: 'x', file_ids: [mine, 'file-nope'] });
      expect([missing.status, missing.json.error.code, missing.json.error.param]).toEqual([404, 'file_not_found', 'file_ids[1]']);
      const theirs = await call(`${a.url}/v1/conversations`, { token: other.token, body: { model: 'vision-model' } });
      const foreign = await send(a, theirs.json.id as string, { content: 'x', file_ids: [mine] }, other.token);
      expect([foreign.status, foreign.json.error.code, foreign.json.error.param]).toEqual([404, 'file_not_found', 'file_ids[0]']);
      expect((await call(`${a.url}/v1/conversations/${id}`, { token: a.userToken })).json.messages).toHaveLength(0);

      const pending = await upload(sdk(unprocessed), 'later', 'later.txt', 'uploaded');
      const elsewhere = await newConversation(unprocessed);
      const notReady = await send(unprocessed, elsewhere, { content: 'x', file_ids: [pending] });
      expect([notReady.status, notReady.json.error.code, notReady.json.error.param]).toEqual([409, 'file_not_ready', 'file_ids[0]']);
    });
  });
});
