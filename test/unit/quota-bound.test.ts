/** The API key quota's reservation bound (src/relay/access/key-gate.ts): nothing in it can only come from the client. */
import { describe, expect, it } from 'vitest';
import { reservationTokens } from '../../src/relay/access/key-gate.js';
import type { ChatCompletionRequest } from '../../src/relay/schema.js';

const body = (extra: Partial<ChatCompletionRequest> = {}, content = 'hi'): ChatCompletionRequest => ({ model: 'm', messages: [{ role: 'user', content }], ...extra });

describe('reservationTokens', () => {
  it('counts the prompt as the UTF-8 bytes of the whole body (at least one byte per token)', () => {
    const ascii = body({}, 'hello');
    expect(reservationTokens(ascii, 1).prompt).toBe(Buffer.byteLength(JSON.stringify(ascii)));
    // Three bytes per character: a tokenizer may spend a token per character here; chars / 4 would not cover it.
    const cjk = body({}, '漢字漢字漢字漢字');
    expect(reservationTokens(cjk, 1).prompt).toBeGreaterThanOrEqual(8 * 3);
    expect(reservationTokens(body({ tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } }] }), 1).prompt).toBeGreaterThan(reservationTokens(body(), 1).prompt);
  });

  it('never counts fewer completion tokens than the floor, whatever max_tokens says; a larger max_tokens raises it; n multiplies', () => {
    expect(reservationTokens(body({ max_tokens: 1 }), 4096).completion).toBe(4096);
    expect(reservationTokens(body(), 4096).completion).toBe(4096);
    expect(reservationTokens(body({ max_tokens: 10_000 }), 4096).completion).toBe(10_000);
    expect(reservationTokens(body({ max_completion_tokens: 8000, max_tokens: 1 }), 4096).completion).toBe(8000);
    expect(reservationTokens(body({ max_tokens: 1, n: 3 }), 100).completion).toBe(300);
  });
});
