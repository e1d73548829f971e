import { describe, expect, it } from 'vitest';
import { isRedactedField, pinoRedactPaths, REDACTED, scrubString, scrubValue } from '../../src/logs/redact.js';
import { createLogger } from '../../src/logger.js';

const KEY = 'sk-live0123456789abcdefghijklmn';
const JWT = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1c2VyLTEiLCJ0aWQiOiJkZWZhdWx0In0.c2lnbmF0dXJlLXNpZ25hdHVyZQ';

describe('redaction: fields', () => {
  it.each([
    ['password', 'hunter2-password'],
    ['new_password', 'x'],
    ['api_key', KEY],
    ['apiKey', KEY],
    ['x-api-key', KEY],
    ['provider_key', 'AIzaSyA-provider-key-value-0123456789'],
    ['key', 'provider secret'],
    ['authorization', `Bearer ${KEY}`],
    ['Authorization', 'Basic dXNlcjpwYXNz'],
    ['access_token', JWT],
    ['refresh_token', 'rt.session.0123'],
    ['cookie', 'sy_session=abc'],
    ['set-cookie', ['sy_session=abc; HttpOnly']],
    ['totp_secret', 'JBSWY3DPEHPK3PXP'],
    ['mfa_secret_sealed', 'v1.box.0123abcd'],
    ['mfa_code', '123456'],
    ['recovery_codes', ['aaaa-bbbb', 'cccc-dddd']],
    ['secret', 'whsec_123'],
    ['webhook_secret', 'whsec_123'],
    ['content', 'my private message'],
    ['messages', [{ role: 'user', content: 'hello' }]],
    ['prompt', 'tell me a secret'],
    ['input', 'embed this'],
    ['text', 'user text'],
  ])('%s is redacted at the top, nested and inside arrays', (name, value) => {
    expect(isRedactedField(name)).toBe(true);
    const record = { [name]: value, nested: { deeper: { [name]: value } }, list: [{ [name]: value }, [{ [name]: value }]] };
    const out = scrubValue(record) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    expect(out[name]).toBe(REDACTED);
    expect(out.nested.deeper[name]).toBe(REDACTED);
    expect(out.list[0][name]).toBe(REDACTED);
    expect(out.list[1][0][name]).toBe(REDACTED);
    const serialised = JSON.stringify(out);
    for (const piece of [value].flat(2)) if (typeof piece === 'string') expect(serialised).not.toContain(piece);
  });

  it('leaves other fields alone (and the same object when nothing changed)', () => {
    const record = { key_id: 'key-1', user_id: 'u-1', status: 401, model: 'gpt-4o', prompt_tokens: 12, tokens: 3, list: [1, 'two'] };
    expect(scrubValue(record)).toBe(record);
    for (const name of ['key_id', 'user_id', 'prompt_tokens', 'email', 'ip_address', 'event', 'category']) expect(isRedactedField(name)).toBe(false);
  });

  it('keeps a field named __proto__ a plain field', () => {
    const record = JSON.parse('{"__proto__": {"password": "p"}, "a": 1}') as Record<string, unknown>;
    const out = scrubValue(record) as Record<string, unknown>;
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(JSON.stringify(out)).toBe('{"__proto__":{"password":"[redacted]"},"a":1}');
  });
});

describe('redaction: secrets inside strings', () => {
  it.each([
    [`Incorrect API key provided: ${KEY}.`, KEY],
    ['anthropic sk-ant-api03-abcdefghijklmnop refused', 'sk-ant-api03-abcdefghijklmnop'],
    [`header was Bearer ${JWT}`, JWT],
    [`token ${JWT} expired`, JWT],
    ['url https://x.test/?api_key=abc123secret&q=1', 'abc123secret'],
    ['config password: hunter2', 'hunter2'],
    ['google key AIzaSyA0123456789abcdefghijklmnopq', 'AIzaSyA0123456789abcdefghijklmnopq'],
    ['aws AKIAIOSFODNN7EXAMPLE used', 'AKIAIOSFODNN7EXAMPLE'],
  ])('%s', (text, secret) => {
    const out = scrubString(text);
    expect(out).not.toContain(secret);
    expect(out).toContain(REDACTED);
    expect((scrubValue({ err: { message: text, stack: `Error: ${text}\n    at x` } }) as { err: { message: string; stack: string } }).err.stack).not.toContain(secret);
  });

  it('leaves ordinary prose alone', () => {
    for (const text of ['Basic information about the tenant', 'prompt_tokens=12 completion_tokens=3', 'the task list is done', 'upstream answered 401']) expect(scrubString(text)).toBe(text);
  });
});

describe('the process logger uses the one list', () => {
  it('pino redact paths come from the same names', () => {
    const paths = pinoRedactPaths();
    expect(paths).toContain('req.headers["authorization"]');
    for (const name of ['password', 'authorization', 'cookie', 'content', 'messages', 'access_token', 'api_key']) {
      expect(paths).toContain(name);
      expect(isRedactedField(name)).toBe(true);
    }
  });

  it('stdout lines carry no secret: fields at any depth, in arrays, inside messages and errors', () => {
    const lines: string[] = [];
    const logger = createLogger('debug', { write: (line: string) => void lines.push(line) });
    logger.info({ a: { b: { c: { d: { password: 'deep-password-1' } } } }, list: [{ messages: [{ content: 'private words' }] }] }, `key was ${KEY}`);
    logger.child({ authorization: `Bearer ${KEY}` }).warn({ err: new Error(`upstream said: Incorrect API key provided: ${KEY}`) }, 'failed');
    const out = lines.join('');
    expect(lines).toHaveLength(2);
    for (const secret of ['deep-password-1', 'private words', KEY]) expect(out).not.toContain(secret);
    expect(JSON.parse(lines[0]!).msg).toBe(`key was sk-${REDACTED}`);
  });
});
