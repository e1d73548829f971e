/**
 * The process's own performance entries: slow API and relay requests, and the periodic resource
 * sample (memory, CPU, event-loop delay). Each per-request check is one comparison; an entry is
 * only built for a request past the threshold.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { FastifyInstance } from 'fastify';
import type { UsageData } from '../commands/usage/events.js';
import type { Logger } from '../logger.js';

/** Logs every API answer slower than `thresholdMs` (relay calls are the usage sink's: they carry model and provider). */
export function logSlowApiRequests(app: FastifyInstance, logger: Logger, thresholdMs: number): void {
  const log = logger.child({ category: 'performance', component: 'http', event: 'slow_request' });
  app.addHook('onResponse', (request, reply, done) => {
    const elapsed = reply.elapsedTime;
    if (elapsed > thresholdMs && !(request.method === 'POST' && isRelayRoute(request.routeOptions.schema?.tags))) {
      log.warn(
        { request_id: request.id, ip_address: request.ip, method: request.method, route: request.routeOptions.url ?? null, status: reply.statusCode, latency_ms: Math.round(elapsed) },
        `slow request: ${request.method} ${request.routeOptions.url ?? request.url.split('?')[0]} took ${Math.round(elapsed)} ms`,
      );
    }
    done();
  });
}

const isRelayRoute = (tags: readonly string[] | undefined) => tags !== undefined && tags.includes('relay');

/** A usage sink (UsagePublisher.addSink) that logs relay requests slower than `thresholdMs`. */
export function slowRelayRequests(logger: Logger, thresholdMs: number): (data: UsageData) => void {
  // The logs projection indexes slow usage events itself: this line goes to stdout and the files only.
  const log = logger.child({ category: 'performance', component: 'relay', event: 'slow_request', log_index: false });
  return (data) => {
    if (data.latency_ms <= thresholdMs) return;
    log.warn(
      {
        request_id: data.request_id,
        tenant_id: data.tenant_id,
        ...(data.user_id !== null && { user_id: data.user_id }),
        key_id: data.key_id,
        provider: data.provider,
        channel_id: data.channel_id,
        model: data.model_requested,
        status: data.status,
        latency_ms: Math.round(data.latency_ms),
        ttft_ms: data.ttft_ms,
        attempts: data.attempts,
      },
      `slow relay request: ${data.model_requested} took ${Math.round(data.latency_ms)} ms`,
    );
  };
}

export interface ResourceSample {
  rss_bytes: number;
  heap_used_bytes: number;
  heap_total_bytes: number;
  external_bytes: number;
  /** Share of one CPU used by the process since the previous sample (user + system), in percent. */
  cpu_percent: number;
  event_loop_delay_p50_ms: number;
  event_loop_delay_p99_ms: number;
  event_loop_delay_max_ms: number;
}

/** Projections further behind the log's head than this many events are logged (with the resource sample). */
export const PROJECTION_LAG_WARNING = 1000;

/**
 * Logs a ResourceSample every `intervalMs` (0: never), and each projection whose lag (from
 * `projectionLag`) is past PROJECTION_LAG_WARNING; returns the function that stops it.
 */
export function startResourceMetrics(logger: Logger, intervalMs: number, projectionLag?: () => Promise<ReadonlyArray<{ name: string; lag: number }>>): () => void {
  if (intervalMs <= 0) return () => undefined;
  const log = logger.child({ category: 'performance', component: 'resources', event: 'resource_metrics' });
  const lagLog = logger.child({ category: 'performance', component: 'projections', event: 'projection_lag' });
  const delay = monitorEventLoopDelay({ resolution: 20 });
  delay.enable();
  let cpu = process.cpuUsage();
  let at = process.hrtime.bigint();
  const timer = setInterval(() => {
    const now = process.hrtime.bigint();
    const used = process.cpuUsage(cpu);
    const elapsedUs = Number(now - at) / 1000;
    cpu = process.cpuUsage();
    at = now;
    const memory = process.memoryUsage();
    const ms = (ns: number) => Math.round(ns / 1e4) / 100;
    const sample: ResourceSample = {
      rss_bytes: memory.rss,
      heap_used_bytes: memory.heapUsed,
      heap_total_bytes: memory.heapTotal,
      external_bytes: memory.external,
      cpu_percent: elapsedUs > 0 ? Math.round(((used.user + used.system) / elapsedUs) * 1000) / 10 : 0,
      event_loop_delay_p50_ms: ms(delay.percentile(50)),
      event_loop_delay_p99_ms: ms(delay.percentile(99)),
      event_loop_delay_max_ms: ms(delay.max),
    };
    delay.reset();
    log.info(sample, `resources: rss ${Math.round(sample.rss_bytes / 1048576)} MB, cpu ${sample.cpu_percent}%, event-loop p99 ${sample.event_loop_delay_p99_ms} ms`);
    void projectionLag?.().then(
      (statuses) => {
        for (const s of statuses) if (s.lag > PROJECTION_LAG_WARNING) lagLog.warn({ projection: s.name, lag: s.lag }, `projection ${s.name} is ${s.lag} events behind`);
      },
      () => undefined,
    );
  }, intervalMs);
  timer.unref();
  return () => {
    clearInterval(timer);
    delay.disable();
  };
}
