import { describe, expect, it } from 'vitest';
import { MemoryCounters } from '../../src/adapters/counters/memory.js';
import { countersContract } from './counters.contract.js';

countersContract(
  'memory',
  async () => {
    const counters = new MemoryCounters();
    return {
      counters,
      cleanup: async () => {
        await counters.clear('');
        await counters.close();
      },
    };
  },
  true,
);

/** A clock the test moves by hand. */
function manualClock(start = 1_000_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => void (t += ms) };
}

describe('MemoryCounters with an injected clock', () => {
  it('slides exactly: an entry counts while it is younger than windowMs', async () => {
    const clock = manualClock();
    const c = new MemoryCounters({ now: clock.now });
    const opts = { limit: 2, windowMs: 1_000 };
    await c.hitWindow('k', opts);
    clock.advance(400);
    await c.hitWindow('k', opts);
    const refused = await c.hitWindow('k', opts);
    expect(refused).toEqual({ allowed: false, count: 2, remaining: 0, retryAfterMs: 600 });
    clock.advance(599);
    expect((await c.hitWindow('k', opts)).allowed).toBe(false);
    clock.advance(1);
    expect(await c.hitWindow('k', opts)).toEqual({ allowed: true, count: 2, remaining: 0, retryAfterMs: 0 });
    expect(await c.peekWindow('k', 1_000)).toBe(2);
  });

  it('computes retryAfterMs from the weight that has to leave for one unit to fit', async () => {
    const clock = manualClock();
    const c = new MemoryCounters(clock.now);
    const opts = { limit: 10, windowMs: 1_000 };
    await c.hitWindow('k', { ...opts, cost: 3 });
    clock.advance(100);
    await c.hitWindow('k', { ...opts, cost: 3 });
    clock.advance(100);
    await c.hitWindow('k', { ...opts, cost: 4 });
    clock.advance(100);
    // Full at 10: the first entry (3) leaving at t=1000 makes room; now is t=300.
    expect(await c.hitWindow('k', opts)).toMatchObject({ allowed: false, count: 10, retryAfterMs: 700 });
  });

  it('expires counters and leases at their deadline', async () => {
    const clock = manualClock();
    const c = new MemoryCounters(clock.now);
    await c.set('n', 3, 500);
    expect(await c.acquireSlot('s', 1, 500)).not.toBeNull();
    clock.advance(499);
    expect(await c.get('n')).toBe(3);
    expect(await c.acquireSlot('s', 1, 500)).toBeNull();
    clock.advance(1);
    expect(await c.get('n')).toBe(0);
    expect(await c.acquireSlot('s', 1, 500)).not.toBeNull();
  });

  it('does not keep expired windows, leases or counters that are never touched again', async () => {
    const clock = manualClock();
    const c = new MemoryCounters({ now: clock.now, sweepIntervalMs: 1_000 });
    for (let i = 0; i < 100; i++) {
      await c.hitWindow(`w${i}`, { limit: 5, windowMs: 500 });
      await c.acquireSlot(`s${i}`, 1, 500);
      await c.adjust(`n${i}`, 1, 500);
    }
    await c.adjust('forever', 1);
    expect(c.keyCount()).toBe(301);
    clock.advance(1_000);
    await c.get('forever'); // any operation may run the sweep
    expect(c.keyCount()).toBe(1);
  });

  it('refuses to work after close', async () => {
    const c = new MemoryCounters();
    await c.close();
    await expect(c.ping()).rejects.toThrow(/closed/);
    await expect(c.get('k')).rejects.toThrow(/closed/);
  });
});
