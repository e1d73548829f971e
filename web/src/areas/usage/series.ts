/**
 * Pure logic of the usage pages (the user's and the admin dashboard): the period asked for, time
 * buckets with gaps filled (the API answers only the buckets that had requests), series per model,
 * and costs summed from the ledger's charges (the usage API counts requests and tokens, not money).
 */

export type PeriodKey = '24h' | '7d' | '30d';
export const PERIODS: readonly PeriodKey[] = ['24h', '7d', '30d'];

export type Unit = 'hour' | 'day';

export interface Range {
  /** ISO, inclusive. */
  from: string;
  /** ISO, exclusive. */
  to: string;
  unit: Unit;
}

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
const STEP: Record<Unit, number> = { hour: HOUR_MS, day: DAY_MS };

/**
 * The range of a period ending with the current hour (24 h, hourly buckets) or the current UTC day
 * (7 / 30 days, daily buckets). Both bounds are whole hours / UTC midnights, so the API answers
 * from its rollups.
 */
export function periodRange(period: PeriodKey, now: number): Range {
  if (period === '24h') {
    const to = Math.floor(now / HOUR_MS) * HOUR_MS + HOUR_MS;
    return { from: new Date(to - 24 * HOUR_MS).toISOString(), to: new Date(to).toISOString(), unit: 'hour' };
  }
  const days = period === '7d' ? 7 : 30;
  const to = Math.floor(now / DAY_MS) * DAY_MS + DAY_MS;
  return { from: new Date(to - days * DAY_MS).toISOString(), to: new Date(to).toISOString(), unit: 'day' };
}

/** Every bucket start of the range, Unix seconds (the chart's x). */
export function bucketStarts(range: Range): number[] {
  const step = STEP[range.unit];
  const out: number[] = [];
  for (let t = Date.parse(range.from); t < Date.parse(range.to); t += step) out.push(t / 1000);
  return out;
}

/** The bucket an instant falls in, Unix seconds. */
export function bucketOf(at: string, unit: Unit): number {
  const step = STEP[unit];
  return (Math.floor(Date.parse(at) / step) * step) / 1000;
}

/** A row of GET /v1/usage or /v1/admin/usage (the dimensions asked for, and the sums). */
export interface UsageRow {
  model?: string | null;
  hour?: string;
  day?: string;
  requests: number;
  errors: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  latency_us_sum: number;
  avg_latency_ms: number | null;
}

export type Metric = 'requests' | 'errors' | 'prompt_tokens' | 'completion_tokens' | 'total_tokens' | 'latency_us_sum';

/** Sums of `metric` per bucket of the range, 0 where the API had no row. */
export function fillBuckets(rows: readonly UsageRow[], range: Range, metric: Metric): number[] {
  const x = bucketStarts(range);
  const index = new Map(x.map((t, i) => [t, i]));
  const values = x.map(() => 0);
  for (const row of rows) {
    const at = row[range.unit];
    if (!at) continue;
    const i = index.get(bucketOf(at, range.unit));
    if (i !== undefined) values[i]! += row[metric];
  }
  return values;
}

/** The average latency (ms) per bucket; null where nothing was measured (a gap in the line). */
export function latencyBuckets(rows: readonly UsageRow[], range: Range): Array<number | null> {
  const sums = fillBuckets(rows, range, 'latency_us_sum');
  const counts = fillBuckets(rows, range, 'requests');
  return sums.map((sum, i) => (counts[i]! > 0 ? Math.round(sum / counts[i]! / 10) / 100 : null));
}

/** The models of the rows, the busiest first (by `metric`), "(none)" for a null model. */
export function modelsOf(rows: readonly UsageRow[], metric: Metric = 'requests'): string[] {
  const totals = new Map<string, number>();
  for (const row of rows) totals.set(modelName(row.model), (totals.get(modelName(row.model)) ?? 0) + row[metric]);
  return [...totals.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).map(([m]) => m);
}

