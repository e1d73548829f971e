/**
 * Events of the user aggregate. Passwords appear only as scrypt hashes, the MFA secret only sealed
 * (SecretBox), recovery codes only as keyed hashes: the log never holds a credential in the clear.
 */
import { z } from 'zod';
import { Role } from '../../auth/tokens.js';

export const Preferences = z.record(z.string(), z.unknown());
export type Preferences = z.infer<typeof Preferences>;

export const UserCreated = z.object({
  type: z.literal('UserCreated'),
  data: z.object({ user_id: z.string(), email: z.string(), password_hash: z.string(), role: Role }),
});
export const UserDisabled = z.object({ type: z.literal('UserDisabled'), data: z.object({ by: z.string().nullable() }) });
export const UserEnabled = z.object({ type: z.literal('UserEnabled'), data: z.object({ by: z.string().nullable() }) });
export const UserRoleChanged = z.object({ type: z.literal('UserRoleChanged'), data: z.object({ role: Role, by: z.string().nullable() }) });
export const PasswordChanged = z.object({ type: z.literal('PasswordChanged'), data: z.object({ password_hash: z.string() }) });
/**
 * The user is gone for good: no login, no session, no key, not listed; the id is never reused.
 * `by`: the admin who deleted it. Readers of other aggregates (conversations) drop the user's data.
 */
export const UserDeleted = z.object({ type: z.literal('UserDeleted'), data: z.object({ user_id: z.string(), by: z.string().nullable() }) });
export const PreferencesChanged = z.object({ type: z.literal('PreferencesChanged'), data: z.object({ preferences: Preferences }) });

/** A new TOTP secret and recovery codes, not in force until a code from the app is verified. */
export const MfaEnrollmentStarted = z.object({
  type: z.literal('MfaEnrollmentStarted'),
  data: z.object({ secret_sealed: z.string(), recovery_code_hashes: z.array(z.string()) }),
});
/** The pending enrollment is in force; `step` is the TOTP step of the code that proved it. */
export const MfaEnabled = z.object({ type: z.literal('MfaEnabled'), data: z.object({ step: z.number().int() }) });
/** `by`: the admin who reset it (absent when the user turned it off with a code). */
export const MfaDisabled = z.object({ type: z.literal('MfaDisabled'), data: z.object({ by: z.string().nullable().optional() }) });
/** A TOTP step was used to log in: the same step is refused from now on (no replay). */
export const MfaTotpUsed = z.object({ type: z.literal('MfaTotpUsed'), data: z.object({ step: z.number().int() }) });
/** A recovery code was spent (each works once). */
export const MfaRecoveryCodeUsed = z.object({ type: z.literal('MfaRecoveryCodeUsed'), data: z.object({ code_hash: z.string() }) });

/**
 * The TOTP secrets sealed again under a new SECRET (`switchyard secret rotate`): the same secrets,
 * so the authenticator app keeps working. Only the ones the user has are given.
 */
export const MfaSecretResealed = z.object({
  type: z.literal('MfaSecretResealed'),
  data: z.object({ secret_sealed: z.string().optional(), pending_secret_sealed: z.string().optional() }),
});

export const UserEvent = z.discriminatedUnion('type', [
  UserCreated,
  UserDisabled,
  UserEnabled,
  UserRoleChanged,
  PasswordChanged,
  PreferencesChanged,
  MfaEnrollmentStarted,
  MfaEnabled,
  MfaDisabled,
  MfaTotpUsed,
  MfaRecoveryCodeUsed,
  MfaSecretResealed,
  UserDeleted,
]);
export type UserEvent = z.infer<typeof UserEvent>;
export const USER_EVENT_TYPES = [
  'UserCreated',
  'UserDisabled',
  'UserEnabled',
  'UserRoleChanged',
  'PasswordChanged',
  'PreferencesChanged',
  'MfaEnrollmentStarted',
  'MfaEnabled',
  'MfaDisabled',
  'MfaTotpUsed',
  'MfaRecoveryCodeUsed',
  'MfaSecretResealed',
  'UserDeleted',
] as const;

/** Reservation of a normalised email address, one stream per address (`useremail-<sha256>`). */
export const EmailReserved = z.object({
  type: z.literal('EmailReserved'),
  data: z.object({ user_id: z.string(), tenant_id: z.string(), email: z.string() }),
});
export const EmailReleased = z.object({ type: z.literal('EmailReleased'), data: z.object({ user_id: z.string() }) });
export const EmailEvent = z.discriminatedUnion('type', [EmailReserved, EmailReleased]);
export type EmailEvent = z.infer<typeof EmailEvent>;
