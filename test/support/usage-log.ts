/**
 * A log that exercises every corner of the usage, billing and key_usage projections' batch code:
 * commits larger than one multi-row INSERT or one de-duplication read (128), duplicates of an
 * event within a commit and across commits (a replayed spool), request ids reused for different
 * requests (within and across commits), request ids longer than the column (clipped alike),
 * start times that are not canonical ISO or not times at all, requests without user or key,
 * failures that cost nothing, and billing events between the usage: prices, credits, a
 * subscription with request and token quotas, a coverage mode change, a cancellation, and a
 * commit mixing usage with a price change.
 */
import type { UsageData } from '../../src/commands/usage/events.js';
import type { EventStore, NewEvent } from '../../src/ports/event-store.js';

const TENANT = 'tb';
const MODELS = ['m-a', 'm-b', 'm-c'];
const BASE = Date.UTC(2024, 4, 1, 10, 0, 0);

/** A deterministic pseudo-random sequence (the log must be the same on every run). */
function sequence(seed: number): () => number {
  let x = seed;
  return () => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return x / 2147483648;
  };
}

function startTime(i: number, random: () => number): string {
  const t = BASE + i * 61_000 + Math.floor(random() * 1000);
  switch (i % 23) {
    case 5:
      return new Date(t).toISOString().replace('.000Z', 'Z').replace(/\.\d{3}Z$/, 'Z'); // no milliseconds
    case 11:
      return '2024-05-01T12:30:00+02:00'; // an offset
    case 17:
      return 'not a time'; // falls back to the commit's time
    default:
      return new Date(t).toISOString();
  }
}

function usage(i: number, random: () => number): UsageData {
  const user = i % 7 === 6 ? null : `u-${i % 5}`;
  const key = user === null || i % 4 === 0 ? null : `k-${i % 5}`;
  const failed = i % 13 === 0;
  const free = failed && i % 26 === 0;
  const prompt = free ? 0 : 10 + Math.floor(random() * 500);
  const completion = free ? 0 : Math.floor(random() * 300);
  return {
    request_id: i % 31 === 0 ? `${'long-'.repeat(30)}${i}` : `req-${i}`,
    tenant_id: TENANT,
    user_id: user,
    key_id: key,
    channel_id: i % 9 === 0 ? null : `ch-${i % 2}`,
    provider: 'openai',
    model_requested: MODELS[i % 3]!,
    model_served: i % 8 === 0 ? null : MODELS[i % 3]!,
    model_routed: i % 10 === 0 ? undefined : MODELS[(i + 1) % 3]!,
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    usage_source: free ? 'none' : 'upstream',
    stream: i % 2 === 0,
    status: failed ? 502 : 200,
    error_code: failed ? 'upstream_error' : i % 37 === 0 ? 'stream_cut' : null,
    latency_ms: Math.round(random() * 100_000) / 100,
    ttft_ms: i % 2 === 0 ? Math.round(random() * 10_000) / 100 : null,
    attempts: 1 + (i % 2),
    started_at: startTime(i, random),
  };
}

const usageEvents = (items: UsageData[]): NewEvent[] => items.map((data) => ({ type: 'UsageRecorded', data }));

/** Appends the log; returns its head position. */
export async function appendVariedUsageLog(store: EventStore): Promise<number> {
  const random = sequence(42);
  const all = Array.from({ length: 420 }, (_, i) => usage(i, random));
  let version = 0;
  const append = async (stream: string, events: NewEvent[], expectedVersion = 0) => (await store.append(stream, events, { expectedVersion, tenantId: TENANT })).version;

  // Before any price: rated at zero, still de-duplicated.
  const first = all.slice(0, 150);
  first.push({ ...all[3]!, started_at: all[3]!.started_at }); // the same event twice in one commit
  first.push({ ...all[4]!, latency_ms: all[4]!.latency_ms + 1 }); // a different request reusing an id, same commit
  first.push({ ...all[31]!, request_id: `${all[31]!.request_id.slice(0, 128)}-other-tail` }); // same id once clipped to 128
  version = await append('usage-one', usageEvents(first));

  await append('pricing-tb', [
    { type: 'ModelPriceSet', data: { model: 'm-b', input_per_1m_micro: 1_000_000, output_per_1m_micro: 3_000_000, per_request_micro: 50, by: null } },
    { type: 'DefaultPriceSet', data: { input_per_1m_micro: 200_000, output_per_1m_micro: 400_000, per_request_micro: 0, by: null } },
  ]);
  await append('credits-tb', [
    { type: 'CreditsToppedUp', data: { user_id: 'u-1', amount_micro: 5_000_000, reason: 'test', by: null } },
    { type: 'CreditsToppedUp', data: { user_id: 'u-2', amount_micro: 10, reason: 'test', by: null } },
  ]);
  const terms = {
    plan_id: 'p1',
    plan_name: 'Plan',
    period: 'month' as const,
    quotas: [
      { models: ['m-a'], requests: 20, tokens: null },
      { models: ['*'], requests: null, tokens: 9000 },
    ],
    price_micro: 1000,
  };
  await append('subscription-u-1', [{ type: 'SubscriptionStarted', data: { subscription_id: 's1', user_id: 'u-1', terms, period_start: '2024-05-01T00:00:00.000Z', period_end: '2024-06-01T00:00:00.000Z', by: null } }]);
  await append('subscription-u-3', [{ type: 'SubscriptionStarted', data: { subscription_id: 's3', user_id: 'u-3', terms, period_start: '2024-05-01T00:00:00.000Z', period_end: '2024-06-01T00:00:00.000Z', by: null } }]);

  // A replayed spool (the first commit again, in full: every de-duplication read finds rows), then new requests.
  const second = [...first, ...all.slice(150, 300)];
  second.push({ ...all[4]!, latency_ms: all[4]!.latency_ms + 2 }); // the id reused a third time
  version = await append('usage-one', usageEvents(second), version);

  await append('settings-tb', [{ type: 'TenantSettingsChanged', data: { subscription_covers_relay: 'included', by: null } }]);
  // Small commits, one event each, and one that mixes usage with a price change.
  for (const data of all.slice(300, 310)) version = await append('usage-one', usageEvents([data]), version);
  await append('mixed-tb', [
    ...usageEvents(all.slice(310, 330)),
    { type: 'ModelPriceSet', data: { model: 'm-a', input_per_1m_micro: 2_000_000, output_per_1m_micro: 2_000_000, per_request_micro: 0, by: null } },
    ...usageEvents(all.slice(330, 350)),
    ...usageEvents([all[320]!]),
  ]);
  await append('subscription-u-1', [{ type: 'SubscriptionCanceled', data: { subscription_id: 's1', user_id: 'u-1', at: new Date(BASE + 360 * 61_000).toISOString(), by: null } }], 1);
  await append('settings-tb', [{ type: 'TenantSettingsChanged', data: { subscription_covers_relay: 'excluded', by: null } }], 1);
  version = await append('usage-one', usageEvents(all.slice(350, 420)), version);
  return store.headPosition();
}
