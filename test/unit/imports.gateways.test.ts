/** The pure mappings of the one-api / new-api importers: legacy rows -> sink inputs, or why not. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { baseUrlFor, mapChannel, parseModelMapping } from '../../src/imports/gateways/channels.js';
import { groupModelsFrom, mapToken } from '../../src/imports/gateways/keys.js';
import type { LegacyChannel, LegacyToken, LegacyUser } from '../../src/imports/gateways/rows.js';
import { fallbackEmail, mapUser, quotaToMicro } from '../../src/imports/gateways/users.js';
import { oneApi } from '../../src/imports/one-api/index.js';
import { ONE_API_CHANNEL_TYPES } from '../../src/imports/one-api/channel-types.js';
import { allowIps, keyStatuses, newApi } from '../../src/imports/new-api/index.js';
import { NEW_API_CHANNEL_TYPES } from '../../src/imports/new-api/channel-types.js';
import { hashKey } from '../../src/relay/access/key-gate.js';
import { channelTypeRows } from '../support/legacy-gateways.js';

const BCRYPT = '$2a$10$' + 'N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy';

const user = (over: Partial<LegacyUser> = {}): LegacyUser => ({ id: 7, username: 'alice', password: BCRYPT, role: 1, status: 1, email: 'alice@example.com', quota: 0, group: 'default', deleted: false, ...over });
const token = (over: Partial<LegacyToken> = {}): LegacyToken => ({ id: 3, userId: 7, key: 'abcDEF123', status: 1, name: 'ci', expiredTime: -1, remainQuota: 0, unlimitedQuota: true, models: null, ipRules: [], group: '', deleted: false, ...over });
const channel = (over: Partial<LegacyChannel> = {}): LegacyChannel => ({ id: 11, type: 1, key: 'sk-upstream', status: 1, name: 'openai main', weight: 0, baseUrl: '', models: 'gpt-4o,gpt-4o-mini', group: 'default', modelMapping: '', priority: 0, config: null, other: null, organization: null, keyStatuses: null, ...over });
const noGroups = { userGroup: 'default', groupModels: () => null };

describe('users', () => {
  it('quota: 500,000 per credit by default, so one quota unit is 2 micro-credits', () => {
    expect(quotaToMicro(500_000)).toBe(1_000_000);
    expect(quotaToMicro(1)).toBe(2);
    expect(quotaToMicro(1_234_567)).toBe(2_469_134);
    expect(quotaToMicro(1_000, 300_000)).toBe(3_333);
  });

  it('root and admin become admins, common users users; disabled stays disabled; deleted is not imported', () => {
    expect(mapUser(user({ role: 100 }), 'one-api', new Set())).toMatchObject({ ok: true, value: { user: { role: 'admin', disabled: false } } });
    expect(mapUser(user({ role: 10 }), 'one-api', new Set())).toMatchObject({ ok: true, value: { user: { role: 'admin' } } });
    expect(mapUser(user({ role: 1, status: 2 }), 'one-api', new Set())).toMatchObject({ ok: true, value: { user: { role: 'user', disabled: true } } });
    expect(mapUser(user({ deleted: true }), 'one-api', new Set())).toEqual({ ok: false, reason: 'it is deleted' });
  });

  it('keeps its bcrypt hash and turns the remaining quota into credits', () => {
    const mapped = mapUser(user({ quota: 250_000 }), 'new-api', new Set());
    expect(mapped).toEqual({ ok: true, value: { user: { legacyId: 7, email: 'alice@example.com', passwordHash: BCRYPT, role: 'user', disabled: false }, creditsMicro: 500_000 }, notes: [] });
  });

  it('users without a usable email log in as <username>@<source>.local, and the report says so', () => {
    const none = mapUser(user({ email: '', username: 'root' }), 'one-api', new Set());
    expect(none).toMatchObject({ ok: true, value: { user: { email: 'root@one-api.local' } }, notes: ['no email: logs in as root@one-api.local'] });
    const taken = mapUser(user({ id: 9, email: 'Alice@Example.com', username: 'alice2' }), 'one-api', new Set(['alice@example.com']));
    expect(taken).toMatchObject({ ok: true, value: { user: { email: 'alice2@one-api.local' } } });
    expect(fallbackEmail({ id: 4, username: 'Bob Smith!' }, 'new-api', new Set())).toBe('bob-smith@new-api.local');
    expect(fallbackEmail({ id: 4, username: 'bob' }, 'new-api', new Set(['bob@new-api.local']))).toBe('bob+4@new-api.local');
    expect(fallbackEmail({ id: 4, username: '!!!' }, 'new-api', new Set())).toBe('user-4@new-api.local');
  });

  it('a user without a bcrypt password is imported for a random one (passwordHash null)', () => {
    const mapped = mapUser(user({ password: '' }), 'one-api', new Set());
    expect(mapped).toMatchObject({ ok: true, value: { user: { passwordHash: null } } });
  });
});

describe('tokens', () => {
  it('keeps the sk- secret, remaining quota, expiry, models and subnets', () => {
    const mapped = mapToken(token({ unlimitedQuota: false, remainQuota: 1_500_000, expiredTime: 1_900_000_000, models: ['gpt-4o'], ipRules: ['10.0.0.0/8', '192.168.1.7'] }), noGroups);
    expect(mapped).toEqual({
      ok: true,
      notes: [],
      value: {
        legacyId: 3,
        legacyUserId: 7,
        name: 'ci',
        secret: 'sk-abcDEF123',
        revoked: false,
        policy: { allowed_models: ['gpt-4o'], quota_limit: 3, allowed_ips: ['10.0.0.0/8', '192.168.1.7'], expires_at: '2030-03-17T17:46:40.000Z' },
      },
    });
    // What a client sends is what the key gate hashes.
    expect(hashKey(mapped.ok ? mapped.value.secret! : '')).toBe(hashKey('sk-abcDEF123'));
  });

  it('unlimited quota and -1 expiry: no limit, no expiry', () => {
    expect(mapToken(token(), noGroups)).toMatchObject({ ok: true, value: { policy: { quota_limit: null, expires_at: null, allowed_models: [] } } });
  });

  it('disabled tokens import revoked; expired and exhausted ones as they are (their expiry and quota refuse them)', () => {
    expect(mapToken(token({ status: 2 }), noGroups)).toMatchObject({ ok: true, value: { revoked: true }, notes: ['disabled: imported revoked'] });
    expect(mapToken(token({ status: 3, expiredTime: 1_600_000_000 }), noGroups)).toMatchObject({ ok: true, value: { revoked: false, policy: { expires_at: '2020-09-13T12:26:40.000Z' } } });
    expect(mapToken(token({ status: 4, unlimitedQuota: false, remainQuota: -20 }), noGroups)).toMatchObject({ ok: true, value: { revoked: false, policy: { quota_limit: 0 } } });
    expect(mapToken(token(), { ...noGroups, userDisabled: true })).toMatchObject({ ok: true, value: { revoked: true }, notes: ['its user is disabled: imported revoked'] });
  });

  it('refuses what it cannot keep as strict: bad address rules, a model list that allows nothing', () => {
    expect(mapToken(token({ ipRules: ['10.0.0.0/33'] }), noGroups)).toMatchObject({ ok: false, reason: expect.stringContaining('"10.0.0.0/33" is neither an IP address nor a CIDR range') });
    expect(mapToken(token({ models: [] }), noGroups)).toMatchObject({ ok: false, reason: expect.stringContaining('list no model') });
    expect(mapToken(token({ deleted: true }), noGroups)).toEqual({ ok: false, reason: 'it is deleted' });
    expect(mapToken(token({ key: ' ' }), noGroups)).toEqual({ ok: false, reason: 'it has no key' });
  });

  it('a group reaching fewer models than all channels becomes permitted_models; a token group wins over the user group', () => {
    const abilities = [
      { group: 'default', model: 'gpt-4o-mini', channelId: 1 },
      { group: 'vip', model: 'gpt-4o-mini', channelId: 1 },
      { group: 'vip', model: 'gpt-4o', channelId: 2 },
      { group: 'vip', model: 'claude', channelId: 3 }, // channel 3 was not imported
      { group: 'lonely', model: 'claude', channelId: 3 },
    ];
    const groupModels = groupModelsFrom(abilities, new Set([1, 2]));
    expect(groupModels('vip')).toBeNull();
    expect(groupModels('default')).toEqual(['gpt-4o-mini']);
    expect(groupModels('nope')).toEqual([]);
    expect(mapToken(token(), { userGroup: 'default', groupModels })).toMatchObject({ ok: true, value: { policy: { permitted_models: ['gpt-4o-mini'] } } });
    const own = mapToken(token({ group: 'vip' }), { userGroup: 'default', groupModels });
    expect(own.ok && own.value.policy).not.toHaveProperty('permitted_models');
    expect(mapToken(token(), { userGroup: 'lonely', groupModels })).toMatchObject({ ok: false, reason: expect.stringContaining('"lonely" reaches no imported channel') });
    expect(groupModelsFrom([], new Set([1]))('default')).toBeNull();
  });
});

describe('channels', () => {
  const map = (over: Partial<LegacyChannel>, types = ONE_API_CHANNEL_TYPES) => mapChannel(channel(over), types);

  it('OpenAI-style base URLs get the /v1 the gateway appended; an empty one is the gateway default', () => {
    expect(map({})).toMatchObject({ ok: true, value: [{ type: 'openai', base_url: 'https://api.openai.com/v1' }] });
    expect(map({ baseUrl: 'http://10.0.0.5:8000/' })).toMatchObject({ ok: true, value: [{ base_url: 'http://10.0.0.5:8000/v1' }] });
    expect(map({ baseUrl: 'http://10.0.0.5:8000/v1' })).toMatchObject({ ok: true, value: [{ base_url: 'http://10.0.0.5:8000/v1' }] });
    expect(map({ type: 29 })).toMatchObject({ ok: true, value: [{ type: 'groq', base_url: 'https://api.groq.com/openai/v1' }] });
    expect(map({ type: 17 })).toMatchObject({ ok: true, value: [{ type: 'qwen', base_url: 'https://dashscope.aliyuncs.com/compatible-mode/v1' }] });
    expect(map({ type: 14 })).toMatchObject({ ok: true, value: [{ type: 'anthropic', base_url: 'https://api.anthropic.com' }] });
    expect(map({ type: 50, baseUrl: 'https://llm.internal/api/v2' })).toMatchObject({ ok: true, value: [{ type: 'custom', base_url: 'https://llm.internal/api/v2' }] });
  });

  it('the two gateways number types differently', () => {
    expect(map({ type: 28 })).toMatchObject({ ok: true, value: [{ type: 'mistral' }] });
    expect(map({ type: 42 }, NEW_API_CHANNEL_TYPES)).toMatchObject({ ok: true, value: [{ type: 'mistral', base_url: 'https://api.mistral.ai/v1' }] });
    expect(map({ type: 36 })).toMatchObject({ ok: true, value: [{ type: 'deepseek' }] });
    expect(map({ type: 36 }, NEW_API_CHANNEL_TYPES)).toMatchObject({ ok: false, reason: expect.stringContaining('SunoAPI') });
    expect(map({ type: 4 }, NEW_API_CHANNEL_TYPES)).toMatchObject({ ok: true, value: [{ type: 'ollama', base_url: 'http://localhost:11434' }] });
  });

  it("new-api's Custom type holds the whole request URL", () => {
    expect(map({ type: 8, baseUrl: 'https://gw.example/openai/v1/chat/completions' }, NEW_API_CHANNEL_TYPES)).toMatchObject({ ok: true, value: [{ type: 'custom', base_url: 'https://gw.example/openai/v1' }] });
    expect(map({ type: 8, baseUrl: 'https://gw.example/{model}/invoke' }, NEW_API_CHANNEL_TYPES)).toMatchObject({ ok: false });
    expect(map({ type: 8, baseUrl: '' })).toMatchObject({ ok: false, reason: 'it has no base URL' });
  });

  it('types without a Switchyard kind are reported by name', () => {
    expect(map({ type: 15 })).toEqual({ ok: false, reason: 'Baidu channels (type 15) have no Switchyard kind: one-api converts to a native protocol Switchyard does not speak' });
    expect(map({ type: 999 })).toEqual({ ok: false, reason: 'unknown channel type 999' });
    expect(map({ models: ' , ' })).toEqual({ ok: false, reason: 'it lists no models' });
    expect(map({ key: '\n' })).toEqual({ ok: false, reason: 'it has no key' });
  });

  it('priority is negated (the gateways try the highest first), weight 0 becomes 1, disabled stays disabled', () => {
    expect(map({ priority: 10, weight: 0, status: 3 })).toMatchObject({ ok: true, value: [{ priority: -10, weight: 1, enabled: false }] });
    expect(map({ priority: -2, weight: 5000 })).toMatchObject({ ok: true, value: [{ priority: 2, weight: 1000, enabled: true }], notes: ['weight 5000 capped at 1000'] });
  });

  it('one channel per key; new-api multi-key statuses disable single keys', () => {
    const mapped = map({ key: 'k1\nk2\n\nk3\n', keyStatuses: { '1': 2 } }, NEW_API_CHANNEL_TYPES);
    expect(mapped.ok && mapped.value.map((c) => [c.legacyId, c.name, c.key, c.enabled])).toEqual([
      [11, 'openai main (key 1/3)', 'k1', true],
      ['11/key2', 'openai main (key 2/3)', 'k2', false],
      ['11/key3', 'openai main (key 3/3)', 'k3', true],
    ]);
  });

  it('model_mapping is JSON text; what is not is ignored with a note', () => {
    const notes: string[] = [];
    expect(parseModelMapping('{"gpt-4": "gpt-4o", "x": 3}', notes)).toEqual({ 'gpt-4': 'gpt-4o' });
    expect(parseModelMapping('not json', notes)).toEqual({});
    expect(notes).toEqual(['model_mapping entry "x" is not a model name: ignored', 'model_mapping is not JSON: ignored']);
    expect(map({ modelMapping: '{"gpt-4o":"gpt-4o-2024-08-06"}' })).toMatchObject({ ok: true, value: [{ model_mapping: { 'gpt-4o': 'gpt-4o-2024-08-06' } }] });
  });

  it('Azure: API version from config or `other`, deployments named like the model without dots', () => {
    const mapped = map({ type: 3, baseUrl: 'https://res.openai.azure.com', models: 'gpt-3.5-turbo,gpt-4o', config: '{"api_version":"2024-06-01"}' });
    expect(mapped).toMatchObject({ ok: true, value: [{ type: 'azure', base_url: 'https://res.openai.azure.com', config: { api_version: '2024-06-01' }, model_mapping: { 'gpt-3.5-turbo': 'gpt-35-turbo' } }] });
    expect(map({ type: 3, baseUrl: 'https://res.openai.azure.com', other: '2023-05-15' }, NEW_API_CHANNEL_TYPES)).toMatchObject({ ok: true, value: [{ config: { api_version: '2023-05-15' } }] });
    expect(map({ type: 3, baseUrl: '' })).toEqual({ ok: false, reason: 'it has no base URL' });
  });

  it('Bedrock credentials from one-api config or the AK|SK|REGION key', () => {
    expect(map({ type: 33, key: '', config: '{"region":"eu-west-1","ak":"AKIA1","sk":"s3cr3t"}' })).toMatchObject({ ok: true, value: [{ type: 'bedrock', key: 'AKIA1:s3cr3t', base_url: null, config: { region: 'eu-west-1' } }] });
    expect(map({ type: 33, key: 'AKIA2|sec|us-west-2' }, NEW_API_CHANNEL_TYPES)).toMatchObject({ ok: true, value: [{ key: 'AKIA2:sec', config: { region: 'us-west-2' } }] });
    expect(map({ type: 33, key: 'just-one-part' })).toMatchObject({ ok: false });
  });

  it('baseUrlFor leaves kinds with their own default to it when nothing is known', () => {
    expect(baseUrlFor({ name: 'AWS', kind: 'bedrock' }, '')).toEqual({ url: null });
    expect(baseUrlFor({ name: 'Xinference', kind: 'custom', path: '/v1' }, '')).toEqual({ reason: 'it has no base URL' });
  });
});

describe('raw rows', () => {
  it('one-api: subnet is comma-separated, models empty means any, status 3 is deleted', () => {
    expect(oneApi.token({ id: 1, user_id: 2, key: 'k', status: 1, name: 'n', expired_time: '-1', remain_quota: '10', unlimited_quota: 0, models: '', subnet: '10.0.0.0/8, 192.168.0.0/16' })).toMatchObject({ expiredTime: -1, remainQuota: 10, unlimitedQuota: false, models: null, ipRules: ['10.0.0.0/8', '192.168.0.0/16'] });
    expect(oneApi.user({ id: 1, status: 3 }).deleted).toBe(true);
  });

  it('new-api: allow_ips one per line, model limits only when enabled, soft deletion, multi-key statuses', () => {
    expect(allowIps('1.2.3.4\n 5.6.7.8, \n\n')).toEqual(['1.2.3.4', '5.6.7.8']);
    expect(newApi.token({ id: 1, model_limits_enabled: 1, model_limits: 'a,b', deleted_at: null }).models).toEqual(['a', 'b']);
    expect(newApi.token({ id: 1, model_limits_enabled: 0, model_limits: 'a,b', deleted_at: '2025-01-01 00:00:00' })).toMatchObject({ models: null, deleted: true });
    expect(keyStatuses('{"is_multi_key":true,"multi_key_status_list":{"2":3}}')).toEqual({ '2': 3 });
    expect(keyStatuses('{"is_multi_key":false}')).toBeNull();
    expect(newApi.channel({ id: 1, openai_organization: 'org-1' }).organization).toBe('org-1');
  });
});

describe('docs/importing.md', () => {
  const doc = readFileSync(join(process.cwd(), 'docs', 'importing.md'), 'utf8');
  const section = (heading: string) => doc.slice(doc.indexOf(heading), doc.indexOf('\n#', doc.indexOf(heading) + heading.length));

  it('lists every channel type of both gateways as the importer maps it', () => {
    for (const [heading, types] of [
      ['#### one-api channel types', ONE_API_CHANNEL_TYPES],
      ['#### new-api channel types', NEW_API_CHANNEL_TYPES],
    ] as const) {
      const rows = section(heading).split('\n').filter((line) => /^\| \d+ \|/.test(line));
      expect(rows, heading).toEqual(channelTypeRows(types));
    }
  });

  it('shows the command as the CLI parses it', () => {
    const usage = 'switchyard import one-api|new-api --from <database URL> [--dry-run] [--tenant T]';
    expect(doc).toContain(usage);
    expect(readFileSync(join(process.cwd(), 'README.md'), 'utf8')).toContain(usage);
  });
});
