/**
 * Channel health, shared by every instance through events.
 *
 * Passive: failures of live traffic are counted in a sliding window in the counters port (so all
 * instances count together); the Nth failure within the window marks the channel unhealthy with a
 * cooldown. A 429 (or a "0 requests remaining" header) cools the channel down for Retry-After.
 * After its cooldown a channel takes traffic again ("half-open"): the first success marks it
 * healthy. Active: with HEALTH_CHECK_ENABLED one instance at a time (a lease in the counters port)
 * re-probes unhealthy channels whose cooldown has ended, so they come back without live traffic.
 */
import { channels } from '../commands/channels/decider.js';
import type { CommandBus } from '../commands/bus.js';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import type { Counters } from '../ports/counters.js';
import type { ChannelDirectory } from '../views/channels.js';
import type { Channel } from './channel.js';
import { probeChannel } from './probe.js';
import type { UpstreamPools } from './upstream-pool.js';

export class ChannelHealth {
  private prober: NodeJS.Timeout | null = null;

  constructor(
    private readonly commands: CommandBus,
    private readonly counters: Counters,
    private readonly directory: () => ChannelDirectory,
    private readonly settings: Config['relay'],
    private readonly logger: Logger,
  ) {}

  /** A failed attempt: connection error, timeout, 5xx, or the upstream refusing our key. */
  failure(channel: Channel, reason: string, requestId: string): void {
    this.track(this.countFailure(channel, reason, requestId).catch((error: unknown) => this.logger.warn({ err: error, channel: channel.id }, 'could not record a channel failure')));
  }

  /** Health writes started from the request path (never awaited there): tracked so they can be awaited. */
  private readonly pending = new Set<Promise<unknown>>();

  private track(write: Promise<unknown>): void {
    this.pending.add(write);
    void write.finally(() => this.pending.delete(write));
  }

  /** Resolves once every health write started so far has landed (shutdown; tests that reset health). */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  private async countFailure(channel: Channel, reason: string, requestId: string) {
    const hit = await this.counters.hitWindow(`chfail:${channel.id}`, { limit: this.settings.failureThreshold - 1, windowMs: this.settings.failureWindowMs });
    if (hit.allowed) return; // fewer than N failures in the window
    const entry = this.directory().get(channel.id);
    if (entry && !entry.healthy && entry.cooldownUntil > Date.now()) return; // already marked
    await this.setHealth(channel, false, Date.now() + this.settings.cooldownMs, `${this.settings.failureThreshold} failures within ${this.settings.failureWindowMs / 1000}s; last: ${reason}`, requestId);
  }

  /** The upstream asked us to slow down: skip the channel until `retryAfterMs` from now. */
  rateLimited(channel: Channel, retryAfterMs: number, requestId: string): void {
    const entry = this.directory().get(channel.id);
    const until = Date.now() + retryAfterMs;
    if (entry && entry.cooldownUntil >= until) return;
    this.track(
      this.setHealth(channel, entry?.healthy ?? true, until, `rate limited by upstream for ${Math.round(retryAfterMs / 1000)}s`, requestId).catch((error: unknown) =>
        this.logger.warn({ err: error, channel: channel.id }, 'could not record a channel cooldown'),
      ),
    );
  }

  success(channel: Channel, requestId: string): void {
    const entry = this.directory().get(channel.id);
    if (!entry || entry.healthy) return;
    this.track(
      this.setHealth(channel, true, null, 'request succeeded after cooldown', requestId).catch((error: unknown) =>
        this.logger.warn({ err: error, channel: channel.id }, 'could not record channel recovery'),
      ),
    );
  }

  async setHealth(channel: Channel, healthy: boolean, cooldownUntil: number | null, reason: string, causationId: string | null): Promise<void> {
    await this.commands.execute(
      channels,
      channel.id,
      { type: 'SetChannelHealth', healthy, cooldownUntil: cooldownUntil === null ? null : new Date(cooldownUntil).toISOString(), reason },
      { tenantId: channel.tenantId, causationId },
    );
  }

  startProber(pools: UpstreamPools): void {
    const interval = this.settings.healthCheckIntervalMs;
    this.prober = setInterval(() => {
      void this.probeRound(pools, interval).catch((error: unknown) => this.logger.warn({ err: error }, 'health probe round failed'));
    }, interval);
    this.prober.unref();
  }

  /** Probes unhealthy channels whose cooldown has ended (one instance at a time). */
  async probeRound(pools: UpstreamPools, leaseMs: number): Promise<number> {
    const lease = await this.counters.acquireSlot('health-prober', 1, leaseMs);
    if (!lease) return 0;
    let probed = 0;
    try {
      const now = Date.now();
      for (const entry of this.directory().values()) {
        if (entry.healthy || !entry.channel.enabled || entry.cooldownUntil > now || entry.broken !== undefined) continue;
        probed++;
        const result = await probeChannel(entry.channel, pools, undefined, this.logger);
        if (result.ok) await this.setHealth(entry.channel, true, null, `probe succeeded in ${result.latencyMs} ms`, null);
        else await this.setHealth(entry.channel, false, Date.now() + this.settings.cooldownMs, `probe failed: ${result.error ?? result.status}`, null);
      }
    } finally {
      // Keep the lease until it expires: other instances skip this round.
    }
    return probed;
  }

  stop(): void {
    if (this.prober) clearInterval(this.prober);
    this.prober = null;
  }
}
