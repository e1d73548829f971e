/**
 * Users: an email, a password hash, a role, and optional TOTP multi-factor login, owned by a
 * tenant. Credentials are checked by the caller (I/O: scrypt, clocks); the decider keeps what
 * must hold across instances: a recovery code works once, a TOTP step is never accepted twice,
 * an enrollment is confirmed only with the secret it started with.
 */
import { createHash } from 'node:crypto';
import { isPasswordHash } from '../../auth/passwords.js';
import type { Role } from '../../auth/tokens.js';
import { ConflictError, DomainError, NotFoundError } from '../../errors.js';
import type { Decider } from '../decider.js';
import { EmailEvent, UserEvent, type Preferences } from './events.js';

/** Largest preferences document (serialised JSON). */
export const MAX_PREFERENCES_BYTES = 16 * 1024;

export interface MfaState {
  enabled: boolean;
  secretSealed: string | null;
  recoveryCodeHashes: string[];
  pendingSecretSealed: string | null;
  pendingRecoveryCodeHashes: string[];
  /** Highest TOTP step accepted so far (a code of this step or an earlier one is refused). */
  lastStep: number;
}

export interface UserState {
  /** Created once; stays true after a deletion (the id is never reused). */
  exists: boolean;
  deleted: boolean;
  email: string;
  role: Role;
  disabled: boolean;
  passwordHash: string;
  preferences: Preferences;
  mfa: MfaState;
}

/** Proof of a second factor, already checked against the secret by the caller (TOTP), or a recovery code's hash. */
export type MfaProof = { kind: 'totp'; step: number } | { kind: 'recovery'; codeHash: string };

export type UserCommand =
  | { type: 'CreateUser'; userId: string; email: string; passwordHash: string; role: Role }
  | { type: 'DisableUser'; by: string | null }
  | { type: 'EnableUser'; by: string | null }
  | { type: 'ChangeRole'; role: Role; by: string | null }
  | { type: 'ChangePassword'; passwordHash: string }
  | { type: 'SetPreferences'; preferences: Preferences }
  | { type: 'StartMfaEnrollment'; secretSealed: string; recoveryCodeHashes: string[] }
  | { type: 'ConfirmMfaEnrollment'; secretSealed: string; step: number }
  | { type: 'UseMfa'; proof: MfaProof }
  | { type: 'DisableMfa'; proof: MfaProof }
  /** An admin turns a user's multi-factor login off (a lost authenticator); no code needed. */
  | { type: 'ResetMfa'; by: string | null }
  /**
   * The same TOTP secrets sealed under a new SECRET (`switchyard secret rotate`). Each is given
   * only for the sealed value it replaces: a secret enrolled meanwhile is not overwritten.
   */
  | { type: 'ResealMfaSecret'; secret?: { from: string; to: string }; pendingSecret?: { from: string; to: string } }
  /** For good; deleting a deleted user decides nothing (a retry finishes what the first call began). */
  | { type: 'DeleteUser'; userId: string; by: string | null };

/** Email addresses are compared trimmed and lower-cased. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

const NO_MFA: MfaState = { enabled: false, secretSealed: null, recoveryCodeHashes: [], pendingSecretSealed: null, pendingRecoveryCodeHashes: [], lastStep: -1 };

/** The user, unless it never existed or was deleted (both: 404). */
function existing(state: UserState): UserState {
  if (!state.exists || state.deleted) throw new NotFoundError('user not found', 'user_not_found');
  return state;
}

/** The events that spend a second-factor proof, or a refusal (`mfa_code_rejected`). */
function spend(state: UserState, proof: MfaProof): UserEvent[] {
  if (!state.mfa.enabled) throw new DomainError('multi-factor login is not enabled for this user', 'mfa_not_enabled');
  if (proof.kind === 'totp') {
    if (proof.step <= state.mfa.lastStep) throw new DomainError('this code was already used', 'mfa_code_rejected');
    return [{ type: 'MfaTotpUsed', data: { step: proof.step } }];
  }
  if (!state.mfa.recoveryCodeHashes.includes(proof.codeHash)) throw new DomainError('unknown or used recovery code', 'mfa_code_rejected');
  return [{ type: 'MfaRecoveryCodeUsed', data: { code_hash: proof.codeHash } }];
}

