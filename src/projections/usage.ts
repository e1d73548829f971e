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
import { insertRows, preparedStatement } from '../adapters/sql/compiled.js';
import { USAGE_RECORDED, type UsageData } from '../commands/usage/events.js';
import type { UsageDailyTable, UsageHourlyTable, UsageRequestsTable } from '../adapters/sql/schema.js';
import type { AuditedTable } from '../audit/compare.js';
import { usageFingerprint } from '../billing/rating.js';
import type { StoredEvent } from '../ports/event-store.js';
import type { Projection, ReadModelDb } from './runtime/projection.js';
import { idLookup } from './request-ids.js';
import { requireUsageEvent } from './usage-events.js';

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

/** `YYYY-MM-DDTHH:mm:ss.sssZ`, as toISOString() writes every year from 0 to 9999. */
const CANONICAL_ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** Days in each month of a common year. */
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * Whether `iso` is toISOString()'s own text for the instant it names, so that it can be stored as
 * given, without the Date round trip (most of what building a request row cost): the canonical
 * form with every field in range. Date.parse also accepts 24:00 or February 30th and moves them
 * on; those (and every other form) take the round trip.
 */
export function isCanonicalInstant(iso: string): boolean {
  if (!CANONICAL_ISO.test(iso)) return false;
  const year = Number(iso.slice(0, 4));
  const month = Number(iso.slice(5, 7));
  const day = Number(iso.slice(8, 10));
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days = month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1];
  if (days === undefined || day < 1 || day > days) return false;
  return Number(iso.slice(11, 13)) <= 23 && Number(iso.slice(14, 16)) <= 59 && Number(iso.slice(17, 19)) <= 59;
}

/** hourOf / dayOf of one time; a canonical ISO string is cut instead of parsed (same result, a fraction of the cost). */
function bucketsOf(iso: string): { hour: string; day: string } {
  if (CANONICAL_ISO.test(iso)) return { hour: `${iso.slice(0, 13)}:00:00.000Z`, day: `${iso.slice(0, 10)}T00:00:00.000Z` };
  return { hour: hourOf(iso), day: dayOf(iso) };
}

/** Microseconds from the event's milliseconds (two decimals): exact, an integer. */
const micros = (ms: number) => Math.max(0, Math.round(ms * 1000));

/** A start time in toISOString()'s form; a malformed one would make every bucket invalid: the commit's time instead. */
function normalisedStart(startedAt: string, recordedAt: string): string {
  const ms = Date.parse(startedAt);
  return Number.isNaN(ms) ? recordedAt : new Date(ms).toISOString();
}

/** The row of a request (from its event, as stored); `occurrence` > 0 for another request that reused the id. */
export function usageRow(usage: UsageData, stored: Pick<StoredEvent, 'id' | 'occurred_at' | 'position' | 'version'>, occurrence = 0, fingerprint = usageFingerprint(usage)): UsageRequestsTable {
  const recordedAt = stored.occurred_at;
  const started = isCanonicalInstant(usage.started_at) ? usage.started_at : normalisedStart(usage.started_at, recordedAt);
  const { hour, day } = bucketsOf(started);
  const requestId = clip(usage.request_id, 128);
  return {
    request_key: occurrence === 0 ? requestId : `${requestId}~${occurrence}`,
    request_id: requestId,
    fingerprint,
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
    hour,
    day,
    event_id: clip(stored.id, 64),
    event_position: stored.position,
    event_version: stored.version,
    recorded_at: recordedAt,
  };
}

/** Every column of usage_requests, in the order its multi-row INSERT binds them. */
const USAGE_REQUEST_COLUMNS = [
  'request_key',
  'request_id',
  'fingerprint',
  'tenant_id',
  'user_id',
  'key_id',
  'channel_id',
  'provider',
  'model',
  'model_requested',
  'model_served',
  'status',
  'error_code',
  'is_error',
  'prompt_tokens',
  'completion_tokens',
  'total_tokens',
  'usage_source',
  'stream',
  'latency_us',
  'ttft_us',
  'attempts',
  'started_at',
  'hour',
  'day',
  'event_id',
  'event_position',
  'event_version',
  'recorded_at',
] as const satisfies ReadonlyArray<keyof UsageRequestsTable>;

type RollupTable = 'usage_hourly' | 'usage_daily';
type Metrics = Pick<UsageDailyTable, 'requests' | 'errors' | 'prompt_tokens' | 'completion_tokens' | 'total_tokens' | 'latency_us'>;
type RollupRow = Omit<UsageHourlyTable, keyof Metrics> & Metrics;

const METRICS = ['requests', 'errors', 'prompt_tokens', 'completion_tokens', 'total_tokens', 'latency_us'] as const satisfies ReadonlyArray<keyof Metrics>;
const DIMENSIONS = ['tenant_id', 'day', 'user_id', 'key_id', 'channel_id', 'model'] as const satisfies ReadonlyArray<keyof UsageDailyTable>;
const ROLLUP_COLUMNS = { usage_daily: [...DIMENSIONS, ...METRICS], usage_hourly: [...DIMENSIONS, 'hour', ...METRICS] } as const;

