/**
 * Log exports: the entries matching a query, oldest first, as JSON (one array), CSV (RFC 4180,
 * safe to open in a spreadsheet) or text lines (`[<timestamp>] <LEVEL>: <message>`). Produced one
 * keyset page at a time by an async generator, so a consumer that reads slowly (a client on a slow
 * link, through the HTTP response's backpressure) holds the next page back: memory stays at one
 * page whatever the size of the export.
 */
import type { Kysely } from 'kysely';
import type { ReadModelTables } from '../../adapters/sql/schema.js';
import { textLineOf } from '../entry.js';
import { eachLogEntry, entryOfRow, type LogRow } from './queries.js';
import type { LogQuery } from './search.js';

export const EXPORT_FORMATS = ['json', 'csv', 'text'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export const EXPORT_MEDIA_TYPES: Readonly<Record<ExportFormat, string>> = {
  json: 'application/json; charset=utf-8',
  csv: 'text/csv; charset=utf-8',
  text: 'text/plain; charset=utf-8',
};
const EXTENSIONS: Readonly<Record<ExportFormat, string>> = { json: 'json', csv: 'csv', text: 'log' };

/** `switchyard-logs-<start>_<end>.<ext>`, from the range's ISO bounds (characters safe in any file system). */
export function exportFilename(since: string, until: string, format: ExportFormat): string {
  const stamp = (iso: string) => iso.replace(/\.\d{3}Z$/, 'Z').replace(/:/g, '');
  return `switchyard-logs-${stamp(since)}_${stamp(until)}.${EXTENSIONS[format]}`;
}

export const CSV_COLUMNS = ['timestamp', 'level', 'category', 'component', 'event', 'tenant_id', 'user_id', 'session_id', 'request_id', 'ip_address', 'message', 'details', 'instance', 'source', 'id'] as const;

/**
 * One CSV field. A value a spreadsheet would run as a formula (starting with = + - @, a tab or a
 * carriage return) gets a leading apostrophe (OWASP's advice); then RFC 4180 quoting: quoted when it
 * holds a comma, a quote, CR or LF, quotes doubled.
 */
export function csvField(value: string | null): string {
  if (value === null || value === '') return '';
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

export function csvRecord(row: LogRow): string {
  return CSV_COLUMNS.map((c) => csvField(row[c])).join(',') + '\r\n';
}

/** The text form of a row: one line per entry (line breaks in a message are written as `\n`). */
export function textRecord(row: LogRow): string {
  return textLineOf({ timestamp: row.timestamp, level: row.level as never, message: row.message.replace(/\r?\n|\r/g, '\\n') }) + '\n';
}

/** The export's text, a page at a time: JSON is one array (`[`, entries separated by commas, `]`). */
export async function* exportChunks(db: Kysely<ReadModelTables>, query: Omit<LogQuery, 'limit' | 'after' | 'order'>, format: ExportFormat, pageSize = 1000): AsyncGenerator<string> {
  if (format === 'csv') yield CSV_COLUMNS.join(',') + '\r\n';
  if (format === 'json') yield '[';
  let first = true;
  for await (const rows of eachLogEntry(db, { ...query, order: 'oldest' }, pageSize)) {
    let chunk = '';
    for (const row of rows) {
      if (format === 'csv') chunk += csvRecord(row);
      else if (format === 'text') chunk += textRecord(row);
      else {
        chunk += (first ? '\n' : ',\n') + JSON.stringify(entryOfRow(row));
        first = false;
      }
    }
    yield chunk;
  }
  if (format === 'json') yield first ? ']\n' : '\n]\n';
}
