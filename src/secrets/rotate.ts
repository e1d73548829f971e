/**
 * `switchyard secret rotate`: everything sealed with the old SECRET sealed again with the new one.
 * What the log holds changes through events (channel keys: ChannelUpdated through the channel
 * commands; TOTP secrets: MfaSecretResealed; webhook secrets: WebhookUpdated), what only the
 * read-model database holds (the data keys of conversations and files) changes in one
 * transaction, and the canary last: until it is re-sealed, a re-run with the same --old finds
 * what is left. Each value is checked first: one that already opens with the new SECRET is
 * skipped, so a run that stopped half-way is finished by running it again.
 *
 * Not re-sealable, by design (docs/secret-rotation.md): recovery-code hashes (HMAC under a key
 * from SECRET, one-way) stop matching, and access tokens signed with the old SECRET are refused
 * (clients renew them with their refresh token, which SECRET does not key).
 */
import { sql } from 'kysely';
import type { SqlDatabase } from '../adapters/sql/database.js';
import type { CommandBus } from '../commands/bus.js';
import { channels } from '../commands/channels/decider.js';
import { ChannelEvent } from '../commands/channels/events.js';
import { foldEvents, streamName } from '../commands/decider.js';
import { users } from '../commands/users/decider.js';
import { webhooks } from '../commands/webhooks/decider.js';
import { WebhookEvent } from '../commands/webhooks/events.js';
import { SecretBox } from '../crypto/secret-box.js';
import type { EventStore, StoredEvent } from '../ports/event-store.js';
import { CANARY_SCOPE, opens, SEALED_PURPOSES, SecretMismatchError, secretFit, writeCanary } from './canary.js';

/** How one kind of sealed value fared. `unopenable`: ids of values neither SECRET opens (left as they are). */
export interface ResealCount {
  resealed: number;
  already: number;
  unopenable: string[];
}

export interface RotationReport {
  channel_keys: ResealCount;
  mfa_secrets: ResealCount;
  webhook_secrets: ResealCount;
  data_keys: ResealCount;
  /** Users with multi-factor login on: their recovery codes no longer match (they make new ones). */
  recovery_codes_invalidated_for: string[];
}

export interface RotationInput {
  store: EventStore;
  sql: SqlDatabase;
  commands: CommandBus;
  oldSecret: string;
  newSecret: string;
  /** Where the data lives (for the refusal's message). */
  location: string;
  /** Told after each value (for a progress display). */
  onItem?: (kind: keyof Omit<RotationReport, 'recovery_codes_invalidated_for'>) => void;
}

const CAUSATION = 'cli-secret-rotate';

/** The same secret under the new SECRET, or what is the matter with it. */
type Resealed = { state: 'already' } | { state: 'resealed'; sealed: string } | { state: 'unopenable' };

/** Re-seals values of one purpose: old SECRET to new. */
class Resealer {
  private readonly from: SecretBox;
  private readonly to: SecretBox;

  constructor(oldSecret: string, newSecret: string, purpose: string) {
    this.from = new SecretBox(oldSecret, purpose);
    this.to = new SecretBox(newSecret, purpose);
  }

  reseal(sealed: string): Resealed {
    if (opens(this.to, sealed)) return { state: 'already' };
    let plain: string;
    try {
      plain = this.from.open(sealed);
    } catch {
      return { state: 'unopenable' };
    }
    return { state: 'resealed', sealed: this.to.seal(plain) };
  }
}

/** The key in force after a channel's events (null: deleted). */
function channelKeyOf(history: readonly StoredEvent[]): { sealed: string; masked: string } | null {
  let sealed: string | null = null;
  let masked = '';
  for (const stored of history) {
    const event = ChannelEvent.parse({ type: stored.type, data: stored.data });
    if (event.type === 'ChannelCreated') [sealed, masked] = [event.data.key_sealed, event.data.key_masked];
    else if (event.type === 'ChannelUpdated' && event.data.changes.key_sealed !== undefined) [sealed, masked] = [event.data.changes.key_sealed, event.data.changes.key_masked ?? masked];
    else if (event.type === 'ChannelDeleted') sealed = null;
  }
  return sealed === null ? null : { sealed, masked };
}

const noneYet = (): ResealCount => ({ resealed: 0, already: 0, unopenable: [] });

function count(into: ResealCount, id: string, outcome: Resealed): void {
  if (outcome.state === 'unopenable') into.unopenable.push(id);
  else into[outcome.state === 'already' ? 'already' : 'resealed']++;
}

/**
 * Runs the rotation. Refuses (SecretMismatchError) when the old SECRET does not open the data
 * and the new one does not either (nothing to rotate from).
 */
