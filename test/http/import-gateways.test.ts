/**
 * `switchyard import one-api|new-api` end to end, through the real CLI as a child process: fixture
 * databases of both gateways (test/support/legacy-gateways.ts: their gorm tables, on MariaDB and
 * SQLite) are imported into embedded and distributed Switchyards, which are then started on what
 * the import wrote. An imported token relays with the `openai` SDK (its `sk-` secret unchanged)
 * through an imported channel whose base URL is a fake upstream, the imported admin logs in with
 * the gateway password, quota/credits/expiry/models/subnets read back through the admin API, the
 * JSON report lists what was not mapped; `--dry-run` appends nothing, and a re-run creates nothing.
 *
 * one-api on MariaDB -> distributed and new-api on SQLite -> embedded get every check; the other
 * two combinations a smaller set (import, login, relay, report).
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openEventStore } from '../../src/adapters/index.js';
import { loadConfig } from '../../src/config.js';
import type { ImportReport } from '../../src/imports/gateways/import.js';
import { importedId } from '../../src/imports/sink.js';
import { call, login, startApp, type RunningApp } from '../support/app.js';
import { cliInstallation, runCli, type CliInstallation } from '../support/cli.js';
import { startOpenAiFake, type OpenAiFake } from '../support/fake-upstreams/openai.js';
import { createGatewayFixture, type FixtureDialect, type GatewayFixture, type GatewayName } from '../support/legacy-gateways.js';

const services = inject('services');
const urls = inject('serviceUrls');

type Mode = 'embedded' | 'distributed';
type Target = CliInstallation;

/** A Switchyard to import into; LOG_LEVEL as an operator leaves it (info): the import still prints no line per row. */
const target = (mode: Mode): Target => cliInstallation(mode, { urls });

const cli = runCli;

/** Runs the import; a zero exit status and a JSON report, or the test fails with its stderr. */
async function runImport(gateway: GatewayName, fixture: GatewayFixture, into: Target, extra: string[] = []): Promise<{ report: ImportReport; output: string }> {
  const result = await cli(['import', gateway, '--from', fixture.url, ...extra], into.env);
  expect(result.code, result.stderr).toBe(0);
  return { report: JSON.parse(result.stdout) as ImportReport, output: result.stdout + result.stderr };
}

/** The last position of the target's event log (0: nothing was ever appended). */
async function headPosition(into: Target): Promise<number> {
  const store = await openEventStore(loadConfig(into.env).eventStore);
  try {
    return await store.headPosition();
  } finally {
    await store.close();
  }
}

/** What each fixture (test/support/legacy-gateways.ts) must give. */
const EXPECTED: Record<GatewayName, { channels: number; keys: number; unmappedType: RegExp; notMapped: Array<[string, number]> }> = {
  'one-api': {
    // openai, azure east, claude pool (2 keys: 2 channels)
    channels: 4,
    // root-ci, alice-app, bob-old and bob-enabled (revoked), carol-vip, alice-expired
    keys: 6,
    unmappedType: /^Baidu channels \(type 15\) have no Switchyard kind/,
    notMapped: [
      ['users', 5], // deleted (status 3)
      ['channels', 3], // Baidu
      ['channels', 5], // no models
      ['tokens', 5], // its user was deleted
      ['tokens', 7], // subnet "office-network"
    ],
  },
  'new-api': {
    // openai, custom gateway, mistral pool (3 keys: 3 channels)
    channels: 5,
    keys: 6,
    unmappedType: /^Midjourney channels \(type 2\) have no Switchyard kind/,
    notMapped: [
      ['users', 5], // deleted_at set
      ['channels', 3], // Midjourney
      ['channels', 5], // no models
      ['tokens', 5], // its user was deleted
      ['tokens', 7], // allow_ips "office-network"
      ['tokens', 8], // deleted_at set
    ],
  },
};

const USERS = 5; // root, alice, bob, carol, erin (dave is deleted)

interface Case {
  gateway: GatewayName;
  dialect: FixtureDialect;
  mode: Mode;
  full: boolean;
}

