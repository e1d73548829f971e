/**
 * Reads of the usage read model (src/projections/usage.ts): sums grouped by dimension, from the
 * cheapest table that answers exactly, and per-request rows.
 */
import { sql } from 'kysely';
import type { UsageRequestsTable } from '../adapters/sql/schema.js';
import { dayOf, hourOf } from '../projections/usage.js';
import type { ReadModelDb } from '../projections/runtime/projection.js';

export const USAGE_DIMENSIONS = ['user', 'key', 'channel', 'model', 'hour', 'day'] as const;
export type UsageDimension = (typeof USAGE_DIMENSIONS)[number];
const DIMENSION_COLUMN = { user: 'user_id', key: 'key_id', channel: 'channel_id', model: 'model', hour: 'hour', day: 'day' } as const;

export interface UsageFilter {
  tenantId: string;
  /** Inclusive / exclusive bounds on the request's start time. */
  from: Date;
  to: Date;
  userId?: string;
  keyId?: string;
  channelId?: string;
  model?: string;
}

export interface UsageTotals {
  requests: number;
  errors: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  latency_us_sum: number;
  avg_latency_ms: number | null;
}
/** A group: its dimensions (null = none, e.g. a request without an API key) and its sums. */
export type UsageGroup = Partial<Record<'user_id' | 'key_id' | 'channel_id' | 'model', string | null>> & Partial<Record<'hour' | 'day', string>> & UsageTotals;

/** Which table answers a query exactly: a rollup when the bounds fall on its buckets. */
export type UsageSource = 'usage_daily' | 'usage_hourly' | 'usage_requests';

const aligned = (d: Date, unit: 'hour' | 'day') => (unit === 'hour' ? hourOf(d.toISOString()) : dayOf(d.toISOString())) === d.toISOString();

export function usageSource(filter: Pick<UsageFilter, 'from' | 'to'>, groupBy: readonly UsageDimension[]): UsageSource {
  if (!groupBy.includes('hour') && aligned(filter.from, 'day') && aligned(filter.to, 'day')) return 'usage_daily';
  if (aligned(filter.from, 'hour') && aligned(filter.to, 'hour')) return 'usage_hourly';
  return 'usage_requests';
}

const num = (v: unknown) => (v === null || v === undefined ? 0 : Number(v));

function totals(row: Record<string, unknown>): UsageTotals {
  const requests = num(row.requests);
  const latency = num(row.latency_us_sum);
  return {
    requests,
    errors: num(row.errors),
    prompt_tokens: num(row.prompt_tokens),
    completion_tokens: num(row.completion_tokens),
    total_tokens: num(row.total_tokens),
    latency_us_sum: latency,
    avg_latency_ms: requests > 0 ? Math.round(latency / requests) / 1000 : null,
  };
}

/**
 * Sums usage grouped by the dimensions asked for (none: one row of totals), read from the
 * cheapest table that answers exactly. Groups come ordered by their dimensions.
 */
