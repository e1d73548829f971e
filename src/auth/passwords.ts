/**
 * Password hashing: scrypt (memory-hard), a random salt per password, and the parameters inside
 * the hash string (PHC format: `$scrypt$ln=15,r=8,p=1$<salt>$<hash>`, base64 without padding), so
 * they can be raised later without invalidating stored hashes. Comparison is constant-time.
 */
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import bcrypt from 'bcryptjs';

export const MIN_PASSWORD_LENGTH = 8;
/** Longer inputs are refused before hashing (the hash cost must not be the caller's to choose). */
export const MAX_PASSWORD_LENGTH = 1024;

/** log2(N) = 15, r = 8, p = 1: 32 MiB and ~100 ms per hash on a current core. */
export const DEFAULT_SCRYPT = { ln: 15, r: 8, p: 1 } as const;
const SALT_BYTES = 16;
const KEY_BYTES = 32;
/** Bounds for parameters read back from a stored hash. */
const MAX_LN = 20;

function derive(password: string, salt: Buffer, keyLength: number, ln: number, r: number, p: number): Promise<Buffer> {
  const N = 2 ** ln;
  const options: ScryptOptions = { N, r, p, maxmem: 128 * N * r * p + 16 * 1024 * 1024 };
  return new Promise((resolve, reject) => scrypt(password.normalize('NFKC'), salt, keyLength, options, (error, key) => (error ? reject(error) : resolve(key))));
}

export async function hashPassword(password: string, params: { ln: number; r: number; p: number } = DEFAULT_SCRYPT): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(password, salt, KEY_BYTES, params.ln, params.r, params.p);
  return `$scrypt$ln=${params.ln},r=${params.r},p=${params.p}$${salt.toString('base64').replace(/=+$/, '')}$${key.toString('base64').replace(/=+$/, '')}`;
}

interface ParsedHash {
  ln: number;
  r: number;
  p: number;
  salt: Buffer;
  key: Buffer;
}

function parse(stored: string): ParsedHash | null {
  const match = /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,2}),p=(\d{1,2})\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/.exec(stored);
  if (!match) return null;
  const [ln, r, p] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (ln < 1 || ln > MAX_LN || r < 1 || p < 1) return null;
  const salt = Buffer.from(match[4]!, 'base64');
  const key = Buffer.from(match[5]!, 'base64');
  if (salt.length < 8 || key.length < 16) return null;
  return { ln, r, p, salt, key };
}

/**
 * bcrypt hashes come with imported accounts (v1.x installations, one-api, new-api): they are
 * verified as they are and replaced by a scrypt hash at the next login (needsRehash).
 */
const BCRYPT_HASH = /^\$2[aby]\$\d{2}\$[./A-Za-z0-9]{53}$/;

/** An imported account's hash, replaced at its next login. */
export function isImportedHash(stored: string): boolean {
  return BCRYPT_HASH.test(stored);
}

/** A hash login can check: scrypt (made here) or bcrypt (imported). */
export function isPasswordHash(stored: string): boolean {
  return stored.startsWith('$scrypt$') || BCRYPT_HASH.test(stored);
}

/** True when `password` matches `stored`. A malformed stored hash never matches. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  if (password.length > MAX_PASSWORD_LENGTH) return false;
  if (BCRYPT_HASH.test(stored)) return bcrypt.compare(password, stored);
  const parsed = parse(stored);
  if (!parsed) return false;
  const key = await derive(password, parsed.salt, parsed.key.length, parsed.ln, parsed.r, parsed.p);
  return timingSafeEqual(key, parsed.key);
}

/** True when the hash was made with weaker parameters than today's defaults. */
export function needsRehash(stored: string): boolean {
  const parsed = parse(stored);
  return !parsed || parsed.ln < DEFAULT_SCRYPT.ln || parsed.r < DEFAULT_SCRYPT.r;
}

/**
 * A hash of a random password, computed once: login verifies against it when the email is
 * unknown, so an unknown email costs the same time as a wrong password.
 */
let dummy: Promise<string> | null = null;
export function dummyPasswordHash(): Promise<string> {
  dummy ??= hashPassword(randomBytes(16).toString('hex'));
  return dummy;
}