export const NO_MODEL = '(none)';
export const modelName = (model: string | null | undefined): string => model ?? NO_MODEL;

/** One series per model (rows grouped by time and model), each over every bucket. */
export function seriesByModel(rows: readonly UsageRow[], range: Range, metric: Metric): Array<{ label: string; values: number[] }> {
  return modelsOf(rows, metric).map((model) => ({ label: model, values: fillBuckets(rows.filter((r) => modelName(r.model) === model), range, metric) }));
}

/** A ledger entry (GET /v1/billing/ledger), the fields used here. */
export interface LedgerEntry {
  id: string;
  type: 'charge' | 'topup' | 'adjustment' | 'subscription_fee';
  amount: string;
  amount_micro: number;
  balance_after: string;
  balance_after_micro: number;
  model: string | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  reason: string | null;
  created_at: string;
}

/** Micro-credits spent per model: the charges (negative amounts) made positive, summed. */
export function costByModel(entries: readonly LedgerEntry[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const e of entries) {
    if (e.type !== 'charge') continue;
    const model = modelName(e.model);
    out.set(model, (out.get(model) ?? 0) - e.amount_micro);
  }
  return out;
}

/** Micro-credits charged per bucket of the range (one series per model, busiest first). */
export function costSeries(entries: readonly LedgerEntry[], range: Range): Array<{ label: string; values: number[] }> {
  const x = bucketStarts(range);
  const index = new Map(x.map((t, i) => [t, i]));
  const byModel = new Map<string, number[]>();
  for (const e of entries) {
    if (e.type !== 'charge') continue;
    const i = index.get(bucketOf(e.created_at, range.unit));
    if (i === undefined) continue;
    const model = modelName(e.model);
    let values = byModel.get(model);
    if (!values) byModel.set(model, (values = x.map(() => 0)));
    values[i]! -= e.amount_micro;
  }
  const total = (v: number[]) => v.reduce((a, b) => a + b, 0);
  return [...byModel.entries()].sort((a, b) => total(b[1]) - total(a[1]) || a[0].localeCompare(b[0])).map(([label, values]) => ({ label, values }));
}

/** Integer micro-credits as credits (a number for formatting: exact up to 2^53 micro). */
export const credits = (micro: number): number => micro / 1_000_000;

/** A page of a list (1-based page), and how many pages there are. */
export function pageOf<T>(items: readonly T[], page: number, size: number): { items: T[]; pages: number; page: number } {
  const pages = Math.max(1, Math.ceil(items.length / size));
  const p = Math.min(Math.max(1, page), pages);
  return { items: items.slice((p - 1) * size, p * size), pages, page: p };
}

/** The calendar month (UTC) of an instant, as the statements API names it: YYYY-MM. */
export function monthOf(now: number): string {
  return new Date(now).toISOString().slice(0, 7);
}

export interface ModelLine {
  model: string;
  requests: number;
  errors: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** Micro-credits charged in the period. */
  cost_micro: number;
}

/** The by-model table: usage per model (rows grouped by model) with its cost; busiest first. */
export function modelTable(rows: readonly UsageRow[], costs: ReadonlyMap<string, number>): ModelLine[] {
  const lines = new Map<string, ModelLine>();
  const line = (model: string) => {
    let l = lines.get(model);
    if (!l) lines.set(model, (l = { model, requests: 0, errors: 0, prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, cost_micro: 0 }));
    return l;
  };
  for (const row of rows) {
    const l = line(modelName(row.model));
    l.requests += row.requests;
    l.errors += row.errors;
    l.prompt_tokens += row.prompt_tokens;
    l.completion_tokens += row.completion_tokens;
    l.total_tokens += row.total_tokens;
  }
  for (const [model, micro] of costs) line(model).cost_micro += micro;
  return [...lines.values()].sort((a, b) => b.requests - a.requests || b.cost_micro - a.cost_micro || a.model.localeCompare(b.model));
}
