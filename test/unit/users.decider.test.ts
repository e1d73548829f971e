/** Given / when / then over the user decider and the email reservation decider. */
import { describe, expect, it } from 'vitest';
import { emailReservationId, userEmails, users, type UserCommand } from '../../src/commands/users/decider.js';
import type { EmailEvent, UserEvent } from '../../src/commands/users/events.js';
import { ConflictError, DomainError, NotFoundError } from '../../src/errors.js';
import { DeciderSpec } from '../support/decider-spec.js';

const spec = DeciderSpec.for(users);

const HASH = '$scrypt$ln=15,r=8,p=1$c2FsdA$aGFzaA';
const created: UserEvent = { type: 'UserCreated', data: { user_id: 'usr_1', email: 'ada@example.com', password_hash: HASH, role: 'user' } };
const enrolled: UserEvent = { type: 'MfaEnrollmentStarted', data: { secret_sealed: 'v1.sealed', recovery_code_hashes: ['h1', 'h2'] } };
const mfaOn: UserEvent[] = [created, enrolled, { type: 'MfaEnabled', data: { step: 100 } }];
const rejected = expect.objectContaining({ code: 'mfa_code_rejected' });

describe('user decider', () => {
  it('creates a user with a normalised email', () => {
    spec.given([]).when({ type: 'CreateUser', userId: 'usr_1', email: ' Ada@Example.COM ', passwordHash: HASH, role: 'user' }).then([created]);
  });

  it('refuses a second creation, a missing hash, and commands on a user that does not exist', () => {
    spec.given([created]).when({ type: 'CreateUser', userId: 'usr_1', email: 'x@y.z', passwordHash: HASH, role: 'user' }).thenThrows(expect.objectContaining({ code: 'user_exists' }));
    spec.given([]).when({ type: 'CreateUser', userId: 'usr_1', email: 'x@y.z', passwordHash: 'plain', role: 'user' }).thenThrows(DomainError);
    spec.given([]).when({ type: 'DisableUser', by: null }).thenThrows(NotFoundError);
  });

  it('disables and enables idempotently', () => {
    spec.given([created]).when({ type: 'DisableUser', by: 'a' }).then([{ type: 'UserDisabled', data: { by: 'a' } }]);
    const disabled: UserEvent[] = [created, { type: 'UserDisabled', data: { by: 'a' } }];
    spec.given(disabled).when({ type: 'DisableUser', by: 'a' }).thenNothingHappened();
    spec.given(disabled).when({ type: 'EnableUser', by: 'a' }).then([{ type: 'UserEnabled', data: { by: 'a' } }]);
    spec.given([created]).when({ type: 'EnableUser', by: 'a' }).thenNothingHappened();
  });

  it('changes role, password and preferences only when they change', () => {
    spec.given([created]).when({ type: 'ChangeRole', role: 'user', by: 'a' }).thenNothingHappened();
    spec.given([created]).when({ type: 'ChangeRole', role: 'admin', by: 'a' }).then([{ type: 'UserRoleChanged', data: { role: 'admin', by: 'a' } }]);
    spec.given([created]).when({ type: 'ChangePassword', passwordHash: HASH }).then([{ type: 'PasswordChanged', data: { password_hash: HASH } }]);
    spec.given([created]).when({ type: 'SetPreferences', preferences: {} }).thenNothingHappened();
    spec.given([created]).when({ type: 'SetPreferences', preferences: { theme: 'dark' } }).then([{ type: 'PreferencesChanged', data: { preferences: { theme: 'dark' } } }]);
    spec.given([created]).when({ type: 'SetPreferences', preferences: { blob: 'x'.repeat(20_000) } }).thenThrows(expect.objectContaining({ code: 'preferences_too_large' }));
  });

  it('enables MFA only with the pending secret, and not twice', () => {
    spec.given([created]).when({ type: 'StartMfaEnrollment', secretSealed: 'v1.sealed', recoveryCodeHashes: ['h1', 'h2'] }).then([enrolled]);
    spec.given([created, enrolled]).when({ type: 'ConfirmMfaEnrollment', secretSealed: 'v1.sealed', step: 100 }).then([{ type: 'MfaEnabled', data: { step: 100 } }]);
    spec.given([created, enrolled]).when({ type: 'ConfirmMfaEnrollment', secretSealed: 'v1.other', step: 100 }).thenThrows(expect.objectContaining({ code: 'mfa_not_enrolled' }));
    spec.given([created]).when({ type: 'ConfirmMfaEnrollment', secretSealed: 'v1.sealed', step: 100 }).thenThrows(expect.objectContaining({ code: 'mfa_not_enrolled' }));
    spec.given(mfaOn).when({ type: 'StartMfaEnrollment', secretSealed: 's', recoveryCodeHashes: [] }).thenThrows(ConflictError);
    expect(spec.given(mfaOn).state.mfa).toMatchObject({ enabled: true, secretSealed: 'v1.sealed', recoveryCodeHashes: ['h1', 'h2'], pendingSecretSealed: null, lastStep: 100 });
  });

  it('accepts each TOTP step once, never one at or before the last used', () => {
    spec.given(mfaOn).when({ type: 'UseMfa', proof: { kind: 'totp', step: 101 } }).then([{ type: 'MfaTotpUsed', data: { step: 101 } }]);
    spec.given(mfaOn).when({ type: 'UseMfa', proof: { kind: 'totp', step: 100 } }).thenThrows(rejected);
    const used: UserEvent[] = [...mfaOn, { type: 'MfaTotpUsed', data: { step: 101 } }];
    spec.given(used).when({ type: 'UseMfa', proof: { kind: 'totp', step: 101 } }).thenThrows(rejected);
  });

  it('spends a recovery code once', () => {
    spec.given(mfaOn).when({ type: 'UseMfa', proof: { kind: 'recovery', codeHash: 'h2' } }).then([{ type: 'MfaRecoveryCodeUsed', data: { code_hash: 'h2' } }]);
    const spent: UserEvent[] = [...mfaOn, { type: 'MfaRecoveryCodeUsed', data: { code_hash: 'h2' } }];
    spec.given(spent).when({ type: 'UseMfa', proof: { kind: 'recovery', codeHash: 'h2' } }).thenThrows(rejected);
    spec.given(mfaOn).when({ type: 'UseMfa', proof: { kind: 'recovery', codeHash: 'nope' } }).thenThrows(rejected);
    expect(spec.given(spent).state.mfa.recoveryCodeHashes).toEqual(['h1']);
  });

  it('disables MFA with a valid proof; the last step survives re-enrollment', () => {
    spec.given(mfaOn).when({ type: 'DisableMfa', proof: { kind: 'recovery', codeHash: 'h1' } }).then([
      { type: 'MfaRecoveryCodeUsed', data: { code_hash: 'h1' } },
      { type: 'MfaDisabled', data: {} },
    ]);
    spec.given([created]).when({ type: 'DisableMfa', proof: { kind: 'totp', step: 1 } }).thenThrows(expect.objectContaining({ code: 'mfa_not_enabled' }));
    expect(spec.given([...mfaOn, { type: 'MfaDisabled', data: {} }]).state.mfa).toMatchObject({ enabled: false, secretSealed: null, recoveryCodeHashes: [], lastStep: 100 });
  });

  it('lets an admin reset MFA without a code: enabled or pending, else nothing to do', () => {
    spec.given(mfaOn).when({ type: 'ResetMfa', by: 'admin-1' }).then([{ type: 'MfaDisabled', data: { by: 'admin-1' } }]);
    spec.given([created, enrolled]).when({ type: 'ResetMfa', by: 'admin-1' }).then([{ type: 'MfaDisabled', data: { by: 'admin-1' } }]);
    spec.given([created]).when({ type: 'ResetMfa', by: 'admin-1' }).thenNothingHappened();
    spec.given([]).when({ type: 'ResetMfa', by: 'admin-1' }).thenThrows(NotFoundError);
  });
  it('re-seals the MFA secrets it is given only over the sealed values they replace (secret rotate; a re-run decides nothing)', () => {
    const resealed: UserEvent = { type: 'MfaSecretResealed', data: { secret_sealed: 'v1.new' } };
    spec.given(mfaOn).when({ type: 'ResealMfaSecret', secret: { from: 'v1.sealed', to: 'v1.new' } }).then([resealed]);
    spec.given([...mfaOn, resealed]).when({ type: 'ResealMfaSecret', secret: { from: 'v1.sealed', to: 'v1.new' } }).thenNothingHappened();
    // A pending enrollment's secret, and both at once.
    spec.given([created, enrolled]).when({ type: 'ResealMfaSecret', pendingSecret: { from: 'v1.sealed', to: 'v1.next' } }).then([{ type: 'MfaSecretResealed', data: { pending_secret_sealed: 'v1.next' } }]);
    // Re-enrolled meanwhile (another sealed value): the newer secret is kept.
    spec.given(mfaOn).when({ type: 'ResealMfaSecret', secret: { from: 'v1.other', to: 'v1.new' } }).thenNothingHappened();
    // The re-sealed secret is the one a later confirmation and login use.
    spec.given([created, enrolled, { type: 'MfaSecretResealed', data: { pending_secret_sealed: 'v1.next' } }]).when({ type: 'ConfirmMfaEnrollment', secretSealed: 'v1.next', step: 5 }).then([{ type: 'MfaEnabled', data: { step: 5 } }]);
    spec.given([]).when({ type: 'ResealMfaSecret', secret: { from: 'a', to: 'b' } }).thenThrows(NotFoundError);
  });

  it('deletes a user once, for good: a repeat decides nothing, everything else answers 404, the id is never created again', () => {
    const deleted: UserEvent = { type: 'UserDeleted', data: { user_id: 'usr_1', by: 'adm' } };
    spec.given([created]).when({ type: 'DeleteUser', userId: 'usr_1', by: 'adm' }).then([deleted]);
    spec.given([created, { type: 'UserDisabled', data: { by: 'a' } }]).when({ type: 'DeleteUser', userId: 'usr_1', by: null }).then([{ type: 'UserDeleted', data: { user_id: 'usr_1', by: null } }]);
    spec.given([created, deleted]).when({ type: 'DeleteUser', userId: 'usr_1', by: 'adm' }).thenNothingHappened();
    spec.given([]).when({ type: 'DeleteUser', userId: 'usr_1', by: 'adm' }).thenThrows(expect.objectContaining({ code: 'user_not_found' }));
    const commands: UserCommand[] = [
      { type: 'EnableUser', by: 'a' },
      { type: 'DisableUser', by: 'a' },
      { type: 'ChangeRole', role: 'admin', by: 'a' },
      { type: 'ChangePassword', passwordHash: HASH },
      { type: 'SetPreferences', preferences: { theme: 'dark' } },
      { type: 'StartMfaEnrollment', secretSealed: 'v1.s', recoveryCodeHashes: [] },
      { type: 'ResetMfa', by: 'a' },
    ];
    for (const command of commands) {
      spec.given([created, deleted]).when(command).thenThrows(NotFoundError);
    }
    spec.given([...mfaOn, deleted]).when({ type: 'UseMfa', proof: { kind: 'totp', step: 200 } }).thenThrows(NotFoundError);
    spec.given([created, deleted]).when({ type: 'CreateUser', userId: 'usr_1', email: 'x@y.z', passwordHash: HASH, role: 'user' }).thenThrows(expect.objectContaining({ code: 'user_exists' }));
  });
});

