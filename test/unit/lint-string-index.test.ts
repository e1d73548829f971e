/**
 * The lint rule switchyard/no-string-index-lookup (eslint-rules/) flags lookups of string-indexed
 * objects by arbitrary strings (issue 14: `channel.modelMapping[model]` answered for
 * `constructor`), and lets through what is safe: literal keys, Maps, arrays, ownValue().
 */
import { readFileSync } from 'node:fs';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
import switchyard from '../../eslint-rules/no-string-index-lookup.js';

const FIXTURE = 'test/fixtures/string-index-lookups.ts';

describe('switchyard/no-string-index-lookup', () => {
  it('flags record[key] and key in record with an arbitrary string key, and nothing else', async () => {
    const eslint = new ESLint({ cwd: process.cwd(), overrideConfig: { files: [FIXTURE], plugins: { switchyard }, rules: { 'switchyard/no-string-index-lookup': 'error' } } });
    const [result] = await eslint.lintFiles([FIXTURE]);
    expect(result!.messages.filter((m) => m.fatal)).toEqual([]);
    const flagged = result!.messages.filter((m) => m.ruleId === 'switchyard/no-string-index-lookup').map((m) => m.line);
    const expected = readFileSync(FIXTURE, 'utf8')
      .split('\n')
      .flatMap((line, i) => (line.includes('// FLAGGED') ? [i + 1] : []));
    expect(expected).toHaveLength(3);
    expect(flagged).toEqual(expected);
  }, 60_000);
});
