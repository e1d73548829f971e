/**
 * The pure half of log search: what a request asks for (LogQuery), its opaque cursor, the
 * full-text terms of a query string in each database's own syntax, and an IP wildcard as a prefix
 * range. No I/O here; src/logs/index/queries.ts turns a LogQuery into SQL.
 */
import { BadRequestError } from '../../errors.js';
import { LOG_LEVELS, levelRank, type LogLevel } from '../entry.js';

export type SearchDialect = 'sqlite' | 'mysql' | 'postgres';

/** Where a page starts: the last row of the previous page. */
export interface LogCursor {
  timestamp: string;
  id: string;
}

export interface LogQuery {
  /** The caller's tenant (admins: its entries only) or null (operators: every entry, system ones included). */
  tenantId: string | null;
  /** "This level and above" (level_rank >= minRank). */
  minRank?: number;
  /** Exactly these levels. */
  levels?: readonly LogLevel[];
  components?: readonly string[];
  categories?: readonly string[];
  /** Inclusive bounds, ISO-8601 UTC with milliseconds (as stored). */
  since?: string;
  until?: string;
  userId?: string;
  requestId?: string;
  /** Already a pattern (ipPatternOf). */
  ip?: IpPattern;
  /** Full-text words, every one required (textTermsOf). */
  words?: readonly TextWord[];
  order: 'newest' | 'oldest';
  after?: LogCursor;
  limit: number;
}

/** The cursor a client gets back: base64url of `[timestamp, id]`. Opaque to clients. */
export function encodeCursor(cursor: LogCursor): string {
  return Buffer.from(JSON.stringify([cursor.timestamp, cursor.id]), 'utf8').toString('base64url');
}

/** A cursor this API wrote, or a 400 `invalid_cursor`. */
export function decodeCursor(value: string): LogCursor {
  const bad = () => new BadRequestError('cursor is not one this API returned', 'invalid_cursor', 'cursor');
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(value, 'base64url').toString('utf8'));
  } catch {
    throw bad();
  }
  if (!Array.isArray(parsed) || parsed.length !== 2 || typeof parsed[0] !== 'string' || typeof parsed[1] !== 'string' || !ISO_UTC.test(parsed[0])) throw bad();
  return { timestamp: parsed[0], id: parsed[1] };
}

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/**
 * A date_range bound as stored timestamps compare: ISO-8601 date-times in any offset become UTC
 * with milliseconds; a date alone is the start of that day (start) or its last millisecond (end),
 * so `{start: "2026-11-01", end: "2026-11-30"}` covers the whole of November's first 30 days.
 */
export function boundOf(value: string, side: 'start' | 'end', param: string): string {
  const dateOnly = DATE_ONLY.test(value);
  const parsed = dateOnly ? new Date(`${value}T00:00:00.000Z`) : /T/.test(value) ? new Date(value) : new Date(Number.NaN);
  if (Number.isNaN(parsed.getTime())) throw new BadRequestError(`${param} must be an ISO-8601 date or date-time`, 'invalid_date_range', param);
  if (dateOnly && side === 'end') return new Date(parsed.getTime() + 86_400_000 - 1).toISOString();
  return parsed.toISOString();
}

/** Both bounds of a date_range, checked (start after end: 400 `invalid_date_range`). */
export function rangeOf(range: { start?: string | undefined; end?: string | undefined } | undefined, param = 'date_range'): { since?: string; until?: string } {
  if (!range) return {};
  const since = range.start === undefined ? undefined : boundOf(range.start, 'start', `${param}.start`);
  const until = range.end === undefined ? undefined : boundOf(range.end, 'end', `${param}.end`);
  if (since !== undefined && until !== undefined && since > until) throw new BadRequestError(`${param}.start is after ${param}.end`, 'invalid_date_range', param);
  return { ...(since !== undefined && { since }), ...(until !== undefined && { until }) };
}

/** A level name (any case) or a 400 `invalid_level`. */
export function levelOf(value: string, param: string): LogLevel {
  const upper = value.toUpperCase() === 'WARN' ? 'WARNING' : value.toUpperCase();
  const level = LOG_LEVELS.find((l) => l === upper);
  if (!level) throw new BadRequestError(`${param} must be one of ${LOG_LEVELS.join(', ')}`, 'invalid_level', param);
  return level;
}

export const rankOf = (level: LogLevel): number => levelRank(level);

/**
 * An `ip_address` filter: an address, or one with `*` wildcards (`10.0.*`, `2001:db8:*`). A
 * pattern whose only `*` is at its end is a prefix (an index range); any other `*` makes a LIKE.
 */
