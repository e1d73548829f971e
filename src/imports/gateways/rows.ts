/**
 * The rows of one-api and new-api as the importers use them: both gateways share the shape of
 * their `users`, `tokens`, `channels` and `abilities` tables (new-api is a fork of one-api), each
 * source turns its raw rows (whatever the database driver returns: numbers as numbers, strings or
 * bigints, booleans as 0/1) into these. Only the columns the import maps are here.
 */

export interface LegacyUser {
  id: number;
  username: string;
  /** bcrypt ($2a$…), as Go's golang.org/x/crypto/bcrypt writes it. */
  password: string;
  role: number;
  status: number;
  email: string;
  /** Remaining balance in quota units (QuotaPerUnit per USD, 500,000 by default). */
  quota: number;
  group: string;
  /** Soft-deleted (one-api: status 3; new-api: deleted_at set). */
  deleted: boolean;
}

export interface LegacyToken {
  id: number;
  userId: number;
  /** The secret without its `sk-` (clients send `sk-` + key). */
  key: string;
  status: number;
  name: string;
  /** Unix seconds; -1 = never. */
  expiredTime: number;
  remainQuota: number;
  unlimitedQuota: boolean;
  /** Models the token may use; null = any. */
  models: string[] | null;
  /** Addresses or CIDR ranges the token may be used from; empty = any. */
  ipRules: string[];
  /** new-api: a group of the token's own ('' = its user's group); one-api: always ''. */
  group: string;
  deleted: boolean;
}

export interface LegacyChannel {
  id: number;
  type: number;
  /** One key, or several separated by newlines. */
  key: string;
  status: number;
  name: string;
  weight: number;
  baseUrl: string;
  /** Comma-separated. */
  models: string;
  /** Comma-separated groups that may use it. */
  group: string;
  /** JSON object text, '' or null. */
  modelMapping: string | null;
  priority: number;
  /** one-api `config` JSON (api_version, region, ak, sk, …); new-api has none (null). */
  config: string | null;
  /** The deprecated `other` column: Azure's API version in older one-api and in new-api. */
  other: string | null;
  /** new-api `openai_organization`. */
  organization: string | null;
  /** new-api multi-key channels: key index -> status (1 enabled); null when not multi-key. */
  keyStatuses: Record<string, number> | null;
}

export interface LegacyAbility {
  group: string;
  model: string;
  channelId: number;
}

export type RawRow = Record<string, unknown>;

/** A number column as a JS number (drivers give bigint columns as numbers, strings or bigints). */
export function num(value: unknown, fallback = 0): number {
  if (value === null || value === undefined || value === '') return fallback;
  const n = typeof value === 'bigint' ? Number(value) : Number(value);
  return Number.isFinite(n) ? n : fallback;
}

export function str(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  return String(value);
}

export function nullableStr(value: unknown): string | null {
  return value === null || value === undefined ? null : str(value);
}

/** gorm writes bools as 1/0 (MySQL tinyint(1), SQLite numeric), some drivers give true/false. */
export function bool(value: unknown): boolean {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string') return value === '1' || value.toLowerCase() === 'true';
  return num(value) !== 0;
}

/** A comma-separated list, trimmed, without empties and duplicates. */
export function commaList(value: string | null | undefined): string[] {
  return [...new Set((value ?? '').split(',').map((s) => s.trim()).filter(Boolean))];
}
