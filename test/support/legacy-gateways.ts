/**
 * Fixture databases of one-api and new-api, on MariaDB/MySQL or SQLite, for the importer tests.
 *
 * The tables are what gorm's AutoMigrate makes from the gateways' models (read from the public
 * sources, cited in docs/importing.md):
 *   one-api  songquanpeng/one-api 8df4a267: model/user.go, model/token.go, model/channel.go,
 *            model/ability.go, model/option.go
 *   new-api  Calcium-Ion/new-api ef8ae4db (QuantumNous/new-api): the same files, plus the later
 *            channel columns header_override, remark and channel_info (multi-key, JSON).
 * gorm's types: Go int/int64 -> bigint (SQLite integer), *uint -> bigint unsigned, bool -> boolean
 * (SQLite numeric), float64 -> double (SQLite real), a string -> longtext (SQLite text) unless it
 * has a size, an index or a default (then varchar(191)), explicit `type:` tags as written. Indexes
 * that do not change what is stored are left out.
 *
 * The rows are realistic: a root user with one-api's first-start password (123456) and no email,
 * admins, a disabled user, a deleted one, a user of an external login (no password), a "vip"
 * group with channels of its own; channels of mapped and unmapped types (several keys in one,
 * a disabled one, one without models); tokens with quotas, expiries, model lists and subnets.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import bcrypt from 'bcryptjs';
import type { ChannelTypeTable } from '../../src/imports/gateways/channels.js';
import { needsBaseUrl } from '../../src/relay/providers/index.js';
import { uniqueSuffix } from './services.js';

export type GatewayName = 'one-api' | 'new-api';
export type FixtureDialect = 'sqlite' | 'mysql';

/** [column, MySQL type and constraints, SQLite type and constraints] */
type Column = [string, string, string];

const ID: Column = ['id', 'bigint NOT NULL AUTO_INCREMENT', 'integer PRIMARY KEY AUTOINCREMENT'];

const ONE_API_USERS: Column[] = [
  ID,
  ['username', 'varchar(191) UNIQUE', 'text UNIQUE'],
  ['password', 'longtext NOT NULL', 'text NOT NULL'],
  ['display_name', 'varchar(191)', 'text'],
  ['role', 'bigint DEFAULT 1', 'integer DEFAULT 1'],
  ['status', 'bigint DEFAULT 1', 'integer DEFAULT 1'],
  ['email', 'varchar(191)', 'text'],
  ['github_id', 'varchar(191)', 'text'],
  ['wechat_id', 'varchar(191)', 'text'],
  ['lark_id', 'varchar(191)', 'text'],
  ['oidc_id', 'varchar(191)', 'text'],
  ['access_token', 'char(32) UNIQUE', 'char(32) UNIQUE'],
  ['quota', 'bigint DEFAULT 0', 'integer DEFAULT 0'],
  ['used_quota', 'bigint DEFAULT 0', 'integer DEFAULT 0'],
  ['request_count', 'bigint DEFAULT 0', 'integer DEFAULT 0'],
  ['group', "varchar(32) DEFAULT 'default'", "varchar(32) DEFAULT 'default'"],
  ['aff_code', 'varchar(32) UNIQUE', 'varchar(32) UNIQUE'],
  ['inviter_id', 'bigint', 'integer'],
];

const NEW_API_USERS: Column[] = [
  ...ONE_API_USERS.filter(([name]) => name !== 'lark_id' && name !== 'group' && name !== 'inviter_id'),
  ['telegram_id', 'varchar(191)', 'text'],
  ['group', "varchar(64) DEFAULT 'default'", "varchar(64) DEFAULT 'default'"],
  ['aff_count', 'bigint DEFAULT 0', 'integer DEFAULT 0'],
  ['aff_quota', 'bigint DEFAULT 0', 'integer DEFAULT 0'],
  ['aff_history', 'bigint DEFAULT 0', 'integer DEFAULT 0'],
  ['inviter_id', 'bigint', 'integer'],
  ['deleted_at', 'datetime(3) NULL', 'datetime'],
  ['linux_do_id', 'varchar(191)', 'text'],
  ['setting', 'text', 'text'],
];

