/**
 * Deleting a user touches several streams and the data keys. `UserDeleted` comes first: from its
 * commit on, the user is refused everywhere (no login, its access tokens name no user, refresh
 * finds no account) and its conversations read as deleted. Then, each step idempotent so that a
 * second call finishes what an interrupted first one began: the email's reservation is released
 * (the address may be used again), the user's sessions and API keys are revoked, and the data
 * keys of its conversations are destroyed (crypto-shredding: their texts in the log can no
 * longer be read), and its files are deleted (their bytes released, as a file deletion does).
 */
import { userKeyPrefix } from '../../conversations/texts.js';
import type { DataKeys } from '../../ports/data-keys.js';
import type { ReadModelDb } from '../../projections/runtime/projection.js';
import { loadKeyRows } from '../../queries/keys.js';
import { activeSessionIds } from '../../queries/sessions.js';
import { AppError } from '../../errors.js';
import type { CommandBus } from '../bus.js';
import { apiKeys } from '../keys/decider.js';
import { sessions } from '../sessions/decider.js';
import { EMAIL_REGISTRY_TENANT, emailReservationId, userEmails, users } from './decider.js';


export interface UserDeletion {
  userId: string;
  tenantId: string;
  /** The admin who deletes. */
  by: string | null;
}

export interface UserDeletionResult {
  /** Highest log position written (null: nothing was left to write). */
  position: number | null;
  sessionsRevoked: number;
  apiKeysRevoked: number;
  dataKeysDestroyed: number;
  filesDeleted: number;
}

/** Deletes every live file of a user (src/files/service.ts); answers how many. */
export interface UserFiles {
  deleteAllOf(owner: { tenantId: string; userId: string }, causationId: string | null): Promise<number>;
}

/** Throws 404 `user_not_found` for a user that never existed in the tenant. A deleted one is finished again. */
export async function deleteUser(
  deps: { commands: CommandBus; db: ReadModelDb; dataKeys: DataKeys; files?: UserFiles },
  deletion: UserDeletion,
  causationId: string | null,
): Promise<UserDeletionResult> {
  const { commands, db, dataKeys } = deps;
  const { userId, tenantId, by } = deletion;
  const context = { tenantId, causationId };
  const positions: Array<number | null> = [];

  const deleted = await commands.execute(users, userId, { type: 'DeleteUser', userId, by }, context);
  positions.push(deleted.position);

  const reservation = emailReservationId(deleted.state.email);
  positions.push((await commands.execute(userEmails, reservation, { type: 'ReleaseEmail', userId }, { tenantId: EMAIL_REGISTRY_TENANT, causationId })).position);

  let sessionsRevoked = 0;
  for (const sessionId of await activeSessionIds(db, tenantId, userId)) {
    const revoked = await commands.execute(sessions, sessionId, { type: 'RevokeSession', reason: 'user_deleted', by }, context);
    if (revoked.position !== null) sessionsRevoked++;
    positions.push(revoked.position);
  }

  let apiKeysRevoked = 0;
  for (const key of await loadKeyRows(db, tenantId, userId)) {
    if (key.revoked === 1) continue;
    try {
      positions.push((await commands.execute(apiKeys, key.id, { type: 'RevokeApiKey', by }, context)).position);
      apiKeysRevoked++;
    } catch (error) {
      // Revoked meanwhile (the read model lagged behind): what we wanted.
      if (!(error instanceof AppError && error.code === 'key_not_found')) throw error;
    }
  }

  const filesDeleted = (await deps.files?.deleteAllOf({ tenantId, userId }, causationId)) ?? 0;
  const dataKeysDestroyed = await dataKeys.destroyPrefix(userKeyPrefix(userId));
  const written = positions.filter((p): p is number => p !== null);
  return { position: written.length > 0 ? Math.max(...written) : null, sessionsRevoked, apiKeysRevoked, dataKeysDestroyed, filesDeleted };
}
