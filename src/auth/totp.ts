/**
 * One-time passwords: HOTP (RFC 4226) and TOTP (RFC 6238) with base32 secrets (RFC 4648), as
 * authenticator apps speak them: SHA-1, 6 digits, 30-second steps. Verification accepts one step
 * either side of now (clock drift) and reports the step that matched, so a caller can refuse to
 * accept the same step twice (replay).
 */
import { randomBytes } from 'node:crypto';
import { HOTP, Secret, TOTP } from 'otpauth';

export const TOTP_STEP_SECONDS = 30;
export const TOTP_DIGITS = 6;
export const TOTP_WINDOW = 1;

/** otpauth's Secret over a copy of exactly these bytes (a pooled Buffer's ArrayBuffer is larger). */
function secretOf(bytes: Uint8Array): Secret {
  return new Secret({ buffer: Uint8Array.from(bytes).buffer });
}

export function base32Encode(bytes: Uint8Array): string {
  return secretOf(bytes).base32;
}

/** Decodes base32, ignoring case, spaces, dashes and padding. Throws on other characters. */
export function base32Decode(text: string): Buffer {
  return Buffer.from(Secret.fromBase32(text.replace(/[\s=-]/g, '')).bytes);
}

export type OtpAlgorithm = 'sha1' | 'sha256' | 'sha512';

/** RFC 4226 HOTP value for `counter`, zero-padded to `digits`. */
export function hotp(secret: Uint8Array, counter: number, digits = TOTP_DIGITS, algorithm: OtpAlgorithm = 'sha1'): string {
  return HOTP.generate({ secret: secretOf(secret), counter, digits, algorithm });
}

/** The TOTP time step that contains `timeMs`. */
export function totpStep(timeMs: number, stepSeconds = TOTP_STEP_SECONDS): number {
  return TOTP.counter({ period: stepSeconds, timestamp: timeMs });
}

/** RFC 6238 TOTP value at `timeMs`. */
export function totp(secret: Uint8Array, timeMs: number, options: { digits?: number; algorithm?: OtpAlgorithm; stepSeconds?: number } = {}): string {
  return TOTP.generate({ secret: secretOf(secret), timestamp: timeMs, period: options.stepSeconds ?? TOTP_STEP_SECONDS, digits: options.digits ?? TOTP_DIGITS, algorithm: options.algorithm ?? 'sha1' });
}

/**
 * Checks a 6-digit code against the steps around `timeMs` (±`window`). Returns the matching
 * step, or null. Codes are compared in constant time; the current step is tried first and the
 * search stops at a match, so timing can only tell which step a valid code belonged to.
 */
export function verifyTotp(secret: Uint8Array, code: string, timeMs: number, window = TOTP_WINDOW): number | null {
  const token = code.replace(/\s/g, '');
  if (!/^\d{6}$/.test(token)) return null;
  const delta = TOTP.validate({ token, secret: secretOf(secret), timestamp: timeMs, period: TOTP_STEP_SECONDS, digits: TOTP_DIGITS, algorithm: 'sha1', window });
  return delta === null ? null : totpStep(timeMs) + delta;
}

/** A new shared secret: 20 random bytes (160 bits, RFC 4226's recommendation), base32. */
export function newTotpSecret(): string {
  return base32Encode(randomBytes(20));
}

/** The URI authenticator apps read from a QR code. */
export function otpauthUrl(issuer: string, account: string, secret: string): string {
  const label = `${encodeURIComponent(issuer)}:${encodeURIComponent(account)}`;
  const query = Object.entries({ secret, issuer, algorithm: 'SHA1', digits: String(TOTP_DIGITS), period: String(TOTP_STEP_SECONDS) })
    .map(([k, v]) => `${k}=${encodeURIComponent(v)}`)
    .join('&');
  return `otpauth://totp/${label}?${query}`;
}