const ONE_API_TOKENS: Column[] = [
  ID,
  ['user_id', 'bigint', 'integer'],
  ['key', 'char(48) UNIQUE', 'char(48) UNIQUE'],
  ['status', 'bigint DEFAULT 1', 'integer DEFAULT 1'],
  ['name', 'varchar(191)', 'text'],
  ['created_time', 'bigint', 'integer'],
  ['accessed_time', 'bigint', 'integer'],
  ['expired_time', 'bigint DEFAULT -1', 'integer DEFAULT -1'],
  ['remain_quota', 'bigint DEFAULT 0', 'integer DEFAULT 0'],
  ['unlimited_quota', 'boolean DEFAULT false', 'numeric DEFAULT false'],
  ['used_quota', 'bigint DEFAULT 0', 'integer DEFAULT 0'],
  ['models', 'text', 'text'],
  ['subnet', "varchar(191) DEFAULT ''", "text DEFAULT ''"],
];

const NEW_API_TOKENS: Column[] = [
  ...ONE_API_TOKENS.filter(([name]) => !['models', 'subnet', 'used_quota'].includes(name)),
  ['model_limits_enabled', 'boolean DEFAULT false', 'numeric DEFAULT false'],
  ['model_limits', "varchar(1024) DEFAULT ''", "varchar(1024) DEFAULT ''"],
  ['allow_ips', "varchar(191) DEFAULT ''", "text DEFAULT ''"],
  ['used_quota', 'bigint DEFAULT 0', 'integer DEFAULT 0'],
  ['group', "varchar(191) DEFAULT ''", "text DEFAULT ''"],
  ['deleted_at', 'datetime(3) NULL', 'datetime'],
];

const ONE_API_CHANNELS: Column[] = [
  ID,
  ['type', 'bigint DEFAULT 0', 'integer DEFAULT 0'],
  ['key', 'text', 'text'],
  ['status', 'bigint DEFAULT 1', 'integer DEFAULT 1'],
  ['name', 'varchar(191)', 'text'],
  ['weight', 'bigint unsigned DEFAULT 0', 'integer DEFAULT 0'],
  ['created_time', 'bigint', 'integer'],
  ['test_time', 'bigint', 'integer'],
  ['response_time', 'bigint', 'integer'],
  ['base_url', "varchar(191) DEFAULT ''", "text DEFAULT ''"],
  ['other', 'longtext', 'text'],
  ['balance', 'double', 'real'],
  ['balance_updated_time', 'bigint', 'integer'],
  ['models', 'longtext', 'text'],
  ['group', "varchar(32) DEFAULT 'default'", "varchar(32) DEFAULT 'default'"],
  ['used_quota', 'bigint DEFAULT 0', 'integer DEFAULT 0'],
  ['model_mapping', "varchar(1024) DEFAULT ''", "varchar(1024) DEFAULT ''"],
  ['priority', 'bigint DEFAULT 0', 'integer DEFAULT 0'],
  ['config', 'longtext', 'text'],
  ['system_prompt', 'text', 'text'],
];