export async function rotateSecret(input: RotationInput): Promise<RotationReport> {
  const { store, commands, oldSecret, newSecret } = input;
  const db = input.sql.db;
  const [oldFit, newFit] = [await secretFit(db, oldSecret), await secretFit(db, newSecret)];
  if (oldFit === 'other' && newFit !== 'fits') throw new SecretMismatchError(`--old does not open the data in ${input.location}: give the SECRET the data was sealed with`);

  const report: RotationReport = { channel_keys: noneYet(), mfa_secrets: noneYet(), webhook_secrets: noneYet(), data_keys: noneYet(), recovery_codes_invalidated_for: [] };

  // Channel keys: the key in force is the last one the channel's events sealed.
  const channelKeys = new Resealer(oldSecret, newSecret, SEALED_PURPOSES.channelKeys);
  for (const row of await db.selectFrom('channels').select(['id', 'tenant_id']).orderBy('id').execute()) {
    const key = channelKeyOf(await store.readStream(streamName(channels.category, row.id)));
    if (key === null) continue;
    const outcome = channelKeys.reseal(key.sealed);
    if (outcome.state === 'resealed') {
      await commands.execute(channels, row.id, { type: 'UpdateChannel', changes: {}, key: { sealed: outcome.sealed, masked: key.masked } }, { tenantId: row.tenant_id, causationId: CAUSATION });
    }
    count(report.channel_keys, row.id, outcome);
    input.onItem?.('channel_keys');
  }

  // TOTP secrets, in force and pending; the decider replaces only the sealed value it was shown.
  const mfaSecrets = new Resealer(oldSecret, newSecret, SEALED_PURPOSES.mfaSecrets);
  const mfaUsers = await db
    .selectFrom('users')
    .select(['id', 'tenant_id'])
    .where((eb) => eb.or([eb('mfa_secret_sealed', 'is not', null), eb('mfa_pending_secret_sealed', 'is not', null)]))
    .orderBy('id')
    .execute();
  for (const row of mfaUsers) {
    const { mfa } = foldEvents(users, await store.readStream(streamName(users.category, row.id)));
    const resealed: { secret?: { from: string; to: string }; pendingSecret?: { from: string; to: string } } = {};
    for (const [field, sealed] of [
      ['secret', mfa.secretSealed],
      ['pendingSecret', mfa.pendingSecretSealed],
    ] as const) {
      if (sealed === null) continue;
      const outcome = mfaSecrets.reseal(sealed);
      if (outcome.state === 'resealed') resealed[field] = { from: sealed, to: outcome.sealed };
      count(report.mfa_secrets, row.id, outcome);
    }
    if (resealed.secret || resealed.pendingSecret) await commands.execute(users, row.id, { type: 'ResealMfaSecret', ...resealed }, { tenantId: row.tenant_id, causationId: CAUSATION });
    if (mfa.enabled && mfa.recoveryCodeHashes.length > 0 && resealed.secret) report.recovery_codes_invalidated_for.push(row.id);
    input.onItem?.('mfa_secrets');
  }

  // Webhook secrets (they sign deliveries: receivers keep the same secret).
  const webhookSecrets = new Resealer(oldSecret, newSecret, SEALED_PURPOSES.webhookSecrets);
  for (const row of await db.selectFrom('webhooks').select(['id', 'tenant_id']).orderBy('id').execute()) {
    let sealed: string | null = null;
    for (const stored of await store.readStream(streamName(webhooks.category, row.id))) {
      const event = WebhookEvent.parse({ type: stored.type, data: stored.data });
      if (event.type === 'WebhookCreated') sealed = event.data.secret_sealed;
      else if (event.type === 'WebhookUpdated' && event.data.secret_sealed !== undefined) sealed = event.data.secret_sealed;
      else if (event.type === 'WebhookDeleted') sealed = null;
    }
    if (sealed === null) continue;
    const outcome = webhookSecrets.reseal(sealed);
    if (outcome.state === 'resealed') await commands.execute(webhooks, row.id, { type: 'UpdateWebhook', secretSealed: outcome.sealed, by: null }, { tenantId: row.tenant_id, causationId: CAUSATION });
    count(report.webhook_secrets, row.id, outcome);
    input.onItem?.('webhook_secrets');
  }

  // Data keys: no event holds them; all of them in one transaction.
  const dataKeys = new Resealer(oldSecret, newSecret, SEALED_PURPOSES.dataKeys);
  await input.sql.db.transaction().execute(async (trx) => {
    // SQLite: write before reading (see SqlDataKeys.destroyAll: a read-first transaction cannot take the write lock later).
    if (input.sql.dialect === 'sqlite') await sql`DELETE FROM data_keys WHERE 0`.execute(trx);
    const rows = await trx.selectFrom('data_keys').select(['scope', 'sealed_key']).where('sealed_key', 'is not', null).where('scope', '!=', CANARY_SCOPE).orderBy('scope').execute();
    for (const row of rows) {
      const outcome = dataKeys.reseal(row.sealed_key!);
      if (outcome.state === 'resealed') await trx.updateTable('data_keys').set({ sealed_key: outcome.sealed }).where('scope', '=', row.scope).execute();
      count(report.data_keys, row.scope, outcome);
      input.onItem?.('data_keys');
    }
  });

  // Last: from now on the installation starts only with the new SECRET.
  await writeCanary(input.sql, newSecret, 'replace');
  return report;
}