/** Adds a request to the in-memory delta of its rollup row (keyed by the row's primary key). */
function addToDelta(deltas: Map<string, RollupRow>, key: string, row: UsageRequestsTable): void {
  const delta = deltas.get(key);
  if (!delta) {
    deltas.set(key, {
      tenant_id: row.tenant_id,
      day: row.day,
      hour: row.hour,
      user_id: row.user_id ?? '',
      key_id: row.key_id ?? '',
      channel_id: row.channel_id ?? '',
      model: row.model,
      requests: 1,
      errors: row.is_error,
      prompt_tokens: row.prompt_tokens,
      completion_tokens: row.completion_tokens,
      total_tokens: row.total_tokens,
      latency_us: row.latency_us,
    });
    return;
  }
  delta.requests += 1;
  delta.errors += row.is_error;
  delta.prompt_tokens += row.prompt_tokens;
  delta.completion_tokens += row.completion_tokens;
  delta.total_tokens += row.total_tokens;
  delta.latency_us += row.latency_us;
}

type RollupValues = Record<(typeof METRICS)[number] | (typeof DIMENSIONS)[number] | 'hour', unknown>;

/** Adds a delta to an existing rollup row (one statement text per table, compiled once). */
const addToRollup = {
  usage_daily: rollupUpdate('usage_daily'),
  usage_hourly: rollupUpdate('usage_hourly'),
};
function rollupUpdate(table: RollupTable) {
  const names = ROLLUP_COLUMNS[table];
  return preparedStatement(`usage.${table}.add`, names, (db: ReadModelDb, p) => {
    let update = db
      .updateTable(table)
      .set((eb) => ({
        requests: eb('requests', '+', p('requests')),
        errors: eb('errors', '+', p('errors')),
        prompt_tokens: eb('prompt_tokens', '+', p('prompt_tokens')),
        completion_tokens: eb('completion_tokens', '+', p('completion_tokens')),
        total_tokens: eb('total_tokens', '+', p('total_tokens')),
        latency_us: eb('latency_us', '+', p('latency_us')),
      }))
      .where('tenant_id', '=', p('tenant_id'))
      .where('day', '=', p('day'))
      .where('user_id', '=', p('user_id'))
      .where('key_id', '=', p('key_id'))
      .where('channel_id', '=', p('channel_id'))
      .where('model', '=', p('model'));
    if (table === 'usage_hourly') update = update.where(sql.ref('hour'), '=', p('hour'));
    return update;
  });
}

/** One update per touched rollup row; the rows that do not exist yet are inserted together. */
async function writeRollup(trx: ReadModelDb, table: RollupTable, deltas: Map<string, RollupRow>): Promise<void> {
  const missing: RollupRow[] = [];
  for (const delta of deltas.values()) {
    const updated = await addToRollup[table](trx, delta satisfies RollupValues);
    if (Number(updated.numAffectedRows) === 0) missing.push(delta);
  }
  await insertRows(trx, table, ROLLUP_COLUMNS[table], missing);
}

/** Values joined unambiguously, each after its length (cheaper than JSON, which escapes). */
const dimensionsKey = (...values: string[]): string => values.map((v) => `${v.length}:${v}`).join('');

/** The request ids (as stored) already projected, with their rows' fingerprints. */
const projectedFingerprints = idLookup('usage_requests');

/**
 * Applies the usage events of one commit, in log order, with one read of the request ids already
 * projected, multi-row inserts of the request rows and one write per rollup row touched: the
 * same rows as applying the events one by one (the per-event `apply` goes through here too).
 */
async function applyUsageBatch(trx: ReadModelDb, events: readonly StoredEvent[]): Promise<void> {
  // A usage event this version cannot read throws (as in billing and key_usage): the runner
  // quarantines it, visibly, instead of the request going missing from usage without a trace.
  const items = events.map((stored) => ({ stored, event: requireUsageEvent(stored) }));
  if (items.length === 0) return;

  // request id (clipped, as stored) -> fingerprints of the rows already projected under it.
  const seen = await projectedFingerprints(trx, [...new Set(items.map((i) => clip(i.event.usage.request_id, 128)))]);

  const rows: UsageRequestsTable[] = [];
  const hourly = new Map<string, RollupRow>();
  const daily = new Map<string, RollupRow>();
  for (const { stored, event } of items) {
    const { usage, fingerprint } = event;
    const requestId = clip(usage.request_id, 128);
    const prior = seen.get(requestId);
    if (prior?.includes(fingerprint)) continue; // the same event published twice: counted once
    const row = usageRow(usage, stored, prior?.length ?? 0, fingerprint);
    if (prior) prior.push(fingerprint);
    else seen.set(requestId, [fingerprint]);
    rows.push(row);
    // The rollup rows' keys: their dimensions, after the bucket start (fixed-width ISO text for every valid row).
    const dimensions = dimensionsKey(row.tenant_id, row.user_id ?? '', row.key_id ?? '', row.channel_id ?? '', row.model);
    addToDelta(hourly, row.hour + dimensions, row);
    addToDelta(daily, row.day + dimensions, row);
  }

  await insertRows(trx, 'usage_requests', USAGE_REQUEST_COLUMNS, rows);
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
  // Paged by the primary key (the usage event's log position), shown by request.
  { table: 'usage_requests', key: ['request_key'], pageKey: ['event_position', 'event_version'], timeColumn: 'started_at' },
  { table: 'usage_hourly', key: ['hour', 'user_id', 'key_id', 'channel_id', 'model'], pageKey: ['tenant_id', 'hour', 'user_id', 'key_id', 'channel_id', 'model'], timeColumn: 'hour', bucket: 'hour' },
  { table: 'usage_daily', key: ['day', 'user_id', 'key_id', 'channel_id', 'model'], pageKey: ['tenant_id', 'day', 'user_id', 'key_id', 'channel_id', 'model'], timeColumn: 'day', bucket: 'day' },
];
