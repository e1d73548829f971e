/**
 * The legacy schemas as the Markdown tables of docs/upgrading.md (test/unit/upgrade-schema.test.ts
 * checks that the page holds exactly this, so the page and the code cannot drift apart).
 */
import { LEGACY_TABLES, sqlType, type LegacyColumn, type LegacyTable } from './schema.js';

function typeCells(column: LegacyColumn): [string, string] {
  if (column.type === 'id') return ['INTEGER PRIMARY KEY AUTOINCREMENT / SERIAL PRIMARY KEY', 'INTEGER PRIMARY KEY AUTO_INCREMENT'];
  const lite = sqlType(column.type, 'sqlite').toUpperCase();
  const pg = sqlType(column.type, 'postgres').toUpperCase();
  return [lite === pg ? lite : `${lite} / ${pg}`, sqlType(column.type, 'mysql').toUpperCase()];
}

function defaultCell(column: LegacyColumn): string {
  if (column.default === undefined) return '';
  if (column.default === 'now') return 'CURRENT_TIMESTAMP';
  return typeof column.default === 'string' ? `'${column.default}'` : String(column.default);
}

const versions = (item: { since: string; until?: string }) => (item.until ? `${item.since} – ${item.until} (dropped)` : `${item.since} –`);

export function tableMarkdown(table: LegacyTable): string {
  const lines = [
    `### \`${table.name}\`${table.since !== '1.6.0' ? ` (from ${table.since})` : ''}`,
    '',
    '| Column | SQLite / PostgreSQL | MySQL / MariaDB | Null | Default | Versions | Notes |',
    '|---|---|---|---|---|---|---|',
    ...table.columns.map((c) => `| \`${c.name}\` | ${typeCells(c).join(' | ')} | ${c.type !== 'id' && c.nullable ? 'yes' : 'no'} | ${defaultCell(c)} | ${versions(c)} | ${c.note ?? ''} |`),
  ];
  const keys = [...(table.primaryKey ? [`primary key (${table.primaryKey.join(', ')})`] : []), ...table.indexes.map((i) => `${i.unique ? 'unique ' : ''}index \`${i.name}\` (${i.columns.join(', ')}), ${versions(i)}`)];
  if (keys.length > 0) lines.push('', `Keys: ${keys.join('; ')}.`);
  return lines.join('\n');
}

/** Every table, 1.6.0 to 2.0.0. */
export function schemaMarkdown(): string {
  return LEGACY_TABLES.map(tableMarkdown).join('\n\n');
}
