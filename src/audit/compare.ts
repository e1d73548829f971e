/**
 * Table-by-table comparison of two read-model databases (the live one and a scratch replay), for
 * any projection: give each table's name and row key, and how rows belong to a tenant and to a
 * period. Values are compared canonically (numbers as their decimal text, null as null), so a
 * MySQL/PostgreSQL live database compares cleanly with a SQLite scratch one.
 *
 * To audit another projection's tables, list them (`AuditedTable[]`) in src/audit/tables.ts.
 */
import { sql, type Kysely } from 'kysely';

export interface AuditedTable {
  table: string;
  /** Columns that identify a row within the tenant (the tenant column is added when there is one). */
  key: readonly string[];
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

const floorTo = (d: Date, bucket: 'hour' | 'day') => {
  const f = new Date(d.getTime());
  if (bucket === 'hour') f.setUTCMinutes(0, 0, 0);
  else f.setUTCHours(0, 0, 0, 0);
  return f;
};

/** The rows of one table that belong to the scope. */
export async function scopedRows(db: AnyDb, spec: AuditedTable, scope: AuditScope): Promise<Row[]> {
  let query = db.selectFrom(spec.table).selectAll();
  const tenantColumn = spec.tenantColumn === undefined ? 'tenant_id' : spec.tenantColumn;
  if (tenantColumn !== null) query = query.where(sql.ref(tenantColumn), '=', scope.tenantId);
  if (spec.timeColumn) {
    const from = spec.bucket ? floorTo(scope.from, spec.bucket) : scope.from;
    query = query.where(sql.ref(spec.timeColumn), '>=', from.toISOString()).where(sql.ref(spec.timeColumn), '<', scope.to.toISOString());
  }
  return (await query.execute()) as Row[];
}

/** Compares two sets of rows of one table by its key. */
export function compareRows(spec: AuditedTable, live: readonly Row[], replayed: readonly Row[], maxListed = 100): TableReport {
  const ignore = new Set(spec.ignore ?? []);
  const keyOf = (row: Record<string, string | null>) => Object.fromEntries(spec.key.map((k) => [k, row[k] ?? null]));
  const index = (rows: readonly Row[]) => {
    const map = new Map<string, Record<string, string | null>>();
    for (const raw of rows) {
      const row = canonicalRow(raw, ignore);
      map.set(JSON.stringify(spec.key.map((k) => row[k] ?? null)), row);
    }
    return map;
  };
  const liveRows = index(live);
  const replayedRows = index(replayed);
  const report: TableReport = { table: spec.table, live_rows: live.length, replayed_rows: replayed.length, missing: [], extra: [], different: [], differences: 0 };
  for (const [key, row] of replayedRows) {
    const other = liveRows.get(key);
    if (!other) {
      report.differences++;
      if (report.missing.length < maxListed) report.missing.push({ key: keyOf(row), replayed: row });
      continue;
    }
    const columns: RowDifference['columns'] = {};
    for (const column of new Set([...Object.keys(row), ...Object.keys(other)])) {
      const a = other[column] ?? null;
      const b = row[column] ?? null;
      if (a !== b) columns[column] = { live: a, replayed: b };
    }
    if (Object.keys(columns).length > 0) {
      report.differences++;
      if (report.different.length < maxListed) report.different.push({ key: keyOf(row), columns });
    }
  }
  for (const [key, row] of liveRows) {
    if (replayedRows.has(key)) continue;
    report.differences++;
    if (report.extra.length < maxListed) report.extra.push({ key: keyOf(row), live: row });
  }
  return report;
}

/** Reads the scope's rows of every listed table from both databases and compares them. */
export async function compareTables(live: AnyDb, replayed: AnyDb, tables: readonly AuditedTable[], scope: AuditScope): Promise<TableReport[]> {
  const reports: TableReport[] = [];
  for (const spec of tables) reports.push(compareRows(spec, await scopedRows(live, spec, scope), await scopedRows(replayed, spec, scope)));
  return reports;
}
