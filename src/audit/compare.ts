/**
 * Table-by-table comparison of two read-model databases (the live one and a scratch replay), for
 * any projection: give each table's name and row key, and how rows belong to a tenant and to a
 * period. Values are compared canonically (numbers as their decimal text, null as null), so a
 * MySQL/PostgreSQL live database compares cleanly with a SQLite scratch one.
 *
 * Streaming: both sides are read in pages ordered by the table's unique paging key (keyset
 * pagination: each page starts after the last key of the one before, so no page re-reads or skips
 * rows, and no OFFSET re-scan) and merged in that order. Memory holds one page per side, whatever
 * the size of the tables. Both sides must order keys the same way: text in byte (code point)
 * order (SQLite's BINARY, MariaDB's utf8mb4_bin database, PostgreSQL's "C" collation, asked for
 * explicitly when the database's default is another), numbers as numbers; `compareKeys` is that
 * order in JS.
 *
 * To audit another projection's tables, list them (`AuditedTable[]`) in src/audit/tables.ts.
 */
import { sql, type Expression, type Kysely, type RawBuilder, type SqlBool } from 'kysely';
import type { SqlDialectName } from '../adapters/sql/database.js';

export interface AuditedTable {
  table: string;
  /** Columns that identify a row within the tenant (the tenant column is added when there is one); shown in reports. */
  key: readonly string[];
  /**
   * Unique columns the table is paged and matched by: its primary key, in order (default: `key`).
   * Each row's `key` columns are still what a report shows.
   */
  pageKey?: readonly string[];
  /** Column holding the tenant (default `tenant_id`); null: the table is not per tenant (every row is compared). */
  tenantColumn?: string | null;
  /** ISO time column that places a row in the audited period; absent: every row of the tenant (balances). */
  timeColumn?: string;
  /** The time column holds bucket starts of this size: a bucket is in the period when it overlaps it. */
  bucket?: 'hour' | 'day';
  /** Columns left out of the comparison (e.g. a wall-clock `updated_at` no replay can reproduce). */
  ignore?: readonly string[];
}

export interface AuditScope {
  tenantId: string;
  from: Date;
  to: Date;
}

/* eslint-disable switchyard/no-string-index-lookup -- column names come from the audited table specs (src/audit/tables.ts) and the rows the database returns, never from callers */
type Row = Record<string, unknown>;
export type AnyDb = Kysely<Record<string, Row>>;

/** One side of a comparison: a database and its dialect (which decides how text keys are ordered). */
export interface CompareSide {
  db: AnyDb;
  dialect: SqlDialectName;
}

export interface RowDifference {
  key: Record<string, string | null>;
  /** column -> the live and the replayed value */
  columns: Record<string, { live: string | null; replayed: string | null }>;
}

export interface TableReport {
  table: string;
  live_rows: number;
  replayed_rows: number;
  /** Rows the log produces that the live table lacks. */
  missing: Array<{ key: Record<string, string | null>; replayed: Record<string, string | null> }>;
  /** Live rows the log does not produce. */
  extra: Array<{ key: Record<string, string | null>; live: Record<string, string | null> }>;
  /** Rows on both sides whose values differ. */
  different: RowDifference[];
  /** Total count of missing + extra + different (the lists stop at `maxListed` entries each). */
  differences: number;
}

export interface CompareOptions {
  /** Rows per page and side. */
  pageSize: number;
  /** Entries kept in each list of a report (the count stays exact). */
  maxListed?: number;
  /** Called after each page with the rows compared so far in this table. */
  onProgress?: (table: string, rowsCompared: number) => void;
  /** Filled in as pages are read: what the comparison held at most (one page per side). */
  counters?: CompareCounters;
}

export interface CompareCounters {
  pages: number;
  /** The largest page held, in rows. */
  maxPageRows: number;
}

/** Values as text: 5, 5n and "5" are the same number whatever the driver returned. */
export function canonical(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  if (value instanceof Date) return value.toISOString();
  if (Buffer.isBuffer(value)) return value.toString('hex');
  return String(value);
}

function canonicalRow(row: Row, ignore: ReadonlySet<string>): Record<string, string | null> {
  const out: Record<string, string | null> = {};
  for (const [column, value] of Object.entries(row)) if (!ignore.has(column)) out[column] = canonical(value);
  return out;
}

