/**
 * The relay's Prometheus series, fed by every usage event the relay publishes (the usage
 * publisher's sink, synchronously within the request): requests by provider / model / status,
 * tokens by provider / model / type, and per provider the histograms of the whole request, of the
 * upstream's answer (to its response headers) and of the first streamed byte.
 *
 * The hot path only adds to plain numbers in cells found through nested Maps (no label objects,
 * no strings built, nothing allocated once a combination has been seen); the registry turns the
 * cells into samples at scrape time. prom-client's own `inc` / `observe` hash the labels on every
 * call: about 5 µs per request for these six updates, against a serving thread that spends ~75 µs
 * on a whole request (docs/decisions/0220-metrics.md).
 *
 * Label cardinality is bounded by the operators' configuration, never by clients: the model label
 * is a model some channel of the request's tenant lists (its models, model_mapping aliases and
 * targets), else `other`; the provider label is a channel type, or `none` when no channel was
 * tried; the status is an HTTP status the relay answered.
 */
import type { Metric, Registry } from 'prom-client';
import type { UsageData } from '../commands/usage/events.js';
import type { ChannelDirectory } from '../views/channels.js';

/** Upper bounds (seconds) of the relay's latency buckets: LLM calls take from 50 ms to minutes. */
export const RELAY_LATENCY_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120] as const;
const BOUNDS_MS = RELAY_LATENCY_BUCKETS.map((s) => s * 1000);
const BUCKET_LABELS = [...RELAY_LATENCY_BUCKETS.map(String), '+Inf'];

/** Label of a request that never reached a channel (refused, no channel for the model). */
export const NO_PROVIDER = 'none';
/** Label of a model no channel of the tenant lists. */
export const OTHER_MODEL = 'other';

/** One histogram's counts in milliseconds: bucket i counts observations <= BOUNDS_MS[i] (and above the previous bound). */
export class LatencyCells {
  /** Non-cumulative counts per bucket; the last one is above the highest bound. */
  readonly counts = new Float64Array(BOUNDS_MS.length + 1);
  sumMs = 0;
  count = 0;

  observe(ms: number): void {
    let i = 0;
    while (i < BOUNDS_MS.length && ms > BOUNDS_MS[i]!) i++;
    this.counts[i]!++;
    this.sumMs += ms;
    this.count++;
  }
}

class ModelCells {
  /** HTTP status -> requests. */
  readonly statuses = new Map<number, number>();
  promptTokens = 0;
  completionTokens = 0;
}

class ProviderCells {
  readonly models = new Map<string, ModelCells>();
  readonly duration = new LatencyCells();
  readonly upstream = new LatencyCells();
  readonly firstByte = new LatencyCells();

  model(label: string): ModelCells {
    let cells = this.models.get(label);
    if (cells === undefined) this.models.set(label, (cells = new ModelCells()));
    return cells;
  }
}

/** Every model name each tenant's channels list (models, mapping aliases and targets), by tenant. */
export function modelsByTenant(directory: ChannelDirectory): Map<string, Set<string>> {
  const byTenant = new Map<string, Set<string>>();
  for (const { channel } of directory.values()) {
    let names = byTenant.get(channel.tenantId);
    if (names === undefined) byTenant.set(channel.tenantId, (names = new Set()));
    for (const m of channel.models) names.add(m);
    for (const [alias, target] of Object.entries(channel.modelMapping)) names.add(alias).add(target);
  }
  return byTenant;
}

/**
 * The models of every tenant's channels, rebuilt only when the channel directory changed (its
 * live view counts the events it folds): a request costs two Map lookups.
 */
export class KnownModels {
  private byTenant = new Map<string, Set<string>>();
  private builtFrom: ChannelDirectory | null = null;
  private builtAt = -1;

  constructor(
    private readonly directory: () => ChannelDirectory,
    /** Changes whenever the directory does (LiveView.eventsFolded). */
    private readonly version: () => number,
  ) {}

  has(tenantId: string, model: string): boolean {
    const directory = this.directory();
    const version = this.version();
    if (directory !== this.builtFrom || version !== this.builtAt) {
      this.byTenant = modelsByTenant(directory);
      this.builtFrom = directory;
      this.builtAt = version;
    }
    return this.byTenant.get(tenantId)?.has(model) === true;
  }
}

/** The relay series' cells and their export; `record` is the usage sink. */
export class RelayMetrics {
  private readonly providers = new Map<string, ProviderCells>();

  constructor(private readonly known: Pick<KnownModels, 'has'>) {}

