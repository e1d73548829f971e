/**
 * A changed SECRET (issue 22): a server started with another SECRET than the data was sealed with
 * stops with one line (the real CLI, as an operator starts it); one channel whose key does not
 * open is listed as broken and skipped while the rest serve; `switchyard secret rotate` (the real
 * CLI) re-seals channel keys, MFA secrets, webhook secrets and data keys, refuses a wrong --old,
 * finishes a run that stopped half-way, and after a restart with the new SECRET the relay, MFA
 * login, conversations and signed webhook deliveries work. Both modes.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { base32Decode, totp } from '../../src/auth/totp.js';
import { channels } from '../../src/commands/channels/decider.js';
import { SecretBox } from '../../src/crypto/secret-box.js';
import { CANARY_SCOPE, SecretMismatchError } from '../../src/secrets/canary.js';
import type { RotationReport } from '../../src/secrets/rotate.js';
import { call, createUser, login, startApp, TEST_ADMIN, TEST_USER_PASSWORD, type RunningApp } from '../support/app.js';
import { runCli } from '../support/cli.js';
import { replyText } from '../support/fake-upstreams/fake.js';
import { startOpenAiFake, type OpenAiFake } from '../support/fake-upstreams/openai.js';
import { appModes, type ModeEnv } from '../support/modes.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

const SECRET_A = 'first-secret-0123456789-abcdefgh';
const SECRET_B = 'second-secret-0123456789-abcdefg';
const WEBHOOK_SECRET = 'webhook-secret-of-20-chars';
const STEP_MS = 30_000;
const POLL = { timeout: 15_000, interval: 50 };

/** The real CLI with only the variables given (and PATH / HOME). */
const cli = (env: Record<string, string>, ...args: string[]) => runCli(args, env, { timeoutMs: 60_000 });

/** Creates an OpenAI-compatible channel to the fake upstream; answers its id. */
async function createChannel(s: RunningApp, name: string, baseUrl: string, models: string[]): Promise<string> {
  const res = await call(`${s.url}/v1/admin/channels`, { token: s.adminToken, body: { name, type: 'openai', base_url: baseUrl, key: 'test-key', models } });
  expect(res.status, res.text).toBe(201);
  return res.json.id as string;
}

async function apiKeyOf(s: RunningApp): Promise<string> {
  const res = await call(`${s.url}/v1/keys`, { token: s.userToken, body: { name: 'secret-change' } });
  expect(res.status, res.text).toBe(201);
  return res.json.key as string;
}

const services = inject('services');
const urls = inject('serviceUrls');

