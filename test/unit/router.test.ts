import { describe, expect, it } from 'vitest';
import type { ChannelDirectory, RoutableChannel } from '../../src/views/channels.js';
import type { Channel } from '../../src/relay/channel.js';
import { Router } from '../../src/relay/router.js';

function channel(id: string, over: Partial<Channel> = {}, health: Partial<RoutableChannel> = {}): [string, RoutableChannel] {
  const c: Channel = { id, tenantId: 't1', name: id, type: 'openai', baseUrl: 'http://x', apiKey: 'k', models: ['m'], modelMapping: {}, priority: 0, weight: 1, enabled: true, config: {}, ...over };
  return [id, { channel: c, baseUrlSetting: null, healthy: true, cooldownUntil: 0, ...health }];
}

describe('router', () => {
  it('keeps only usable channels of the tenant that serve the model, lowest priority first', () => {
    const dir: ChannelDirectory = new Map([
      channel('late', { priority: 5 }),
      channel('early', { priority: -1 }),
      channel('other-tenant', { tenantId: 't2' }),
      channel('disabled', { enabled: false }),
      channel('cooling', {}, { cooldownUntil: Date.now() + 60_000 }),
      channel('wrong-model', { models: ['x'] }),
      channel('aliased', { models: ['real'], modelMapping: { m: 'real-upstream' }, priority: 1 }),
    ]);
    const router = new Router(() => dir);
    const picked = router.candidates({ tenantId: 't1', model: 'm' });
    expect(picked.map((c) => [c.channel.id, c.upstreamModel])).toEqual([
      ['early', 'm'],
      ['aliased', 'real-upstream'],
      ['late', 'm'],
    ]);
    expect(router.candidates({ tenantId: 't1', model: 'nope' })).toEqual([]);
    expect(router.candidates({ tenantId: 't1', model: 'm', allowedChannelIds: new Set(['late']) }).map((c) => c.channel.id)).toEqual(['late']);
  });

  it('a cooled-down channel comes back when its cooldown ends', () => {
    const dir: ChannelDirectory = new Map([channel('a', {}, { healthy: false, cooldownUntil: 1000 })]);
    const router = new Router(() => dir);
    expect(router.candidates({ tenantId: 't1', model: 'm', now: 999 })).toEqual([]);
    expect(router.candidates({ tenantId: 't1', model: 'm', now: 1000 })).toHaveLength(1);
  });

  it('spreads first picks by weight inside a priority (smooth weighted round-robin)', () => {
    const dir: ChannelDirectory = new Map([channel('a', { weight: 3 }), channel('b', { weight: 1 })]);
    const router = new Router(() => dir);
    const firsts = Array.from({ length: 8 }, () => router.candidates({ tenantId: 't1', model: 'm' }).map((c) => c.channel.id));
    expect(firsts.map((f) => f[0])).toEqual(['a', 'a', 'b', 'a', 'a', 'a', 'b', 'a']);
    for (const f of firsts) expect([...f].sort()).toEqual(['a', 'b']); // the other is the fallback
  });

  it('follows provider_config: primary first, then fallbacks, others excluded', () => {
    const dir: ChannelDirectory = new Map([
      channel('oa', { type: 'openai', priority: 0 }),
      channel('an', { type: 'anthropic', priority: 9 }),
      channel('named', { type: 'custom', name: 'my-vllm', priority: 0 }),
    ]);
    const router = new Router(() => dir);
    expect(router.candidates({ tenantId: 't1', model: 'm', providers: ['anthropic', 'my-vllm'] }).map((c) => c.channel.id)).toEqual(['an', 'named']);
  });

  it("puts the tenant's preferred providers first, then every other channel; provider_config still excludes the rest", () => {
    const dir: ChannelDirectory = new Map([
      channel('oa', { type: 'openai', priority: 0 }),
      channel('an', { type: 'anthropic', priority: 9 }),
      channel('named', { type: 'custom', name: 'my-vllm', priority: 5 }),
    ]);
    const router = new Router(() => dir);
    expect(router.candidates({ tenantId: 't1', model: 'm', preferred: ['anthropic', 'my-vllm'] }).map((c) => c.channel.id)).toEqual(['an', 'named', 'oa']);
    expect(router.candidates({ tenantId: 't1', model: 'm', preferred: ['nobody'] }).map((c) => c.channel.id)).toEqual(['oa', 'named', 'an']);
    expect(router.candidates({ tenantId: 't1', model: 'm', providers: ['my-vllm'], preferred: ['anthropic'] }).map((c) => c.channel.id)).toEqual(['named']);
  });

  it('tries fallback channels after the channels they back up (in any state), with their own model', () => {
    const dir: ChannelDirectory = new Map([
      channel('primary', { models: ['m'], priority: 5 }),
      channel('other', { type: 'anthropic', models: ['m'], priority: 6 }),
      channel('backup', { models: ['b-default', 'b-2'], modelMapping: { aliased: 'b-2' }, fallbackFor: ['primary'], priority: -10 }),
      channel('by-type', { models: ['t-model'], fallbackFor: ['anthropic'] }),
      channel('cold', { models: ['cold-m'] }, { healthy: false, cooldownUntil: Date.now() + 60_000 }),
      channel('cold-backup', { models: ['warm'], fallbackFor: ['cold'] }),
    ]);
    const router = new Router(() => dir);
    expect(router.candidates({ tenantId: 't1', model: 'm' }).map((c) => [c.channel.id, c.upstreamModel])).toEqual([
      ['primary', 'm'],
      ['other', 'm'],
      ['backup', 'b-default'],
      ['by-type', 't-model'],
    ]);
    // Its own mapping decides the model; for its own models it backs up nobody: an ordinary channel.
    dir.set(...channel('aliased-primary', { name: 'primary-2', models: ['aliased'] }));
    dir.set('backup', channel('backup', { models: ['b-default', 'b-2'], modelMapping: { aliased: 'b-2' }, fallbackFor: ['primary', 'primary-2'], priority: -10 })[1]);
    expect(router.candidates({ tenantId: 't1', model: 'aliased' }).map((c) => [c.channel.id, c.upstreamModel])).toEqual([
      ['aliased-primary', 'aliased'],
      ['backup', 'b-2'],
    ]);
    expect(router.candidates({ tenantId: 't1', model: 'b-default' }).map((c) => [c.channel.id, c.upstreamModel])).toEqual([['backup', 'b-default']]);
    // The channel it backs up is cooling down: the fallback is the one left.
    expect(router.candidates({ tenantId: 't1', model: 'cold-m' }).map((c) => [c.channel.id, c.upstreamModel])).toEqual([['cold-backup', 'warm']]);
    expect(router.candidates({ tenantId: 't1', model: 'unserved' })).toEqual([]);
  });

  it('lists the models a tenant can use', () => {
    const dir: ChannelDirectory = new Map([channel('a', { models: ['m2', 'm1'], modelMapping: { alias: 'm1' } }), channel('b', { tenantId: 't2', models: ['secret'] })]);
    expect(new Router(() => dir).models('t1')).toEqual(['alias', 'm1', 'm2']);
  });

  it('serves no Object.prototype name: model_mapping is looked up by own keys only, also when parsed from the log', () => {
    const mapping = JSON.parse('{"fast":"m","__proto__":"evil"}') as Record<string, string>;
    const dir: ChannelDirectory = new Map([channel('a', { modelMapping: mapping }), channel('b', { modelMapping: {} })]);
    const router = new Router(() => dir);
    for (const name of [...Object.getOwnPropertyNames(Object.prototype), '__proto__']) {
      expect(router.candidates({ tenantId: 't1', model: name }).map((c) => [c.channel.id, c.upstreamModel]), name).toEqual(name === '__proto__' ? [['a', 'evil']] : []);
    }
    expect(router.candidates({ tenantId: 't1', model: 'fast' }).map((c) => c.upstreamModel)).toEqual(['m']);
  });
});
