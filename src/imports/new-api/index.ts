/**
 * new-api (QuantumNous/new-api, earlier Calcium-Ion/new-api): its rows as the shared importer reads
 * them. The tables are one-api's with more columns: soft deletion (`deleted_at`) of users and
 * tokens, token model limits (`model_limits_enabled`, `model_limits`), `allow_ips` (one address
 * per line) and a group of their own, channels' `openai_organization` and multi-key
 * `channel_info` (JSON); see docs/importing.md.
 */
import { bool, commaList, nullableStr, num, str, type LegacyChannel, type LegacyToken, type LegacyUser, type RawRow } from '../gateways/rows.js';
import type { GatewaySource } from '../gateways/source.js';
import { oneApi } from '../one-api/index.js';
import { NEW_API_CHANNEL_TYPES } from './channel-types.js';

const deleted = (row: RawRow) => row.deleted_at !== null && row.deleted_at !== undefined && str(row.deleted_at) !== '';

/** Token.GetIpLimits: one entry per line, spaces and commas dropped. */
export function allowIps(text: string | null): string[] {
  return [
    ...new Set(
      (text ?? '')
        .replace(/ /g, '')
        .split('\n')
        .map((ip) => ip.trim().replace(/,/g, ''))
        .filter(Boolean),
    ),
  ];
}

/** channel_info.multi_key_status_list when the channel is in multi-key mode (key index -> status). */
export function keyStatuses(channelInfo: unknown): Record<string, number> | null {
  const text = nullableStr(channelInfo);
  if (!text) return null;
  try {
    const info = JSON.parse(text) as { is_multi_key?: boolean; multi_key_status_list?: Record<string, number> | null };
    if (!info.is_multi_key) return null;
    return Object.fromEntries(Object.entries(info.multi_key_status_list ?? {}).map(([index, status]) => [index, num(status, 1)]));
  } catch {
    return null;
  }
}

/** One-api's tables with more columns: its readers, and what new-api adds or reads differently. */
export const newApi: GatewaySource = {
  name: 'new-api',
  channelTypes: NEW_API_CHANNEL_TYPES,
  user: (row: RawRow): LegacyUser => ({ ...oneApi.user(row), deleted: deleted(row) }),
  token: (row: RawRow): LegacyToken => ({
    ...oneApi.token(row),
    models: bool(row.model_limits_enabled) ? commaList(nullableStr(row.model_limits)) : null,
    ipRules: allowIps(nullableStr(row.allow_ips)),
    group: str(row.group),
    deleted: deleted(row),
  }),
  channel: (row: RawRow): LegacyChannel => ({
    ...oneApi.channel(row),
    config: null,
    organization: nullableStr(row.openai_organization),
    keyStatuses: keyStatuses(row.channel_info),
  }),
};
