/** Configuration of authentication: bootstrap admin, MFA issuer, RS256 key files. */
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { ConfigError } from '../../src/errors.js';

const SECRET = 'a-secret-of-sufficient-length';
const dir = mkdtempSync(join(tmpdir(), 'sy-keys-'));
const file = (name: string, content: string) => {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
};
const pair = () => generateKeyPairSync('rsa', { modulusLength: 2048, publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs8', format: 'pem' } });
const { privateKey, publicKey } = pair();
const privateFile = file('private.pem', privateKey);
const publicFile = file('public.pem', publicKey);

function errorOf(env: Record<string, string>): string {
  try {
    loadConfig({ SECRET, ...env });
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('expected a configuration error');
}

describe('config: authentication', () => {
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('defaults: HS256, a generated root admin password, issuer Switchyard', () => {
    const c = loadConfig({ SECRET });
    expect(c.auth.jwt).toEqual({ algorithm: 'HS256' });
    expect(c.auth.bootstrapAdmin).toEqual({ email: 'admin@switchyard.local', password: null });
    expect(c.auth.mfaIssuer).toBe('Switchyard');
  });

  it('takes ADMIN_EMAIL / ADMIN_PASSWORD and checks them', () => {
    expect(loadConfig({ SECRET, ADMIN_EMAIL: 'Ops@Example.com', ADMIN_PASSWORD: 'long-enough' }).auth.bootstrapAdmin).toEqual({ email: 'ops@example.com', password: 'long-enough' });
    expect(errorOf({ ADMIN_PASSWORD: 'short' })).toMatch(/ADMIN_PASSWORD: must be at least 8/);
    expect(errorOf({ ADMIN_EMAIL: 'not-an-email' })).toContain('ADMIN_EMAIL');
  });

  it('switches to RS256 with a matching PEM key pair', () => {
    const c = loadConfig({ SECRET, JWT_PRIVATE_KEY_FILE: privateFile, JWT_PUBLIC_KEY_FILE: publicFile });
    expect(c.auth.jwt).toEqual({ algorithm: 'RS256', privateKeyPem: privateKey, publicKeyPem: publicKey });
  });

  it('names the variable when a key file is missing, malformed, of the wrong kind, or not a pair', () => {
    expect(errorOf({ JWT_PRIVATE_KEY_FILE: privateFile })).toMatch(/JWT_PUBLIC_KEY_FILE: must be set together/);
    expect(errorOf({ JWT_PUBLIC_KEY_FILE: publicFile })).toMatch(/JWT_PRIVATE_KEY_FILE: must be set together/);
    expect(errorOf({ JWT_PRIVATE_KEY_FILE: join(dir, 'nope.pem'), JWT_PUBLIC_KEY_FILE: publicFile })).toMatch(/JWT_PRIVATE_KEY_FILE: cannot read/);
    expect(errorOf({ JWT_PRIVATE_KEY_FILE: privateFile, JWT_PUBLIC_KEY_FILE: join(dir, 'nope.pem') })).toMatch(/JWT_PUBLIC_KEY_FILE: cannot read/);
    const garbage = file('garbage.pem', '-----BEGIN PRIVATE KEY-----\nnot base64\n-----END PRIVATE KEY-----\n');
    expect(errorOf({ JWT_PRIVATE_KEY_FILE: garbage, JWT_PUBLIC_KEY_FILE: publicFile })).toMatch(/JWT_PRIVATE_KEY_FILE: .* is not a PEM private key/);
    expect(errorOf({ JWT_PRIVATE_KEY_FILE: privateFile, JWT_PUBLIC_KEY_FILE: privateFile })).toMatch(/JWT_PUBLIC_KEY_FILE: .* is not a PEM public key/);
    const other = file('other-public.pem', pair().publicKey);
    expect(errorOf({ JWT_PRIVATE_KEY_FILE: privateFile, JWT_PUBLIC_KEY_FILE: other })).toMatch(/JWT_PUBLIC_KEY_FILE: is not the public key of JWT_PRIVATE_KEY_FILE/);
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256', publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs8', format: 'pem' } });
    expect(errorOf({ JWT_PRIVATE_KEY_FILE: file('ec.pem', ec.privateKey), JWT_PUBLIC_KEY_FILE: file('ec.pub', ec.publicKey) })).toMatch(/JWT_PRIVATE_KEY_FILE: .*RS256 needs RSA/);
  });
});
