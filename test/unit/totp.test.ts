/** TOTP (RFC 6238) against the RFC's own test vectors, HOTP (RFC 4226) and base32 (RFC 4648). */
import { describe, expect, it } from 'vitest';
import { base32Decode, base32Encode, hotp, otpauthUrl, totp, totpStep, verifyTotp } from '../../src/auth/totp.js';

// RFC 6238 appendix B: the seeds are the ASCII string "1234567890" repeated to the hash's size.
const SEED_SHA1 = Buffer.from('12345678901234567890');
const SEED_SHA256 = Buffer.from('12345678901234567890123456789012');
const SEED_SHA512 = Buffer.from('1234567890123456789012345678901234567890123456789012345678901234');

const RFC6238: Array<[number, string, string, string]> = [
  // time (s), SHA1, SHA256, SHA512 (8 digits)
  [59, '94287082', '46119246', '90693936'],
  [1111111109, '07081804', '68084774', '25091201'],
  [1111111111, '14050471', '67062674', '99943326'],
  [1234567890, '89005924', '91819424', '93441116'],
  [2000000000, '69279037', '90698825', '38618901'],
  [20000000000, '65353130', '77737706', '47863826'],
];

describe('TOTP (RFC 6238)', () => {
  it.each(RFC6238)('matches the test vectors at T=%i', (seconds, sha1, sha256, sha512) => {
    const at = seconds * 1000;
    expect(totp(SEED_SHA1, at, { digits: 8, algorithm: 'sha1' })).toBe(sha1);
    expect(totp(SEED_SHA256, at, { digits: 8, algorithm: 'sha256' })).toBe(sha256);
    expect(totp(SEED_SHA512, at, { digits: 8, algorithm: 'sha512' })).toBe(sha512);
  });

  it('uses 30-second steps (the RFC table: T=1111111109 and 1111111111 are steps 0x23523EC and 0x23523ED)', () => {
    expect(totpStep(1111111109_000)).toBe(0x23523ec);
    expect(totpStep(1111111111_000)).toBe(0x23523ed);
  });

  it('accepts the current step and one either side, and reports which one matched', () => {
    const now = 1_700_000_015_000;
    const step = totpStep(now);
    const at = (offset: number) => totp(SEED_SHA1, now + offset * 30_000);
    expect(verifyTotp(SEED_SHA1, at(0), now)).toBe(step);
    expect(verifyTotp(SEED_SHA1, at(-1), now)).toBe(step - 1);
    expect(verifyTotp(SEED_SHA1, at(1), now)).toBe(step + 1);
    expect(verifyTotp(SEED_SHA1, at(-2), now)).toBeNull();
    expect(verifyTotp(SEED_SHA1, at(2), now)).toBeNull();
  });

  it('takes exactly six digits (spaces aside)', () => {
    const now = 1_700_000_015_000;
    const code = totp(SEED_SHA1, now);
    expect(verifyTotp(SEED_SHA1, `${code.slice(0, 3)} ${code.slice(3)}`, now)).not.toBeNull();
    for (const bad of ['', '12345', '1234567', 'abcdef', `${code}0`]) expect(verifyTotp(SEED_SHA1, bad, now)).toBeNull();
  });
});

describe('HOTP (RFC 4226 appendix D)', () => {
  it('matches the test vectors', () => {
    const expected = ['755224', '287082', '359152', '969429', '338314', '254676', '287922', '162583', '399871', '520489'];
    expected.forEach((code, counter) => expect(hotp(SEED_SHA1, counter)).toBe(code));
  });
});

describe('base32 (RFC 4648)', () => {
  it('matches the test vectors (without padding) and round-trips', () => {
    const vectors: Array<[string, string]> = [
      ['', ''],
      ['f', 'MY'],
      ['fo', 'MZXQ'],
      ['foo', 'MZXW6'],
      ['foob', 'MZXW6YQ'],
      ['fooba', 'MZXW6YTB'],
      ['foobar', 'MZXW6YTBOI'],
    ];
    for (const [plain, encoded] of vectors) {
      expect(base32Encode(Buffer.from(plain))).toBe(encoded);
      expect(base32Decode(encoded).toString()).toBe(plain);
    }
    expect(base32Decode('mzxw 6ytb-oi======').toString()).toBe('foobar');
    expect(() => base32Decode('MZXW1')).toThrow();
    expect(base32Encode(SEED_SHA1)).toBe('GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ');
  });
});

describe('otpauth URL', () => {
  it('is what authenticator apps read', () => {
    expect(otpauthUrl('Switchyard', 'ada@example.com', 'JBSWY3DPEHPK3PXP')).toBe(
      'otpauth://totp/Switchyard:ada%40example.com?secret=JBSWY3DPEHPK3PXP&issuer=Switchyard&algorithm=SHA1&digits=6&period=30',
    );
    expect(otpauthUrl('My Co', 'a b', 'X')).toContain('otpauth://totp/My%20Co:a%20b?secret=X&issuer=My%20Co');
  });
});