/** Whether two rows hold the same values (as canonical text), the ignored columns aside. */
function sameRow(a: Row, b: Row, ignore: ReadonlySet<string>): boolean {
  let columns = 0;
  for (const column in b) {
    if (ignore.has(column)) continue;
    columns++;
    const x = a[column];
    const y = b[column];
    if (x !== y && canonical(x) !== canonical(y)) return false;
  }
  for (const column in a) if (!ignore.has(column)) columns--;
  return columns === 0;
}

/**
 * Text in code point order (= UTF-8 byte order, as the databases sort it): JS's `<` compares
 * UTF-16 units, which puts astral characters (surrogates, 0xD800-0xDFFF) before 0xE000-0xFFFF.
 */
export function compareText(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    if (x >= 0xd800) x = x >= 0xe000 ? x - 0x800 : x + 0x2000;
    if (y >= 0xd800) y = y >= 0xe000 ? y - 0x800 : y + 0x2000;
    return x - y;
  }
  return a.length - b.length;
}

/** One key value against another, in the databases' order: numbers as numbers, the rest as text, null first. */
function compareValue(a: unknown, b: unknown): number {
  if (a === null || a === undefined) return b === null || b === undefined ? 0 : -1;
  if (b === null || b === undefined) return 1;
  if (typeof a === 'number' || typeof a === 'bigint' || typeof b === 'number' || typeof b === 'bigint') {
    const x = Number(a);
    const y = Number(b);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  return compareText(canonical(a)!, canonical(b)!);
}

/** Two rows' paging keys, in the databases' order. */
export function compareKeys(columns: readonly string[], a: Row, b: Row): number {
  for (const column of columns) {
    const order = compareValue(a[column], b[column]);
    if (order !== 0) return order;
  }
  return 0;
}

const floorTo = (d: Date, bucket: 'hour' | 'day') => {
  const f = new Date(d.getTime());
  if (bucket === 'hour') f.setUTCMinutes(0, 0, 0);
  else f.setUTCHours(0, 0, 0, 0);
  return f;
};

const pageKeyOf = (spec: AuditedTable) => spec.pageKey ?? spec.key;

/**
 * The text columns of `table` that need an explicit "C" collation to sort in byte order: on
 * PostgreSQL when the database's own collation is another (then the sort cannot use the index).
 */
async function byteOrderedColumns(side: CompareSide, table: string, columns: readonly string[]): Promise<Set<string>> {
  if (side.dialect !== 'postgres') return new Set();
  const { rows } = await sql<{ collation: string }>`select datcollate as collation from pg_database where datname = current_database()`.execute(side.db);
  const collation = rows[0]?.collation ?? '';
  if (/^(C|POSIX)([._].*)?$/i.test(collation)) return new Set();
  const text = await sql<{ column_name: string }>`select column_name from information_schema.columns where table_name = ${table} and data_type in ('text', 'character varying', 'character')`.execute(side.db);
  const names = new Set(text.rows.map((r) => r.column_name));
  return new Set(columns.filter((c) => names.has(c)));
}

/** Reads the scope's rows of one table, a page at a time, in paging-key order. */
export class TablePages {
  private page: Row[] = [];
  private index = 0;
  private last: Row | null = null;
  private exhausted = false;
  private collated: Set<string> | null = null;
  rows = 0;

  constructor(
    private readonly side: CompareSide,
    private readonly spec: AuditedTable,
    private readonly scope: AuditScope,
    private readonly options: Pick<CompareOptions, 'pageSize' | 'counters'>,
  ) {}

  /** The next row (not consumed), or null at the end. */
  async peek(): Promise<Row | null> {
    if (this.index < this.page.length) return this.page[this.index]!;
    if (this.exhausted) return null;
    this.page = await this.readPage();
    this.index = 0;
    if (this.page.length < this.options.pageSize) this.exhausted = true;
    if (this.page.length > 0) this.last = this.page[this.page.length - 1]!;
    if (this.options.counters) {
      this.options.counters.pages++;
      this.options.counters.maxPageRows = Math.max(this.options.counters.maxPageRows, this.page.length);
    }
    return this.page[0] ?? null;
  }

  take(): void {
    this.index++;
    this.rows++;
  }

  private column(name: string): RawBuilder<unknown> {
    return this.collated!.has(name) ? sql`${sql.ref(name)} collate "C"` : sql`${sql.ref(name)}`;
  }

  private async readPage(): Promise<Row[]> {
    const { spec, scope } = this;
    const keys = pageKeyOf(spec);
    this.collated ??= await byteOrderedColumns(this.side, spec.table, keys);
    let query = this.side.db.selectFrom(spec.table).selectAll();
    // SQLite: the scope's columns as expressions (`+column`), which no index serves, so that the
    // page is read along the primary key from the last key on (pages cost what they return, in
    // total one pass over the table) rather than the scope's index sorted anew for every page
    // (one full sort per page). MariaDB and PostgreSQL weigh the LIMIT and find that plan themselves.
    const scoped = (column: string) => (this.side.dialect === 'sqlite' ? sql`+${sql.ref(column)}` : sql.ref(column));
    const tenantColumn = spec.tenantColumn === undefined ? 'tenant_id' : spec.tenantColumn;
    if (tenantColumn !== null) query = query.where(scoped(tenantColumn), '=', scope.tenantId);
    if (spec.timeColumn) {
      const from = spec.bucket ? floorTo(scope.from, spec.bucket) : scope.from;
      query = query.where(scoped(spec.timeColumn), '>=', from.toISOString()).where(scoped(spec.timeColumn), '<', scope.to.toISOString());
    }
    if (this.last) query = query.where(this.after(keys, this.last));
    for (const key of keys) query = query.orderBy(this.column(key));
    return (await query.limit(this.options.pageSize).execute()) as Row[];
  }

  /** Keyset predicate: the rows whose key comes after `last`'s (k1 > v1 OR k1 = v1 AND k2 > v2 ...). */
  private after(keys: readonly string[], last: Row): Expression<SqlBool> {
    const disjuncts = keys.map((key, i) => {
      const equal = keys.slice(0, i).map((prior) => sql`${this.column(prior)} = ${last[prior]}`);
      return sql`(${sql.join([...equal, sql`${this.column(key)} > ${last[key]}`], sql` and `)})`;
    });
    // The leading `k1 >= v1` lets every database use the index's range for it.
    return sql<SqlBool>`${this.column(keys[0]!)} >= ${last[keys[0]!]} and (${sql.join(disjuncts, sql` or `)})`;
  }
}

/** Compares one table's scoped rows on both sides, merging their pages in key order. */
export async function compareTable(live: CompareSide, replayed: CompareSide, spec: AuditedTable, scope: AuditScope, options: CompareOptions): Promise<TableReport> {
  const maxListed = options.maxListed ?? 100;
  const ignore = new Set(spec.ignore ?? []);
  const keys = pageKeyOf(spec);
  const keyOf = (row: Record<string, string | null>) => Object.fromEntries(spec.key.map((k) => [k, row[k] ?? null]));
  const report: TableReport = { table: spec.table, live_rows: 0, replayed_rows: 0, missing: [], extra: [], different: [], differences: 0 };
  const liveRows = new TablePages(live, spec, scope, options);
  const replayedRows = new TablePages(replayed, spec, scope, options);
  let reported = 0;
  for (;;) {
    const a = await liveRows.peek();
    const b = await replayedRows.peek();
    if (!a && !b) break;
    const order = !a ? 1 : !b ? -1 : compareKeys(keys, a, b);
    if (order < 0) {
      liveRows.take();
      report.differences++;
      const row = canonicalRow(a!, ignore);
      if (report.extra.length < maxListed) report.extra.push({ key: keyOf(row), live: row });
    } else if (order > 0) {
      replayedRows.take();
      report.differences++;
      const row = canonicalRow(b!, ignore);
      if (report.missing.length < maxListed) report.missing.push({ key: keyOf(row), replayed: row });
    } else {
      liveRows.take();
      replayedRows.take();
      // Most rows agree: compare in place, and build the rows as text only for a difference.
      if (!sameRow(a!, b!, ignore)) {
        const other = canonicalRow(a!, ignore);
        const row = canonicalRow(b!, ignore);
        const columns: RowDifference['columns'] = {};
        for (const column of new Set([...Object.keys(row), ...Object.keys(other)])) {
          const x = other[column] ?? null;
          const y = row[column] ?? null;
          if (x !== y) columns[column] = { live: x, replayed: y };
        }
        report.differences++;
        if (report.different.length < maxListed) report.different.push({ key: keyOf(row), columns });
      }
    }
    const compared = Math.max(liveRows.rows, replayedRows.rows);
    if (options.onProgress && compared - reported >= options.pageSize) {
      reported = compared;
      options.onProgress(spec.table, compared);
    }
  }
  report.live_rows = liveRows.rows;
  report.replayed_rows = replayedRows.rows;
  options.onProgress?.(spec.table, Math.max(liveRows.rows, replayedRows.rows));
  return report;
}
