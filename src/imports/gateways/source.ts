/** What tells one gateway from the other: its channel types and how its raw rows read. */
import type { ChannelTypeTable } from './channels.js';
import type { LegacyChannel, LegacyToken, LegacyUser, RawRow } from './rows.js';

export interface GatewaySource {
  name: 'one-api' | 'new-api';
  channelTypes: ChannelTypeTable;
  user(row: RawRow): LegacyUser;
  token(row: RawRow): LegacyToken;
  channel(row: RawRow): LegacyChannel;
}
