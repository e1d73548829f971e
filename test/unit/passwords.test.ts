/** scrypt password hashes: format, salts, parameters read back from the hash, constant-time verify. */
import { describe, expect, it } from 'vitest';
import { hashPassword, needsRehash, verifyPassword } from '../../src/auth/passwords.js';

describe('password hashing (scrypt)', () => {
  it('hashes into a PHC string carrying the parameters and a per-password salt', async () => {
    const a = await hashPassword('correct horse battery staple');
    const b = await hashPassword('correct horse battery staple');
    expect(a).toMatch(/^\$scrypt\$ln=15,r=8,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
    expect(a).not.toBe(b); // different salts
    expect(a).not.toContain('correct horse');
  });

  it('verifies the right password and refuses others', async () => {
    const stored = await hashPassword('s3cret-passw0rd');
    expect(await verifyPassword('s3cret-passw0rd', stored)).toBe(true);
    expect(await verifyPassword('s3cret-passw0rd ', stored)).toBe(false);
    expect(await verifyPassword('S3cret-passw0rd', stored)).toBe(false);
    expect(await verifyPassword('', stored)).toBe(false);
  });

  it('uses the parameters stored in the hash, so they can be raised later', async () => {
    const weak = await hashPassword('older-password', { ln: 10, r: 8, p: 1 });
    expect(weak.startsWith('$scrypt$ln=10,r=8,p=1$')).toBe(true);
    expect(await verifyPassword('older-password', weak)).toBe(true);
    expect(needsRehash(weak)).toBe(true);
    expect(needsRehash(await hashPassword('x'.repeat(8)))).toBe(false);
  });

  it('never matches a malformed or hostile stored hash', async () => {
    for (const stored of ['', 'plaintext', '$scrypt$ln=15,r=8,p=1$$', '$scrypt$ln=40,r=8,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA', '$argon2id$v=19$m=1,t=1,p=1$abc$def']) {
      expect(await verifyPassword('anything', stored)).toBe(false);
    }
  });

  it('refuses absurdly long inputs without hashing them', async () => {
    const stored = await hashPassword('short-enough');
    expect(await verifyPassword('x'.repeat(5000), stored)).toBe(false);
  });
});