for (const mode of appModes(services, urls)) {
  describe.skipIf(!mode.enabled)(`a changed SECRET (${mode.name})`, () => {
    let upstream: OpenAiFake;
    let receiver: WebhookReceiver;
    const envs: ModeEnv[] = [];
    const dirs: string[] = [];
    const newDataDir = () => {
      const dir = mkdtempSync(join(tmpdir(), 'sy-secret-'));
      dirs.push(dir);
      return dir;
    };
    const newStores = () => {
      const env = mode.env();
      envs.push(env);
      return env.env;
    };

    beforeAll(async () => {
      upstream = await startOpenAiFake();
      receiver = await startWebhookReceiver();
      receiver.secret = WEBHOOK_SECRET;
    });
    afterAll(async () => {
      await upstream?.close();
      await receiver?.close();
      for (const env of envs) await env.cleanup();
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    });

    it('one channel whose key does not open is listed as broken and skipped; the rest serve, health is unaffected, and a restart still starts', async () => {
      const stores = newStores();
      const dataDir = newDataDir();
      let s = await startApp({ ...stores, SECRET: SECRET_A }, { keepDataDir: dataDir });
      try {
        const good = await createChannel(s, 'good', upstream.baseUrl, ['good-model']);
        const bad = await createChannel(s, 'bad', upstream.baseUrl, ['bad-model']);
        // The bad channel's key sealed with another SECRET, through a real event (as an import of another installation's data would leave it).
        const other = new SecretBox('some-other-secret-0123456789', 'provider-keys');
        const updated = await s.app.ctx.commands.execute(channels, bad, { type: 'UpdateChannel', changes: {}, key: { sealed: other.seal('test-key'), masked: 'te****-key' } }, { tenantId: 'default' });
        await Promise.all([s.app.ctx.runner.waitFor(updated.position!, { projections: ['channels'] }), s.app.ctx.views.channels.waitFor(updated.position!)]);
        const key = await apiKeyOf(s);

        const check = async (app: RunningApp) => {
          const list = await call(`${app.url}/v1/admin/channels`, { token: app.adminToken });
          expect(list.status).toBe(200);
          const byId = new Map((list.json.data as Array<{ id: string; status: string; status_reason: string | null }>).map((c) => [c.id, c]));
          expect(byId.get(good)).toMatchObject({ status: 'ok', status_reason: null });
          expect(byId.get(bad)).toMatchObject({ status: 'broken', status_reason: expect.stringContaining('does not open with this SECRET') });
          expect((await call(`${app.url}/v1/admin/channels/${bad}`, { token: app.adminToken })).json.status).toBe('broken');
          const client = new OpenAI({ baseURL: `${app.url}/v1`, apiKey: key, maxRetries: 0 });
          const reply = await client.chat.completions.create({ model: 'good-model', messages: [{ role: 'user', content: 'Say hello' }] });
          expect(reply.choices[0]!.message.content).toBe(replyText('Say hello'));
          // The broken one is never sent the empty key: the relay has no channel for its model.
          const before = upstream.requests.length;
          const refused = await client.chat.completions.create({ model: 'bad-model', messages: [{ role: 'user', content: 'Say hello' }] }).catch((error: unknown) => error);
          expect(refused).toBeInstanceOf(OpenAI.APIError);
          expect((refused as InstanceType<typeof OpenAI.APIError>).status).toBeGreaterThanOrEqual(400);
          expect(upstream.requests.length).toBe(before);
          expect((await call(`${app.url}/health/ready`)).status).toBe(200);
        };
        await check(s);
        await s.close();
        // A restart loads the directory from the read model: the same picture, and it starts.
        s = await startApp({ ...stores, SECRET: SECRET_A }, { keepDataDir: dataDir });
        await check(s);
        // Setting the key again mends it.
        const mended = await call(`${s.url}/v1/admin/channels/${bad}`, { method: 'PATCH', token: s.adminToken, body: { key: 'test-key' } });
        expect(mended.json).toMatchObject({ status: 'ok', status_reason: null });
      } finally {
        await s.close();
      }
    });

    it('an installation from before the canary is judged by its sealed values, and gets the canary at its next start', async () => {
      const stores = newStores();
      const dataDir = newDataDir();
      let s = await startApp({ ...stores, SECRET: SECRET_A }, { keepDataDir: dataDir });
      await createChannel(s, 'only', upstream.baseUrl, ['gpt-4o-mini']);
      const canary = () => s.app.ctx.sql.db.selectFrom('data_keys').select('sealed_key').where('scope', '=', CANARY_SCOPE).executeTakeFirst();
      expect((await canary())?.sealed_key).toMatch(/^v1\./);
      await s.app.ctx.sql.db.deleteFrom('data_keys').where('scope', '=', CANARY_SCOPE).execute();
      await s.close();
      // No canary: the channel key (sealed with A) does not open with B.
      await expect(startApp({ ...stores, SECRET: SECRET_B }, { keepDataDir: dataDir, anonymous: true })).rejects.toThrow(SecretMismatchError);
      s = await startApp({ ...stores, SECRET: SECRET_A }, { keepDataDir: dataDir });
      try {
        expect((await canary())?.sealed_key).toMatch(/^v1\./);
      } finally {
        await s.close();
      }
    });

    describe('switchyard secret rotate', () => {
      const stores: Record<string, string> = {};
      let dataDir = '';
      let processEnv: Record<string, string> = {};
      let mfaUser: { email: string; secret: Buffer; recoveryCodes: string[] };
      let conversationId = '';
      let oldTokens: { access: string; refresh: string };
      let channelIds: string[] = [];
      let webhookId = '';

      beforeAll(async () => {
        Object.assign(stores, newStores(), { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' });
        dataDir = newDataDir();
        processEnv = { ...stores, DATA_DIR: dataDir, STORAGE_DIR: join(dataDir, 'storage'), LOG_LEVEL: 'warn', ADMIN_EMAIL: TEST_ADMIN.email, ADMIN_PASSWORD: TEST_ADMIN.password };
        const s = await startApp({ ...stores, SECRET: SECRET_A, MFA_ENABLED: 'true' }, { keepDataDir: dataDir });
        try {
          channelIds = [await createChannel(s, 'first', upstream.baseUrl, ['gpt-4o-mini']), await createChannel(s, 'second', upstream.baseUrl, ['gpt-4o'])];
          // A user with multi-factor login on.
          const user = await createUser(s.url, s.adminToken);
          const { access_token: token } = await login(s.url, user.email, TEST_USER_PASSWORD);
          const enroll = await call(`${s.url}/v1/users/me/mfa/enroll`, { method: 'POST', token });
          const secret = base32Decode(enroll.json.secret as string);
          expect((await call(`${s.url}/v1/users/me/mfa/verify`, { token, body: { code: totp(secret, Date.now() - STEP_MS) } })).status).toBe(200);
          mfaUser = { email: user.email, secret, recoveryCodes: enroll.json.recovery_codes as string[] };
          // A conversation (sealed with user-1's data key) with a relayed reply.
          const conversation = await call(`${s.url}/v1/conversations`, { token: s.userToken, body: { model: 'gpt-4o-mini' } });
          conversationId = conversation.json.id as string;
          const sent = await call(`${s.url}/v1/conversations/${conversationId}/messages`, { token: s.userToken, body: { content: 'Say hello', stream: false } });
          expect(sent.status, sent.text).toBe(200);
          // A webhook with a secret of its own.
          const hook = await call(`${s.url}/v1/admin/webhooks`, { token: s.adminToken, body: { url: `${receiver.url}/hook`, events: ['key.created'], secret: WEBHOOK_SECRET } });
          expect(hook.status, hook.text).toBe(201);
          webhookId = hook.json.id as string;
          const session = await login(s.url, 'user-1@switchyard.test', TEST_USER_PASSWORD);
          oldTokens = { access: session.access_token, refresh: session.refresh_token };
        } finally {
          await s.close();
        }
      });

      it('a server started with another SECRET stops with one line naming the data and the way out (stderr and the log), no stack', async () => {
        const r = await cli({ ...processEnv, SECRET: SECRET_B, LOG_LEVEL: 'info', SERVER_PORT: '0', METRICS_ENABLED: 'false' }, 'serve');
        expect(r.code).toBe(1);
        const lines = r.stderr.trim().split('\n');
        expect(lines).toHaveLength(1);
        expect(lines[0]).toMatch(/^the data in \S+ was sealed with another SECRET: start with the SECRET it was sealed with, or re-seal it with "switchyard secret rotate --old <old> --new <new>"$/);
        if (mode.name === 'embedded') expect(lines[0]).toContain(dataDir);
        expect(r.stderr).not.toMatch(/\n\s+at /);
        expect(r.stdout).toContain('"event":"secret_mismatch"');
        expect(r.stdout).not.toContain('Unsupported state');
      });

      it('refuses a wrong --old and bad command lines in one line; --help explains', async () => {
        const wrongFile = join(dataDir, 'wrong-secret');
        writeFileSync(wrongFile, 'not-the-secret-0123456789\n');
        const [wrong, wrongFromFile, noFile, both, missing, short, unknown, help, shortHelp] = await Promise.all([
          cli(processEnv, 'secret', 'rotate', '--old', 'not-the-secret-0123456789', '--new', SECRET_B),
          cli(processEnv, 'secret', 'rotate', '--old-file', wrongFile, '--new', SECRET_B),
          cli(processEnv, 'secret', 'rotate', '--old-file', join(dataDir, 'no-such-file'), '--new', SECRET_B),
          cli(processEnv, 'secret', 'rotate', '--old', SECRET_A, '--old-file', wrongFile, '--new', SECRET_B),
          cli(processEnv, 'secret', 'rotate', '--old', SECRET_A),
          cli(processEnv, 'secret', 'rotate', '--old', SECRET_A, '--new', 'short'),
          cli(processEnv, 'secret', 'rotate', '--old', SECRET_A, '--new', SECRET_B, '--bogus'),
          cli({}, 'secret', '--help'),
          cli({}, 'secret', 'rotate', '-h'),
        ]);
        expect(wrong.code).toBe(1);
        expect(wrong.stderr.trim()).toMatch(/^--old does not open the data in \S+: give the SECRET the data was sealed with$/);
        expect(wrongFromFile.code).toBe(1);
        expect(wrongFromFile.stderr.trim()).toBe(wrong.stderr.trim());
        expect([noFile.code, noFile.stderr.trim()]).toEqual([1, `switchyard: --old-file ${join(dataDir, 'no-such-file')}: ENOENT (see: switchyard secret --help)`]);
        expect([both.code, both.stderr.trim()]).toEqual([1, 'switchyard: give --old or --old-file, not both (see: switchyard secret --help)']);
        expect(missing.code).toBe(1);
        expect(missing.stderr.trim()).toBe('switchyard: secret rotate needs --old <the SECRET the data is sealed with> and --new <the SECRET to seal it with> (or --old-file / --new-file) (see: switchyard secret --help)');
        expect(short.code).toBe(1);
        expect(short.stderr.trim()).toBe('switchyard: --new must be at least 16 characters, as SECRET must (see: switchyard secret --help)');
        expect(unknown.code).toBe(1);
        expect(unknown.stderr.trim().split('\n')).toHaveLength(1);
        expect(help.code).toBe(0);
        expect(help.stdout).toContain('secret rotate --old <old SECRET> --new <new SECRET>');
        expect(help.stdout).toContain('secret rotate --old-file <file> --new-file <file>');
        expect(shortHelp.stdout).toContain('re-seal channel keys');
      });

      it('re-seals everything, finishing a run that stopped half-way; a re-run changes nothing', async () => {
        // A run that stopped half-way: the first channel's key already under the new SECRET, the rest not.
        const s = await startApp({ ...stores, SECRET: SECRET_A }, { keepDataDir: dataDir, anonymous: true });
        try {
          const sealed = new SecretBox(SECRET_B, 'provider-keys').seal('test-key');
          await s.app.ctx.commands.execute(channels, channelIds[0]!, { type: 'UpdateChannel', changes: {}, key: { sealed, masked: 'te****-key' } }, { tenantId: 'default' });
        } finally {
          await s.close();
        }
        const r = await cli(processEnv, 'secret', 'rotate', '--old', SECRET_A, '--new', SECRET_B);
        expect(r.code, r.stderr).toBe(0);
        const report = JSON.parse(r.stdout) as RotationReport;
        expect(report.channel_keys).toEqual({ resealed: 1, already: 1, unopenable: [] });
        expect(report.mfa_secrets).toEqual({ resealed: 1, already: 0, unopenable: [] });
        expect(report.webhook_secrets).toEqual({ resealed: 1, already: 0, unopenable: [] });
        expect(report.data_keys.resealed).toBeGreaterThanOrEqual(1);
        expect(report.data_keys.unopenable).toEqual([]);
        expect(report.recovery_codes_invalidated_for).toHaveLength(1);
        expect(r.stderr).toContain('now start every server with SECRET=<new>');
        // Nothing in the clear in what rotate printed.
        expect(r.stdout + r.stderr).not.toContain('test-key');

        // Again, the SECRETs from files this time (out of the process list).
        writeFileSync(join(dataDir, 'old-secret'), `${SECRET_A}\n`, { mode: 0o600 });
        writeFileSync(join(dataDir, 'new-secret'), SECRET_B, { mode: 0o600 });
        const again = await cli(processEnv, 'secret', 'rotate', '--old-file', join(dataDir, 'old-secret'), '--new-file', join(dataDir, 'new-secret'));
        expect(again.code, again.stderr).toBe(0);
        const second = JSON.parse(again.stdout) as typeof report;
        expect(second.channel_keys).toEqual({ resealed: 0, already: 2, unopenable: [] });
        expect(second.mfa_secrets).toEqual({ resealed: 0, already: 1, unopenable: [] });
        expect(second.webhook_secrets).toEqual({ resealed: 0, already: 1, unopenable: [] });
        expect(second.data_keys.resealed).toBe(0);
        expect(second.data_keys.already).toBe(report.data_keys.resealed);

        // The old SECRET is now the wrong one.
        const old = await cli({ ...processEnv, SECRET: SECRET_A, SERVER_PORT: '0', METRICS_ENABLED: 'false' }, 'serve');
        expect(old.code).toBe(1);
        expect(old.stderr).toContain('was sealed with another SECRET');
      });

      it('after a restart with the new SECRET: the relay, MFA login, conversations and signed webhook deliveries work; old access tokens end, refresh tokens renew', async () => {
        const s = await startApp({ ...stores, SECRET: SECRET_B, MFA_ENABLED: 'true' }, { keepDataDir: dataDir });
        try {
          const list = await call(`${s.url}/v1/admin/channels`, { token: s.adminToken });
          expect((list.json.data as Array<{ status: string }>).map((c) => c.status)).toEqual(['ok', 'ok']);
          // The relay, with the official SDK, through both channels (the fake upstream accepts only the real key).
          const client = new OpenAI({ baseURL: `${s.url}/v1`, apiKey: await apiKeyOf(s), maxRetries: 0 });
          for (const model of ['gpt-4o-mini', 'gpt-4o']) {
            const reply = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Say hello' }] });
            expect(reply.choices[0]!.message.content).toBe(replyText('Say hello'));
          }
          // MFA: the same authenticator's codes; recovery codes made under the old SECRET no longer match (documented).
          const withCode = await call(`${s.url}/v1/auth/login`, { body: { email: mfaUser.email, password: TEST_USER_PASSWORD, mfa_code: totp(mfaUser.secret, Date.now()) } });
          expect(withCode.status, withCode.text).toBe(200);
          const withRecovery = await call(`${s.url}/v1/auth/login`, { body: { email: mfaUser.email, password: TEST_USER_PASSWORD, mfa_code: mfaUser.recoveryCodes[0] } });
          expect(withRecovery.status).toBe(401);
          // The re-sealing is in the security log, without the sealed values.
          await expect
            .poll(async () => {
              const found = await call(`${s.url}/api/admin/logs/search`, { token: s.adminToken, body: { filters: { category: 'security' }, limit: 1000 } });
              return (found.json.data as Array<{ event: string; details: Record<string, unknown> }> | undefined)?.filter((e) => e.event === 'mfa_secret_resealed');
            }, POLL)
            .toEqual([expect.objectContaining({ details: { fields: ['secret_sealed'] } })]);
          // The conversation opens with the re-sealed data key.
          const conversation = await call(`${s.url}/v1/conversations/${conversationId}`, { token: s.userToken });
          expect(conversation.status, conversation.text).toBe(200);
          expect((conversation.json.messages as Array<{ role: string; content: string }>).map((m) => [m.role, m.content])).toEqual([
            ['user', 'Say hello'],
            ['assistant', replyText('Say hello')],
          ]);
          // Access tokens signed with the old SECRET are refused; the refresh token still renews the session.
          expect((await call(`${s.url}/v1/users/me`, { token: oldTokens.access })).status).toBe(401);
          const renewed = await call(`${s.url}/v1/auth/refresh`, { body: { refresh_token: oldTokens.refresh } });
          expect(renewed.status, renewed.text).toBe(200);
          expect((await call(`${s.url}/v1/users/me`, { token: renewed.json.access_token as string })).status).toBe(200);
          // The webhook still signs with its own secret.
          const before = receiver.received.length;
          const test = await call(`${s.url}/v1/admin/webhooks/${webhookId}/test`, { token: s.adminToken, body: {} });
          expect(test.status, test.text).toBe(202);
          await expect.poll(() => receiver.received.length, POLL).toBeGreaterThan(before);
          expect(receiver.received.at(-1)!.signatureValid).toBe(true);
        } finally {
          await s.close();
        }
      });
    });
  });
}