const NEW_API_CHANNELS: Column[] = [
  ID,
  ['type', 'bigint DEFAULT 0', 'integer DEFAULT 0'],
  ['key', 'longtext NOT NULL', 'text NOT NULL'],
  ['openai_organization', 'longtext', 'text'],
  ['test_model', 'longtext', 'text'],
  ['status', 'bigint DEFAULT 1', 'integer DEFAULT 1'],
  ['name', 'varchar(191)', 'text'],
  ['weight', 'bigint unsigned DEFAULT 0', 'integer DEFAULT 0'],
  ['created_time', 'bigint', 'integer'],
  ['test_time', 'bigint', 'integer'],
  ['response_time', 'bigint', 'integer'],
  ['base_url', "varchar(191) DEFAULT ''", "text DEFAULT ''"],
  ['other', 'longtext', 'text'],
  ['balance', 'double', 'real'],
  ['balance_updated_time', 'bigint', 'integer'],
  ['models', 'longtext', 'text'],
  ['group', "varchar(64) DEFAULT 'default'", "varchar(64) DEFAULT 'default'"],
  ['used_quota', 'bigint DEFAULT 0', 'integer DEFAULT 0'],
  ['model_mapping', 'text', 'text'],
  ['status_code_mapping', "varchar(1024) DEFAULT ''", "varchar(1024) DEFAULT ''"],
  ['priority', 'bigint DEFAULT 0', 'integer DEFAULT 0'],
  ['auto_ban', 'bigint DEFAULT 1', 'integer DEFAULT 1'],
  ['other_info', 'longtext', 'text'],
  ['tag', 'varchar(191)', 'text'],
  ['setting', 'text', 'text'],
  ['param_override', 'text', 'text'],
  ['header_override', 'text', 'text'],
  ['remark', 'varchar(255)', 'varchar(255)'],
  ['channel_info', 'json', 'json'],
];

const ONE_API_ABILITIES: Column[] = [
  ['group', 'varchar(32) NOT NULL', 'varchar(32) NOT NULL'],
  ['model', 'varchar(191) NOT NULL', 'text NOT NULL'],
  ['channel_id', 'bigint NOT NULL', 'integer NOT NULL'],
  ['enabled', 'boolean', 'numeric'],
  ['priority', 'bigint DEFAULT 0', 'integer DEFAULT 0'],
];

const NEW_API_ABILITIES: Column[] = [
  ['group', 'varchar(64) NOT NULL', 'varchar(64) NOT NULL'],
  ['model', 'varchar(255) NOT NULL', 'varchar(255) NOT NULL'],
  ['channel_id', 'bigint NOT NULL', 'integer NOT NULL'],
  ['enabled', 'boolean', 'numeric'],
  ['priority', 'bigint DEFAULT 0', 'integer DEFAULT 0'],
  ['weight', 'bigint unsigned DEFAULT 0', 'integer DEFAULT 0'],
  ['tag', 'varchar(191)', 'text'],
];

const OPTIONS: Column[] = [
  ['key', 'varchar(191) NOT NULL', 'text NOT NULL'],
  ['value', 'longtext', 'text'],
];

interface TableDef {
  columns: Column[];
  primaryKey: string[];
}

const SCHEMAS: Record<GatewayName, Record<string, TableDef>> = {
  'one-api': {
    users: { columns: ONE_API_USERS, primaryKey: ['id'] },
    tokens: { columns: ONE_API_TOKENS, primaryKey: ['id'] },
    channels: { columns: ONE_API_CHANNELS, primaryKey: ['id'] },
    abilities: { columns: ONE_API_ABILITIES, primaryKey: ['group', 'model', 'channel_id'] },
    options: { columns: OPTIONS, primaryKey: ['key'] },
  },
  'new-api': {
    users: { columns: NEW_API_USERS, primaryKey: ['id'] },
    tokens: { columns: NEW_API_TOKENS, primaryKey: ['id'] },
    channels: { columns: NEW_API_CHANNELS, primaryKey: ['id'] },
    abilities: { columns: NEW_API_ABILITIES, primaryKey: ['group', 'model', 'channel_id'] },
    options: { columns: OPTIONS, primaryKey: ['key'] },
  },
};

/** CREATE TABLE as AutoMigrate issues it (backticks quote identifiers on both dialects). */
export function createTableSql(gateway: GatewayName, table: string, dialect: FixtureDialect): string {
  const def = SCHEMAS[gateway][table]!;
  const columns = def.columns.map(([name, mysql, sqlite]) => `\`${name}\` ${dialect === 'mysql' ? mysql : sqlite}`);
  const sqliteHasPk = dialect === 'sqlite' && def.primaryKey.length === 1 && def.primaryKey[0] === 'id';
  if (!sqliteHasPk) columns.push(`PRIMARY KEY (${def.primaryKey.map((c) => `\`${c}\``).join(',')})`);
  return `CREATE TABLE \`${table}\` (${columns.join(',')})${dialect === 'mysql' ? ' DEFAULT CHARSET=utf8mb4' : ''}`;
}

