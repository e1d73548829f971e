/** Sealing texts with a data key: pure, no I/O. */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { isSealedText, openText, sealText } from '../../src/crypto/data-seal.js';

const key = randomBytes(32);

describe('data seal', () => {
  it('opens what it sealed, unicode and empty text included', () => {
    for (const text of ['hello', '', 'héllo 👋 世界\n\t"quoted"', 'x'.repeat(100_000)]) expect(openText(key, sealText(key, text))).toBe(text);
  });

  it('carries no clear text and seals the same text differently each time', () => {
    const a = sealText(key, 'my secret plan');
    const b = sealText(key, 'my secret plan');
    expect(a).not.toBe(b);
    expect(a).not.toContain('secret');
    expect(a).toMatch(/^dk1\.[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(isSealedText(a)).toBe(true);
  });

  it('tells envelopes from other strings', () => {
    expect(isSealedText('hello')).toBe(false);
    expect(isSealedText('v1.aaaaaaaaaaaaaaaa.aaaaaaaaaaaaaaaaaaaaaa.aa')).toBe(false);
    expect(isSealedText('dk1.short.tag.x')).toBe(false);
    expect(isSealedText(42)).toBe(false);
  });

  it('does not open with another key, another context, or after any change', () => {
    const sealed = sealText(key, 'text', 'conversation:c1:title');
    expect(openText(key, sealed, 'conversation:c1:title')).toBe('text');
    expect(() => openText(randomBytes(32), sealed, 'conversation:c1:title')).toThrow();
    expect(() => openText(key, sealed, 'conversation:c2:title')).toThrow();
    expect(() => openText(key, sealed)).toThrow();
    const [v, iv, tag, ct] = sealed.split('.') as [string, string, string, string];
    const flipped = Buffer.from(ct, 'base64url');
    flipped[0] = flipped[0]! ^ 1;
    expect(() => openText(key, [v, iv, tag, flipped.toString('base64url')].join('.'), 'conversation:c1:title')).toThrow();
    expect(() => openText(key, 'not sealed')).toThrow(/not a sealed text/);
  });

  it('refuses keys that are not 256 bits', () => {
    expect(() => sealText(randomBytes(16), 'x')).toThrow(RangeError);
    expect(() => openText(randomBytes(31), sealText(key, 'x'))).toThrow(RangeError);
  });
});
