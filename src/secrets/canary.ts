/**
 * Which SECRET the data was sealed with. A canary — a known text sealed with SECRET at the first
 * start — lives in the read-model database (the `data_keys` table, under a scope of its own), so
 * every instance of a distributed installation checks against the same one, and
 * `switchyard secret rotate` re-seals it with the rest. A server started with a SECRET that does
 * not open it stops with one line (docs/decisions/0290-secret-rotation.md); single values that do
 * not open (a channel key from an import) are the business of whoever reads them.
 */
import { dirname } from 'node:path';
import type { Kysely } from 'kysely';
import type { SqlDatabase } from '../adapters/sql/database.js';
import type { ReadModelTables } from '../adapters/sql/schema.js';
import type { Config } from '../config.js';
import { SecretBox } from '../crypto/secret-box.js';
import { ConfigError } from '../errors.js';

/** The canary's row in `data_keys` (no data key scope has a colon and this prefix). */
export const CANARY_SCOPE = 'switchyard:secret-canary';
const CANARY_PURPOSE = 'secret-canary';
const CANARY_TEXT = 'sealed with this SECRET';

/** The purposes values are sealed under (src/crypto/secret-box.ts callers), by what they protect. */
export const SEALED_PURPOSES = { channelKeys: 'provider-keys', mfaSecrets: 'mfa-secrets', dataKeys: 'data-keys', webhookSecrets: 'webhook-secrets' } as const;

/** The SECRET does not open the installation's data: the message is the one line the operator reads. */
export class SecretMismatchError extends ConfigError {
  constructor(message: string) {
    super(message);
    this.name = 'SecretMismatchError';
  }
}

export function opens(box: SecretBox, sealed: string): boolean {
  try {
    box.open(sealed);
    return true;
  } catch {
    return false;
  }
}

/** Where the sealed data lives, for messages: the data directory, or the read-model database. */
export function dataLocation(config: Pick<Config, 'readModels'>): string {
  const r = config.readModels;
  return r.kind === 'sqlite' ? dirname(r.file) : `${r.kind === 'mysql' ? 'mysql' : 'postgres'}://${r.host}:${r.port}/${r.database}`;
}

/** The line a server started with another SECRET stops with. */
export function mismatchMessage(location: string): string {
  return `the data in ${location} was sealed with another SECRET: start with the SECRET it was sealed with, or re-seal it with "switchyard secret rotate --old <old> --new <new>"`;
}

/**
 * `fits`: SECRET opens the canary (or, before there is one, some of the sealed values);
 * `other`: it opens none of them; `empty`: nothing is sealed yet.
 */
export type SecretFit = 'fits' | 'other' | 'empty';

export async function secretFit(db: Kysely<ReadModelTables>, secret: string): Promise<SecretFit> {
  const canary = await readCanary(db);
  if (canary !== null) return opens(new SecretBox(secret, CANARY_PURPOSE), canary) ? 'fits' : 'other';
  // An installation from before the canary: a few of its sealed values decide.
  const samples = await sealedSamples(db);
  if (samples.length === 0) return 'empty';
  const boxes = new Map<string, SecretBox>();
  const boxOf = (purpose: string) => boxes.get(purpose) ?? boxes.set(purpose, new SecretBox(secret, purpose)).get(purpose)!;
  return samples.some((s) => opens(boxOf(s.purpose), s.sealed)) ? 'fits' : 'other';
}

/**
 * At startup, before anything opens a sealed value: refuses a SECRET that does not open the data
 * (SecretMismatchError), and stores the canary when there is none yet.
 */
export async function checkSecret(database: SqlDatabase, secret: string, location: string): Promise<void> {
  if ((await secretFit(database.db, secret)) === 'other') throw new SecretMismatchError(mismatchMessage(location));
  if ((await readCanary(database.db)) !== null) return;
  await writeCanary(database, secret, 'insert-if-missing');
  // Another instance may have stored its canary first, with its SECRET.
  if ((await secretFit(database.db, secret)) === 'other') throw new SecretMismatchError(mismatchMessage(location));
}

async function readCanary(db: Kysely<ReadModelTables>): Promise<string | null> {
  const row = await db.selectFrom('data_keys').select('sealed_key').where('scope', '=', CANARY_SCOPE).executeTakeFirst();
  return row?.sealed_key ?? null;
}

/** Stores the canary sealed with `secret`: only when there is none, or in place of the one there is. */
export async function writeCanary(database: SqlDatabase, secret: string, how: 'insert-if-missing' | 'replace'): Promise<void> {
  const now = new Date().toISOString();
  const row = { scope: CANARY_SCOPE, sealed_key: new SecretBox(secret, CANARY_PURPOSE).seal(CANARY_TEXT), created_at: now, destroyed_at: null };
  if (how === 'replace') {
    const updated = await database.db.updateTable('data_keys').set({ sealed_key: row.sealed_key }).where('scope', '=', CANARY_SCOPE).executeTakeFirst();
    if (Number(updated.numUpdatedRows) > 0) return;
  }
  const insert = database.db.insertInto('data_keys').values(row);
  if (database.dialect === 'mysql') await insert.ignore().execute();
  else await insert.onConflict((oc) => oc.column('scope').doNothing()).execute();
}

/** A few sealed values of each kind the read models hold, with the purpose each was sealed under. */
async function sealedSamples(db: Kysely<ReadModelTables>): Promise<Array<{ purpose: string; sealed: string }>> {
  const LIMIT = 10;
  const [channels, users, dataKeys, webhooks] = await Promise.all([
    db.selectFrom('channels').select('key_sealed').limit(LIMIT).execute(),
    db.selectFrom('users').select('mfa_secret_sealed').where('mfa_secret_sealed', 'is not', null).limit(LIMIT).execute(),
    db.selectFrom('data_keys').select('sealed_key').where('sealed_key', 'is not', null).where('scope', '!=', CANARY_SCOPE).limit(LIMIT).execute(),
    db.selectFrom('webhooks').select('secret_sealed').limit(LIMIT).execute(),
  ]);
  return [
    ...channels.map((r) => ({ purpose: SEALED_PURPOSES.channelKeys, sealed: r.key_sealed })),
    ...users.map((r) => ({ purpose: SEALED_PURPOSES.mfaSecrets, sealed: r.mfa_secret_sealed! })),
    ...dataKeys.map((r) => ({ purpose: SEALED_PURPOSES.dataKeys, sealed: r.sealed_key! })),
    ...webhooks.map((r) => ({ purpose: SEALED_PURPOSES.webhookSecrets, sealed: r.secret_sealed })),
  ];
}