export type IpPattern = { kind: 'exact'; value: string } | { kind: 'prefix'; prefix: string } | { kind: 'like'; like: string };

export function ipPatternOf(value: string): IpPattern {
  const trimmed = value.trim().toLowerCase();
  if (!/^[0-9a-f.:*]+$/.test(trimmed) || trimmed.length > 64) throw new BadRequestError('ip_address takes an IPv4 or IPv6 address, with * as a wildcard (10.0.*, 2001:db8:*)', 'invalid_ip_pattern', 'filters.ip_address');
  const star = trimmed.indexOf('*');
  if (star === -1) return { kind: 'exact', value: trimmed };
  const head = trimmed.replace(/\*+$/, '');
  if (!head.includes('*')) return { kind: 'prefix', prefix: head };
  // The pattern alphabet has no % or _, so nothing needs escaping.
  return { kind: 'like', like: trimmed.replace(/\*+/g, '%') };
}

/** The first string that sorts after every string starting with `prefix` (binary collation). */
export function prefixEnd(prefix: string): string {
  return prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
}

/**
 * One word of a full-text query: its parts as the indexes tokenize it (letters and digits; `gpt-4o`
 * is `gpt` then `4o`), matched as a phrase; `prefix`: the word ended with `*`.
 */
export interface TextWord {
  parts: string[];
  prefix: boolean;
  /** The word as written (lower case, without the `*`): PostgreSQL parses it with its own parser. */
  text: string;
}

/** The words of `query` and of `keywords`, every one required. Punctuation only separates. */
export function textTermsOf(query: string | undefined, keywords: readonly string[] = []): TextWord[] {
  const words: TextWord[] = [];
  for (const source of [query ?? '', ...keywords]) {
    for (const raw of source.split(/\s+/)) {
      const parts = raw.toLowerCase().match(/[\p{L}\p{N}]+/gu);
      if (!parts) continue;
      const prefix = raw.endsWith('*');
      words.push({ parts, prefix, text: raw.replace(/\*+$/, '').toLowerCase() });
    }
  }
  if (words.length > 32) throw new BadRequestError('the query has too many words (at most 32)', 'query_too_long', 'query');
  return words;
}

/** MariaDB's innodb_ft_min_token_size (default 3): shorter parts are not in its FULLTEXT index. */
export const MYSQL_MIN_TOKEN = 3;

/** FTS5 MATCH text: each word a quoted phrase (`"gpt" "4o"` adjacent), `*` for a prefix; words ANDed. */
export function fts5MatchOf(words: readonly TextWord[]): string {
  return words.map((w) => `"${w.parts.join(' ')}"${w.prefix ? ' *' : ''}`).join(' AND ');
}

/**
 * PostgreSQL tsquery text of a prefix word ('simple' config): its parts followed by `<->`, `:*` on
 * the last. Other words go to phraseto_tsquery as written, so that PostgreSQL's parser splits them
 * as it split the indexed text (`db-1` is `db` and `-1` to it, not `db` and `1`).
 */
export function prefixTsqueryOf(word: TextWord): string {
  return word.parts.map((p, i) => `'${p}'${i === word.parts.length - 1 ? ':*' : ''}`).join(' <-> ');
}

/**
 * The MariaDB side of a query: a boolean-mode AGAINST text for the words its index holds (every
 * part at least MYSQL_MIN_TOKEN long: `+"gpt 4o"` would silently match nothing for the short
 * `4o`), and the words it cannot answer, left to a LIKE over message and details.
 */
export function mysqlTermsOf(words: readonly TextWord[]): { against: string | null; likeWords: string[] } {
  const against: string[] = [];
  const likeWords: string[] = [];
  for (const w of words) {
    if (w.parts.every((p) => p.length >= MYSQL_MIN_TOKEN)) {
      against.push(w.parts.length === 1 ? `+${w.parts[0]}${w.prefix ? '*' : ''}` : `+"${w.parts.join(' ')}"`);
    } else {
      for (const p of w.parts) likeWords.push(p);
    }
  }
  return { against: against.length > 0 ? against.join(' ') : null, likeWords };
}

/**
 * A word as a MariaDB regular expression (PCRE; case-insensitive through the columns' collation):
 * its parts as whole words separated by anything else, the last one open for a prefix. What the
 * FULLTEXT index would match, for rows checked one by one.
 */
export function mysqlRegexpOf(word: TextWord): string {
  return `\\b${word.parts.join('\\W+')}${word.prefix ? '' : '\\b'}`;
}

/** `%word%` for LIKE with `!` as the escape character. */
export function likeContains(word: string): string {
  return `%${word.replace(/[!%_]/g, (c) => `!${c}`)}%`;
}
