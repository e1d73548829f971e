/**
 * one-api (songquanpeng/one-api): its rows as the shared importer reads them. Tables and columns
 * as gorm's AutoMigrate makes them from model/user.go, model/token.go, model/channel.go and
 * model/ability.go (8df4a267); see docs/importing.md.
 */
import { commaList, nullableStr, num, str, bool, type LegacyChannel, type LegacyToken, type LegacyUser, type RawRow } from '../gateways/rows.js';
import type { GatewaySource } from '../gateways/source.js';
import { ONE_API_CHANNEL_TYPES } from './channel-types.js';

/** UserStatusDeleted: one-api keeps deleted users with this status. */
const USER_DELETED = 3;

export const oneApi: GatewaySource = {
  name: 'one-api',
  channelTypes: ONE_API_CHANNEL_TYPES,
  user: (row: RawRow): LegacyUser => ({
    id: num(row.id),
    username: str(row.username),
    password: str(row.password),
    role: num(row.role, 1),
    status: num(row.status, 1),
    email: str(row.email),
    quota: num(row.quota),
    group: str(row.group) || 'default',
    deleted: num(row.status, 1) === USER_DELETED,
  }),
  token: (row: RawRow): LegacyToken => {
    const models = commaList(nullableStr(row.models));
    return {
      id: num(row.id),
      userId: num(row.user_id),
      key: str(row.key),
      status: num(row.status, 1),
      name: str(row.name),
      expiredTime: num(row.expired_time, -1),
      remainQuota: num(row.remain_quota),
      unlimitedQuota: bool(row.unlimited_quota),
      models: models.length > 0 ? models : null,
      // network.IsIpInSubnets: comma-separated CIDR ranges.
      ipRules: commaList(nullableStr(row.subnet)),
      group: '',
      deleted: false,
    };
  },
  channel: (row: RawRow): LegacyChannel => ({
    id: num(row.id),
    type: num(row.type),
    key: str(row.key),
    status: num(row.status, 1),
    name: str(row.name),
    weight: num(row.weight),
    baseUrl: str(row.base_url),
    models: str(row.models),
    group: str(row.group),
    modelMapping: nullableStr(row.model_mapping),
    priority: num(row.priority),
    config: nullableStr(row.config),
    other: nullableStr(row.other),
    organization: null,
    keyStatuses: null,
  }),
};
