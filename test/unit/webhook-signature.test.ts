/** Webhook signatures (src/webhooks/signature.ts): the header format and what a receiver checks. */
import { describe, expect, it } from 'vitest';
import { generateWebhookSecret, signatureHeader, signatureOf, verifySignature } from '../../src/webhooks/signature.js';

const body = '{"id":"evt_1"}';

describe('webhook signature', () => {
  it('is the hex HMAC-SHA256 of "<t>.<body>" (known answer, computed with openssl)', () => {
    expect(signatureOf('whsec_known_answer', 1_700_000_000, body)).toBe('b9a1350d1d8b33e38577292ab22745a18a63d34be6f8d184f8260a8ce35d8796');
    expect(signatureHeader('whsec_known_answer', 1_700_000_000, body)).toBe('t=1700000000,v1=b9a1350d1d8b33e38577292ab22745a18a63d34be6f8d184f8260a8ce35d8796');
  });

  it('verifies with the right secret, body and a recent time only', () => {
    const header = signatureHeader('s3cret-s3cret-s3cret', 1000, body);
    expect(verifySignature('s3cret-s3cret-s3cret', header, body, 1010)).toBe(true);
    expect(verifySignature('another-secret-here', header, body, 1010)).toBe(false);
    expect(verifySignature('s3cret-s3cret-s3cret', header, `${body} `, 1010)).toBe(false);
    expect(verifySignature('s3cret-s3cret-s3cret', header, body, 1000 + 301)).toBe(false);
    expect(verifySignature('s3cret-s3cret-s3cret', header.replace('t=1000', 't=1001'), body, 1010)).toBe(false);
    expect(verifySignature('s3cret-s3cret-s3cret', 'v1=abc', body, 1010)).toBe(false);
    expect(verifySignature('s3cret-s3cret-s3cret', '', body, 1010)).toBe(false);
  });

  it('accepts any of several v1 signatures (secret rotation on the receiver side)', () => {
    const good = signatureOf('new-secret-new-secret', 50, body);
    expect(verifySignature('new-secret-new-secret', `t=50,v1=${'0'.repeat(64)},v1=${good}`, body, 50)).toBe(true);
  });

  it('generates distinct secrets with the whsec_ prefix', () => {
    const a = generateWebhookSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(generateWebhookSecret()).not.toBe(a);
  });
});
