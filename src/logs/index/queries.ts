/**
 * Reads of the log index: one keyset page of entries matching a LogQuery, newest or oldest first
 * by (timestamp, id). Full text goes through each database's own index (SQLite FTS5, MariaDB
 * FULLTEXT, PostgreSQL tsvector); see migrations/0170_logs.ts and decision 0190.
 */
import { MysqlAdapter, PostgresAdapter, sql, type ExpressionBuilder, type Expression, type Kysely, type QueryCreator, type SqlBool } from 'kysely';
import type { LogEntriesTable, ReadModelTables } from '../../adapters/sql/schema.js';
import type { LogEntry, LogLevel, LogCategory } from '../entry.js';
import { fts5MatchOf, likeContains, MYSQL_MIN_TOKEN, mysqlRegexpOf, mysqlTermsOf, prefixEnd, prefixTsqueryOf, type LogCursor, type LogQuery, type SearchDialect, type TextWord } from './search.js';

type Db = Kysely<ReadModelTables>;
type Eb = ExpressionBuilder<ReadModelTables, 'log_entries'>;

export function searchDialectOf(db: Db): SearchDialect {
  const adapter = db.getExecutor().adapter;
  return adapter instanceof MysqlAdapter ? 'mysql' : adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite';
}

/** The columns an entry is read back from (not `seq`, nor PostgreSQL's `search`). */
const COLUMNS = ['id', 'timestamp', 'level', 'category', 'component', 'event', 'user_id', 'session_id', 'tenant_id', 'request_id', 'ip_address', 'message', 'details', 'instance', 'source'] as const;
export type LogRow = Pick<LogEntriesTable, (typeof COLUMNS)[number]>;

/** The conditions of `q` (all ANDed) but its words and cursor. */
function filtersOf(eb: Eb, q: LogQuery): Expression<SqlBool>[] {
  const where: Expression<SqlBool>[] = [];
  if (q.tenantId !== null) where.push(eb('tenant_id', '=', q.tenantId));
  if (q.minRank !== undefined && q.minRank > 0) where.push(eb('level_rank', '>=', q.minRank));
  if (q.levels && q.levels.length > 0) where.push(eb('level', 'in', [...q.levels]));
  if (q.components && q.components.length > 0) where.push(eb('component', 'in', [...q.components]));
  if (q.categories && q.categories.length > 0) where.push(eb('category', 'in', [...q.categories]));
  if (q.since !== undefined) where.push(eb('timestamp', '>=', q.since));
  if (q.until !== undefined) where.push(eb('timestamp', '<=', q.until));
  if (q.userId !== undefined) where.push(eb('user_id', '=', q.userId));
  if (q.requestId !== undefined) where.push(eb('request_id', '=', q.requestId));
  if (q.ip) {
    const ip = q.ip;
    if (ip.kind === 'exact') where.push(eb('ip_address', '=', ip.value));
    // A range on the index (binary or C collation on every dialect, see the migration).
    else if (ip.kind === 'prefix') where.push(eb.and([eb('ip_address', '>=', ip.prefix), eb('ip_address', '<', prefixEnd(ip.prefix))]));
    else where.push(sql<SqlBool>`${sql.ref('ip_address')} like ${ip.like}`);
  }
  return where;
}

/**
 * The words as a condition. `index`: through the full-text index (every match is found first:
 * cheap for a rare word, costly for a common one). `row`: checked on each row a time-ordered scan
 * meets (cheap while matches are near; SQLite looks the row up in its FTS5 index, MariaDB applies
 * a regular expression of the same words, PostgreSQL reads the stored tsvector).
 */
