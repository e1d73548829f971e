/**
 * The `usage` projection: every relay request (`usage_requests`, one row per request id) and
 * rollups per tenant / user / key / channel / model by UTC hour (`usage_hourly`) and UTC day
 * (`usage_daily`), from the relay's UsageRecorded events. Every figure is an exact integer:
 * requests, errors, prompt / completion / total tokens, and latency in microseconds (the event
 * carries milliseconds with two decimals).
 *
 * A usage event published twice (a crash during a spool replay can do that) counts once: an event
 * whose request id is already projected with the same fingerprint (src/billing/rating.ts, the
 * rule billing uses too) is ignored. A *different* request that reused a client-chosen
 * X-Request-Id has another fingerprint and counts, under the key `<request id>~<n>`: otherwise
 * reusing an id would make usage vanish (and usage and billing disagree).
 *
 * Every column is a function of the log alone (no clock reads), so a rebuild — or the audit's
 * replay into a scratch database — produces identical rows.
 */
import { sql } from 'kysely';
import { USAGE_RECORDED, UsageData } from '../commands/usage/events.js';
import type { UsageDailyTable, UsageRequestsTable } from '../adapters/sql/schema.js';
import type { AuditedTable } from '../audit/compare.js';
import { usageFingerprint } from '../billing/rating.js';
import type { StoredEvent } from '../ports/event-store.js';
import type { Projection, ReadModelDb } from './runtime/projection.js';

/** Column widths of migration 0040: values are clipped so that no event can wedge the projection. */
const clip = (value: string, max: number) => (value.length > max ? value.slice(0, max) : value);
const clipOrNull = (value: string | null, max: number) => (value === null ? null : clip(value, max));

/** UTC hour / day bucket starts of an ISO time, as ISO strings (they sort and compare as text). */
export function hourOf(iso: string): string {
  const d = new Date(iso);
  d.setUTCMinutes(0, 0, 0);
  return d.toISOString();
}
export function dayOf(iso: string): string {
  const d = new Date(iso);
  d.setUTCHours(0, 0, 0, 0);
  return d.toISOString();
}

/** Microseconds from the event's milliseconds (two decimals): exact, an integer. */
const micros = (ms: number) => Math.max(0, Math.round(ms * 1000));

/** The row of a request (from its event, as stored); `occurrence` > 0 for another request that reused the id. */
export function usageRow(usage: UsageData, stored: Pick<StoredEvent, 'id' | 'occurred_at' | 'position' | 'version'>, occurrence = 0): UsageRequestsTable {
  const recordedAt = stored.occurred_at;
  // A malformed start time would make every bucket invalid: fall back to the commit's time.
  const started = Number.isNaN(Date.parse(usage.started_at)) ? recordedAt : new Date(usage.started_at).toISOString();
  const requestId = clip(usage.request_id, 128);
  return {
    request_key: occurrence === 0 ? requestId : `${requestId}~${occurrence}`,
    request_id: requestId,
    fingerprint: usageFingerprint(usage),
    tenant_id: clip(usage.tenant_id, 64),
    user_id: clipOrNull(usage.user_id, 191),
    key_id: clipOrNull(usage.key_id, 64),
    channel_id: clipOrNull(usage.channel_id, 64),
    provider: clipOrNull(usage.provider, 64),
    model: clip(usage.model_routed ?? usage.model_requested, 191),
    model_requested: clip(usage.model_requested, 191),
    model_served: clipOrNull(usage.model_served, 191),
    status: usage.status,
    error_code: clipOrNull(usage.error_code, 100),
    is_error: usage.status >= 400 || usage.error_code !== null ? 1 : 0,
    prompt_tokens: usage.prompt_tokens,
    completion_tokens: usage.completion_tokens,
    total_tokens: usage.total_tokens,
    usage_source: usage.usage_source,
    stream: usage.stream ? 1 : 0,
    latency_us: micros(usage.latency_ms),
    ttft_us: usage.ttft_ms === null ? null : micros(usage.ttft_ms),
    attempts: usage.attempts,
    started_at: started,
    hour: hourOf(started),
    day: dayOf(started),
    event_id: clip(stored.id, 64),
    event_position: stored.position,
    event_version: stored.version,
    recorded_at: recordedAt,
  };
}

type RollupTable = 'usage_hourly' | 'usage_daily';
type Metrics = Pick<UsageDailyTable, 'requests' | 'errors' | 'prompt_tokens' | 'completion_tokens' | 'total_tokens' | 'latency_us'>;
interface RollupDelta {
  dims: Omit<UsageDailyTable, keyof Metrics>;
  hour: string;
  metrics: Metrics;
}

const CHUNK = 100;

