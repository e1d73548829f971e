/**
 * Prometheus metrics (prom-client) on their own listener (METRICS_PORT, default 9090), so the
 * public port never exposes them. Each app gets its own registry (tests run several apps in one
 * process).
 */
import { createServer, type Server } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { UsageData } from '../commands/usage/events.js';
import type { ChannelDirectory } from '../views/channels.js';
import { KnownModels, RelayMetrics } from './relay-metrics.js';

export class Metrics {
  readonly registry = new Registry();
  readonly httpRequests = new Counter({
    name: 'switchyard_http_requests_total',
    help: 'HTTP requests by method, route and status code',
    labelNames: ['method', 'route', 'status_code'] as const,
    registers: [this.registry],
  });
  readonly httpErrors = new Counter({
    name: 'switchyard_http_errors_total',
    help: 'HTTP responses with status >= 400 by method, route and status code',
    labelNames: ['method', 'route', 'status_code'] as const,
    registers: [this.registry],
  });
  readonly httpDuration = new Histogram({
    name: 'switchyard_http_request_duration_seconds',
    help: 'HTTP response time by method, route and status code',
    labelNames: ['method', 'route', 'status_code'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });
  readonly eventsAppended = new Counter({
    name: 'switchyard_events_appended_total',
    help: 'Events appended by commands, by stream category',
    labelNames: ['category'] as const,
    registers: [this.registry],
  });
  readonly projectionLag = new Gauge({
    name: 'switchyard_projection_lag_commits',
    help: 'Commits between the head of the log and each projection checkpoint (sampled at scrape)',
    labelNames: ['projection'] as const,
    registers: [this.registry],
  });

  readonly alertsFiring = new Gauge({
    name: 'switchyard_alerts_firing',
    help: 'Alert rules firing now, by severity (set by the instance evaluating rules; 0 elsewhere)',
    labelNames: ['severity'] as const,
    registers: [this.registry],
  });

  readonly projectionQuarantined = new Gauge({
    name: 'switchyard_projection_quarantined_events',
    help: 'Events a projection could not apply and set aside, not replayed yet (sampled at scrape; alert on > 0)',
    labelNames: ['projection'] as const,
    registers: [this.registry],
  });

  readonly upstreamQueued = new Gauge({
    name: 'switchyard_upstream_queued_requests',
    help: 'Requests waiting for a connection to an upstream origin (all HTTP_MAX_CONNS_PER_HOST busy; sampled at scrape)',
    labelNames: ['origin'] as const,
    registers: [this.registry],
  });

  readonly upstreamActive = new Gauge({
    name: 'switchyard_upstream_active_requests',
    help: 'Requests holding a connection to an upstream origin (sampled at scrape)',
    labelNames: ['origin'] as const,
    registers: [this.registry],
  });

  readonly upstreamConnected = new Gauge({
    name: 'switchyard_upstream_connected_sockets',
    help: 'Open sockets to an upstream origin (sampled at scrape)',
    labelNames: ['origin'] as const,
    registers: [this.registry],
  });

  readonly upstreamBusy = new Counter({
    name: 'switchyard_upstream_busy_total',
    help: 'Requests failed fast with 503 upstream_busy after waiting UPSTREAM_QUEUE_TIMEOUT for a connection to an origin',
    labelNames: ['origin'] as const,
    registers: [this.registry],
  });

  readonly usageDeadLettered = new Counter({
    name: 'switchyard_usage_dead_lettered_total',
    help: 'Usage events that failed validation and went to the dead-letter file instead of the log (alert on > 0)',
    registers: [this.registry],
  });

  /** The usage journal's gauges and the appended-events counter, read from the publisher at scrape. */
  watchUsagePublisher(publisher: { depth: number; journalBytes: number; published: number }) {
    new Gauge({
      name: 'switchyard_usage_journal_depth',
      help: 'Usage events journaled and not yet appended to the log (grows while the bus is down)',
      registers: [this.registry],
      collect() {
        this.set(publisher.depth);
      },
    });
    new Gauge({
      name: 'switchyard_usage_journal_bytes',
      help: "Bytes of this process's usage journal segments",
      registers: [this.registry],
      collect() {
        this.set(publisher.journalBytes);
      },
    });
    new Counter({
      name: 'switchyard_usage_events_appended_total',
      help: 'Usage events this process appended to the log',
      registers: [this.registry],
      collect() {
        this.reset();
        this.inc(publisher.published);
      },
    });
  }

  /**
   * The relay series (src/api/relay-metrics.ts), fed by `usage`'s events, and the channels' health
   * sampled at scrape from the channel directory (`version` changes with it: LiveView.eventsFolded).
   * Every instance exports the same health (the directory is shared through the log).
   */
  watchRelay(usage: { addSink(name: string, sink: (data: UsageData) => void): void }, directory: () => ChannelDirectory, version: () => number): RelayMetrics {
    const relay = new RelayMetrics(new KnownModels(directory, version));
    relay.register(this.registry);
    usage.addSink('metrics', (data) => relay.record(data));
    new Gauge({
      name: 'switchyard_channel_healthy',
      help: 'Health of each enabled channel: 1 healthy, 0 marked unhealthy after failures (sampled at scrape)',
      labelNames: ['channel', 'provider'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const { channel, healthy } of directory().values()) {
          if (channel.enabled) this.set({ channel: channel.id, provider: channel.type }, healthy ? 1 : 0);
        }
      },
    });
    return relay;
  }

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'switchyard_' });
  }

  /** Samples the upstream pools' gates (origins no longer pooled drop out). */
  sampleUpstreams(stats: ReadonlyArray<{ origin: string; queued: number; active: number; connected: number }>): void {
    this.upstreamQueued.reset();
    this.upstreamActive.reset();
    this.upstreamConnected.reset();
    for (const { origin, queued, active, connected } of stats) {
      this.upstreamQueued.set({ origin }, queued);
      this.upstreamActive.set({ origin }, active);
      this.upstreamConnected.set({ origin }, connected);
    }
  }

  /** Records every response of `app` (route label = the route pattern, never the raw URL). */
  instrument(app: FastifyInstance) {
    // A callback hook rather than an async one: no promise per response.
    app.addHook('onResponse', (request, reply, done) => {
      const labels = { method: request.method, route: request.routeOptions.url ?? 'unmatched', status_code: String(reply.statusCode) };
      this.httpRequests.inc(labels);
      this.httpDuration.observe(labels, reply.elapsedTime / 1000);
      if (reply.statusCode >= 400) this.httpErrors.inc(labels);
      done();
    });
  }
}

/** Serves GET /metrics from `metrics`, calling `beforeScrape` to refresh sampled gauges. */
export function startMetricsServer(metrics: Metrics, host: string, port: number, beforeScrape: () => Promise<void>): Promise<Server> {
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || req.url?.split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    beforeScrape()
      .catch(() => undefined)
      .then(() => metrics.registry.metrics())
      .then(
        (body) => res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(body),
        (error: Error) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`${error.message}\n`),
      );
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve(server));
  });
}