type Row = Record<string, string | number | boolean | null>;

/** A 48-character token key as the gateways generate them (letters and digits). */
function tokenKey(): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
  return [...randomBytes(48)].map((b) => alphabet[b % alphabet.length]).join('');
}

/** Go's bcrypt writes $2a$; bcryptjs the same algorithm as $2b$. Cost 10 is Go's default. */
const goBcrypt = (password: string) => bcrypt.hashSync(password, 10).replace(/^\$2b\$/, '$2a$');

export interface GatewayFixture {
  gateway: GatewayName;
  dialect: FixtureDialect;
  /** For openDatabaseUrl: mysql://root@127.0.0.1:3306/<db> or sqlite:<file>. */
  url: string;
  /** The clients' secrets (`sk-` + key) of the tokens, by name. */
  secrets: Record<string, string>;
  /** Plain passwords of the users that have one, by username. */
  passwords: Record<string, string>;
  cleanup(): Promise<void>;
}

export interface FixtureOptions {
  /** Origin of the fake OpenAI upstream (no /v1: the gateways append it). */
  upstreamOrigin: string;
  /** mysql://root@127.0.0.1:3306/test (the server's URL; a database of the fixture's own is made). */
  mysqlUrl?: string;
}

const now = Math.floor(Date.UTC(2025, 2, 1) / 1000);
const NEVER = -1;
const YEAR_2099 = Math.floor(Date.UTC(2099, 0, 1) / 1000);
const YEAR_2024 = Math.floor(Date.UTC(2024, 0, 1) / 1000);

