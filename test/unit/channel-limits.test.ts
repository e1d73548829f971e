/** A channel's own rate limits over the memory counters (the Redis ones pass the same contract). */
import { describe, expect, it } from 'vitest';
import { MemoryCounters } from '../../src/adapters/counters/memory.js';
import type { Channel } from '../../src/relay/channel.js';
import { ChannelLimits, ChannelsRateLimited } from '../../src/relay/channel-limits.js';
import type { Candidate } from '../../src/relay/router.js';

function candidate(id: string, rateLimits: Channel['rateLimits'] = null): Candidate {
  const channel: Channel = { id, tenantId: 't', name: id, type: 'openai', baseUrl: 'http://x', apiKey: 'k', models: ['m'], modelMapping: {}, priority: 0, weight: 1, enabled: true, config: {}, rateLimits };
  return { channel, upstreamModel: 'm' };
}

describe('channel limits', () => {
  it('hands back a channel without limits at once: no promise, no counters call', () => {
    const counters = new MemoryCounters();
    const limits = new ChannelLimits(counters);
    const plain = candidate('plain');
    expect(limits.pick([plain, candidate('limited', { requests_per_minute: 1 })], 0)).toBe(0);
    expect(limits.pick([candidate('limited', { requests_per_minute: 1 }), plain], 3)).toBe(3);
    expect(limits.settle(plain.channel, 100)).toBeNull();
    expect(counters.keyCount()).toBe(0);
  });

  it('skips a channel at its requests_per_minute to the next one, and refuses when none is left', async () => {
    let now = 1_000_000;
    const limits = new ChannelLimits(new MemoryCounters({ now: () => now }));
    const a = candidate('a', { requests_per_minute: 2 });
    const b = candidate('b', { requests_per_minute: 1 });
    const picks = [];
    for (let i = 0; i < 3; i++) picks.push(await limits.pick([a, b], 0));
    expect(picks).toEqual([0, 0, 1]);
    const refused = await limits.pick([a, b], 0);
    expect(refused).toBeInstanceOf(ChannelsRateLimited);
    expect((refused as ChannelsRateLimited).retryAfterMs).toBe(60_000);
    expect((refused as ChannelsRateLimited).error()).toMatchObject({ status: 429, code: 'channel_rate_limited', headers: { 'retry-after': '60' } });
    now += 60_001;
    expect(await limits.pick([a, b], 1)).toBe(1); // b again, at position 1
    expect(await limits.pick([a, b], 2)).toBe(2); // a, its minute over
  });

  it('checks tokens_per_minute before sending and counts real tokens after', async () => {
    const limits = new ChannelLimits(new MemoryCounters());
    const c = candidate('c', { tokens_per_minute: 100 });
    expect(await limits.pick([c], 0)).toBe(0);
    await limits.settle(c.channel, 60);
    expect(await limits.pick([c], 0)).toBe(0);
    await limits.settle(c.channel, 60);
    expect(await limits.pick([c], 0)).toBeInstanceOf(ChannelsRateLimited);
  });
});
