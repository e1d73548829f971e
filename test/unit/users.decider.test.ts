/** Given / when / then over the user decider and the email reservation decider. */
import { describe, expect, it } from 'vitest';
import { emailReservationId, userEmails, users, type EmailCommand, type UserCommand } from '../../src/commands/users/decider.js';
import type { EmailEvent, UserEvent } from '../../src/commands/users/events.js';
import { ConflictError, DomainError, NotFoundError } from '../../src/errors.js';

function given(history: UserEvent[]) {
  const state = history.reduce(users.evolve, users.initialState);
  return { state, when: (command: UserCommand) => users.decide(command, state) };
}

const HASH = '$scrypt$ln=15,r=8,p=1$c2FsdA$aGFzaA';
const created: UserEvent = { type: 'UserCreated', data: { user_id: 'usr_1', email: 'ada@example.com', password_hash: HASH, role: 'user' } };
const enrolled: UserEvent = { type: 'MfaEnrollmentStarted', data: { secret_sealed: 'v1.sealed', recovery_code_hashes: ['h1', 'h2'] } };
const mfaOn: UserEvent[] = [created, enrolled, { type: 'MfaEnabled', data: { step: 100 } }];

describe('user decider', () => {
  it('creates a user with a normalised email', () => {
    expect(given([]).when({ type: 'CreateUser', userId: 'usr_1', email: ' Ada@Example.COM ', passwordHash: HASH, role: 'user' })).toEqual([created]);
  });

  it('refuses a second creation, a missing hash, and commands on a user that does not exist', () => {
    expect(() => given([created]).when({ type: 'CreateUser', userId: 'usr_1', email: 'x@y.z', passwordHash: HASH, role: 'user' })).toThrow(expect.objectContaining({ code: 'user_exists' }));
    expect(() => given([]).when({ type: 'CreateUser', userId: 'usr_1', email: 'x@y.z', passwordHash: 'plain', role: 'user' })).toThrow(DomainError);
    expect(() => given([]).when({ type: 'DisableUser', by: null })).toThrow(NotFoundError);
  });

  it('disables and enables idempotently', () => {
    expect(given([created]).when({ type: 'DisableUser', by: 'a' })).toEqual([{ type: 'UserDisabled', data: { by: 'a' } }]);
    const disabled: UserEvent[] = [created, { type: 'UserDisabled', data: { by: 'a' } }];
    expect(given(disabled).when({ type: 'DisableUser', by: 'a' })).toEqual([]);
    expect(given(disabled).when({ type: 'EnableUser', by: 'a' })).toEqual([{ type: 'UserEnabled', data: { by: 'a' } }]);
    expect(given([created]).when({ type: 'EnableUser', by: 'a' })).toEqual([]);
  });

  it('changes role, password and preferences only when they change', () => {
    expect(given([created]).when({ type: 'ChangeRole', role: 'user', by: 'a' })).toEqual([]);
    expect(given([created]).when({ type: 'ChangeRole', role: 'admin', by: 'a' })).toEqual([{ type: 'UserRoleChanged', data: { role: 'admin', by: 'a' } }]);
    expect(given([created]).when({ type: 'ChangePassword', passwordHash: HASH })).toEqual([{ type: 'PasswordChanged', data: { password_hash: HASH } }]);
    expect(given([created]).when({ type: 'SetPreferences', preferences: {} })).toEqual([]);
    expect(given([created]).when({ type: 'SetPreferences', preferences: { theme: 'dark' } })).toEqual([{ type: 'PreferencesChanged', data: { preferences: { theme: 'dark' } } }]);
    expect(() => given([created]).when({ type: 'SetPreferences', preferences: { blob: 'x'.repeat(20_000) } })).toThrow(expect.objectContaining({ code: 'preferences_too_large' }));
  });

  it('enables MFA only with the pending secret, and not twice', () => {
    expect(given([created]).when({ type: 'StartMfaEnrollment', secretSealed: 'v1.sealed', recoveryCodeHashes: ['h1', 'h2'] })).toEqual([enrolled]);
    expect(given([created, enrolled]).when({ type: 'ConfirmMfaEnrollment', secretSealed: 'v1.sealed', step: 100 })).toEqual([{ type: 'MfaEnabled', data: { step: 100 } }]);
    expect(() => given([created, enrolled]).when({ type: 'ConfirmMfaEnrollment', secretSealed: 'v1.other', step: 100 })).toThrow(expect.objectContaining({ code: 'mfa_not_enrolled' }));
    expect(() => given([created]).when({ type: 'ConfirmMfaEnrollment', secretSealed: 'v1.sealed', step: 100 })).toThrow(expect.objectContaining({ code: 'mfa_not_enrolled' }));
    expect(() => given(mfaOn).when({ type: 'StartMfaEnrollment', secretSealed: 's', recoveryCodeHashes: [] })).toThrow(ConflictError);
    const { state } = given(mfaOn);
    expect(state.mfa).toMatchObject({ enabled: true, secretSealed: 'v1.sealed', recoveryCodeHashes: ['h1', 'h2'], pendingSecretSealed: null, lastStep: 100 });
  });

  it('accepts each TOTP step once, never one at or before the last used', () => {
    expect(given(mfaOn).when({ type: 'UseMfa', proof: { kind: 'totp', step: 101 } })).toEqual([{ type: 'MfaTotpUsed', data: { step: 101 } }]);
    expect(() => given(mfaOn).when({ type: 'UseMfa', proof: { kind: 'totp', step: 100 } })).toThrow(expect.objectContaining({ code: 'mfa_code_rejected' }));
    const used: UserEvent[] = [...mfaOn, { type: 'MfaTotpUsed', data: { step: 101 } }];
    expect(() => given(used).when({ type: 'UseMfa', proof: { kind: 'totp', step: 101 } })).toThrow(expect.objectContaining({ code: 'mfa_code_rejected' }));
  });

  it('spends a recovery code once', () => {
    expect(given(mfaOn).when({ type: 'UseMfa', proof: { kind: 'recovery', codeHash: 'h2' } })).toEqual([{ type: 'MfaRecoveryCodeUsed', data: { code_hash: 'h2' } }]);
    const spent: UserEvent[] = [...mfaOn, { type: 'MfaRecoveryCodeUsed', data: { code_hash: 'h2' } }];
    expect(() => given(spent).when({ type: 'UseMfa', proof: { kind: 'recovery', codeHash: 'h2' } })).toThrow(expect.objectContaining({ code: 'mfa_code_rejected' }));
    expect(() => given(mfaOn).when({ type: 'UseMfa', proof: { kind: 'recovery', codeHash: 'nope' } })).toThrow(expect.objectContaining({ code: 'mfa_code_rejected' }));
    expect(given(spent).state.mfa.recoveryCodeHashes).toEqual(['h1']);
  });

  it('disables MFA with a valid proof; the last step survives re-enrollment', () => {
    expect(given(mfaOn).when({ type: 'DisableMfa', proof: { kind: 'recovery', codeHash: 'h1' } })).toEqual([
      { type: 'MfaRecoveryCodeUsed', data: { code_hash: 'h1' } },
      { type: 'MfaDisabled', data: {} },
    ]);
    expect(() => given([created]).when({ type: 'DisableMfa', proof: { kind: 'totp', step: 1 } })).toThrow(expect.objectContaining({ code: 'mfa_not_enabled' }));
    const { state } = given([...mfaOn, { type: 'MfaDisabled', data: {} }]);
    expect(state.mfa).toMatchObject({ enabled: false, secretSealed: null, recoveryCodeHashes: [], lastStep: 100 });
  });

  it('lets an admin reset MFA without a code: enabled or pending, else nothing to do', () => {
    expect(given(mfaOn).when({ type: 'ResetMfa', by: 'admin-1' })).toEqual([{ type: 'MfaDisabled', data: { by: 'admin-1' } }]);
    expect(given([created, enrolled]).when({ type: 'ResetMfa', by: 'admin-1' })).toEqual([{ type: 'MfaDisabled', data: { by: 'admin-1' } }]);
    expect(given([created]).when({ type: 'ResetMfa', by: 'admin-1' })).toEqual([]);
    expect(() => given([]).when({ type: 'ResetMfa', by: 'admin-1' })).toThrow(NotFoundError);
  });
});