  /** The model label of a request: what was served, else routed, else asked for; `other` unless the tenant's channels list it. */
  modelLabel(data: UsageData): string {
    const model = data.model_served ?? data.model_routed ?? data.model_requested;
    return this.known.has(data.tenant_id, model) ? model : OTHER_MODEL;
  }

  /** Counts one request (the usage publisher's sink: O(1), allocation-free for a combination seen before). */
  record(data: UsageData): void {
    const providerLabel = data.provider ?? NO_PROVIDER;
    let provider = this.providers.get(providerLabel);
    if (provider === undefined) this.providers.set(providerLabel, (provider = new ProviderCells()));
    const model = provider.model(this.modelLabel(data));
    model.statuses.set(data.status, (model.statuses.get(data.status) ?? 0) + 1);
    model.promptTokens += data.prompt_tokens;
    model.completionTokens += data.completion_tokens;
    provider.duration.observe(data.latency_ms);
    if (data.ttft_ms !== null) provider.firstByte.observe(data.ttft_ms);
    if (data.upstream_ms !== null && data.upstream_ms !== undefined) provider.upstream.observe(data.upstream_ms);
  }

  /** Registers the series in `registry` (read from the cells at every scrape). */
  register(registry: Registry): void {
    const families = [
      new ScrapedFamily('switchyard_relay_requests_total', 'Relayed requests by provider (channel type, none: no channel tried), model (other: not listed by the tenant\'s channels) and HTTP status answered', 'counter', () =>
        this.requestSamples(),
      ),
      new ScrapedFamily('switchyard_relay_tokens_total', 'Tokens of relayed requests by provider, model and type (prompt, completion)', 'counter', () => this.tokenSamples()),
      new ScrapedFamily('switchyard_relay_request_duration_seconds', 'Relayed requests from admission to the end of the answer, by provider', 'histogram', () =>
        this.histogramSamples('switchyard_relay_request_duration_seconds', (p) => p.duration),
      ),
      new ScrapedFamily(
        'switchyard_relay_upstream_latency_seconds',
        "Time from sending a request to the upstream (the last attempt; pool wait included) to the upstream's response headers, by provider",
        'histogram',
        () => this.histogramSamples('switchyard_relay_upstream_latency_seconds', (p) => p.upstream),
      ),
      new ScrapedFamily('switchyard_relay_time_to_first_byte_seconds', 'Streamed requests from admission to the first generated bytes sent to the client, by provider', 'histogram', () =>
        this.histogramSamples('switchyard_relay_time_to_first_byte_seconds', (p) => p.firstByte),
      ),
    ];
    // prom-client takes any object with its metrics' `get()` shape; its own classes offer no way
    // to hand over counts kept elsewhere.
    for (const family of families) registry.registerMetric(family as unknown as Metric);
  }

  private requestSamples(): Sample[] {
    const samples: Sample[] = [];
    for (const [provider, p] of this.providers) {
      for (const [model, m] of p.models) {
        for (const [status, count] of m.statuses) samples.push({ labels: { provider, model, status: String(status) }, value: count });
      }
    }
    return samples;
  }

  private tokenSamples(): Sample[] {
    const samples: Sample[] = [];
    for (const [provider, p] of this.providers) {
      for (const [model, m] of p.models) {
        samples.push({ labels: { provider, model, type: 'prompt' }, value: m.promptTokens }, { labels: { provider, model, type: 'completion' }, value: m.completionTokens });
      }
    }
    return samples;
  }

  private histogramSamples(name: string, cellsOf: (p: ProviderCells) => LatencyCells): Sample[] {
    const samples: Sample[] = [];
    for (const [provider, p] of this.providers) {
      const cells = cellsOf(p);
      if (cells.count === 0) continue;
      let cumulative = 0;
      for (let i = 0; i < cells.counts.length; i++) {
        cumulative += cells.counts[i]!;
        samples.push({ metricName: `${name}_bucket`, labels: { provider, le: BUCKET_LABELS[i]! }, value: cumulative });
      }
      samples.push({ metricName: `${name}_sum`, labels: { provider }, value: cells.sumMs / 1000 }, { metricName: `${name}_count`, labels: { provider }, value: cells.count });
    }
    return samples;
  }
}

/** One sample line as prom-client's registry formats it (a histogram's carry their own name). */
interface Sample {
  metricName?: string;
  labels: Record<string, string>;
  value: number;
}

/** A metric family the registry reads through `get()` at scrape, its samples computed then. */
class ScrapedFamily {
  readonly aggregator = 'sum';
  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: 'counter' | 'histogram',
    private readonly samples: () => Sample[],
  ) {}

  get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: Sample[] }> {
    return Promise.resolve({ name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values: this.samples() });
  }

  reset(): void {}
}
