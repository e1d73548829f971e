import { describe, expect, it } from 'vitest';
import { jsonDepthExceeds, parseJsonBody } from '../../src/api/json-body.js';

describe('jsonDepthExceeds', () => {
  it('counts nesting of objects and arrays, not their number', () => {
    expect(jsonDepthExceeds('[[[1]]]', 3)).toBe(false);
    expect(jsonDepthExceeds('[[[[1]]]]', 3)).toBe(true);
    expect(jsonDepthExceeds(`[${'[1],'.repeat(1000)}[1]]`, 2)).toBe(false);
    expect(jsonDepthExceeds('{"a":{"b":[{}]}}', 3)).toBe(true);
  });

  it('skips strings, including escaped quotes and backslashes', () => {
    expect(jsonDepthExceeds(`["${'[{'.repeat(500)}"]`, 1)).toBe(false);
    expect(jsonDepthExceeds(`["\\"${'['.repeat(50)}"]`, 1)).toBe(false);
    // An escaped backslash ends before the quote: the string closes there.
    expect(jsonDepthExceeds(`["x\\\\", [[[[]]]], "${' '.repeat(10)}"]`, 3)).toBe(true);
  });

  it('leaves malformed input to JSON.parse', () => {
    expect(jsonDepthExceeds('["unterminated ' + '['.repeat(100), 3)).toBe(false);
    expect(() => parseJsonBody('["unterminated ' + '['.repeat(100), 3)).toThrow(/not valid JSON/);
  });

  it('parseJsonBody: json_too_deep before parsing, prototype poisoning refused', () => {
    expect(() => parseJsonBody('['.repeat(10_000) + ']'.repeat(10_000), 128)).toThrow(expect.objectContaining({ status: 400, code: 'json_too_deep', param: null }));
    expect(() => parseJsonBody('{"__proto__":{"x":1}}', 128)).toThrow(expect.objectContaining({ code: 'invalid_json' }));
    expect(parseJsonBody('{"a":[1,{"b":"]]]"}]}', 3)).toEqual({ a: [1, { b: ']]]' }] });
  });
});
