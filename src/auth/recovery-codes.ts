/**
 * MFA recovery codes: ten single-use codes like `k7q2m-x9d4t` (50 random bits each), shown once
 * at enrollment and stored only as HMAC-SHA256 hashes under a key derived from SECRET.
 */
import { createHmac, randomInt } from 'node:crypto';
import { deriveKey } from './tokens.js';

export const RECOVERY_CODE_COUNT = 10;
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';

export function newRecoveryCodes(count = RECOVERY_CODE_COUNT): string[] {
  return Array.from({ length: count }, () => {
    let code = '';
    for (let i = 0; i < 10; i++) code += ALPHABET[randomInt(ALPHABET.length)];
    return `${code.slice(0, 5)}-${code.slice(5)}`;
  });
}

/** Case, spaces and dashes do not matter when a code is typed back. */
export function normalizeRecoveryCode(code: string): string {
  return code.replace(/[\s-]/g, '').toLowerCase();
}

export class RecoveryCodeHasher {
  private readonly key: Buffer;

  constructor(secret: string) {
    this.key = deriveKey(secret, 'mfa-recovery-codes');
  }

  hash(code: string): string {
    return createHmac('sha256', this.key).update(normalizeRecoveryCode(code)).digest('hex');
  }
}