function rowsOf(gateway: GatewayName, options: FixtureOptions, secrets: Record<string, string>, passwords: Record<string, string>): Record<string, Row[]> {
  passwords.root = '123456'; // one-api's and new-api's first-start root password
  passwords.alice = 'alice-in-wonderland';
  passwords.carol = 'carol-sings-9';
  passwords.bob = 'bob-the-builder';
  const user = (id: number, username: string, extra: Row): Row => ({ id, username, display_name: username, password: passwords[username] ? goBcrypt(passwords[username]!) : '', role: 1, status: 1, email: '', quota: 0, used_quota: 0, request_count: 0, group: 'default', aff_code: randomBytes(2).toString('hex') + id, ...extra });
  const users = [
    user(1, 'root', { role: 100, quota: 500_000_000, access_token: randomBytes(16).toString('hex') }), // $1000, no email
    user(2, 'alice', { role: 10, email: 'alice@example.com', quota: 0 }),
    user(3, 'bob', { status: 2, quota: 1_000_000 }), // disabled, $2
    user(4, 'carol', { email: 'carol@example.com', group: 'vip', quota: 250_000 }), // $0.50
    user(5, 'dave', gateway === 'one-api' ? { status: 3 } : { deleted_at: '2025-01-02 03:04:05' }), // deleted
    user(6, 'erin', { github_id: '5551234', email: 'alice@example.com' }), // external login; the email of another user
  ];
  const tokens: Row[] = [];
  const token = (id: number, userId: number, name: string, extra: Row) => {
    const key = tokenKey();
    secrets[name] = `sk-${key}`;
    tokens.push({ id, user_id: userId, key, status: 1, name, created_time: now, accessed_time: now, expired_time: NEVER, remain_quota: 0, unlimited_quota: false, used_quota: 0, ...extra });
  };
  const modelsOf = (models: string, subnet: string): Row =>
    gateway === 'one-api' ? { models, subnet } : { model_limits_enabled: models !== '', model_limits: models, allow_ips: subnet.split(',').join('\n') };
  token(1, 1, 'root-ci', { unlimited_quota: true, ...modelsOf('', '') });
  token(2, 2, 'alice-app', { remain_quota: 5_000_000, expired_time: YEAR_2099, ...modelsOf('gpt-4o-mini', gateway === 'one-api' ? '127.0.0.0/8' : '127.0.0.1') });
  token(3, 3, 'bob-old', { status: 2, remain_quota: 100, ...modelsOf('', '') });
  token(4, 4, 'carol-vip', { remain_quota: 1_000_000, ...modelsOf('', '') });
  token(5, 5, 'dave-gone', { unlimited_quota: true, ...modelsOf('', '') });
  token(6, 2, 'alice-expired', { status: 3, expired_time: YEAR_2024, ...modelsOf('', '') });
  token(7, 4, 'carol-bad-subnet', { unlimited_quota: true, ...modelsOf('', 'office-network') });
  if (gateway === 'new-api') token(8, 4, 'carol-deleted', { unlimited_quota: true, deleted_at: '2025-02-01 00:00:00', ...modelsOf('', '') });
  token(9, 3, 'bob-enabled', { unlimited_quota: true, ...modelsOf('', '') }); // enabled, of a disabled user

  const channel = (id: number, extra: Row): Row => ({ id, status: 1, weight: 0, created_time: now, test_time: 0, response_time: 0, base_url: '', balance: 0, balance_updated_time: 0, group: 'default', used_quota: 0, model_mapping: '', priority: 0, ...extra });
  const channels =
    gateway === 'one-api'
      ? [
          channel(1, { type: 1, name: 'openai', key: 'test-key', base_url: options.upstreamOrigin, models: 'gpt-4o-mini,gpt-4o', group: 'default,vip', model_mapping: '{"gpt-4o":"gpt-4o-2024-08-06"}', priority: 5, weight: 10, config: '{}' }),
          channel(2, { type: 3, name: 'azure east', key: 'azure-key', base_url: 'https://east.openai.azure.com', models: 'gpt-3.5-turbo', group: 'vip', config: '{"api_version":"2024-06-01"}' }),
          channel(3, { type: 15, name: 'ernie', key: 'baidu-key|baidu-secret', models: 'ERNIE-4.0-8K', group: 'default', config: '{}' }),
          channel(4, { type: 14, name: 'claude pool', key: 'claude-key-1\nclaude-key-2', status: 2, models: 'claude-3-5-sonnet-20241022', group: 'default', config: '{}' }),
          channel(5, { type: 36, name: 'deepseek (no models yet)', key: 'ds-key', models: '', group: 'default', config: '{}' }),
        ]
      : [
          channel(1, { type: 1, name: 'openai', key: 'test-key', base_url: options.upstreamOrigin, models: 'gpt-4o-mini,gpt-4o', group: 'default,vip', model_mapping: '{"gpt-4o":"gpt-4o-2024-08-06"}', priority: 5, weight: 10, openai_organization: 'org-fixture', auto_ban: 1, channel_info: '{"is_multi_key":false,"multi_key_size":0,"multi_key_status_list":null,"multi_key_polling_index":0,"multi_key_mode":""}' }),
          channel(2, { type: 8, name: 'custom gateway', key: 'test-key', base_url: `${options.upstreamOrigin}/v1/chat/completions`, models: 'qwen-local', group: 'vip', channel_info: '{"is_multi_key":false}' }),
          channel(3, { type: 2, name: 'midjourney', key: 'mj-key', models: 'mj_imagine', group: 'default', channel_info: '{"is_multi_key":false}' }),
          channel(4, { type: 42, name: 'mistral pool', key: 'mistral-1\nmistral-2\nmistral-3', models: 'mistral-large-latest', group: 'default', channel_info: '{"is_multi_key":true,"multi_key_size":3,"multi_key_status_list":{"1":3},"multi_key_polling_index":0,"multi_key_mode":"random"}' }),
          channel(5, { type: 43, name: 'deepseek (no models yet)', key: 'ds-key', models: '', group: 'default', channel_info: '{"is_multi_key":false}' }),
        ];
  // AddAbilities: one row per model and group of each channel.
  const abilities: Row[] = [];
  for (const c of channels)
    for (const model of String(c.models).split(',').filter(Boolean))
      for (const group of String(c.group).split(','))
        abilities.push({ group, model, channel_id: c.id as number, enabled: c.status === 1, priority: c.priority as number, ...(gateway === 'new-api' && { weight: c.weight as number }) });
  return { users, tokens, channels, abilities, options: [{ key: 'QuotaPerUnit', value: '500000' }, { key: 'DisplayInCurrencyEnabled', value: 'true' }] };
}

