/**
 * Secrets at rest (provider keys): AES-256-GCM with a key derived from SECRET. The sealed form is
 * a self-describing string `v1.<iv>.<tag>.<ciphertext>` (base64url parts), used alike in events
 * and read models, so neither ever holds a provider key in the clear.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { deriveKey } from '../auth/tokens.js';

const VERSION = 'v1';

export class SecretBox {
  private readonly key: Buffer;

  constructor(secret: string, purpose = 'provider-keys') {
    this.key = deriveKey(secret, `aes-256-gcm:${purpose}`);
  }

  seal(plaintext: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [VERSION, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ciphertext.toString('base64url')].join('.');
  }

  /** Throws when the value was not sealed with this SECRET or was tampered with. */
  open(sealed: string): string {
    const [version, iv, tag, ciphertext] = sealed.split('.');
    if (version !== VERSION || !iv || !tag || ciphertext === undefined) throw new Error('not a sealed secret');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
  }
}

/** What admins see instead of a key: its first few and last four characters. */
export function maskSecret(secret: string): string {
  if (secret.length <= 8) return '****';
  const prefix = secret.startsWith('sk-') ? secret.slice(0, 3) : secret.slice(0, 2);
  return `${prefix}****${secret.slice(-4)}`;
}