function chunks<T>(items: readonly T[], size = CHUNK): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** Adds a request to the in-memory delta of its rollup row (keyed by the row's primary key). */
function addToDelta(deltas: Map<string, RollupDelta>, table: RollupTable, row: UsageRequestsTable): void {
  const dims = { tenant_id: row.tenant_id, day: row.day, user_id: row.user_id ?? '', key_id: row.key_id ?? '', channel_id: row.channel_id ?? '', model: row.model };
  const key = JSON.stringify([dims.tenant_id, table === 'usage_hourly' ? row.hour : row.day, dims.user_id, dims.key_id, dims.channel_id, dims.model]);
  const delta = deltas.get(key);
  if (!delta) {
    deltas.set(key, { dims, hour: row.hour, metrics: { requests: 1, errors: row.is_error, prompt_tokens: row.prompt_tokens, completion_tokens: row.completion_tokens, total_tokens: row.total_tokens, latency_us: row.latency_us } });
    return;
  }
  const m = delta.metrics;
  m.requests += 1;
  m.errors += row.is_error;
  m.prompt_tokens += row.prompt_tokens;
  m.completion_tokens += row.completion_tokens;
  m.total_tokens += row.total_tokens;
  m.latency_us += row.latency_us;
}

/** One update per touched rollup row; the rows that do not exist yet are inserted together. */
async function writeRollup(trx: ReadModelDb, table: RollupTable, deltas: Map<string, RollupDelta>): Promise<void> {
  const missing: RollupDelta[] = [];
  for (const delta of deltas.values()) {
    const { dims, metrics } = delta;
    let update = trx
      .updateTable(table)
      .set((eb) => ({
        requests: eb('requests', '+', metrics.requests),
        errors: eb('errors', '+', metrics.errors),
        prompt_tokens: eb('prompt_tokens', '+', metrics.prompt_tokens),
        completion_tokens: eb('completion_tokens', '+', metrics.completion_tokens),
        total_tokens: eb('total_tokens', '+', metrics.total_tokens),
        latency_us: eb('latency_us', '+', metrics.latency_us),
      }))
      .where('tenant_id', '=', dims.tenant_id)
      .where('day', '=', dims.day)
      .where('user_id', '=', dims.user_id)
      .where('key_id', '=', dims.key_id)
      .where('channel_id', '=', dims.channel_id)
      .where('model', '=', dims.model);
    if (table === 'usage_hourly') update = update.where(sql.ref('hour'), '=', delta.hour);
    const updated = await update.executeTakeFirst();
    if (Number(updated.numUpdatedRows) === 0) missing.push(delta);
  }
  for (const part of chunks(missing)) {
    if (table === 'usage_hourly') await trx.insertInto('usage_hourly').values(part.map((d) => ({ ...d.dims, hour: d.hour, ...d.metrics }))).execute();
    else await trx.insertInto('usage_daily').values(part.map((d) => ({ ...d.dims, ...d.metrics }))).execute();
  }
}

/**
 * Applies the usage events of one commit, in log order, with one read of the request ids already
 * projected, multi-row inserts of the request rows and one write per rollup row touched: the
 * same rows as applying the events one by one (the per-event `apply` goes through here too).
 */
async function applyUsageBatch(trx: ReadModelDb, events: readonly StoredEvent[]): Promise<void> {
  const items: Array<{ stored: StoredEvent; usage: UsageData }> = [];
  for (const stored of events) {
    const parsed = UsageData.safeParse(stored.data);
    if (!parsed.success) continue; // not a usage event this version can read: skipped, deterministically
    items.push({ stored, usage: parsed.data });
  }
  if (items.length === 0) return;

  // request id (clipped, as stored) -> fingerprints of the rows already projected under it.
  const seen = new Map<string, string[]>();
  const requestIds = [...new Set(items.map((i) => clip(i.usage.request_id, 128)))];
  for (const part of chunks(requestIds)) {
    for (const row of await trx.selectFrom('usage_requests').select(['request_id', 'fingerprint']).where('request_id', 'in', part).execute()) {
      const list = seen.get(row.request_id);
      if (list) list.push(row.fingerprint);
      else seen.set(row.request_id, [row.fingerprint]);
    }
  }

  const rows: UsageRequestsTable[] = [];
  const hourly = new Map<string, RollupDelta>();
  const daily = new Map<string, RollupDelta>();
  for (const { stored, usage } of items) {
    const requestId = clip(usage.request_id, 128);
    const prior = seen.get(requestId) ?? [];
    const fingerprint = usageFingerprint(usage);
    if (prior.includes(fingerprint)) continue; // the same event published twice: counted once
    const row = usageRow(usage, stored, prior.length);
    seen.set(requestId, [...prior, row.fingerprint]);
    rows.push(row);
    addToDelta(hourly, 'usage_hourly', row);
    addToDelta(daily, 'usage_daily', row);
  }

  for (const part of chunks(rows)) await trx.insertInto('usage_requests').values(part).execute();
  await writeRollup(trx, 'usage_hourly', hourly);
  await writeRollup(trx, 'usage_daily', daily);
}

export const usageProjection: Projection = {
  name: 'usage',
  // 2: rows keyed by their event's log position (migration 0050).
  version: 2,
  eventTypes: [USAGE_RECORDED],
  apply(trx, stored) {
    return applyUsageBatch(trx, [stored]);
  },
  applyCommit(trx, events) {
    return applyUsageBatch(trx, events);
  },
  async reset(trx) {
    await trx.deleteFrom('usage_requests').execute();
    await trx.deleteFrom('usage_hourly').execute();
    await trx.deleteFrom('usage_daily').execute();
  },
};

/** The usage tables as the audit compares them (src/audit/). */
export const usageAuditTables: readonly AuditedTable[] = [
  { table: 'usage_requests', key: ['request_key'], timeColumn: 'started_at' },
  { table: 'usage_hourly', key: ['hour', 'user_id', 'key_id', 'channel_id', 'model'], timeColumn: 'hour', bucket: 'hour' },
  { table: 'usage_daily', key: ['day', 'user_id', 'key_id', 'channel_id', 'model'], timeColumn: 'day', bucket: 'day' },
];

// ---------------------------------------------------------------------------------------------
// Queries

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
