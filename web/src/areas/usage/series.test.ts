import { describe, expect, it } from 'vitest';
import { bucketStarts, costByModel, costSeries, fillBuckets, latencyBuckets, modelTable, pageOf, periodRange, seriesByModel, type LedgerEntry, type UsageRow } from './series';

const row = (over: Partial<UsageRow>): UsageRow => ({ requests: 0, errors: 0, prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, latency_us_sum: 0, avg_latency_ms: null, ...over });
const charge = (model: string | null, micro: number, at: string): LedgerEntry => ({
  id: `e${at}${model}`,
  type: 'charge',
  amount: String(-micro / 1e6),
  amount_micro: -micro,
  balance_after: '0',
  balance_after_micro: 0,
  model,
  prompt_tokens: 1,
  completion_tokens: 1,
  reason: null,
  created_at: at,
});

describe('periods', () => {
  const now = Date.parse('2026-11-28T15:20:30.000Z');
  it('24 h: 24 whole hours ending with the current one', () => {
    const r = periodRange('24h', now);
    expect(r).toEqual({ from: '2026-11-27T16:00:00.000Z', to: '2026-11-28T16:00:00.000Z', unit: 'hour' });
    const x = bucketStarts(r);
    expect(x).toHaveLength(24);
    expect(x[0]).toBe(Date.parse(r.from) / 1000);
    expect(x[23]! - x[22]!).toBe(3600);
  });
  it('7 d and 30 d: UTC days up to and including today', () => {
    expect(periodRange('7d', now)).toEqual({ from: '2026-11-22T00:00:00.000Z', to: '2026-11-29T00:00:00.000Z', unit: 'day' });
    expect(bucketStarts(periodRange('30d', now))).toHaveLength(30);
  });
});

describe('hour buckets', () => {
  const range = { from: '2026-11-28T10:00:00.000Z', to: '2026-11-28T14:00:00.000Z', unit: 'hour' as const };
  it('fills the hours without rows with 0 and sums rows of the same hour (several models)', () => {
    const rows = [
      row({ hour: '2026-11-28T10:00:00.000Z', model: 'a', requests: 2, total_tokens: 30 }),
      row({ hour: '2026-11-28T12:00:00.000Z', model: 'a', requests: 1, total_tokens: 10 }),
      row({ hour: '2026-11-28T12:00:00.000Z', model: 'b', requests: 4, total_tokens: 5 }),
      row({ hour: '2026-11-28T09:00:00.000Z', model: 'b', requests: 99 }), // outside: ignored
    ];
    expect(fillBuckets(rows, range, 'requests')).toEqual([2, 0, 5, 0]);
    expect(fillBuckets(rows, range, 'total_tokens')).toEqual([30, 0, 15, 0]);
    expect(seriesByModel(rows, range, 'requests')).toEqual([
      { label: 'b', values: [0, 0, 4, 0] },
      { label: 'a', values: [2, 0, 1, 0] },
    ]);
  });
  it('averages latency per hour, a gap (null) where nothing ran', () => {
    const rows = [row({ hour: '2026-11-28T11:00:00.000Z', requests: 2, latency_us_sum: 3_000_000 }), row({ hour: '2026-11-28T11:00:00.000Z', requests: 1, latency_us_sum: 0 })];
    expect(latencyBuckets(rows, range)).toEqual([null, 1000, null, null]);
  });
});

describe('costs', () => {
  const entries: LedgerEntry[] = [
    charge('a', 1098, '2026-11-28T10:05:00.000Z'),
    charge('a', 2, '2026-11-28T12:59:59.000Z'),
    charge('b', 500, '2026-11-28T12:00:00.000Z'),
    charge(null, 7, '2026-11-28T13:00:00.000Z'),
    { ...charge('a', 0, '2026-11-28T10:00:00.000Z'), type: 'topup', amount_micro: 10_000_000 },
  ];
  it('sums the charges per model (top-ups are not costs)', () => {
    expect(Object.fromEntries(costByModel(entries))).toEqual({ a: 1100, b: 500, '(none)': 7 });
  });
  it('buckets the charges per model and hour', () => {
    const range = { from: '2026-11-28T10:00:00.000Z', to: '2026-11-28T14:00:00.000Z', unit: 'hour' as const };
    expect(costSeries(entries, range)).toEqual([
      { label: 'a', values: [1098, 0, 2, 0] },
      { label: 'b', values: [0, 0, 500, 0] },
      { label: '(none)', values: [0, 0, 0, 7] },
    ]);
  });
  it('joins usage per model with its cost, busiest first', () => {
    const table = modelTable([row({ model: 'a', requests: 2, total_tokens: 9 }), row({ model: 'b', requests: 5, errors: 1 })], costByModel(entries));
    expect(table.map((l) => [l.model, l.requests, l.cost_micro])).toEqual([
      ['b', 5, 500],
      ['a', 2, 1100],
      ['(none)', 0, 7],
    ]);
  });
});

it('pages a list, clamping the page', () => {
  expect(pageOf([1, 2, 3, 4, 5], 2, 2)).toEqual({ items: [3, 4], pages: 3, page: 2 });
  expect(pageOf([1, 2, 3], 9, 2)).toEqual({ items: [3], pages: 2, page: 2 });
  expect(pageOf([], 1, 2)).toEqual({ items: [], pages: 1, page: 1 });
});
