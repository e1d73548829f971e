/**
 * The one contract every Counters adapter passes (src/ports/counters.ts). Each adapter's test file
 * calls `countersContract` with a factory that opens a fresh adapter on an empty namespace (a new
 * in-memory instance, a new Redis key prefix...).
 *
 * Timing tests use short windows/leases (hundreds of ms) and wait past them with generous margins:
 * they check behaviour (things slide and expire), not timing precision.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Counters } from '../../src/ports/counters.js';

export interface CountersFixture {
  counters: Counters;
  /** Removes everything the fixture created and closes the adapter. */
  cleanup(): Promise<void>;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export function countersContract(name: string, open: () => Promise<CountersFixture>, enabled: boolean) {
  describe.skipIf(!enabled)(`Counters contract: ${name}`, () => {
    const fixtures: CountersFixture[] = [];
    const start = async () => {
      const fixture = await open();
      fixtures.push(fixture);
      return fixture.counters;
    };
    afterEach(async () => {
      for (const fixture of fixtures.splice(0)) await fixture.cleanup();
    });

    describe('hitWindow', () => {
      it('allows up to the limit, then refuses with remaining 0 and a positive retryAfterMs', async () => {
        const c = await start();
        const opts = { limit: 3, windowMs: 10_000 };
        const hits = [];
        for (let i = 0; i < 3; i++) hits.push(await c.hitWindow('rate', opts));
        expect(hits).toEqual([
          { allowed: true, count: 1, remaining: 2, retryAfterMs: 0 },
          { allowed: true, count: 2, remaining: 1, retryAfterMs: 0 },
          { allowed: true, count: 3, remaining: 0, retryAfterMs: 0 },
        ]);
        const refused = await c.hitWindow('rate', opts);
        expect(refused.allowed).toBe(false);
        expect(refused.count).toBe(3);
        expect(refused.remaining).toBe(0);
        expect(refused.retryAfterMs).toBeGreaterThan(0);
        expect(refused.retryAfterMs).toBeLessThanOrEqual(10_000);
        // The oldest hit is only milliseconds old: it leaves the window in nearly a full window.
        expect(refused.retryAfterMs).toBeGreaterThan(5_000);
      });

      it('does not count refused hits', async () => {
        const c = await start();
        const opts = { limit: 2, windowMs: 10_000 };
        await c.hitWindow('rate', opts);
        await c.hitWindow('rate', opts);
        for (let i = 0; i < 5; i++) {
          const refused = await c.hitWindow('rate', opts);
          expect(refused).toMatchObject({ allowed: false, count: 2, remaining: 0 });
        }
        expect(await c.peekWindow('rate', 10_000)).toBe(2);
      });

      it('does not let refused hits delay the window sliding', async () => {
        const c = await start();
        const opts = { limit: 2, windowMs: 1_000 };
        expect((await c.hitWindow('rate', opts)).allowed).toBe(true);
        const firstAt = Date.now();
        await sleep(400);
        expect((await c.hitWindow('rate', opts)).allowed).toBe(true);
        expect((await c.hitWindow('rate', opts)).allowed).toBe(false); // would be at ~400 ms if counted
        await sleep(firstAt + 1_100 - Date.now());
        // The first hit has left (>1000 ms old), the second (~700 ms old) has not: one unit fits.
        const hit = await c.hitWindow('rate', opts);
        expect(hit).toMatchObject({ allowed: true, count: 2, remaining: 0 });
      });

      it('weighs hits by cost (default 1)', async () => {
        const c = await start();
        const limit = 10;
        expect(await c.hitWindow('tokens', { limit, windowMs: 10_000, cost: 4 })).toMatchObject({ allowed: true, count: 4, remaining: 6 });
        expect(await c.hitWindow('tokens', { limit, windowMs: 10_000, cost: 5 })).toMatchObject({ allowed: true, count: 9, remaining: 1 });
        expect(await c.hitWindow('tokens', { limit, windowMs: 10_000, cost: 2 })).toMatchObject({ allowed: false, count: 9, remaining: 1 });
        expect(await c.hitWindow('tokens', { limit, windowMs: 10_000 })).toMatchObject({ allowed: true, count: 10, remaining: 0 });
        expect(await c.hitWindow('tokens', { limit, windowMs: 10_000, cost: 1 })).toMatchObject({ allowed: false, count: 10, remaining: 0 });
        expect(await c.peekWindow('tokens', 10_000)).toBe(10);
        // A cost larger than the whole limit never fits.
        expect(await c.hitWindow('big', { limit, windowMs: 10_000, cost: 11 })).toMatchObject({ allowed: false, count: 0, remaining: 10 });
        expect(await c.peekWindow('big', 10_000)).toBe(0);
      });

      it('slides: hits leave the window windowMs after they were made', async () => {
        const c = await start();
        const opts = { limit: 2, windowMs: 300 };
        expect((await c.hitWindow('rate', opts)).allowed).toBe(true);
        expect((await c.hitWindow('rate', opts)).allowed).toBe(true);
        const refused = await c.hitWindow('rate', opts);
        expect(refused.allowed).toBe(false);
        expect(refused.retryAfterMs).toBeGreaterThan(0);
        expect(refused.retryAfterMs).toBeLessThanOrEqual(300);
        await sleep(400);
        expect(await c.peekWindow('rate', 300)).toBe(0);
        expect(await c.hitWindow('rate', opts)).toEqual({ allowed: true, count: 1, remaining: 1, retryAfterMs: 0 });
      });

      it('is a sliding window, not a fixed one: the rate cannot double at a window edge', async () => {
        const c = await start();
        const opts = { limit: 2, windowMs: 600 };
        const t0 = Date.now();
        expect(await c.hitWindow('rate', opts)).toMatchObject({ allowed: true, count: 1 });
        await sleep(300);
        // Any fixed 600 ms window boundary falls between t0 and t0+700: a fixed window would
        // report count 1 at one of the next two checks.
        expect(await c.hitWindow('rate', opts)).toMatchObject({ allowed: true, count: 2 });
        await sleep(t0 + 700 - Date.now());
        expect(await c.hitWindow('rate', opts)).toMatchObject({ allowed: true, count: 2 });
        const refused = await c.hitWindow('rate', opts);
        expect(refused).toMatchObject({ allowed: false, count: 2, remaining: 0 });
        // The ~400 ms old hit leaves in ~200 ms, not after a whole window.
        expect(refused.retryAfterMs).toBeGreaterThan(0);
        expect(refused.retryAfterMs).toBeLessThan(450);
      });
    });

    describe('peekWindow', () => {
      it('reads the weight in the window without adding to it', async () => {
        const c = await start();
        expect(await c.peekWindow('absent', 1_000)).toBe(0);
        await c.hitWindow('rate', { limit: 100, windowMs: 10_000, cost: 2 });
        await c.hitWindow('rate', { limit: 100, windowMs: 10_000, cost: 3 });
        expect(await c.peekWindow('rate', 10_000)).toBe(5);
        expect(await c.peekWindow('rate', 10_000)).toBe(5);
        expect(await c.hitWindow('rate', { limit: 100, windowMs: 10_000 })).toMatchObject({ count: 6, remaining: 94 });
      });

      it('answers for the windowMs it is asked about', async () => {
        const c = await start();
        await c.hitWindow('rate', { limit: 100, windowMs: 10_000, cost: 2 });
        await sleep(300);
        await c.hitWindow('rate', { limit: 100, windowMs: 10_000, cost: 3 });
        expect(await c.peekWindow('rate', 150)).toBe(3);
        expect(await c.peekWindow('rate', 10_000)).toBe(5);
        // Peeking with a short window must not drop hits that the real window still holds.
        expect(await c.hitWindow('rate', { limit: 100, windowMs: 10_000 })).toMatchObject({ count: 6 });
      });
    });

    describe('reserve', () => {
      it('succeeds only while used + amount <= limit', async () => {
        const c = await start();
        expect(await c.reserve('quota', 5, 10)).toEqual({ allowed: true, used: 5 });
        expect(await c.reserve('quota', 6, 10)).toEqual({ allowed: false, used: 5 });
        expect(await c.reserve('quota', 5, 10)).toEqual({ allowed: true, used: 10 });
        expect(await c.reserve('quota', 1, 10)).toEqual({ allowed: false, used: 10 });
        expect(await c.get('quota')).toBe(10);
        // Settle: the call used less than reserved.
        expect(await c.adjust('quota', -4)).toBe(6);
        expect(await c.reserve('quota', 4, 10)).toEqual({ allowed: true, used: 10 });
      });

      it('never overshoots under 50 concurrent reservations', async () => {
        const c = await start();
        const limit = 100;
        const amount = 7;
        const results = await Promise.all(Array.from({ length: 50 }, () => c.reserve('quota', amount, limit)));
        const granted = results.filter((r) => r.allowed);
        expect(granted).toHaveLength(Math.floor(limit / amount));
        expect(granted.map((r) => r.used).sort((a, b) => a - b)).toEqual(Array.from({ length: 14 }, (_, i) => (i + 1) * amount));
        for (const r of results.filter((r) => !r.allowed)) expect(r.used).toBe(98);
        expect(await c.get('quota')).toBe(98);
      });
    });

    describe('adjust / get / set', () => {
      it('reads 0 for an absent key', async () => {
        const c = await start();
        expect(await c.get('nothing-here')).toBe(0);
      });

      it('adds positive and negative deltas and returns the new value', async () => {
        const c = await start();
        expect(await c.adjust('n', 5)).toBe(5);
        expect(await c.adjust('n', -8)).toBe(-3);
        expect(await c.adjust('n', 1)).toBe(-2);
        expect(await c.get('n')).toBe(-2);
        expect(await c.adjust('fraction', 2.5)).toBe(2.5);
        expect(await c.adjust('fraction', 0.25)).toBe(2.75);
      });

      it('sets a value that adjust then continues from', async () => {
        const c = await start();
        await c.adjust('total', 3);
        await c.set('total', 42);
        expect(await c.get('total')).toBe(42);
        expect(await c.adjust('total', 1)).toBe(43);
        await c.set('total', 0);
        expect(await c.get('total')).toBe(0);
        expect(await c.reserve('total', 5, 5)).toEqual({ allowed: true, used: 5 });
      });

      it('expires keys given a TTL', async () => {
        const c = await start();
        expect(await c.adjust('adj', 1, 200)).toBe(1);
        await c.set('set', 9, 200);
        await c.adjust('keep', 1, 200);
        expect(await c.adjust('keep', 1)).toBe(2); // no ttlMs: keeps the existing expiry
        await c.set('persist', 5, 200);
        await c.set('persist', 6); // set without ttlMs: no expiry
        await c.adjust('forever', 7);
        expect(await c.get('adj')).toBe(1);
        expect(await c.get('set')).toBe(9);
        await sleep(350);
        expect(await c.get('adj')).toBe(0);
        expect(await c.get('set')).toBe(0);
        expect(await c.get('keep')).toBe(0);
        expect(await c.get('persist')).toBe(6);
        expect(await c.get('forever')).toBe(7);
        // An expired counter starts again from 0.
        expect(await c.adjust('adj', 2)).toBe(2);
      });

      it('refreshes the TTL when adjust is given one', async () => {
        const c = await start();
        await c.adjust('n', 1, 300);
        await sleep(200);
        await c.adjust('n', 1, 300);
        await sleep(200); // 400 ms after the first TTL was set, 200 ms into the second
        expect(await c.get('n')).toBe(2);
      });
    });

    describe('slots', () => {
      it('caps concurrent holders at the limit', async () => {
        const c = await start();
        const leases = [];
        for (let i = 0; i < 3; i++) leases.push(await c.acquireSlot('inflight', 3, 10_000));
        expect(leases.every((l) => typeof l === 'string' && l.length > 0)).toBe(true);
        expect(new Set(leases).size).toBe(3);
        expect(await c.acquireSlot('inflight', 3, 10_000)).toBeNull();
      });

      it('caps concurrent acquisitions exactly', async () => {
        const c = await start();
        const leases = await Promise.all(Array.from({ length: 20 }, () => c.acquireSlot('inflight', 5, 10_000)));
        expect(leases.filter((l) => l !== null)).toHaveLength(5);
      });

      it('frees a slot on release (and ignores unknown lease ids)', async () => {
        const c = await start();
        const a = await c.acquireSlot('inflight', 2, 10_000);
        const b = await c.acquireSlot('inflight', 2, 10_000);
        expect(a).not.toBeNull();
        expect(b).not.toBeNull();
        expect(await c.acquireSlot('inflight', 2, 10_000)).toBeNull();
        await c.releaseSlot('inflight', 'not-a-lease');
        expect(await c.acquireSlot('inflight', 2, 10_000)).toBeNull();
        await c.releaseSlot('inflight', a!);
        const next = await c.acquireSlot('inflight', 2, 10_000);
        expect(next).not.toBeNull();
        expect(await c.acquireSlot('inflight', 2, 10_000)).toBeNull();
        // Releasing twice frees nothing more.
        await c.releaseSlot('inflight', a!);
        expect(await c.acquireSlot('inflight', 2, 10_000)).toBeNull();
      });

      it('frees the slot of an expired lease by itself', async () => {
        const c = await start();
        const crashed = await c.acquireSlot('inflight', 1, 200);
        expect(crashed).not.toBeNull();
        const long = await c.acquireSlot('other', 1, 10_000);
        expect(await c.acquireSlot('inflight', 1, 200)).toBeNull();
        await sleep(350);
        const next = await c.acquireSlot('inflight', 1, 10_000);
        expect(next).not.toBeNull();
        expect(next).not.toBe(crashed);
        // A long lease elsewhere did not expire.
        expect(long).not.toBeNull();
        expect(await c.acquireSlot('other', 1, 10_000)).toBeNull();
        // The late release of the expired lease must not free the new holder's slot.
        await c.releaseSlot('inflight', crashed!);
        expect(await c.acquireSlot('inflight', 1, 10_000)).toBeNull();
      });
    });

    describe('clear', () => {
      it('removes every kind of key under the given prefix and nothing else', async () => {
        const c = await start();
        const fill = async (p: string) => {
          await c.adjust(`${p}n`, 5);
          await c.reserve(`${p}q`, 3, 10);
          await c.hitWindow(`${p}w`, { limit: 10, windowMs: 60_000 });
          expect(await c.acquireSlot(`${p}s`, 1, 60_000)).not.toBeNull();
        };
        await fill('a:');
        await fill('b:');
        await fill('ab');
        await c.clear('a:');

        expect(await c.get('a:n')).toBe(0);
        expect(await c.get('a:q')).toBe(0);
        expect(await c.peekWindow('a:w', 60_000)).toBe(0);
        expect(await c.acquireSlot('a:s', 1, 60_000)).not.toBeNull();
        for (const p of ['b:', 'ab']) {
          expect(await c.get(`${p}n`)).toBe(5);
          expect(await c.get(`${p}q`)).toBe(3);
          expect(await c.peekWindow(`${p}w`, 60_000)).toBe(1);
          expect(await c.acquireSlot(`${p}s`, 1, 60_000)).toBeNull();
        }
      });

      it('treats the prefix literally (no wildcards)', async () => {
        const c = await start();
        await c.set('x*1', 1);
        await c.set('xy1', 2);
        await c.set('x?1', 3);
        await c.set('x[y]1', 4);
        await c.clear('x*');
        expect(await c.get('x*1')).toBe(0);
        expect(await c.get('xy1')).toBe(2);
        expect(await c.get('x?1')).toBe(3);
        expect(await c.get('x[y]1')).toBe(4);
        await c.clear('x[y]');
        expect(await c.get('x[y]1')).toBe(0);
        expect(await c.get('xy1')).toBe(2);
      });

      it('clears everything with an empty prefix, but only in its own namespace', async () => {
        const c = await start();
        const other = await start();
        await c.set('k', 1);
        await other.set('k', 2);
        await other.hitWindow('w', { limit: 5, windowMs: 60_000 });
        expect(await c.get('k')).toBe(1);
        await c.clear('');
        expect(await c.get('k')).toBe(0);
        expect(await other.get('k')).toBe(2);
        expect(await other.peekWindow('w', 60_000)).toBe(1);
      });
    });

    describe('isolation', () => {
      it('keeps keys of different names apart', async () => {
        const c = await start();
        const opts = { limit: 1, windowMs: 10_000 };
        expect((await c.hitWindow('user-1', opts)).allowed).toBe(true);
        expect((await c.hitWindow('user-1', opts)).allowed).toBe(false);
        expect((await c.hitWindow('user-2', opts)).allowed).toBe(true);
        expect((await c.hitWindow('user-10', opts)).allowed).toBe(true);

        expect(await c.reserve('q1', 10, 10)).toEqual({ allowed: true, used: 10 });
        expect(await c.reserve('q2', 10, 10)).toEqual({ allowed: true, used: 10 });
        await c.adjust('q1', -4);
        expect(await c.get('q1')).toBe(6);
        expect(await c.get('q2')).toBe(10);

        expect(await c.acquireSlot('s1', 1, 10_000)).not.toBeNull();
        expect(await c.acquireSlot('s2', 1, 10_000)).not.toBeNull();
        expect(await c.acquireSlot('s1', 1, 10_000)).toBeNull();
      });

      it('keeps the same name used by different kinds apart', async () => {
        const c = await start();
        await c.adjust('same', 5);
        expect(await c.hitWindow('same', { limit: 10, windowMs: 10_000, cost: 2 })).toMatchObject({ allowed: true, count: 2 });
        expect(await c.acquireSlot('same', 1, 10_000)).not.toBeNull();
        expect(await c.get('same')).toBe(5);
        expect(await c.peekWindow('same', 10_000)).toBe(2);
        expect(await c.reserve('same', 5, 10)).toEqual({ allowed: true, used: 10 });
        expect(await c.peekWindow('same', 10_000)).toBe(2);
      });
    });

    it('answers ping and names its kind', async () => {
      const c = await start();
      await expect(c.ping()).resolves.toBeUndefined();
      expect(typeof c.kind).toBe('string');
      expect(c.kind.length).toBeGreaterThan(0);
    });
  });
}