describe('email reservation decider', () => {
  const emails = DeciderSpec.for(userEmails);
  const reserved: EmailEvent = { type: 'EmailReserved', data: { user_id: 'usr_1', tenant_id: 't', email: 'ada@example.com' } };

  it('reserves a free address; the same user again is a no-op; another user gets email_taken', () => {
    emails.given([]).when({ type: 'ReserveEmail', userId: 'usr_1', tenantId: 't', email: 'Ada@Example.com' }).then([reserved]);
    emails.given([reserved]).when({ type: 'ReserveEmail', userId: 'usr_1', tenantId: 't', email: 'ada@example.com' }).thenNothingHappened();
    emails.given([reserved]).when({ type: 'ReserveEmail', userId: 'usr_2', tenantId: 'u', email: 'ada@example.com' }).thenThrows(expect.objectContaining({ status: 409, code: 'email_taken' }));
  });

  it('releases only its own reservation, after which the address is free again', () => {
    emails.given([reserved]).when({ type: 'ReleaseEmail', userId: 'usr_2' }).thenNothingHappened();
    const released: EmailEvent = { type: 'EmailReleased', data: { user_id: 'usr_1' } };
    emails.given([reserved]).when({ type: 'ReleaseEmail', userId: 'usr_1' }).then([released]);
    emails
      .given([reserved, released])
      .when({ type: 'ReserveEmail', userId: 'usr_2', tenantId: 'u', email: 'ada@example.com' })
      .then([{ type: 'EmailReserved', data: { user_id: 'usr_2', tenant_id: 'u', email: 'ada@example.com' } }]);
  });

  it('names the stream after the normalised address', () => {
    expect(emailReservationId(' ADA@example.com')).toBe(emailReservationId('ada@example.com'));
    expect(emailReservationId('ada@example.com')).toMatch(/^[0-9a-f]{64}$/);
  });
});