export const users: Decider<UserCommand, UserState, UserEvent> = {
  category: 'user',
  initialState: { exists: false, deleted: false, email: '', role: 'user', disabled: false, passwordHash: '', preferences: {}, mfa: NO_MFA },
  events: UserEvent,

  decide(command, state) {
    switch (command.type) {
      case 'CreateUser': {
        if (state.exists) throw new DomainError('user already exists', 'user_exists');
        const email = normalizeEmail(command.email);
        if (!email.includes('@')) throw new DomainError('a user needs an email address', 'invalid_user');
        // bcrypt: an imported account's hash (v1.x, one-api, new-api), replaced by scrypt at its next login.
        if (!isPasswordHash(command.passwordHash)) throw new DomainError('a user needs a password hash', 'invalid_user');
        return [{ type: 'UserCreated', data: { user_id: command.userId, email, password_hash: command.passwordHash, role: command.role } }];
      }
      case 'DisableUser':
        return existing(state).disabled ? [] : [{ type: 'UserDisabled', data: { by: command.by } }];
      case 'EnableUser':
        return existing(state).disabled ? [{ type: 'UserEnabled', data: { by: command.by } }] : [];
      case 'ChangeRole':
        return existing(state).role === command.role ? [] : [{ type: 'UserRoleChanged', data: { role: command.role, by: command.by } }];
      case 'ChangePassword':
        existing(state);
        if (!command.passwordHash.startsWith('$scrypt$')) throw new DomainError('not a password hash', 'invalid_user');
        return [{ type: 'PasswordChanged', data: { password_hash: command.passwordHash } }];
      case 'SetPreferences': {
        existing(state);
        if (JSON.stringify(command.preferences).length > MAX_PREFERENCES_BYTES) throw new DomainError(`preferences must be at most ${MAX_PREFERENCES_BYTES} bytes of JSON`, 'preferences_too_large');
        if (JSON.stringify(command.preferences) === JSON.stringify(state.preferences)) return [];
        return [{ type: 'PreferencesChanged', data: { preferences: command.preferences } }];
      }
      case 'StartMfaEnrollment':
        if (existing(state).mfa.enabled) throw new ConflictError('multi-factor login is already enabled; disable it first', 'mfa_already_enabled');
        return [{ type: 'MfaEnrollmentStarted', data: { secret_sealed: command.secretSealed, recovery_code_hashes: command.recoveryCodeHashes } }];
      case 'ConfirmMfaEnrollment':
        if (existing(state).mfa.enabled) throw new ConflictError('multi-factor login is already enabled', 'mfa_already_enabled');
        // Checked against a secret that a newer enrollment replaced: the code proves nothing.
        if (state.mfa.pendingSecretSealed === null || state.mfa.pendingSecretSealed !== command.secretSealed) throw new DomainError('no multi-factor enrollment is pending', 'mfa_not_enrolled');
        return [{ type: 'MfaEnabled', data: { step: command.step } }];
      case 'UseMfa':
        return spend(existing(state), command.proof);
      case 'DisableMfa':
        return [...spend(existing(state), command.proof), { type: 'MfaDisabled', data: {} }];
      case 'ResetMfa': {
        const { mfa } = existing(state);
        // Nothing enabled and no enrollment pending: nothing to reset.
        return mfa.enabled || mfa.pendingSecretSealed !== null ? [{ type: 'MfaDisabled', data: { by: command.by } }] : [];
      }
      case 'ResealMfaSecret': {
        const { mfa } = existing(state);
        const data: { secret_sealed?: string; pending_secret_sealed?: string } = {};
        if (command.secret && mfa.secretSealed === command.secret.from && command.secret.to !== command.secret.from) data.secret_sealed = command.secret.to;
        if (command.pendingSecret && mfa.pendingSecretSealed === command.pendingSecret.from && command.pendingSecret.to !== command.pendingSecret.from) data.pending_secret_sealed = command.pendingSecret.to;
        return Object.keys(data).length === 0 ? [] : [{ type: 'MfaSecretResealed', data }];
      }
      case 'DeleteUser':
        if (!state.exists) throw new NotFoundError('user not found', 'user_not_found');
        return state.deleted ? [] : [{ type: 'UserDeleted', data: { user_id: command.userId, by: command.by } }];
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'UserCreated':
        return { ...state, exists: true, email: event.data.email, passwordHash: event.data.password_hash, role: event.data.role };
      case 'UserDisabled':
        return { ...state, disabled: true };
      case 'UserEnabled':
        return { ...state, disabled: false };
      case 'UserRoleChanged':
        return { ...state, role: event.data.role };
      case 'PasswordChanged':
        return { ...state, passwordHash: event.data.password_hash };
      case 'PreferencesChanged':
        return { ...state, preferences: event.data.preferences };
      case 'MfaEnrollmentStarted':
        return { ...state, mfa: { ...state.mfa, pendingSecretSealed: event.data.secret_sealed, pendingRecoveryCodeHashes: event.data.recovery_code_hashes } };
      case 'MfaEnabled':
        return {
          ...state,
          mfa: {
            enabled: true,
            secretSealed: state.mfa.pendingSecretSealed,
            recoveryCodeHashes: state.mfa.pendingRecoveryCodeHashes,
            pendingSecretSealed: null,
            pendingRecoveryCodeHashes: [],
            lastStep: Math.max(state.mfa.lastStep, event.data.step),
          },
        };
      case 'MfaDisabled':
        // lastStep survives: a code seen before must not work after a re-enrollment either.
        return { ...state, mfa: { ...NO_MFA, lastStep: state.mfa.lastStep } };
      case 'MfaTotpUsed':
        return { ...state, mfa: { ...state.mfa, lastStep: Math.max(state.mfa.lastStep, event.data.step) } };
      case 'MfaRecoveryCodeUsed':
        return { ...state, mfa: { ...state.mfa, recoveryCodeHashes: state.mfa.recoveryCodeHashes.filter((h) => h !== event.data.code_hash) } };
      case 'MfaSecretResealed':
        return {
          ...state,
          mfa: {
            ...state.mfa,
            ...(event.data.secret_sealed !== undefined && { secretSealed: event.data.secret_sealed }),
            ...(event.data.pending_secret_sealed !== undefined && { pendingSecretSealed: event.data.pending_secret_sealed }),
          },
        };
      case 'UserDeleted':
        // The email stays in the state: the route releases its reservation (also on a retry).
        return { ...state, deleted: true, mfa: NO_MFA };
    }
  },
};

