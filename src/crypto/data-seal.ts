/**
 * Texts sealed with a data key (src/ports/data-keys.ts): AES-256-GCM, a fresh 96-bit IV per seal.
 * The envelope is a string `dk1.<iv>.<tag>.<ciphertext>` (base64url parts) so events and read
 * models carry it as a plain string; the version prefix lets the format change later. An optional
 * context (e.g. `conversation:<id>:title`) is bound as associated data: a sealed value moved to
 * another place does not open there.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const VERSION = 'dk1';
const ENVELOPE = /^dk1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]*$/;

/** A sealed text as events carry it (checked by shape, not opened). */
export type SealedText = string;

export function isSealedText(value: unknown): value is SealedText {
  return typeof value === 'string' && ENVELOPE.test(value);
}

function checkKey(key: Buffer): void {
  if (key.length !== 32) throw new RangeError('a data key is 32 bytes');
}

export function sealText(key: Buffer, plaintext: string, context = ''): SealedText {
  checkKey(key);
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(context, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return [VERSION, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ciphertext.toString('base64url')].join('.');
}

/** Throws when the envelope is malformed, or was not sealed with this key and context, or was altered. */
export function openText(key: Buffer, sealed: SealedText, context = ''): string {
  checkKey(key);
  if (!isSealedText(sealed)) throw new Error('not a sealed text');
  const [, iv, tag, ciphertext] = sealed.split('.') as [string, string, string, string];
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
  decipher.setAAD(Buffer.from(context, 'utf8'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
}