function wordsOf(words: readonly TextWord[], dialect: SearchDialect, plan: 'index' | 'row'): Expression<SqlBool>[] {
  if (dialect === 'sqlite') {
    const match = fts5MatchOf(words);
    return [
      plan === 'index'
        ? sql<SqlBool>`${sql.ref('log_entries.seq')} in (select rowid from log_entries_fts where log_entries_fts match ${match})`
        : // FTS5 seeks its doclists to the candidates' rowid range (seq follows arrival, so the newest
          // candidates are a narrow range): ~12 ms at 1,000,000 entries where checking each row
          // with its own MATCH cost ~1 s.
          sql<SqlBool>`${sql.ref('log_entries.seq')} in (select rowid from log_entries_fts where log_entries_fts match ${match} and rowid >= (select min(seq) from candidates) and rowid <= (select max(seq) from candidates))`,
    ];
  }
  if (dialect === 'postgres') {
    const queries = words.map((w) => (w.prefix ? sql`to_tsquery('simple', ${prefixTsqueryOf(w)})` : sql`phraseto_tsquery('simple', ${w.text})`));
    return [sql<SqlBool>`search @@ (${sql.join(queries, sql` && `)})`];
  }
  const where: Expression<SqlBool>[] = [];
  const { against, likeWords } = mysqlTermsOf(words);
  if (plan === 'index') {
    if (against !== null) where.push(sql<SqlBool>`match (message, details) against (${against} in boolean mode)`);
  } else {
    for (const w of words.filter((w) => w.parts.every((p) => p.length >= MYSQL_MIN_TOKEN))) {
      // LIKE first (a substring search, a fraction of a regular expression's cost), so that only
      // rows holding the parts meet the expression.
      for (const part of w.parts) {
        const like = likeContains(part);
        where.push(sql<SqlBool>`(message like ${like} escape '!' or details like ${like} escape '!')`);
      }
      const pattern = mysqlRegexpOf(w);
      where.push(sql<SqlBool>`(message regexp ${pattern} or details regexp ${pattern})`);
    }
  }
  for (const word of likeWords) {
    const pattern = likeContains(word);
    where.push(sql<SqlBool>`(message like ${pattern} escape '!' or details like ${pattern} escape '!')`);
  }
  return where;
}

/**
 * Entries strictly after `cursor` in the page order. SQLite and PostgreSQL compare the row value
 * `(timestamp, id)`, which they read as one range of the (timestamp, id) index (SQLite's planner
 * turned the AND/OR form into a scan that cost a full-text page ~1 s at 1,000,000 entries);
 * MariaDB gets the AND/OR form, whose first term bounds its index range.
 */
function afterCursor(eb: Eb, cursor: LogCursor, order: LogQuery['order'], dialect: SearchDialect): Expression<SqlBool> {
  const op = order === 'newest' ? '<' : '>';
  if (dialect !== 'mysql') return sql<SqlBool>`(${sql.ref('timestamp')}, ${sql.ref('id')}) ${sql.raw(op)} (${cursor.timestamp}, ${cursor.id})`;
  const edge = order === 'newest' ? '<=' : '>=';
  return eb.and([eb('timestamp', edge, cursor.timestamp), eb.or([eb('timestamp', op, cursor.timestamp), eb('id', op, cursor.id)])]);
}

/**
 * Rows time-ordered scans examine for a full-text query (one after the other) before the
 * full-text index takes over. Full-text indexes find every match of a word before the newest 100
 * can be chosen: fine for a rare word, seconds for one in half of 1,000,000 entries (MariaDB:
 * 6.6 s p50; decision 0190). The scans answer those at once, and narrow filters (one tenant, a
 * week, a level) whole; a word rare among the newest 40,000 candidates goes to the index.
 */
export const SCAN_CANDIDATES = [5000, 40_000] as const;

