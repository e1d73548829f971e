/**
 * One-time passwords: HOTP (RFC 4226) and TOTP (RFC 6238) with base32 secrets (RFC 4648), as
 * authenticator apps speak them: SHA-1, 6 digits, 30-second steps. Verification accepts one step
 * either side of now (clock drift) and reports the step that matched, so a caller can refuse to
 * accept the same step twice (replay).
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const TOTP_STEP_SECONDS = 30;
export const TOTP_DIGITS = 6;
export const TOTP_WINDOW = 1;

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

export function base32Encode(bytes: Uint8Array): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += ALPHABET[(value << (5 - bits)) & 31];
  return out;
}

/** Decodes base32, ignoring case, spaces, dashes and padding. Throws on other characters. */
export function base32Decode(text: string): Buffer {
  const clean = text.replace(/[\s=-]/g, '').toUpperCase();
  let bits = 0;
  let value = 0;
  const out: number[] = [];
  for (const char of clean) {
    const index = ALPHABET.indexOf(char);
    if (index < 0) throw new Error(`not a base32 character: ${char}`);
    value = (value << 5) | index;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 255);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}

export type OtpAlgorithm = 'sha1' | 'sha256' | 'sha512';

/** RFC 4226 HOTP value for `counter`, zero-padded to `digits`. */
export function hotp(secret: Uint8Array, counter: number, digits = TOTP_DIGITS, algorithm: OtpAlgorithm = 'sha1'): string {
  const message = Buffer.alloc(8);
  message.writeBigUInt64BE(BigInt(counter));
  const mac = createHmac(algorithm, secret).update(message).digest();
  const offset = mac[mac.length - 1]! & 0x0f;
  const binary = ((mac[offset]! & 0x7f) << 24) | (mac[offset + 1]! << 16) | (mac[offset + 2]! << 8) | mac[offset + 3]!;
  return String(binary % 10 ** digits).padStart(digits, '0');
}

/** The TOTP time step that contains `timeMs`. */
export function totpStep(timeMs: number, stepSeconds = TOTP_STEP_SECONDS): number {
  return Math.floor(timeMs / 1000 / stepSeconds);
}

/** RFC 6238 TOTP value at `timeMs`. */
export function totp(secret: Uint8Array, timeMs: number, options: { digits?: number; algorithm?: OtpAlgorithm; stepSeconds?: number } = {}): string {
  return hotp(secret, totpStep(timeMs, options.stepSeconds), options.digits, options.algorithm);
}

/**
 * Checks a 6-digit code against the steps around `timeMs` (±TOTP_WINDOW). Returns the matching
 * step, or null. Every candidate is compared (constant-time), so timing tells nothing.
 */
export function verifyTotp(secret: Uint8Array, code: string, timeMs: number, window = TOTP_WINDOW): number | null {
  const given = code.replace(/\s/g, '');
  if (!/^\d{6}$/.test(given)) return null;
  const now = totpStep(timeMs);
  let matched: number | null = null;
  for (let step = now - window; step <= now + window; step++) {
    if (timingSafeEqual(Buffer.from(hotp(secret, step)), Buffer.from(given)) && matched === null) matched = step;
  }
  return matched;
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
