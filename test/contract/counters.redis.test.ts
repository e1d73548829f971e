import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { RedisCounters } from '../../src/adapters/counters/redis.js';
import { uniqueSuffix } from '../support/services.js';
import { countersContract } from './counters.contract.js';

const enabled = inject('services').redis;
const url = inject('serviceUrls').redis;
/** Unique per test file; each fixture gets its own sub-prefix so fixtures never share a key. */
const filePrefix = `test:counters:${uniqueSuffix()}:`;
let fixtureSeq = 0;

countersContract(
  'redis',
  async () => {
    const counters = new RedisCounters({ url, keyPrefix: `${filePrefix}${fixtureSeq++}:` });
    return {
      counters,
      cleanup: async () => {
        await counters.clear('');
        await counters.close();
      },
    };
  },
  enabled,
);

describe.skipIf(!enabled)('RedisCounters specifics', () => {
  let raw: Redis;
  beforeAll(() => {
    raw = new Redis(url);
  });
  afterAll(async () => {
    const keys = [];
    let cursor = '0';
    do {
      const [next, batch] = await raw.scan(cursor, 'MATCH', `${filePrefix}*`, 'COUNT', 1000);
      cursor = next;
      keys.push(...batch);
    } while (cursor !== '0');
    expect(keys).toEqual([]); // every fixture cleaned up after itself
    await raw.quit();
  });

  it('namespaces every key under keyPrefix and lets idle windows and leases expire', async () => {
    const prefix = `${filePrefix}spec:`;
    const c = new RedisCounters({ url, keyPrefix: prefix });
    try {
      await c.hitWindow('w', { limit: 5, windowMs: 300 });
      await c.acquireSlot('s', 2, 300);
      await c.adjust('n', 1);
      const [, keys] = await raw.scan('0', 'MATCH', `${prefix}*`, 'COUNT', 1000);
      expect(keys.sort()).toEqual([`${prefix}c:n`, `${prefix}s:s`, `${prefix}t:w`, `${prefix}w:w`]);
      for (const key of [`${prefix}w:w`, `${prefix}t:w`, `${prefix}s:s`]) {
        const ttl = await raw.pttl(key);
        expect(ttl).toBeGreaterThan(0);
        expect(ttl).toBeLessThanOrEqual(301);
      }
      expect(await raw.pttl(`${prefix}c:n`)).toBe(-1);
      await new Promise((r) => setTimeout(r, 400));
      expect(await raw.exists(`${prefix}w:w`, `${prefix}t:w`, `${prefix}s:s`)).toBe(0);
    } finally {
      await c.clear('');
      await c.close();
    }
  });

  it('admits and settles in one round trip each, on the keys of the single operations', async () => {
    const prefix = `${filePrefix}admit:`;
    const client = new Redis(url);
    const c = new RedisCounters({ client, keyPrefix: prefix });
    try {
      const request = {
        windows: [{ key: 'w', limit: 5, windowMs: 300 }],
        checkWindows: [{ key: 'cw', limit: 5, windowMs: 300 }],
        slot: { key: 's', limit: 2, leaseMs: 300 },
        reservation: { key: 'q', amount: 3, limit: 10 },
      };
      await c.admit(request); // loads the script (EVALSHA may fall back to EVAL once)
      await c.settle({ charge: [{ key: 'cw', windowMs: 300, cost: 1 }] });
      const sent: string[] = [];
      const send = client.sendCommand.bind(client);
      client.sendCommand = ((command: { name: string }, ...rest: unknown[]) => {
        sent.push(command.name);
        return (send as (...args: unknown[]) => unknown)(command, ...rest);
      }) as typeof client.sendCommand;
      const admitted = await c.admit(request);
      expect(sent).toEqual(['evalsha']);
      if (!admitted.allowed) throw new Error('expected admission');
      await c.settle({ charge: [{ key: 'cw', windowMs: 300, cost: 2 }], reservation: { key: 'q', reserved: 3, actual: 1 }, slot: { key: 's', leaseId: admitted.leaseId! } });
      expect(sent).toEqual(['evalsha', 'evalsha']);
      client.sendCommand = send;

      const [, keys] = await raw.scan('0', 'MATCH', `${prefix}*`, 'COUNT', 1000);
      expect(keys.sort()).toEqual([`${prefix}c:q`, `${prefix}s:s`, `${prefix}t:cw`, `${prefix}t:w`, `${prefix}w:cw`, `${prefix}w:w`]);
      expect(await raw.get(`${prefix}c:q`)).toBe('4');
      expect(await raw.pttl(`${prefix}c:q`)).toBe(-1);
      for (const key of [`${prefix}w:w`, `${prefix}t:w`, `${prefix}w:cw`, `${prefix}t:cw`, `${prefix}s:s`]) {
        const ttl = await raw.pttl(key);
        expect(ttl).toBeGreaterThan(0);
        expect(ttl).toBeLessThanOrEqual(301);
      }
      await new Promise((r) => setTimeout(r, 400));
      expect(await raw.exists(`${prefix}w:w`, `${prefix}t:w`, `${prefix}w:cw`, `${prefix}t:cw`, `${prefix}s:s`)).toBe(0);
    } finally {
      await c.clear('');
      await c.close();
      await client.quit();
    }
  });

  it('rebuilds a lost window total from the log in admit too', async () => {
    const prefix = `${filePrefix}admit-rebuild:`;
    const c = new RedisCounters({ url, keyPrefix: prefix });
    try {
      await c.hitWindow('w', { limit: 10, windowMs: 10_000, cost: 3 });
      await c.settle({ charge: [{ key: 'w', windowMs: 10_000, cost: 4 }] });
      await raw.del(`${prefix}t:w`);
      expect(await c.admit({ windows: [{ key: 'w', limit: 10, windowMs: 10_000, cost: 4 }], checkWindows: [] })).toMatchObject({ allowed: false, windows: [{ count: 7 }] });
      expect(await c.admit({ windows: [{ key: 'w', limit: 10, windowMs: 10_000, cost: 3 }], checkWindows: [] })).toMatchObject({ allowed: true, windows: [{ count: 10 }] });
      expect(await c.peekWindow('w', 10_000)).toBe(10);
    } finally {
      await c.clear('');
      await c.close();
    }
  });

  it('rebuilds a lost window total from the log', async () => {
    const prefix = `${filePrefix}rebuild:`;
    const c = new RedisCounters({ url, keyPrefix: prefix });
    try {
      await c.hitWindow('w', { limit: 10, windowMs: 10_000, cost: 3 });
      await c.hitWindow('w', { limit: 10, windowMs: 10_000, cost: 4 });
      await raw.del(`${prefix}t:w`);
      expect(await c.peekWindow('w', 10_000)).toBe(7);
      expect(await c.hitWindow('w', { limit: 10, windowMs: 10_000, cost: 4 })).toMatchObject({ allowed: false, count: 7 });
      expect(await c.hitWindow('w', { limit: 10, windowMs: 10_000, cost: 3 })).toMatchObject({ allowed: true, count: 10 });
    } finally {
      await c.clear('');
      await c.close();
    }
  });

  it('uses a borrowed client without closing it, and shares state across instances', async () => {
    const prefix = `${filePrefix}shared:`;
    const client = new Redis(url);
    const a = new RedisCounters({ client, keyPrefix: prefix });
    const b = new RedisCounters({ url, keyPrefix: prefix });
    try {
      expect(await a.reserve('q', 6, 10)).toEqual({ allowed: true, used: 6 });
      expect(await b.reserve('q', 6, 10)).toEqual({ allowed: false, used: 6 });
      await a.close();
      expect(await client.ping()).toBe('PONG');
      expect(() => new RedisCounters({ client: new Redis(url, { keyPrefix: 'x:', lazyConnect: true }), keyPrefix: prefix })).toThrow(/keyPrefix/);
    } finally {
      await b.clear('');
      await b.close();
      await client.quit();
    }
  });
});