/** Builds a fixture database of `gateway` on `dialect`, with its rows. */
export async function createGatewayFixture(gateway: GatewayName, dialect: FixtureDialect, options: FixtureOptions): Promise<GatewayFixture> {
  const secrets: Record<string, string> = {};
  const passwords: Record<string, string> = {};
  const tables = rowsOf(gateway, options, secrets, passwords);
  const statements: Array<[string, unknown[]]> = [];
  for (const table of Object.keys(SCHEMAS[gateway])) {
    statements.push([createTableSql(gateway, table, dialect), []]);
    for (const row of tables[table] ?? []) {
      const names = Object.keys(row);
      const values = names.map((n) => (typeof row[n] === 'boolean' ? (row[n] ? 1 : 0) : row[n]));
      statements.push([`INSERT INTO \`${table}\` (${names.map((n) => `\`${n}\``).join(',')}) VALUES (${names.map(() => '?').join(',')})`, values]);
    }
  }
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), `sy-${gateway}-`));
    const file = join(dir, `${gateway}.db`);
    const { default: Database } = await import('better-sqlite3');
    const db = new Database(file);
    try {
      for (const [text, values] of statements) db.prepare(text).run(...values);
    } finally {
      db.close();
    }
    return { gateway, dialect, url: `sqlite:${file}`, secrets, passwords, cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const server = new URL(options.mysqlUrl ?? 'mysql://root@127.0.0.1:3306/test');
  const database = `${gateway.replace('-', '')}_${uniqueSuffix()}`;
  const mysql = await import('mysql2/promise');
  const connect = () => mysql.createConnection({ host: server.hostname, port: Number(server.port || 3306), user: decodeURIComponent(server.username || 'root'), password: decodeURIComponent(server.password) });
  const conn = await connect();
  try {
    await conn.query(`CREATE DATABASE \`${database}\` CHARACTER SET utf8mb4`);
    await conn.query(`USE \`${database}\``);
    for (const [text, values] of statements) await conn.execute(text, values as never[]);
  } finally {
    await conn.end();
  }
  const url = new URL(server.toString());
  url.pathname = `/${database}`;
  return {
    gateway,
    dialect,
    url: url.toString(),
    secrets,
    passwords,
    cleanup: async () => {
      const c = await connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS \`${database}\``);
      } finally {
        await c.end();
      }
    },
  };
}

/**
 * docs/importing.md's table of a gateway's channel types, a Markdown row per type, made from the
 * importer's own table (the unit tests check that the document holds every row as written here).
 */
export function channelTypeRows(types: ChannelTypeTable): string[] {
  return Object.entries(types).map(([type, e]) => {
    if (!e.kind) return `| ${type} | ${e.name} | not imported | ${e.why ?? ''} |`;
    let url: string;
    if (e.fullUrl) url = 'the channel\'s base URL is the whole request URL: imported without its `/chat/completions`';
    else {
      const own = e.path ? `its base URL + \`${e.path}\`` : 'its base URL';
      const empty = e.base ? `\`${e.base}${e.path ?? ''}\`` : needsBaseUrl(e.kind) ? 'not imported' : `the \`${e.kind}\` default`;
      url = `${own}; none: ${empty}`;
    }
    return `| ${type} | ${e.name} | \`${e.kind}\` | ${url} |`;
  });
}
