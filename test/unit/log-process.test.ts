import { describe, expect, it } from 'vitest';
import type { UsageData } from '../../src/commands/usage/events.js';
import type { LogEntry } from '../../src/logs/entry.js';
import { PROJECTION_LAG_WARNING, slowRelayRequests, startResourceMetrics } from '../../src/logs/process-logs.js';
import { createLogger, logHubOf } from '../../src/logger.js';

function capturing() {
  const logger = createLogger('info', { write: () => undefined });
  const entries: LogEntry[] = [];
  logHubOf(logger).subscribe((entry) => entries.push(entry));
  return { logger, entries };
}

const usage = (latency: number): UsageData => ({
  request_id: `r-${latency}`,
  tenant_id: 't-1',
  user_id: 'u-1',
  key_id: 'k-1',
  channel_id: 'c-1',
  provider: 'openai',
  model_requested: 'gpt-x',
  model_served: 'gpt-x',
  prompt_tokens: 1,
  completion_tokens: 1,
  total_tokens: 2,
  usage_source: 'upstream',
  stream: false,
  status: 200,
  error_code: null,
  latency_ms: latency,
  ttft_ms: null,
  attempts: 1,
  started_at: new Date(0).toISOString(),
});

describe('performance entries of the process', () => {
  it('a relay request over the threshold is a slow_request entry; one at or under it is nothing', () => {
    const { logger, entries } = capturing();
    const sink = slowRelayRequests(logger, 1000);
    sink(usage(1000));
    sink(usage(1500.4));
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ level: 'WARNING', category: 'performance', component: 'relay', event: 'slow_request', request_id: 'r-1500.4', tenant_id: 't-1', user_id: 'u-1', details: { latency_ms: 1500, model: 'gpt-x', provider: 'openai' } });
  });

  it('resource metrics: memory, CPU and event-loop delay each interval, and projections lagging past the warning', async () => {
    const { logger, entries } = capturing();
    const lags = [{ name: 'billing', lag: PROJECTION_LAG_WARNING + 1 }, { name: 'keys', lag: 3 }];
    const lagged = new Promise<void>((resolve) => logHubOf(logger).subscribe((e) => e.event === 'projection_lag' && resolve()));
    const stop = startResourceMetrics(logger, 5, async () => lags);
    try {
      await lagged;
    } finally {
      stop();
    }
    const sample = entries.find((e) => e.event === 'resource_metrics')!;
    expect(sample).toMatchObject({ level: 'INFO', category: 'performance', component: 'resources' });
    for (const field of ['rss_bytes', 'heap_used_bytes', 'heap_total_bytes', 'cpu_percent', 'event_loop_delay_p99_ms']) expect(typeof sample.details[field]).toBe('number');
    expect((sample.details.rss_bytes as number) > 0).toBe(true);
    const lag = entries.filter((e) => e.event === 'projection_lag');
    expect(lag.every((e) => e.details.projection === 'billing' && e.component === 'projections')).toBe(true);
  });

  it('an interval of 0 logs nothing', () => {
    const { logger, entries } = capturing();
    startResourceMetrics(logger, 0)();
    expect(entries).toHaveLength(0);
  });
});