const CASES: Case[] = [
  { gateway: 'one-api', dialect: 'mysql', mode: 'distributed', full: true },
  { gateway: 'new-api', dialect: 'sqlite', mode: 'embedded', full: true },
  { gateway: 'one-api', dialect: 'sqlite', mode: 'embedded', full: false },
  { gateway: 'new-api', dialect: 'mysql', mode: 'distributed', full: false },
];

let upstream: OpenAiFake;
beforeAll(async () => {
  upstream = await startOpenAiFake();
});
afterAll(async () => {
  await upstream?.close();
});

for (const c of CASES) {
  const available = (c.dialect === 'sqlite' || services.mysql) && (c.mode === 'embedded' || (services.nats && services.mysql && services.redis));
  describe.skipIf(!available)(`import ${c.gateway} from ${c.dialect === 'mysql' ? 'MariaDB' : 'SQLite'} into ${c.mode}`, () => {
    const expected = EXPECTED[c.gateway];
    const id = (kind: 'user' | 'channel' | 'key', legacyId: number | string) => importedId(c.gateway, kind, legacyId);
    let fixture: GatewayFixture;
    let into: Target;
    let report: ImportReport;
    let output = '';
    let dryRun: ImportReport | undefined;
    let dryRunHead = -1;
    let again: ImportReport | undefined;
    let headAfterImport = 0;
    let headAfterRerun = 0;
    let s: RunningApp;

    beforeAll(async () => {
      fixture = await createGatewayFixture(c.gateway, c.dialect, { upstreamOrigin: upstream.origin, mysqlUrl: urls.mysql });
      into = target(c.mode);
      if (c.full) {
        // Dry run first, as an operator would: into a Switchyard never started.
        dryRun = (await runImport(c.gateway, fixture, into, ['--dry-run'])).report;
        dryRunHead = await headPosition(into);
      }
      ({ report, output } = await runImport(c.gateway, fixture, into));
      if (c.full) {
        headAfterImport = await headPosition(into);
        again = (await runImport(c.gateway, fixture, into)).report;
        headAfterRerun = await headPosition(into);
      }
      s = await startApp(into.appEnv, { keepDataDir: into.dataDir, anonymous: true });
    }, 150_000);

    afterAll(async () => {
      await s?.close();
      await into?.cleanup();
      await fixture?.cleanup();
    });

    it('the report counts what was imported and lists each row that was not, with the reason', () => {
      expect(report).toMatchObject({ source: c.gateway, dry_run: false, quota_per_unit: 500_000 });
      expect(report.users).toEqual({ created: USERS, existing: 0, not_mapped: 1 });
      expect(report.channels).toEqual({ created: expected.channels, existing: 0, not_mapped: 2 });
      expect(report.keys).toEqual({ created: expected.keys, existing: 0, not_mapped: expected.notMapped.filter(([t]) => t === 'tokens').length });
      expect(report.not_mapped.map((r) => [r.table, r.id])).toEqual(expected.notMapped);
      const reasons = new Map(report.not_mapped.map((r) => [`${r.table}/${r.id}`, r.reason]));
      expect(reasons.get('users/5')).toBe('it is deleted');
      expect(reasons.get('channels/3')).toMatch(expected.unmappedType);
      expect(reasons.get('channels/5')).toBe('it lists no models');
      expect(reasons.get('tokens/5')).toBe('its user 5 was not imported');
      expect(reasons.get('tokens/7')).toContain('"office-network" is neither an IP address nor a CIDR range');
      // Users the gateway knows by username only log in by a made-up email; the report says which.
      expect(report.notes).toContainEqual({ table: 'users', id: 1, name: 'root', note: `no email: logs in as root@${c.gateway}.local` });
      // No secret in anything the command printed: neither a client's token nor a provider key.
      for (const secret of Object.values(fixture.secrets)) expect(output).not.toContain(secret.slice(3));
      expect(output).not.toContain('test-key');
      expect(output).not.toContain('"event":"key_created"');
      expect(output).toMatch(new RegExp(`${c.gateway} tokens .*100%`)); // progress (a line: stderr is a pipe)
    });

    it('the imported admin logs in with the gateway password; the imported token relays through the imported channel', async () => {
      // alice is an admin (role 10) of the gateway with an email: an admin here, by that email.
      const alice = await login(s.url, 'alice@example.com', fixture.passwords.alice!);
      const users = await call(`${s.url}/v1/admin/users`, { token: alice.access_token });
      expect(users.status).toBe(200);
      // The root user (100) had no email: root@<source>.local, with one-api's first-start password.
      const root = await login(s.url, `root@${c.gateway}.local`, fixture.passwords.root!);
      expect((await call(`${s.url}/v1/admin/users/${id('user', 1)}`, { token: root.access_token })).json).toMatchObject({ role: 'admin' });

      const before = upstream.requests.length;
      const client = new OpenAI({ apiKey: fixture.secrets['alice-app'], baseURL: `${s.url}/v1`, maxRetries: 0 });
      const completion = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: `hello from ${c.gateway}` }] });
      expect(completion.choices[0]!.message.content).toBeTruthy();
      expect(upstream.requests.length).toBe(before + 1);
      const request = upstream.requests.at(-1)!;
      expect(request.path).toBe('/v1/chat/completions'); // the gateway's origin + the /v1 it appended
      expect(request.headers.authorization).toBe('Bearer test-key');
    });

    if (!c.full) return;

    it('users: roles, disabled stays disabled, remaining quota as credits (500,000 quota = 1 credit)', async () => {
      const alice = await login(s.url, 'alice@example.com', fixture.passwords.alice!);
      const list = (await call(`${s.url}/v1/admin/users`, { token: alice.access_token })).json.data as Array<{ id: string; email: string; role: string; disabled: boolean }>;
      const imported = list.filter((u) => u.id.startsWith('usr_imp')).map((u) => [u.id, u.email, u.role, u.disabled]);
      expect(imported.sort()).toEqual(
        [
          [id('user', 1), `root@${c.gateway}.local`, 'admin', false],
          [id('user', 2), 'alice@example.com', 'admin', false],
          [id('user', 3), `bob@${c.gateway}.local`, 'user', true],
          [id('user', 4), 'carol@example.com', 'user', false],
          // erin signed up through GitHub with alice's email: her own made-up one, a random password.
          [id('user', 6), `erin@${c.gateway}.local`, 'user', false],
        ].sort(),
      );
      const balance = async (legacyId: number) => (await call(`${s.url}/v1/admin/credits/${id('user', legacyId)}`, { token: alice.access_token })).json.balance_micro as number;
      expect(await balance(1)).toBe(1_000_000_000); // 500,000,000 quota: $1000
      expect(await balance(3)).toBe(2_000_000);
      expect(await balance(4)).toBe(500_000);
      expect(await balance(2)).toBe(0);
      expect(report.credits).toMatchObject({ created: 3, existing: 0, total_micro: 1_002_500_000 });
      // carol is a user: no admin API; bob is disabled: no login.
      const carol = await login(s.url, 'carol@example.com', fixture.passwords.carol!);
      expect((await call(`${s.url}/v1/admin/users`, { token: carol.access_token })).status).toBe(403);
      expect((await call(`${s.url}/v1/auth/login`, { body: { email: `bob@${c.gateway}.local`, password: fixture.passwords.bob } })).status).toBe(401);
    });

    it('tokens: remaining quota, expiry, models, addresses and group land in the key policy; disabled ones are revoked', async () => {
      const alice = await login(s.url, 'alice@example.com', fixture.passwords.alice!);
      const keys = (await call(`${s.url}/api/admin/keys`, { token: alice.access_token })).json.data as Array<{
        id: string;
        name: string;
        user_id: string;
        key_prefix: string;
        revoked: boolean;
        permissions: { models: string[]; quota_limit: number | null; ip_whitelist: string[]; expiry_date: string | null };
        model_restrictions: { allowed_models: string[] };
      }>;
      const byName = new Map(keys.map((k) => [k.name, k]));
      expect([...byName.keys()].sort()).toEqual(['alice-app', 'alice-expired', 'bob-enabled', 'bob-old', 'carol-vip', 'root-ci']);
      expect(byName.get('alice-app')).toMatchObject({
        id: id('key', 2),
        user_id: id('user', 2),
        key_prefix: fixture.secrets['alice-app']!.slice(0, 8),
        revoked: false,
        // 5,000,000 quota left: 10 credits; expires 2099-01-01; one model; one-api's subnet, new-api's address.
        permissions: { quota_limit: 10, expiry_date: '2099-01-01T00:00:00.000Z', ip_whitelist: [c.gateway === 'one-api' ? '127.0.0.0/8' : '127.0.0.1'] },
        model_restrictions: { allowed_models: ['gpt-4o-mini'] },
      });
      expect(byName.get('root-ci')).toMatchObject({ revoked: false, permissions: { quota_limit: null, expiry_date: null, ip_whitelist: [] }, model_restrictions: { allowed_models: [] } });
      expect(byName.get('bob-old')).toMatchObject({ revoked: true });
      // Enabled, but bob is disabled: the gateway refused it, so it is revoked here.
      expect(byName.get('bob-enabled')).toMatchObject({ revoked: true });
      expect(report.notes).toContainEqual({ table: 'tokens', id: 9, name: 'bob-enabled', note: 'its user is disabled: imported revoked' });
      expect(byName.get('alice-expired')).toMatchObject({ revoked: false, permissions: { expiry_date: '2024-01-01T00:00:00.000Z' } });
      // carol's group "vip" reaches only its channels' models.
      const vipModels = c.gateway === 'one-api' ? ['gpt-3.5-turbo', 'gpt-4o', 'gpt-4o-mini'] : ['gpt-4o', 'gpt-4o-mini', 'qwen-local'];
      expect(byName.get('carol-vip')).toMatchObject({ revoked: false, permissions: { quota_limit: 2, models: vipModels } });

      // What the policies say, the relay does: revoked and expired keys are refused, a model outside the list too.
      const sdk = (secret: string) => new OpenAI({ apiKey: secret, baseURL: `${s.url}/v1`, maxRetries: 0 });
      const ask = (secret: string, model: string) => sdk(secret).chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] });
      await expect(ask(fixture.secrets['bob-old']!, 'gpt-4o-mini')).rejects.toMatchObject({ status: 401 });
      await expect(ask(fixture.secrets['bob-enabled']!, 'gpt-4o-mini')).rejects.toMatchObject({ status: 401 });
      await expect(ask(fixture.secrets['alice-expired']!, 'gpt-4o-mini')).rejects.toMatchObject({ status: 401 });
      await expect(ask(fixture.secrets['alice-app']!, 'gpt-4o')).rejects.toMatchObject({ status: 403 });
      // The channel's model_mapping: gpt-4o reaches the upstream as gpt-4o-2024-08-06.
      await ask(fixture.secrets['root-ci']!, 'gpt-4o');
      expect((upstream.requests.at(-1)!.json as { model: string }).model).toBe('gpt-4o-2024-08-06');
      if (c.gateway === 'new-api') {
        // new-api's Custom channel (the whole request URL) serves carol's group.
        await ask(fixture.secrets['carol-vip']!, 'qwen-local');
        expect(upstream.requests.at(-1)).toMatchObject({ path: '/v1/chat/completions', json: { model: 'qwen-local' } });
      }
    });

    it('channels: kind, base URL, models, mapping, priority (negated), weight, enabled, one per key', async () => {
      const alice = await login(s.url, 'alice@example.com', fixture.passwords.alice!);
      const channels = (await call(`${s.url}/v1/admin/channels`, { token: alice.access_token })).json.data as Array<{ id: string; name: string; type: string; base_url: string | null; models: string[]; model_mapping: Record<string, string>; priority: number; weight: number; enabled: boolean; config: Record<string, unknown> }>;
      const byId = new Map(channels.map((ch) => [ch.id, ch]));
      expect(channels).toHaveLength(expected.channels);
      expect(byId.get(id('channel', 1))).toMatchObject({
        name: 'openai',
        type: 'openai',
        base_url: `${upstream.origin}/v1`,
        models: ['gpt-4o-mini', 'gpt-4o'],
        model_mapping: { 'gpt-4o': 'gpt-4o-2024-08-06' },
        priority: -5,
        weight: 10,
        enabled: true,
        ...(c.gateway === 'new-api' && { config: { organization: 'org-fixture' } }),
      });
      if (c.gateway === 'one-api') {
        expect(byId.get(id('channel', 2))).toMatchObject({ type: 'azure', base_url: 'https://east.openai.azure.com', config: { api_version: '2024-06-01' }, model_mapping: { 'gpt-3.5-turbo': 'gpt-35-turbo' } });
        // A disabled channel with two keys: two disabled channels.
        expect([byId.get(id('channel', 4)), byId.get(id('channel', '4/key2'))].map((ch) => [ch?.name, ch?.type, ch?.enabled])).toEqual([
          ['claude pool (key 1/2)', 'anthropic', false],
          ['claude pool (key 2/2)', 'anthropic', false],
        ]);
      } else {
        expect(byId.get(id('channel', 2))).toMatchObject({ type: 'custom', base_url: `${upstream.origin}/v1`, models: ['qwen-local'] });
        // Multi-key: the key new-api had disabled (index 1) is a disabled channel.
        expect([id('channel', 4), id('channel', '4/key2'), id('channel', '4/key3')].map((key) => [byId.get(key)?.type, byId.get(key)?.enabled])).toEqual([
          ['mistral', true],
          ['mistral', false],
          ['mistral', true],
        ]);
      }
    });

    it('--dry-run reports the same and appends nothing, not even a first start', () => {
      expect(dryRun).toMatchObject({ dry_run: true, users: report.users, channels: report.channels, keys: report.keys, credits: report.credits });
      expect(dryRun!.not_mapped).toEqual(report.not_mapped);
      expect(dryRunHead).toBe(0);
      expect(headAfterImport).toBeGreaterThan(0);
    });

    it('a re-run creates nothing: the report says "existing", the event log is unchanged', () => {
      expect(again).toMatchObject({
        dry_run: false,
        users: { created: 0, existing: USERS, not_mapped: 1 },
        credits: { created: 0, existing: 3 },
        channels: { created: 0, existing: expected.channels, not_mapped: 2 },
        keys: { created: 0, existing: expected.keys },
      });
      expect(again!.not_mapped).toEqual(report.not_mapped);
      expect(headAfterRerun).toBe(headAfterImport);
    });
  });
}