/** Stream id of an email's reservation: the SHA-256 of the normalised address (no PII in stream names). */
export function emailReservationId(email: string): string {
  return createHash('sha256').update(normalizeEmail(email)).digest('hex');
}

/** The installation-wide owner of every email reservation stream. */
export const EMAIL_REGISTRY_TENANT = '_system';

export interface EmailState {
  reservedBy: string | null;
}

export type EmailCommand = { type: 'ReserveEmail'; userId: string; tenantId: string; email: string } | { type: 'ReleaseEmail'; userId: string };

/**
 * Email uniqueness across the installation (login is by email): one stream per normalised
 * address, first written at version 0. Two creators racing for one address conflict on the
 * append; the loser decides again on the fresh history and gets 409 `email_taken`.
 */
export const userEmails: Decider<EmailCommand, EmailState, EmailEvent> = {
  category: 'useremail',
  initialState: { reservedBy: null },
  events: EmailEvent,

  decide(command, state) {
    switch (command.type) {
      case 'ReserveEmail':
        if (state.reservedBy === command.userId) return []; // a retry of the same creation
        if (state.reservedBy !== null) throw new ConflictError('a user with this email already exists', 'email_taken');
        return [{ type: 'EmailReserved', data: { user_id: command.userId, tenant_id: command.tenantId, email: normalizeEmail(command.email) } }];
      case 'ReleaseEmail':
        return state.reservedBy === command.userId ? [{ type: 'EmailReleased', data: { user_id: command.userId } }] : [];
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'EmailReserved':
        return { reservedBy: event.data.user_id };
      case 'EmailReleased':
        return { reservedBy: null };
    }
  },
};
