/**
 * The import sink (src/imports/sink.ts), the one way upgrades and importers write into
 * Switchyard, against a real installation in both modes: rows become users (bcrypt hashes that
 * log in and are re-hashed), sealed channels, hashed keys that relay with the `openai` SDK,
 * presets, conversations with their messages, files processed like uploads; a second run of the
 * same rows creates nothing; a row whose owner is missing is refused with an ImportError.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import bcrypt from 'bcryptjs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { ImportError, openImportSink, type ImportSink, type Imported } from '../../src/imports/sink.js';
import { createLogger } from '../../src/logger.js';
import { call, startApp, TEST_ADMIN, TEST_SECRET, type RunningApp } from '../support/app.js';
import { startOpenAiFake, type OpenAiFake } from '../support/fake-upstreams/openai.js';
import { appModes, type ModeEnv } from '../support/modes.js';
import { sdk } from '../support/relay.js';

const services = inject('services');
const urls = inject('serviceUrls');

const ALICE = { email: 'alice@legacy.example', password: 'alice-legacy-password' };
const KEY_SECRET = 'sk-legacy-0123456789abcdefghijklmnopqrstuvwxyz';

for (const mode of appModes(services, urls)) {
  describe.skipIf(!mode.enabled)(`import sink (${mode.name})`, () => {
    let env: ModeEnv;
    let dataDir: string;
    let upstream: OpenAiFake;
    let app: RunningApp;
    let aliceHash: string;
    const first: Record<string, Imported> = {};
    const again: Record<string, Imported> = {};

    const configOf = () =>
      loadConfig({ SECRET: TEST_SECRET, DATA_DIR: dataDir, STORAGE_DIR: join(dataDir, 'storage'), LOG_LEVEL: 'silent', LOG_FILES_ENABLED: 'false', ADMIN_EMAIL: TEST_ADMIN.email, ADMIN_PASSWORD: TEST_ADMIN.password, ...env.env });

    async function importAll(sink: ImportSink, into: Record<string, Imported>) {
      into.alice = await sink.user({ legacyId: 1, email: ALICE.email, passwordHash: aliceHash, role: 'admin' });
      into.bob = await sink.user({ legacyId: 2, email: 'bob@legacy.example', passwordHash: aliceHash, role: 'user', disabled: true });
      into.credits = await sink.credits({ legacyUserId: 1, amountMicro: 12_500_000, reason: 'imported balance' });
      into.channel = await sink.channel({ legacyId: 7, name: 'legacy-openai', type: 'openai', key: 'test-key', base_url: upstream.baseUrl, models: ['gpt-4o-mini'], model_mapping: {}, priority: 0, weight: 1, enabled: true });
      // Names are unique in a tenant here (not in one-api): the second one is renamed.
      into.sameName = await sink.channel({ legacyId: 17, name: 'Legacy-OpenAI', type: 'openai', key: 'test-key-2', base_url: upstream.baseUrl, models: ['gpt-4o-mini'], model_mapping: {}, priority: 0, weight: 1, enabled: false });
      into.key = await sink.apiKey({ legacyId: 3, legacyUserId: 1, name: 'legacy key', secret: KEY_SECRET, policy: { allowed_models: ['gpt-4o-mini'] } });
      into.preset = await sink.preset({ legacyId: 4, legacyUserId: 1, name: 'Reviewer', system_prompt: 'You review code.', model: 'gpt-4o-mini' });
      const filePath = join(dataDir, 'notes.txt');
      writeFileSync(filePath, 'Imported notes: the launch code is 4711.\n');
      into.file = await sink.file({ legacyId: 5, legacyUserId: 1, filename: 'notes.txt', path: filePath });
      into.conversation = await sink.conversation({ legacyId: 6, legacyUserId: 1, title: 'Old chat', model: 'gpt-4o-mini', pinned: true });
      into.m1 = await sink.message({ legacyId: 8, legacyConversationId: 6, role: 'user', content: 'What is in my notes?', legacyFileIds: [5] });
      into.m2 = await sink.message({ legacyId: 9, legacyConversationId: 6, role: 'assistant', content: 'The launch code.', model: 'gpt-4o-mini' });
    }

    beforeAll(async () => {
      env = mode.env();
      dataDir = mkdtempSync(join(tmpdir(), 'sy-import-'));
      upstream = await startOpenAiFake();
      aliceHash = await bcrypt.hash(ALICE.password, 4);
      const sink = await openImportSink(configOf(), createLogger('silent'), { source: 'switchyard-1' });
      try {
        await importAll(sink, first);
        await expect(sink.apiKey({ legacyId: 99, legacyUserId: 42, name: 'orphan', secret: 'sk-orphan' })).rejects.toBeInstanceOf(ImportError);
      } finally {
        await sink.close();
      }
      const rerun = await openImportSink(configOf(), createLogger('silent'), { source: 'switchyard-1' });
      try {
        await importAll(rerun, again);
      } finally {
        await rerun.close();
      }
      app = await startApp(env.env, { keepDataDir: dataDir });
    }, 120_000);

    afterAll(async () => {
      await app?.close();
      await upstream?.close();
      await env?.cleanup();
      rmSync(dataDir, { recursive: true, force: true });
    });

    it('gives a channel whose name is taken the name with its legacy id, once', async () => {
      expect(first.sameName).toMatchObject({ created: true, name: 'Legacy-OpenAI (17)' });
      const names = (await call(`${app.url}/v1/admin/channels`, { token: app.adminToken })).json.data.map((c: { name: string }) => c.name);
      expect(names.sort()).toEqual(['Legacy-OpenAI (17)', 'legacy-openai']);
    });

    it('creates each row once: a second run finds them all', () => {
      for (const [name, result] of Object.entries(first)) expect(result.created, name).toBe(true);
      for (const [name, result] of Object.entries(again)) {
        expect(result.created, name).toBe(false);
        expect(result.id, name).toBe(first[name]!.id);
      }
    });

    it('an imported bcrypt password logs in, and keeps working once re-hashed; a disabled user does not', async () => {
      for (let i = 0; i < 2; i++) {
        const login = await call(`${app.url}/v1/auth/login`, { body: ALICE });
        expect(login.status).toBe(200);
      }
      const user = await app.app.ctx.queries.userByEmail(ALICE.email);
      expect(user?.password_hash.startsWith('$scrypt$')).toBe(true);
      expect((await call(`${app.url}/v1/auth/login`, { body: { email: 'bob@legacy.example', password: ALICE.password } })).status).toBe(401);
    });

    it('an imported key relays through the imported channel; its sealed upstream key reaches the upstream', async () => {
      const reply = await sdk(app, KEY_SECRET).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] });
      expect(reply.choices[0]?.message.content).toBeTruthy();
      expect(upstream.requests.at(-1)?.headers.authorization).toBe('Bearer test-key');
      await expect(sdk(app, KEY_SECRET).chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hello' }] })).rejects.toMatchObject({ status: 403 });
    });

    it("the owner reads the conversation, its messages, the file and the preset; one of each", async () => {
      const token = (await call(`${app.url}/v1/auth/login`, { body: ALICE })).json.access_token as string;
      const list = await call(`${app.url}/v1/conversations`, { token });
      expect(list.status).toBe(200);
      const conversations = list.json.data as Array<{ id: string; title: string; pinned: boolean }>;
      expect(conversations.map((c) => [c.id, c.title, c.pinned])).toEqual([[first.conversation!.id, 'Old chat', true]]);
      const messages = await call(`${app.url}/v1/conversations/${first.conversation!.id}`, { token });
      expect((messages.json.messages as Array<{ role: string; content: string }>).map((m) => [m.role, m.content])).toEqual([
        ['user', 'What is in my notes?'],
        ['assistant', 'The launch code.'],
      ]);
      const files = await call(`${app.url}/v1/files`, { token });
      expect((files.json.data as Array<{ id: string; filename: string }>).map((f) => [f.id, f.filename])).toEqual([[first.file!.id, 'notes.txt']]);
      const content = await call(`${app.url}/v1/files/${first.file!.id}/content`, { token });
      expect(content.text).toBe('Imported notes: the launch code is 4711.\n');
      const presets = await call(`${app.url}/api/presets?scope=mine`, { token });
      expect(JSON.stringify(presets.json)).toContain('Reviewer');
      const balance = await call(`${app.url}/v1/credits`, { token });
      expect(balance.json.balance_micro).toBe(12_500_000);
    });
  });
}
