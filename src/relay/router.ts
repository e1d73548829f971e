/**
 * Picks the channels to try for one request, in order. Pure over the in-memory channel
 * directory: no I/O.
 *
 * Usable = enabled, out of cooldown, serves the model (directly or through its model_mapping),
 * belongs to the caller's tenant and is allowed for the caller. Order: the request's
 * provider_config (primary, then each fallback) when given; then priority (lowest value first);
 * inside a priority, smooth weighted round-robin picks the first, the others follow by weight.
 */
import type { ChannelDirectory, RoutableChannel } from '../views/channels.js';
import type { Channel } from './channel.js';
import { ownValue } from '../own.js';
import { PROVIDERS } from './providers/index.js';

/** What a model serves, as GET /v1/models lists it. */
export type ModelCapability = 'chat' | 'embeddings';

/**
 * Whether the channel serves `name` (a name of its `models`, or an alias of its `model_mapping`
 * that points at `upstream`) as an embedding model: its kind must have an embeddings codec, and
 * the name or the upstream name must be in `config.embedding_models` when the channel sets that
 * list, else contain "embed" (text-embedding-3-small, nomic-embed-text, gemini-embedding-001,
 * embed-v4.0, amazon.titan-embed-text-v2:0...). Every other model is a chat model.
 */
export function isEmbeddingModel(channel: Channel, name: string, upstream = name): boolean {
  if (PROVIDERS[channel.type].embeddings === undefined) return false;
  const declared = channel.config.embedding_models;
  if (Array.isArray(declared)) return declared.includes(name) || declared.includes(upstream);
  return /embed/i.test(name) || /embed/i.test(upstream);
}

export interface Candidate {
  channel: Channel;
  /** Model name to send upstream. */
  upstreamModel: string;
}

export interface RouteQuery {
  tenantId: string;
  model: string;
  /** Provider names (channel type or channel name) in the order to try; empty = any. */
  providers?: readonly string[];
  /** Channel ids the caller may use (API key restrictions); undefined = all. */
  allowedChannelIds?: ReadonlySet<string>;
  now?: number;
}

export function servedModel(channel: Channel, model: string): string | null {
  const mapped = ownValue(channel.modelMapping, model);
  if (mapped) return mapped;
  return channel.models.includes(model) ? model : null;
}

export class Router {
  /** Smooth weighted round-robin state: group key -> channel id -> current weight. */
  private readonly rrState = new Map<string, Map<string, number>>();

  constructor(private readonly directory: () => ChannelDirectory) {}

  /** Every model the tenant's usable channels serve (for GET /v1/models). */
  models(tenantId: string): string[] {
    const names = new Set<string>();
    for (const entry of this.directory().values()) {
      if (entry.channel.tenantId !== tenantId || !entry.channel.enabled) continue;
      for (const m of entry.channel.models) names.add(m);
      for (const alias of Object.keys(entry.channel.modelMapping)) names.add(alias);
    }
    return [...names].sort();
  }

  /** Every model the tenant's usable channels serve, with what each serves (for GET /v1/models). */
  capabilities(tenantId: string): Map<string, Set<ModelCapability>> {
    const served = new Map<string, Set<ModelCapability>>();
    const add = (channel: Channel, name: string, upstream: string) => {
      let set = served.get(name);
      if (set === undefined) served.set(name, (set = new Set()));
      set.add(isEmbeddingModel(channel, name, upstream) ? 'embeddings' : 'chat');
    };
    for (const entry of this.directory().values()) {
      const channel = entry.channel;
      if (channel.tenantId !== tenantId || !channel.enabled) continue;
      for (const m of channel.models) add(channel, m, m);
      for (const [alias, upstream] of Object.entries(channel.modelMapping)) add(channel, alias, upstream);
    }
    return served;
  }

  candidates(query: RouteQuery): Candidate[] {
    const now = query.now ?? Date.now();
    const usable: Array<{ entry: RoutableChannel; upstreamModel: string }> = [];
    for (const entry of this.directory().values()) {
      const c = entry.channel;
      if (c.tenantId !== query.tenantId || !c.enabled || entry.cooldownUntil > now) continue;
      if (query.allowedChannelIds && !query.allowedChannelIds.has(c.id)) continue;
      const upstreamModel = servedModel(c, query.model);
      if (upstreamModel) usable.push({ entry, upstreamModel });
    }
    const providers = query.providers !== undefined && query.providers.length > 0 ? query.providers.filter(Boolean) : [];
    // One usable channel and no provider order (the common case): the order below would be just it.
    if (usable.length === 1 && providers.length === 0) return [{ channel: usable[0]!.entry.channel, upstreamModel: usable[0]!.upstreamModel }];
    const groups = providers.length > 0 ? providers.map((p) => usable.filter((u) => u.entry.channel.type === p || u.entry.channel.name === p)) : [usable];
    const ordered: Candidate[] = [];
    const seen = new Set<string>();
    groups.forEach((group, g) => {
      const byPriority = new Map<number, typeof group>();
      for (const u of group) {
        const list = byPriority.get(u.entry.channel.priority) ?? [];
        list.push(u);
        byPriority.set(u.entry.channel.priority, list);
      }
      for (const priority of [...byPriority.keys()].sort((a, b) => a - b)) {
        const tier = byPriority.get(priority)!;
        for (const u of this.weightedOrder(`${query.tenantId}|${query.model}|${g}|${priority}`, tier)) {
          if (seen.has(u.entry.channel.id)) continue;
          seen.add(u.entry.channel.id);
          ordered.push({ channel: u.entry.channel, upstreamModel: u.upstreamModel });
        }
      }
    });
    return ordered;
  }

  /** nginx-style smooth weighted round-robin for the first pick; the rest by weight. */
  private weightedOrder<T extends { entry: RoutableChannel }>(key: string, tier: T[]): T[] {
    if (tier.length <= 1) return tier;
    let state = this.rrState.get(key);
    if (!state) {
      state = new Map();
      this.rrState.set(key, state);
    }
    let total = 0;
    let best: T | undefined;
    let bestWeight = -Infinity;
    for (const u of tier) {
      const weight = u.entry.channel.weight;
      total += weight;
      const current = (state.get(u.entry.channel.id) ?? 0) + weight;
      state.set(u.entry.channel.id, current);
      if (current > bestWeight) {
        bestWeight = current;
        best = u;
      }
    }
    state.set(best!.entry.channel.id, bestWeight - total);
    const rest = tier.filter((u) => u !== best).sort((a, b) => b.entry.channel.weight - a.entry.channel.weight);
    return [best!, ...rest];
  }
}
