/**
 * Picks the channels to try for one request, in order. Pure over the in-memory channel
 * directory: no I/O.
 *
 * Usable = enabled, out of cooldown, its key opened (not broken), serves the model (directly or through its model_mapping),
 * belongs to the caller's tenant and is allowed for the caller. Order: the request's
 * provider_config (primary, then each fallback) when given, others excluded; else the tenant's
 * preferred providers (relay_settings default_provider, fallback_providers) first, then every
 * other channel; inside each group priority (lowest value first), and inside a priority smooth
 * weighted round-robin picks the first, the others follow by weight.
 *
 * Fallback channels (`fallback_for: [names or types]`) come after all of those, for the models a
 * channel they back up serves (whatever that channel's state: a cooled-down primary is when its
 * fallback matters most). The model they are sent: their own model_mapping of the requested name,
 * else the name itself when they list it, else their first model. For models no channel they
 * back up serves, they are ordinary channels.
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
  /** The tenant's preferred providers, tried first in this order, then every other channel (ignored when `providers` is given). */
  preferred?: readonly string[];
  /** Channel ids the caller may use (API key restrictions); undefined = all. */
  allowedChannelIds?: ReadonlySet<string>;
  now?: number;
}

export function servedModel(channel: Channel, model: string): string | null {
  const mapped = ownValue(channel.modelMapping, model);
  if (mapped) return mapped;
  return channel.models.includes(model) ? model : null;
}

/** The model a fallback channel is sent for a request of `model`: its own mapping, the name, or its first model. */
export function fallbackModel(channel: Channel, model: string): string {
  return servedModel(channel, model) ?? channel.models[0]!;
}

const named = (channel: Channel, names: readonly string[]) => names.includes(channel.type) || names.includes(channel.name);

type Usable = { entry: RoutableChannel; upstreamModel: string };

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

  /**
   * Why `model` has no candidate: `unknown` when no channel of the tenant lists it in any state
   * (a typo: 404, not worth a retry), else `unavailable` with the seconds until the first
   * cooldown ends (disabled or unhealthy channels: a minute, when an admin may have acted).
   */
  whyNoCandidate(tenantId: string, model: string, now = Date.now()): { kind: 'unknown' } | { kind: 'unavailable'; retryAfterSeconds: number } {
    let soonest = Infinity;
    let listed = false;
    for (const entry of this.directory().values()) {
      const c = entry.channel;
      if (c.tenantId !== tenantId || servedModel(c, model) === null) continue;
      listed = true;
      if (c.enabled && entry.cooldownUntil > now) soonest = Math.min(soonest, entry.cooldownUntil);
    }
    if (!listed) return { kind: 'unknown' };
    return { kind: 'unavailable', retryAfterSeconds: Number.isFinite(soonest) ? Math.max(1, Math.ceil((soonest - now) / 1000)) : 60 };
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
      if (channel.tenantId !== tenantId || !channel.enabled || entry.broken !== undefined) continue;
      for (const m of channel.models) add(channel, m, m);
      for (const [alias, upstream] of Object.entries(channel.modelMapping)) add(channel, alias, upstream);
    }
    return served;
  }

  candidates(query: RouteQuery): Candidate[] {
    const now = query.now ?? Date.now();
    let usable: Usable[] = [];
    let backups: Usable[] | null = null;
    for (const entry of this.directory().values()) {
      const c = entry.channel;
      if (c.tenantId !== query.tenantId || !c.enabled || entry.cooldownUntil > now || entry.broken !== undefined) continue;
      if (query.allowedChannelIds && !query.allowedChannelIds.has(c.id)) continue;
      if (c.fallbackFor !== undefined && c.fallbackFor.length > 0) (backups ??= []).push({ entry, upstreamModel: fallbackModel(c, query.model) });
      else {
        const upstreamModel = servedModel(c, query.model);
        if (upstreamModel) usable.push({ entry, upstreamModel });
      }
    }
    const fallbacks = backups === null ? null : this.fallbacks(query, backups);
    if (fallbacks !== null) usable = usable.concat(fallbacks.direct);
    const providers = query.providers !== undefined && query.providers.length > 0 ? query.providers.filter(Boolean) : [];
    const preferred = providers.length === 0 && query.preferred !== undefined ? query.preferred : [];
    // One usable channel and no order to apply (the common case): the order below would be just it.
    if (usable.length === 1 && providers.length === 0 && preferred.length === 0 && fallbacks === null) return [{ channel: usable[0]!.entry.channel, upstreamModel: usable[0]!.upstreamModel }];
    const groups =
      providers.length > 0 ? providers.map((p) => usable.filter((u) => named(u.entry.channel, [p]))) : [...preferred.map((p) => usable.filter((u) => named(u.entry.channel, [p]))), usable];
    if (fallbacks !== null && fallbacks.after.length > 0) groups.push(fallbacks.after);
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

  /**
   * Splits the tenant's fallback channels: `after` back up a channel of the tenant that serves the
   * model (in any state), `direct` do not and serve it themselves (ordinary candidates).
   */
  private fallbacks(query: RouteQuery, backups: Usable[]): { after: Usable[]; direct: Usable[] } {
    const servers: Channel[] = [];
    for (const entry of this.directory().values()) {
      const c = entry.channel;
      if (c.tenantId === query.tenantId && servedModel(c, query.model) !== null) servers.push(c);
    }
    const after: Usable[] = [];
    const direct: Usable[] = [];
    for (const backup of backups) {
      const c = backup.entry.channel;
      if (servers.some((s) => s.id !== c.id && named(s, c.fallbackFor!))) after.push(backup);
      else if (servedModel(c, query.model) !== null) direct.push(backup);
    }
    return { after, direct };
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