export async function queryUsage(db: ReadModelDb, filter: UsageFilter, groupBy: readonly UsageDimension[], limit: number): Promise<{ source: UsageSource; groups: UsageGroup[]; hasMore: boolean }> {
  const source = usageSource(filter, groupBy);
  // One untyped view of the three tables: they share the dimension columns and are summed alike.
  const table = source as 'usage_hourly';
  const fromRequests = source === 'usage_requests';
  const timeColumn = source === 'usage_daily' ? 'day' : source === 'usage_hourly' ? 'hour' : 'started_at';

  let query = db
    .selectFrom(table)
    .where('tenant_id', '=', filter.tenantId)
    .where(sql.ref(timeColumn), '>=', filter.from.toISOString())
    .where(sql.ref(timeColumn), '<', filter.to.toISOString());
  if (filter.userId !== undefined) query = query.where('user_id', '=', filter.userId);
  if (filter.keyId !== undefined) query = query.where('key_id', '=', filter.keyId);
  if (filter.channelId !== undefined) query = query.where('channel_id', '=', filter.channelId);
  if (filter.model !== undefined) query = query.where('model', '=', filter.model);
  const columns = groupBy.map((d) => DIMENSION_COLUMN[d]);
  const sums = fromRequests
    ? [
        sql<number>`count(*)`.as('requests'),
        sql<number>`sum(is_error)`.as('errors'),
        sql<number>`sum(prompt_tokens)`.as('prompt_tokens'),
        sql<number>`sum(completion_tokens)`.as('completion_tokens'),
        sql<number>`sum(total_tokens)`.as('total_tokens'),
        sql<number>`sum(latency_us)`.as('latency_us_sum'),
      ]
    : [
        sql<number>`sum(requests)`.as('requests'),
        sql<number>`sum(errors)`.as('errors'),
        sql<number>`sum(prompt_tokens)`.as('prompt_tokens'),
        sql<number>`sum(completion_tokens)`.as('completion_tokens'),
        sql<number>`sum(total_tokens)`.as('total_tokens'),
        sql<number>`sum(latency_us)`.as('latency_us_sum'),
      ];
  // The request rows keep "none" as NULL, the rollups as '': grouped alike (and NULL sorts
  // alike on every database) as ''.
  const dimension = (c: string) => (fromRequests ? sql<string>`coalesce(${sql.ref(c)}, '')` : sql<string>`${sql.ref(c)}`);
  let grouped = query.select([...columns.map((c) => dimension(c).as(c)), ...sums]);
  if (columns.length > 0) {
    grouped = grouped.groupBy(columns.map(dimension));
    for (const c of columns) grouped = grouped.orderBy(dimension(c));
    grouped = grouped.limit(limit + 1);
  }
  const rows = (await grouped.execute()) as Array<Record<string, unknown>>;
  // Without grouping the answer is one row (of zeros for an empty range).
  const hasMore = rows.length > limit;
  const groups = rows.slice(0, limit).map((row) => {
    const group: UsageGroup = totals(row);
    for (const c of columns) {
      const value = row[c];
      (group as unknown as Record<string, unknown>)[c] = value === null || value === undefined || value === '' ? null : String(value);
    }
    return group;
  });
  return { source, groups, hasMore };
}

export interface UsageRequestFilter extends UsageFilter {
  /** Only failed (true) or only successful (false) requests. */
  errors?: boolean;
  /** Rows strictly before this (started_at, request_key) position (pagination, newest first). */
  before?: { startedAt: string; requestKey: string };
}

/** Per-request rows, newest first. */
export async function listUsageRequests(db: ReadModelDb, filter: UsageRequestFilter, limit: number): Promise<{ rows: UsageRequestsTable[]; hasMore: boolean }> {
  let query = db
    .selectFrom('usage_requests')
    .selectAll()
    .where('tenant_id', '=', filter.tenantId)
    .where('started_at', '>=', filter.from.toISOString())
    .where('started_at', '<', filter.to.toISOString());
  if (filter.userId !== undefined) query = query.where('user_id', '=', filter.userId);
  if (filter.keyId !== undefined) query = query.where('key_id', '=', filter.keyId);
  if (filter.channelId !== undefined) query = query.where('channel_id', '=', filter.channelId);
  if (filter.model !== undefined) query = query.where('model', '=', filter.model);
  if (filter.errors !== undefined) query = query.where('is_error', '=', filter.errors ? 1 : 0);
  const before = filter.before;
  if (before) {
    query = query.where((eb) => eb.or([eb('started_at', '<', before.startedAt), eb.and([eb('started_at', '=', before.startedAt), eb('request_key', '<', before.requestKey)])]));
  }
  const rows = await query.orderBy('started_at', 'desc').orderBy('request_key', 'desc').limit(limit + 1).execute();
  return { rows: rows.slice(0, limit), hasMore: rows.length > limit };
}