describe('email reservation decider', () => {
  function givenEmail(history: EmailEvent[]) {
    const state = history.reduce(userEmails.evolve, userEmails.initialState);
    return { when: (command: EmailCommand) => userEmails.decide(command, state) };
  }
  const reserved: EmailEvent = { type: 'EmailReserved', data: { user_id: 'usr_1', tenant_id: 't', email: 'ada@example.com' } };

  it('reserves a free address; the same user again is a no-op; another user gets email_taken', () => {
    expect(givenEmail([]).when({ type: 'ReserveEmail', userId: 'usr_1', tenantId: 't', email: 'Ada@Example.com' })).toEqual([reserved]);
    expect(givenEmail([reserved]).when({ type: 'ReserveEmail', userId: 'usr_1', tenantId: 't', email: 'ada@example.com' })).toEqual([]);
    expect(() => givenEmail([reserved]).when({ type: 'ReserveEmail', userId: 'usr_2', tenantId: 'u', email: 'ada@example.com' })).toThrow(
      expect.objectContaining({ status: 409, code: 'email_taken' }),
    );
  });

  it('releases only its own reservation, after which the address is free again', () => {
    expect(givenEmail([reserved]).when({ type: 'ReleaseEmail', userId: 'usr_2' })).toEqual([]);
    const released: EmailEvent[] = [reserved, { type: 'EmailReleased', data: { user_id: 'usr_1' } }];
    expect(givenEmail([reserved]).when({ type: 'ReleaseEmail', userId: 'usr_1' })).toEqual([released[1]]);
    expect(givenEmail(released).when({ type: 'ReserveEmail', userId: 'usr_2', tenantId: 'u', email: 'ada@example.com' })).toHaveLength(1);
  });

  it('names the stream after the normalised address', () => {
    expect(emailReservationId(' ADA@example.com')).toBe(emailReservationId('ada@example.com'));
    expect(emailReservationId('ada@example.com')).toMatch(/^[0-9a-f]{64}$/);
  });
});
