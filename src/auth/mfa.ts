/** Turns a code typed at login (or to disable MFA) into a proof the user decider can spend. */
import type { MfaProof } from '../commands/users/decider.js';
import type { SecretBox } from '../crypto/secret-box.js';
import { normalizeRecoveryCode, type RecoveryCodeHasher } from './recovery-codes.js';
import { base32Decode, verifyTotp } from './totp.js';

/**
 * Six digits: a TOTP code, checked against the (sealed) secret at ±1 step; anything else that
 * looks like a recovery code: its hash (the decider knows whether it is still unused). Null when
 * the code cannot be right.
 */
export function mfaProof(code: string, secretSealed: string | null, box: SecretBox, hasher: RecoveryCodeHasher, now = Date.now()): MfaProof | null {
  const digits = code.replace(/\s/g, '');
  if (/^\d{6}$/.test(digits)) {
    if (!secretSealed) return null;
    const step = verifyTotp(base32Decode(box.open(secretSealed)), digits, now);
    return step === null ? null : { kind: 'totp', step };
  }
  const normalized = normalizeRecoveryCode(code);
  if (!/^[a-z2-7]{10}$/.test(normalized)) return null;
  return { kind: 'recovery', codeHash: hasher.hash(normalized) };
}
