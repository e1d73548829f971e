/** The relay series' cells: bucket edges, label bounds, the known-models cache and the exposition format. */
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { UsageData } from '../../src/commands/usage/events.js';
import { KnownModels, LatencyCells, modelsByTenant, RelayMetrics } from '../../src/api/relay-metrics.js';
import type { ChannelDirectory, RoutableChannel } from '../../src/views/channels.js';
import type { Channel } from '../../src/relay/channel.js';

function routable(id: string, tenantId: string, models: string[], modelMapping: Record<string, string> = {}): RoutableChannel {
  const channel: Channel = { id, tenantId, name: id, type: 'openai', baseUrl: 'http://upstream', apiKey: 'k', models, modelMapping, priority: 0, weight: 1, enabled: true, config: {} };
  return { channel, baseUrlSetting: null, healthy: true, cooldownUntil: 0 };
}

function usage(over: Partial<UsageData>): UsageData {
  return {
    request_id: 'r',
    tenant_id: 't1',
    user_id: null,
    key_id: null,
    channel_id: 'c1',
    provider: 'openai',
    model_requested: 'gpt-a',
    model_served: 'gpt-a',
    prompt_tokens: 11,
    completion_tokens: 7,
    total_tokens: 18,
    usage_source: 'upstream',
    stream: false,
    status: 200,
    error_code: null,
    latency_ms: 120,
    ttft_ms: null,
    upstream_ms: 100,
    attempts: 1,
    started_at: '2026-01-01T00:00:00.000Z',
    ...over,
  };
}

describe('LatencyCells', () => {
  it('counts an observation on a bound in that bucket, above it in the next, past 120 s in +Inf', () => {
    const cells = new LatencyCells();
    for (const ms of [0, 50, 50.01, 1000, 120_000, 120_001]) cells.observe(ms);
    expect([...cells.counts]).toEqual([2, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 1]);
    expect(cells.count).toBe(6);
    expect(cells.sumMs).toBeCloseTo(0 + 50 + 50.01 + 1000 + 120_000 + 120_001, 6);
  });
});

describe('known models', () => {
  it('are each tenant\'s channel models, mapping aliases and targets', () => {
    const directory: ChannelDirectory = new Map([
      ['c1', routable('c1', 't1', ['gpt-a'], { fast: 'gpt-a-mini' })],
      ['c2', routable('c2', 't2', ['gpt-b'])],
    ]);
    const byTenant = modelsByTenant(directory);
    expect([...byTenant.get('t1')!].sort()).toEqual(['fast', 'gpt-a', 'gpt-a-mini']);
    expect([...byTenant.get('t2')!]).toEqual(['gpt-b']);
  });

  it('are rebuilt when the directory changes, not on every lookup', () => {
    const directory: ChannelDirectory = new Map([['c1', routable('c1', 't1', ['gpt-a'])]]);
    let version = 0;
    const known = new KnownModels(() => directory, () => version);
    expect(known.has('t1', 'gpt-new')).toBe(false);
    directory.set('c2', routable('c2', 't1', ['gpt-new']));
    // Unchanged version: the cached sets answer (a channel only counts once its event is folded).
    expect(known.has('t1', 'gpt-new')).toBe(false);
    version++;
    expect(known.has('t1', 'gpt-new')).toBe(true);
    expect(known.has('t2', 'gpt-new')).toBe(false);
  });
});

describe('RelayMetrics', () => {
  const directory: ChannelDirectory = new Map([
    ['c1', routable('c1', 't1', ['gpt-a'], { fast: 'gpt-a-mini' })],
    ['c2', routable('c2', 't2', ['secret-model'])],
  ]);
  const metrics = () => new RelayMetrics(new KnownModels(() => directory, () => 0));

  it('labels a model its tenant\'s channels do not list as other (another tenant\'s included)', () => {
    const m = metrics();
    expect(m.modelLabel(usage({}))).toBe('gpt-a');
    expect(m.modelLabel(usage({ model_served: null, model_requested: 'fast' }))).toBe('fast');
    expect(m.modelLabel(usage({ model_served: null, model_routed: 'gpt-a', model_requested: 'my-alias' }))).toBe('gpt-a');
    expect(m.modelLabel(usage({ model_served: null, model_requested: 'anything-a-client-sends' }))).toBe('other');
    expect(m.modelLabel(usage({ model_served: null, model_requested: 'secret-model' }))).toBe('other');
  });

  it('exposes counters and cumulative histograms in the text format', async () => {
    const m = metrics();
    const registry = new Registry();
    m.register(registry);
    m.record(usage({}));
    m.record(usage({ latency_ms: 3000, upstream_ms: 2900, ttft_ms: 40, stream: true }));
    m.record(usage({ status: 502, prompt_tokens: 11, completion_tokens: 0, upstream_ms: 30_000 }));
    m.record(usage({ provider: null, channel_id: null, model_served: null, model_requested: 'nope', status: 503, prompt_tokens: 0, completion_tokens: 0, upstream_ms: null, latency_ms: 1 }));
    const text = await registry.metrics();
    expect(text).toContain('# TYPE switchyard_relay_requests_total counter');
    expect(text).toContain('switchyard_relay_requests_total{provider="openai",model="gpt-a",status="200"} 2');
    expect(text).toContain('switchyard_relay_requests_total{provider="openai",model="gpt-a",status="502"} 1');
    expect(text).toContain('switchyard_relay_requests_total{provider="none",model="other",status="503"} 1');
    expect(text).toContain('switchyard_relay_tokens_total{provider="openai",model="gpt-a",type="prompt"} 33');
    expect(text).toContain('switchyard_relay_tokens_total{provider="openai",model="gpt-a",type="completion"} 14');
    expect(text).toContain('# TYPE switchyard_relay_upstream_latency_seconds histogram');
    expect(text).toContain('switchyard_relay_upstream_latency_seconds_bucket{provider="openai",le="0.1"} 1');
    expect(text).toContain('switchyard_relay_upstream_latency_seconds_bucket{provider="openai",le="2.5"} 1');
    expect(text).toContain('switchyard_relay_upstream_latency_seconds_bucket{provider="openai",le="5"} 2');
    expect(text).toContain('switchyard_relay_upstream_latency_seconds_bucket{provider="openai",le="30"} 3');
    expect(text).toContain('switchyard_relay_upstream_latency_seconds_bucket{provider="openai",le="+Inf"} 3');
    expect(text).toContain('switchyard_relay_upstream_latency_seconds_sum{provider="openai"} 33');
    expect(text).toContain('switchyard_relay_upstream_latency_seconds_count{provider="openai"} 3');
    expect(text).toContain('switchyard_relay_time_to_first_byte_seconds_count{provider="openai"} 1');
    // No upstream answered: no upstream observation for `none`, but its request duration counts.
    expect(text).not.toContain('switchyard_relay_upstream_latency_seconds_count{provider="none"}');
    expect(text).toContain('switchyard_relay_request_duration_seconds_count{provider="none"} 1');
    expect(text).not.toContain('nope');
  });
});
