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

    describe('owner leases', () => {
      it('is taken when free, renewed by its owner, refused to others, and freed by its owner only', async () => {
        const c = await start();
        expect(await c.holdLease('job', 'a', 60_000)).toBe(true);
        expect(await c.holdLease('job', 'b', 60_000)).toBe(false);
        expect(await c.holdLease('job', 'a', 60_000)).toBe(true);
        await c.releaseLease('job', 'b'); // not b's: nothing happens
        expect(await c.holdLease('job', 'b', 60_000)).toBe(false);
        await c.releaseLease('job', 'a');
        expect(await c.holdLease('job', 'b', 60_000)).toBe(true);
        expect(await c.holdLease('job', 'a', 60_000)).toBe(false);
        // Leases of other keys, and counters of the same name, are apart.
        expect(await c.holdLease('other-job', 'a', 60_000)).toBe(true);
        await c.set('job', 7);
        expect(await c.get('job')).toBe(7);
        expect(await c.holdLease('job', 'a', 60_000)).toBe(false);
      });

      it('passes to another owner once the holder stops renewing it', async () => {
        const c = await start();
        expect(await c.holdLease('job', 'a', 300)).toBe(true);
        expect(await c.holdLease('job', 'b', 300)).toBe(false);
        await sleep(450);
        expect(await c.holdLease('job', 'b', 60_000)).toBe(true);
        expect(await c.holdLease('job', 'a', 300)).toBe(false);
      });

      it('renewing pushes the expiry forward', async () => {
        const c = await start();
        expect(await c.holdLease('job', 'a', 400)).toBe(true);
        await sleep(250);
        expect(await c.holdLease('job', 'a', 400)).toBe(true);
        await sleep(250); // past the first lease's end, within the renewed one
        expect(await c.holdLease('job', 'b', 400)).toBe(false);
      });

      it('goes to exactly one of 20 owners racing for it', async () => {
        const c = await start();
        const taken = await Promise.all(Array.from({ length: 20 }, (_, i) => c.holdLease('race', `owner-${i}`, 60_000)));
        expect(taken.filter(Boolean)).toHaveLength(1);
      });

      it('is removed by clear', async () => {
        const c = await start();
        expect(await c.holdLease('p:job', 'a', 60_000)).toBe(true);
        await c.clear('p:');
        expect(await c.holdLease('p:job', 'b', 60_000)).toBe(true);
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

    describe('admit / settle', () => {
      const MIN = 60_000;

      it('counts the request in every window when everything passes', async () => {
        const c = await start();
        const request = {
          windows: [
            { key: 'rpm', limit: 5, windowMs: MIN },
            { key: 'burst', limit: 3, windowMs: 10_000 },
            { key: 'weighted', limit: 10, windowMs: MIN, cost: 4 },
          ],
          checkWindows: [{ key: 'tph', limit: 1_000, windowMs: 3_600_000 }],
        };
        const first = await c.admit(request);
        expect(first).toMatchObject({
          allowed: true,
          leaseId: null,
          quotaUsed: null,
          windows: [
            { count: 1, remaining: 4 },
            { count: 1, remaining: 2 },
            { count: 4, remaining: 6 },
          ],
          checkWindows: [{ count: 0, remaining: 1_000, resetMs: 0 }],
        });
        const [rpm, burst] = first.windows;
        expect(rpm!.resetMs).toBeGreaterThan(MIN - 5_000);
        expect(rpm!.resetMs).toBeLessThanOrEqual(MIN);
        expect(burst!.resetMs).toBeGreaterThan(5_000);
        expect(burst!.resetMs).toBeLessThanOrEqual(10_000);
        const second = await c.admit(request);
        expect(second).toMatchObject({ allowed: true, windows: [{ count: 2 }, { count: 2 }, { count: 8, remaining: 2 }] });
        expect(await c.peekWindow('rpm', MIN)).toBe(2);
        expect(await c.peekWindow('burst', 10_000)).toBe(2);
        expect(await c.peekWindow('weighted', MIN)).toBe(8);
        expect(await c.peekWindow('tph', 3_600_000)).toBe(0);
        // An admission with nothing to check is allowed.
        expect(await c.admit({ windows: [], checkWindows: [] })).toEqual({ allowed: true, leaseId: null, windows: [], checkWindows: [], quotaUsed: null });
      });

      it('refuses on a full window with its index, limit, remaining and retryAfterMs', async () => {
        const c = await start();
        await c.hitWindow('burst', { limit: 2, windowMs: 10_000 });
        await c.hitWindow('burst', { limit: 2, windowMs: 10_000 });
        const refused = await c.admit({
          windows: [
            { key: 'rpm', limit: 10, windowMs: MIN },
            { key: 'burst', limit: 2, windowMs: 10_000 },
          ],
          checkWindows: [{ key: 'tph', limit: 100, windowMs: MIN }],
        });
        expect(refused).toMatchObject({
          allowed: false,
          reason: 'window',
          index: 1,
          limit: 2,
          remaining: 0,
          windows: [
            { count: 0, remaining: 10, resetMs: 0 },
            { count: 2, remaining: 0 },
          ],
          checkWindows: [{ count: 0, remaining: 100, resetMs: 0 }],
          quotaUsed: null,
        });
        if (refused.allowed) throw new Error('unreachable');
        expect(refused.retryAfterMs).toBeGreaterThan(5_000);
        expect(refused.retryAfterMs).toBeLessThanOrEqual(10_000);
        expect(refused.windows[1]!.resetMs).toBeGreaterThan(5_000);
        expect(refused.windows[1]!.resetMs).toBeLessThanOrEqual(10_000);
        expect(await c.peekWindow('rpm', MIN)).toBe(0);
      });

      it("refuses a window when this request's cost does not fit, with retryAfterMs for that cost", async () => {
        const c = await start();
        await c.hitWindow('tokens', { limit: 10, windowMs: 10_000, cost: 8 });
        const refused = await c.admit({ windows: [{ key: 'tokens', limit: 10, windowMs: 10_000, cost: 5 }], checkWindows: [] });
        expect(refused).toMatchObject({ allowed: false, reason: 'window', index: 0, limit: 10, remaining: 2, windows: [{ count: 8, remaining: 2 }] });
        if (refused.allowed) throw new Error('unreachable');
        expect(refused.retryAfterMs).toBeGreaterThan(5_000);
        expect(refused.retryAfterMs).toBeLessThanOrEqual(10_000);
        // A cost that fits in what is left is allowed.
        expect(await c.admit({ windows: [{ key: 'tokens', limit: 10, windowMs: 10_000, cost: 2 }], checkWindows: [] })).toMatchObject({
          allowed: true,
          windows: [{ count: 10, remaining: 0 }],
        });
        // A cost above the whole limit never fits; retryAfterMs is still positive.
        const never = await c.admit({ windows: [{ key: 'empty', limit: 10, windowMs: 10_000, cost: 11 }], checkWindows: [] });
        expect(never).toMatchObject({ allowed: false, reason: 'window', index: 0, remaining: 10 });
        if (never.allowed) throw new Error('unreachable');
        expect(never.retryAfterMs).toBeGreaterThan(0);
      });

      it('refuses on a check window whose weight reached its limit', async () => {
        const c = await start();
        await c.settle({ charge: [{ key: 'tph', windowMs: MIN, cost: 100 }] });
        const refused = await c.admit({
          windows: [{ key: 'rpm', limit: 10, windowMs: MIN }],
          checkWindows: [
            { key: 'tpd', limit: 1_000, windowMs: 10 * MIN },
            { key: 'tph', limit: 100, windowMs: MIN },
          ],
        });
        expect(refused).toMatchObject({
          allowed: false,
          reason: 'check_window',
          index: 1,
          limit: 100,
          remaining: 0,
          windows: [{ count: 0, remaining: 10 }],
          checkWindows: [{ count: 0, remaining: 1_000 }, { count: 100, remaining: 0 }],
        });
        if (refused.allowed) throw new Error('unreachable');
        expect(refused.retryAfterMs).toBeGreaterThan(MIN - 10_000);
        expect(refused.retryAfterMs).toBeLessThanOrEqual(MIN);
        expect(await c.peekWindow('rpm', MIN)).toBe(0);
      });

      it('refuses on a full slot with the time until the earliest lease expires', async () => {
        const c = await start();
        expect(await c.acquireSlot('inflight', 2, 10_000)).not.toBeNull();
        expect(await c.acquireSlot('inflight', 2, 20_000)).not.toBeNull();
        const refused = await c.admit({ windows: [{ key: 'rpm', limit: 10, windowMs: MIN }], checkWindows: [], slot: { key: 'inflight', limit: 2, leaseMs: 30_000 } });
        expect(refused).toMatchObject({ allowed: false, reason: 'slot', index: 0, limit: 2, remaining: 0, windows: [{ count: 0 }], quotaUsed: null });
        if (refused.allowed) throw new Error('unreachable');
        expect(refused.retryAfterMs).toBeGreaterThan(5_000);
        expect(refused.retryAfterMs).toBeLessThanOrEqual(10_000);
        expect(await c.peekWindow('rpm', MIN)).toBe(0);
        // A larger limit fits.
        expect(await c.admit({ windows: [], checkWindows: [], slot: { key: 'inflight', limit: 3, leaseMs: 30_000 } })).toMatchObject({ allowed: true });
      });

      it('refuses a reservation over the quota with remaining quota and retryAfterMs 0', async () => {
        const c = await start();
        expect(await c.reserve('quota', 95, 1_000)).toEqual({ allowed: true, used: 95 });
        const refused = await c.admit({ windows: [], checkWindows: [], reservation: { key: 'quota', amount: 10, limit: 100 } });
        expect(refused).toEqual({
          allowed: false,
          reason: 'reservation',
          index: 0,
          retryAfterMs: 0,
          limit: 100,
          remaining: 5,
          windows: [],
          checkWindows: [],
          quotaUsed: 95,
        });
        expect(await c.admit({ windows: [], checkWindows: [], reservation: { key: 'quota', amount: 5, limit: 100 } })).toMatchObject({
          allowed: true,
          quotaUsed: 100,
        });
        expect(await c.get('quota')).toBe(100);
      });

      it('reports the first failing check in the order windows, checkWindows, slot, reservation', async () => {
        const c = await start();
        await c.hitWindow('w', { limit: 1, windowMs: MIN });
        await c.settle({ charge: [{ key: 'cw', windowMs: MIN, cost: 5 }] });
        expect(await c.acquireSlot('s', 1, MIN)).not.toBeNull();
        await c.set('q', 10);
        const all = {
          windows: [
            { key: 'w-ok', limit: 5, windowMs: MIN },
            { key: 'w', limit: 1, windowMs: MIN },
          ],
          checkWindows: [{ key: 'cw', limit: 5, windowMs: MIN }],
          slot: { key: 's', limit: 1, leaseMs: MIN },
          reservation: { key: 'q', amount: 1, limit: 10 },
        };
        expect(await c.admit(all)).toMatchObject({ allowed: false, reason: 'window', index: 1, quotaUsed: 10 });
        expect(await c.admit({ ...all, windows: [] })).toMatchObject({ allowed: false, reason: 'check_window', index: 0 });
        expect(await c.admit({ ...all, windows: [], checkWindows: [] })).toMatchObject({ allowed: false, reason: 'slot', index: 0 });
        const { slot: _slot, ...noSlot } = all;
        expect(await c.admit({ ...noSlot, windows: [], checkWindows: [] })).toMatchObject({ allowed: false, reason: 'reservation', index: 0 });
        expect(await c.peekWindow('w-ok', MIN)).toBe(0);
        expect(await c.get('q')).toBe(10);
      });

      it('changes nothing when refused: no window weight, no slot, no reservation', async () => {
        const c = await start();
        const request = {
          windows: [
            { key: 'rpm', limit: 5, windowMs: MIN },
            { key: 'burst', limit: 5, windowMs: 10_000, cost: 2 },
          ],
          checkWindows: [{ key: 'tph', limit: 100, windowMs: MIN }],
          slot: { key: 'inflight', limit: 1, leaseMs: MIN },
          reservation: { key: 'quota', amount: 10, limit: 15 },
        };
        // Refused by the last check: every other limit passed and still nothing may be taken.
        await c.set('quota', 6);
        for (let i = 0; i < 3; i++) {
          expect(await c.admit(request)).toMatchObject({
            allowed: false,
            reason: 'reservation',
            remaining: 9,
            quotaUsed: 6,
            windows: [{ count: 0 }, { count: 0 }],
          });
        }
        expect(await c.peekWindow('rpm', MIN)).toBe(0);
        expect(await c.peekWindow('burst', 10_000)).toBe(0);
        expect(await c.peekWindow('tph', MIN)).toBe(0);
        expect(await c.get('quota')).toBe(6);
        // The slot (limit 1) is still free and the reservation fits once quota is back.
        await c.set('quota', 0);
        const admitted = await c.admit(request);
        expect(admitted).toMatchObject({ allowed: true, quotaUsed: 10, windows: [{ count: 1 }, { count: 2 }] });
        if (!admitted.allowed) throw new Error('unreachable');
        expect(admitted.leaseId).toEqual(expect.any(String));
        // Refused by the slot now: still nothing counted, reserved or taken.
        await c.set('quota', 0);
        expect(await c.admit(request)).toMatchObject({ allowed: false, reason: 'slot', quotaUsed: 0, windows: [{ count: 1 }, { count: 2 }] });
        expect(await c.peekWindow('rpm', MIN)).toBe(1);
        expect(await c.peekWindow('burst', 10_000)).toBe(2);
        expect(await c.get('quota')).toBe(0);
      });

      it('refuses on check windows once real usage charged by settle reaches the limit', async () => {
        const c = await start();
        const request = { windows: [{ key: 'rpm', limit: 100, windowMs: MIN }], checkWindows: [{ key: 'tph', limit: 100, windowMs: MIN }] };
        expect(await c.admit(request)).toMatchObject({ allowed: true, checkWindows: [{ count: 0, remaining: 100, resetMs: 0 }] });
        expect(await c.settle({ charge: [{ key: 'tph', windowMs: MIN, cost: 60 }] })).toEqual({ quotaUsed: null });
        const second = await c.admit(request);
        expect(second).toMatchObject({ allowed: true, checkWindows: [{ count: 60, remaining: 40 }] });
        expect(second.checkWindows[0]!.resetMs).toBeGreaterThan(MIN - 10_000);
        // Real usage goes in even beyond the limit.
        await c.settle({ charge: [{ key: 'tph', windowMs: MIN, cost: 50 }] });
        expect(await c.peekWindow('tph', MIN)).toBe(110);
        expect(await c.admit(request)).toMatchObject({ allowed: false, reason: 'check_window', index: 0, limit: 100, remaining: 0, checkWindows: [{ count: 110 }] });
        expect(await c.peekWindow('rpm', MIN)).toBe(2);
        // Exactly at the limit is refused too (the weight must be below it).
        await c.settle({ charge: [{ key: 'exact', windowMs: MIN, cost: 100 }, { key: 'zero', windowMs: MIN, cost: 0 }] });
        expect(await c.admit({ windows: [], checkWindows: [{ key: 'exact', limit: 100, windowMs: MIN }] })).toMatchObject({ allowed: false, reason: 'check_window' });
        expect(await c.admit({ windows: [], checkWindows: [{ key: 'exact', limit: 101, windowMs: MIN }] })).toMatchObject({ allowed: true });
        expect(await c.peekWindow('zero', MIN)).toBe(0);
      });

      it('takes a slot and releases it on settle', async () => {
        const c = await start();
        const request = { windows: [], checkWindows: [], slot: { key: 'inflight', limit: 1, leaseMs: MIN } };
        const admitted = await c.admit(request);
        if (!admitted.allowed) throw new Error('expected admission');
        expect(admitted.leaseId).toEqual(expect.any(String));
        expect(await c.admit(request)).toMatchObject({ allowed: false, reason: 'slot' });
        expect(await c.acquireSlot('inflight', 1, MIN)).toBeNull();
        // An unknown lease frees nothing.
        expect(await c.settle({ slot: { key: 'inflight', leaseId: 'not-a-lease' } })).toEqual({ quotaUsed: null });
        expect(await c.admit(request)).toMatchObject({ allowed: false, reason: 'slot' });
        await c.settle({ slot: { key: 'inflight', leaseId: admitted.leaseId! } });
        const next = await c.admit(request);
        expect(next).toMatchObject({ allowed: true });
        if (!next.allowed) throw new Error('unreachable');
        expect(next.leaseId).not.toBe(admitted.leaseId);
        // The lease is an ordinary slot lease: releaseSlot frees it too.
        await c.releaseSlot('inflight', next.leaseId!);
        expect(await c.acquireSlot('inflight', 1, MIN)).not.toBeNull();
      });

      it('frees the slot of an expired lease by itself', async () => {
        const c = await start();
        const request = { windows: [], checkWindows: [], slot: { key: 'inflight', limit: 1, leaseMs: 500 } };
        expect(await c.admit(request)).toMatchObject({ allowed: true });
        const refused = await c.admit(request);
        expect(refused).toMatchObject({ allowed: false, reason: 'slot' });
        if (refused.allowed) throw new Error('unreachable');
        expect(refused.retryAfterMs).toBeGreaterThan(0);
        expect(refused.retryAfterMs).toBeLessThanOrEqual(500);
        await sleep(700);
        expect(await c.admit(request)).toMatchObject({ allowed: true });
      });

      it('never over-reserves under 50 concurrent admissions', async () => {
        const c = await start();
        const results = await Promise.all(
          Array.from({ length: 50 }, () => c.admit({ windows: [], checkWindows: [], reservation: { key: 'quota', amount: 10, limit: 200 } })),
        );
        const granted = results.filter((r) => r.allowed);
        expect(granted).toHaveLength(20);
        expect(granted.map((r) => r.quotaUsed).sort((a, b) => a! - b!)).toEqual(Array.from({ length: 20 }, (_, i) => (i + 1) * 10));
        for (const r of results.filter((r) => !r.allowed)) expect(r).toMatchObject({ reason: 'reservation', quotaUsed: 200, remaining: 0 });
        expect(await c.get('quota')).toBe(200);
      });

      it('settles a reservation to the actual amount, up or down, never below 0', async () => {
        const c = await start();
        const admit = (amount: number) => c.admit({ windows: [], checkWindows: [], reservation: { key: 'quota', amount, limit: 1_000 } });
        expect(await admit(10)).toMatchObject({ allowed: true, quotaUsed: 10 });
        expect(await c.settle({ reservation: { key: 'quota', reserved: 10, actual: 4 } })).toEqual({ quotaUsed: 4 });
        expect(await admit(10)).toMatchObject({ allowed: true, quotaUsed: 14 });
        expect(await c.settle({ reservation: { key: 'quota', reserved: 10, actual: 25 } })).toEqual({ quotaUsed: 29 });
        expect(await c.get('quota')).toBe(29);
        expect(await c.settle({ reservation: { key: 'quota', reserved: 10, actual: 10 } })).toEqual({ quotaUsed: 29 });
        expect(await c.settle({ reservation: { key: 'quota', reserved: 50, actual: 0 } })).toEqual({ quotaUsed: 0 });
        expect(await c.get('quota')).toBe(0);
        expect(await c.settle({ reservation: { key: 'absent', reserved: 5, actual: 0 } })).toEqual({ quotaUsed: 0 });
        expect(await c.get('absent')).toBe(0);
        // One settlement does all three at once.
        const admitted = await c.admit({
          windows: [],
          checkWindows: [{ key: 'tph', limit: 1_000, windowMs: MIN }],
          slot: { key: 'inflight', limit: 1, leaseMs: MIN },
          reservation: { key: 'quota', amount: 100, limit: 1_000 },
        });
        if (!admitted.allowed) throw new Error('expected admission');
        expect(
          await c.settle({
            charge: [{ key: 'tph', windowMs: MIN, cost: 37 }],
            reservation: { key: 'quota', reserved: 100, actual: 37 },
            slot: { key: 'inflight', leaseId: admitted.leaseId! },
          }),
        ).toEqual({ quotaUsed: 37 });
        expect(await c.peekWindow('tph', MIN)).toBe(37);
        expect(await c.get('quota')).toBe(37);
        expect(await c.acquireSlot('inflight', 1, MIN)).not.toBeNull();
      });

      it('keeps the TTL of a quota counter when settling it', async () => {
        const c = await start();
        await c.adjust('quota', 50, 1_000);
        expect(await c.settle({ reservation: { key: 'quota', reserved: 50, actual: 20 } })).toEqual({ quotaUsed: 20 });
        await sleep(1_200);
        expect(await c.get('quota')).toBe(0);
      });

      it('admits exactly the window limit under concurrency, counting all windows together', async () => {
        const c = await start();
        const n = 10;
        const results = await Promise.all(
          Array.from({ length: 3 * n }, () =>
            c.admit({
              windows: [
                { key: 'wide', limit: 1_000, windowMs: MIN },
                { key: 'rpm', limit: n, windowMs: MIN },
              ],
              checkWindows: [{ key: 'tph', limit: 100, windowMs: MIN }],
            }),
          ),
        );
        const granted = results.filter((r) => r.allowed);
        expect(granted).toHaveLength(n);
        expect(granted.map((r) => r.windows[1]!.count).sort((a, b) => a - b)).toEqual(Array.from({ length: n }, (_, i) => i + 1));
        for (const r of results.filter((r) => !r.allowed)) expect(r).toMatchObject({ reason: 'window', index: 1, remaining: 0 });
        expect(await c.peekWindow('rpm', MIN)).toBe(n);
        expect(await c.peekWindow('wide', MIN)).toBe(n);
      });

      it('interoperates with hitWindow, peekWindow, reserve, get and the slot operations on the same keys', async () => {
        const c = await start();
        await c.hitWindow('rpm', { limit: 3, windowMs: MIN, cost: 2 });
        await c.reserve('quota', 30, 100);
        const request = {
          windows: [{ key: 'rpm', limit: 3, windowMs: MIN }],
          checkWindows: [],
          reservation: { key: 'quota', amount: 20, limit: 100 },
        };
        expect(await c.admit(request)).toMatchObject({ allowed: true, windows: [{ count: 3, remaining: 0 }], quotaUsed: 50 });
        expect(await c.hitWindow('rpm', { limit: 3, windowMs: MIN })).toMatchObject({ allowed: false, count: 3 });
        expect(await c.hitWindow('rpm', { limit: 4, windowMs: MIN })).toMatchObject({ allowed: true, count: 4 });
        expect(await c.peekWindow('rpm', MIN)).toBe(4);
        expect(await c.get('quota')).toBe(50);
        expect(await c.reserve('quota', 50, 100)).toEqual({ allowed: true, used: 100 });
        expect(await c.admit({ ...request, windows: [] })).toMatchObject({ allowed: false, reason: 'reservation', quotaUsed: 100 });
        await c.adjust('quota', -20);
        expect(await c.admit({ ...request, windows: [] })).toMatchObject({ allowed: true, quotaUsed: 100 });
        // Charged usage is window weight that hitWindow counts against its limit.
        await c.settle({ charge: [{ key: 'tph', windowMs: MIN, cost: 9 }] });
        expect(await c.hitWindow('tph', { limit: 10, windowMs: MIN, cost: 2 })).toMatchObject({ allowed: false, count: 9 });
        expect(await c.hitWindow('tph', { limit: 10, windowMs: MIN })).toMatchObject({ allowed: true, count: 10 });
        // Slots: acquireSlot leases count against admit and the other way round.
        expect(await c.acquireSlot('inflight', 2, MIN)).not.toBeNull();
        expect(await c.admit({ windows: [], checkWindows: [], slot: { key: 'inflight', limit: 2, leaseMs: MIN } })).toMatchObject({ allowed: true });
        expect(await c.acquireSlot('inflight', 2, MIN)).toBeNull();
      });

      it('keeps the window weight exact as entries slide out', async () => {
        const c = await start();
        const request = { windows: [{ key: 'rate', limit: 2, windowMs: 600 }], checkWindows: [] };
        expect(await c.admit(request)).toMatchObject({ allowed: true, windows: [{ count: 1 }] });
        expect(await c.admit(request)).toMatchObject({ allowed: true, windows: [{ count: 2 }] });
        const refused = await c.admit(request);
        expect(refused).toMatchObject({ allowed: false, reason: 'window' });
        if (refused.allowed) throw new Error('unreachable');
        expect(refused.retryAfterMs).toBeGreaterThan(0);
        expect(refused.retryAfterMs).toBeLessThanOrEqual(600);
        await sleep(800);
        expect(await c.admit(request)).toMatchObject({ allowed: true, windows: [{ count: 1, remaining: 1 }] });
      });

      it('rejects invalid admissions and settlements', async () => {
        const c = await start();
        await expect(c.admit({ windows: [{ key: 'a', limit: 1, windowMs: MIN }], checkWindows: [{ key: 'a', limit: 1, windowMs: MIN }] })).rejects.toThrow(RangeError);
        await expect(c.admit({ windows: [{ key: 'a', limit: 1, windowMs: 0 }], checkWindows: [] })).rejects.toThrow(RangeError);
        await expect(c.admit({ windows: [{ key: 'a', limit: 1, windowMs: MIN, cost: -1 }], checkWindows: [] })).rejects.toThrow(RangeError);
        await expect(c.admit({ windows: [], checkWindows: [], reservation: { key: 'q', amount: Number.NaN, limit: 1 } })).rejects.toThrow(RangeError);
        await expect(c.settle({ charge: [{ key: 'a', windowMs: MIN, cost: -1 }] })).rejects.toThrow(RangeError);
        expect(await c.peekWindow('a', MIN)).toBe(0);
      });
    });

    describe('hitWindow retryAfterMs', () => {
      it("is the time until this hit's cost fits, > 0 even when fewer units are left than it needs", async () => {
        const c = await start();
        await c.hitWindow('tokens', { limit: 10, windowMs: 10_000, cost: 8 });
        const refused = await c.hitWindow('tokens', { limit: 10, windowMs: 10_000, cost: 5 });
        expect(refused).toMatchObject({ allowed: false, count: 8, remaining: 2 });
        expect(refused.retryAfterMs).toBeGreaterThan(5_000);
        expect(refused.retryAfterMs).toBeLessThanOrEqual(10_000);
        const never = await c.hitWindow('empty', { limit: 10, windowMs: 10_000, cost: 11 });
        expect(never.allowed).toBe(false);
        expect(never.retryAfterMs).toBeGreaterThan(0);
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
