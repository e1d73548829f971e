/**
 * The pure parts of `switchyard upgrade`: the chain from each version, version order, each
 * version's schema from the one definition, and docs/upgrading.md holding exactly that definition.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseFileIds, parseMapping, splitModels } from '../../src/upgrade/import.js';
import { schemaMarkdown } from '../../src/upgrade/legacy/schema-doc.js';
import { compareVersions, isoTime, schemaAt, sqlType } from '../../src/upgrade/legacy/schema.js';
import { contentHashPath, contentTypeOf } from '../../src/upgrade/steps.js';
import { upgradePath } from '../../src/upgrade/upgrade.js';

const columns = (version: Parameters<typeof schemaAt>[0], table: string) => schemaAt(version).find((t) => t.name === table)?.columns.map((c) => c.name);

describe('upgrade: versions and schemas', () => {
  it('runs the chain in order from each 1.x version, and from nothing else', () => {
    expect(upgradePath('1.6.0')).toEqual(['1.7.0', '1.8.0', '1.9.0', '2.0.0']);
    expect(upgradePath('1.7.0')).toEqual(['1.8.0', '1.9.0', '2.0.0']);
    expect(upgradePath('1.8.0')).toEqual(['1.9.0', '2.0.0']);
    expect(upgradePath('1.9.0')).toEqual(['2.0.0']);
    for (const other of ['1.5.0', '1.9.1', '2.0.0', '3.0.0', '1.6', '']) expect(upgradePath(other), other).toBeNull();
  });

  it('orders versions numerically (the highest schema_migrations row is the version)', () => {
    expect(['1.10.0', '1.9.0', '1.6.0', '2.0.0'].sort(compareVersions)).toEqual(['1.6.0', '1.9.0', '1.10.0', '2.0.0']);
  });

  it("gives each version its columns: plaintext keys until 1.7, is_admin until 2.0, roles from 2.0", () => {
    expect(columns('1.6.0', 'api_keys')).toContain('key');
    expect(columns('1.6.0', 'api_keys')).not.toContain('key_hash');
    expect(columns('1.7.0', 'api_keys')).toEqual(expect.arrayContaining(['key_hash', 'key_prefix']));
    expect(columns('1.7.0', 'api_keys')).not.toContain('key');
    expect(columns('1.7.0', 'api_keys')).not.toContain('expires_at');
    expect(columns('1.8.0', 'api_keys')).toContain('expires_at');
    expect(columns('1.8.0', 'messages')).not.toContain('file_ids');
    expect(columns('1.9.0', 'messages')).toContain('file_ids');
    expect(columns('1.9.0', 'users')).toEqual(expect.arrayContaining(['is_admin', 'disabled']));
    expect(columns('2.0.0', 'users')).not.toContain('is_admin');
    expect(columns('1.9.0', 'user_roles')).toBeUndefined();
    expect(columns('2.0.0', 'user_roles')).toEqual(['user_id', 'role_id']);
    expect(schemaAt('1.6.0').find((t) => t.name === 'api_keys')!.indexes.map((i) => i.name)).toEqual(['api_keys_key']);
    expect(schemaAt('1.7.0').find((t) => t.name === 'api_keys')!.indexes.map((i) => i.name)).toEqual(['api_keys_key_hash']);
  });

  it('maps types per database (MySQL: DATETIME and DOUBLE; PostgreSQL: SERIAL ids)', () => {
    expect([sqlType('timestamp', 'sqlite'), sqlType('timestamp', 'mysql'), sqlType('timestamp', 'postgres')]).toEqual(['timestamp', 'datetime', 'timestamp']);
    expect([sqlType('id', 'mysql'), sqlType('id', 'postgres')]).toEqual(['integer', 'serial']);
    expect(sqlType({ char: 64 }, 'mysql')).toBe('char(64)');
  });

  it('docs/upgrading.md holds the schema tables exactly as the code defines them', () => {
    const doc = readFileSync(join(process.cwd(), 'docs', 'upgrading.md'), 'utf8');
    expect(doc).toContain(schemaMarkdown());
  });
});

describe('upgrade: row conversions', () => {
  it('reads 1.x column formats leniently', () => {
    expect(splitModels(' gpt-4o-mini, gpt-4o ,,')).toEqual(['gpt-4o-mini', 'gpt-4o']);
    expect(parseMapping('{"gpt-4":"gpt-4o","n":1}')).toEqual({ 'gpt-4': 'gpt-4o' });
    expect(parseMapping('not json')).toEqual({});
    expect(parseMapping(null)).toEqual({});
    expect(parseFileIds('[3, 5]')).toEqual([3, 5]);
    expect(parseFileIds('')).toEqual([]);
    expect(parseFileIds('{"a":1}')).toEqual([]);
  });

  it('reads 1.x times as UTC, whether the driver gives text (SQLite) or a local-time Date (mysql2, pg)', () => {
    expect(isoTime('2099-01-01 00:00:00')).toBe('2099-01-01T00:00:00.000Z');
    expect(isoTime(new Date(2099, 0, 1, 0, 0, 0))).toBe('2099-01-01T00:00:00.000Z');
    expect(isoTime(null)).toBeUndefined();
    expect(isoTime('not a time')).toBeUndefined();
  });

  it('names uploads by content hash, and guesses 1.7 content types from extensions', () => {
    const sha = 'ab'.padEnd(64, '0');
    expect(contentHashPath(sha)).toBe(`ab/${sha}`);
    expect(contentTypeOf('Plan.MD')).toBe('text/markdown');
    expect(contentTypeOf('notes.txt')).toBe('text/plain');
    expect(contentTypeOf('archive.xyz')).toBeNull();
  });
});
