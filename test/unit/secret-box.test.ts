import { describe, expect, it } from 'vitest';
import { SecretBox, maskSecret } from '../../src/crypto/secret-box.js';

describe('SecretBox', () => {
  const box = new SecretBox('one-secret-of-enough-length');

  it('round-trips and never shows the plaintext', () => {
    const sealed = box.seal('sk-live-1234567890abcdef');
    expect(sealed).toMatch(/^v1\.[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(sealed).not.toContain('1234567890');
    expect(box.open(sealed)).toBe('sk-live-1234567890abcdef');
  });

  it('uses a fresh IV each time', () => {
    expect(box.seal('same')).not.toBe(box.seal('same'));
  });

  it('refuses another SECRET and tampering', () => {
    const sealed = box.seal('sk-abc');
    expect(() => new SecretBox('another-secret-of-enough-length').open(sealed)).toThrow();
    const parts = sealed.split('.');
    const flipped = Buffer.from(parts[3]!, 'base64url');
    flipped[0] = flipped[0]! ^ 1;
    expect(() => box.open([parts[0], parts[1], parts[2], flipped.toString('base64url')].join('.'))).toThrow();
    expect(() => box.open('plain')).toThrow('not a sealed secret');
  });

  it('masks keys for display', () => {
    expect(maskSecret('sk-proj-abcdefghijklmnop')).toBe('sk-****mnop');
    expect(maskSecret('AIzaSyA-1234567890')).toBe('AI****7890');
    expect(maskSecret('short')).toBe('****');
  });
});
