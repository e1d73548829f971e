/**
 * Creating a user touches two streams: the email's reservation (installation-wide uniqueness)
 * and the user itself. The reservation comes first; if the user cannot be created afterwards the
 * reservation is released again (best effort; a retry with the same user id reuses it).
 */
import type { Role } from '../../auth/tokens.js';
import type { CommandBus } from '../bus.js';
import { EMAIL_REGISTRY_TENANT, emailReservationId, userEmails, users } from './decider.js';

export interface NewUser {
  userId: string;
  tenantId: string;
  email: string;
  passwordHash: string;
  role: Role;
}

/** Returns the log position of the user's creation. Throws 409 `email_taken`, or the decider's refusal. */
export async function createUser(commands: CommandBus, user: NewUser, causationId: string | null): Promise<number | null> {
  const reservation = emailReservationId(user.email);
  await commands.execute(userEmails, reservation, { type: 'ReserveEmail', userId: user.userId, tenantId: user.tenantId, email: user.email }, { tenantId: EMAIL_REGISTRY_TENANT, causationId });
  try {
    const result = await commands.execute(
      users,
      user.userId,
      { type: 'CreateUser', userId: user.userId, email: user.email, passwordHash: user.passwordHash, role: user.role },
      { tenantId: user.tenantId, causationId },
    );
    return result.position;
  } catch (error) {
    // The user exists already (a concurrent creation with the same id won): keep its reservation.
    if (!(error instanceof Error && 'code' in error && error.code === 'user_exists')) {
      await commands.execute(userEmails, reservation, { type: 'ReleaseEmail', userId: user.userId }, { tenantId: EMAIL_REGISTRY_TENANT, causationId }).catch(() => undefined);
    }
    throw error;
  }
}
