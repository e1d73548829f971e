/**
 * Every schema migration, in order. Names are permanent: never rename or reorder one that has
 * shipped; add a new file instead. Applied at startup by src/adapters/sql/migrate.ts.
 */
import type { Migration } from 'kysely';
import * as spine from './0001_spine.js';
import * as channels from './0002_channels.js';
import * as accounts from './0003_accounts.js';
import * as apiKeys from './0010_api_keys.js';

export const migrations: Record<string, Migration> = {
  '0001_spine': spine,
  '0002_channels': channels,
  '0003_accounts': accounts,
  '0010_api_keys': apiKeys,
};