/** One page: up to `q.limit` rows, and the cursor of the next page (null: this was the last). `scans`: the candidates of each scan (tests: [] for the index alone). */
export async function findLogEntries(db: Db, query: LogQuery, scans: readonly number[] = SCAN_CANDIDATES): Promise<{ rows: LogRow[]; next: LogCursor | null }> {
  const dialect = searchDialectOf(db);
  // The cursor's time as the range's bound too: SQLite bounded its index range by `since` and
  // skipped to the cursor row by row (an export's page 1,000 cost 15 times its first).
  const q = query.after ? withCursorBound(query, query.after) : query;
  const direction = q.order === 'newest' ? 'desc' : 'asc';
  const cursor = (eb: Eb) => (q.after ? [afterCursor(eb, q.after, q.order, dialect)] : []);
  const select = (where: (eb: Eb) => Expression<SqlBool>[]) =>
    db
      .selectFrom('log_entries')
      .select(COLUMNS)
      .where((eb) => eb.and(where(eb)))
      .orderBy('timestamp', direction)
      .orderBy('id', direction)
      .limit(q.limit + 1)
      .execute();
  let rows: LogRow[] | null = null;
  if (q.words && q.words.length > 0) {
    const words = q.words;
    for (const cap of scans) {
      // The newest `cap` rows of the other conditions, each checked for the words. A full page
      // from them is exact (older candidates come after it), and so is any answer when they were
      // all the rows there are; otherwise more candidates, then the index.
      const candidates = (w: QueryCreator<ReadModelTables>) =>
        w
          .selectFrom('log_entries')
          .select('seq')
          .where((eb) => eb.and([...filtersOf(eb, q), ...cursor(eb)]))
          .orderBy('timestamp', direction)
          .orderBy('id', direction)
          .limit(cap);
      const scanned = await db
        .with('candidates', candidates)
        .selectFrom('log_entries')
        .select(COLUMNS)
        .where((eb) => eb.and([eb('log_entries.seq', 'in', eb.selectFrom('candidates').select('candidates.seq')), ...wordsOf(words, dialect, 'row')]))
        .orderBy('timestamp', direction)
        .orderBy('id', direction)
        .limit(q.limit + 1)
        .execute();
      if (scanned.length > q.limit) {
        rows = scanned;
        break;
      }
      const seen = await db
        .with('candidates', candidates)
        .selectFrom('candidates')
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .executeTakeFirstOrThrow();
      if (Number(seen.n) < cap) {
        rows = scanned;
        break;
      }
    }
    rows ??= await select((eb) => [...filtersOf(eb, q), ...wordsOf(words, dialect, 'index'), ...cursor(eb)]);
  } else {
    rows = await select((eb) => [...filtersOf(eb, q), ...cursor(eb)]);
  }
  const more = rows.length > q.limit;
  if (more) rows.pop();
  const last = rows.at(-1);
  return { rows, next: more && last ? { timestamp: last.timestamp, id: last.id } : null };
}

function withCursorBound(q: LogQuery, cursor: LogCursor): LogQuery {
  if (q.order === 'oldest') return { ...q, since: q.since !== undefined && q.since > cursor.timestamp ? q.since : cursor.timestamp };
  return { ...q, until: q.until !== undefined && q.until < cursor.timestamp ? q.until : cursor.timestamp };
}

/** Every matching row, in pages of `pageSize` (one page in memory at a time), for exports. */
export async function* eachLogEntry(db: Db, q: Omit<LogQuery, 'limit' | 'after'>, pageSize = 1000): AsyncGenerator<LogRow[]> {
  let after: LogCursor | undefined;
  for (;;) {
    const page = await findLogEntries(db, { ...q, limit: pageSize, ...(after && { after }) });
    if (page.rows.length > 0) yield page.rows;
    if (!page.next) return;
    after = page.next;
  }
}

/** A row as the API shows it: the entry, with its details parsed and absent fields null. */
export function entryOfRow(row: LogRow): LogEntry & { source: string } {
  let details: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(row.details);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) details = parsed as Record<string, unknown>;
  } catch {
    // Stored by this code as JSON; anything else shows as empty details rather than failing the page.
  }
  const optional = (value: string | null) => value ?? undefined;
  return {
    id: row.id,
    timestamp: row.timestamp,
    level: row.level as LogLevel,
    category: row.category as LogCategory,
    component: row.component,
    event: row.event,
    user_id: optional(row.user_id),
    session_id: optional(row.session_id),
    tenant_id: optional(row.tenant_id),
    request_id: optional(row.request_id),
    ip_address: optional(row.ip_address),
    message: row.message,
    details,
    instance: optional(row.instance),
    source: row.source,
  };
}