describe('import refusals', () => {
  it('a command line without --from, a database that is not the gateway\'s, a tenant that does not exist: one line, exit status 1, nothing written', { timeout: 90_000 }, async () => {
    const into = target('embedded');
    const dir = mkdtempSync(join(tmpdir(), 'sy-not-a-gateway-'));
    try {
      const usage = await cli(['import', 'one-api'], into.env);
      expect(usage.code).toBe(1);
      expect(usage.stderr.trim()).toBe('switchyard: import needs --from <database URL> (sqlite:/path/one-api.db, mysql://user:pass@host:3306/oneapi) (see: switchyard import --help)');
      const { default: Database } = await import('better-sqlite3');
      const file = join(dir, 'other.db');
      new Database(file).exec('CREATE TABLE users (id integer primary key)').close();
      const wrong = await cli(['import', 'new-api', '--from', `sqlite:${file}`], into.env);
      expect(wrong.code).toBe(1);
      expect(wrong.stderr).toContain(`new-api import from sqlite:${file} failed: it has no channels, tokens, abilities tables: is it new-api's database?`);
      expect(wrong.stdout).toBe('');
      expect(readdirSync(into.dataDir)).toEqual([]);
      // A tenant that does not exist: refused before any row is read.
      const fixture = await createGatewayFixture('one-api', 'sqlite', { upstreamOrigin: upstream.origin });
      try {
        const noTenant = await cli(['import', 'one-api', '--from', fixture.url, '--tenant', 'nope', '--dry-run'], into.env);
        expect(noTenant.code).toBe(1);
        expect(noTenant.stderr).toContain('failed: no tenant "nope" (create it first: POST /v1/admin/tenants)');
        expect(await headPosition(into)).toBe(0);
      } finally {
        await fixture.cleanup();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await into.cleanup();
    }
  });
});
