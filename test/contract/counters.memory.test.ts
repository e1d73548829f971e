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

  it("computes retryAfterMs from the weight that has to leave for the hit's cost to fit", async () => {
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

  it('computes retryAfterMs for the cost of the refused hit, not for one unit', async () => {
    const clock = manualClock();
    const c = new MemoryCounters(clock.now);
    const opts = { limit: 10, windowMs: 1_000 };
    await c.hitWindow('k', { ...opts, cost: 3 });
    clock.advance(100);
    await c.hitWindow('k', { ...opts, cost: 5 });
    clock.advance(200);
    // 8 used, 2 left. Cost 5 needs 3 to leave: the first entry, leaving at t=1000 (now t=300).
    expect(await c.hitWindow('k', { ...opts, cost: 5 })).toEqual({ allowed: false, count: 8, remaining: 2, retryAfterMs: 700 });
    // Cost 6 needs 4 to leave: both entries, the second leaving at t=1100.
    expect(await c.hitWindow('k', { ...opts, cost: 6 })).toMatchObject({ allowed: false, retryAfterMs: 800 });
    // Cost 11 never fits: the answer is when the window is empty.
    expect(await c.hitWindow('k', { ...opts, cost: 11 })).toMatchObject({ allowed: false, retryAfterMs: 800 });
    expect(await c.hitWindow('empty', { ...opts, cost: 11 })).toMatchObject({ allowed: false, retryAfterMs: 1_000 });
    clock.advance(700);
    expect(await c.hitWindow('k', { ...opts, cost: 5 })).toMatchObject({ allowed: true, count: 10 });
  });

  it('admits with exact resetMs and retryAfterMs for each kind of limit', async () => {
    const clock = manualClock();
    const c = new MemoryCounters(clock.now);
    const windows = [{ key: 'rpm', limit: 3, windowMs: 1_000 }];
    const checkWindows = [{ key: 'tph', limit: 100, windowMs: 1_000 }];
    expect(await c.admit({ windows, checkWindows })).toEqual({
      allowed: true,
      leaseId: null,
      windows: [{ count: 1, remaining: 2, resetMs: 1_000 }],
      checkWindows: [{ count: 0, remaining: 100, resetMs: 0 }],
      quotaUsed: null,
    });
    await c.settle({ charge: [{ key: 'tph', windowMs: 1_000, cost: 60 }] });
    clock.advance(100);
    await c.settle({ charge: [{ key: 'tph', windowMs: 1_000, cost: 50 }] });
    await c.admit({ windows, checkWindows: [] });
    await c.admit({ windows, checkWindows: [] });
    clock.advance(200);
    // Now t=300. rpm: 1@0, 2@100 (full); tph: 60@0, 50@100 = 110.
    expect(await c.admit({ windows, checkWindows })).toEqual({
      allowed: false,
      reason: 'window',
      index: 0,
      retryAfterMs: 700,
      limit: 3,
      remaining: 0,
      windows: [{ count: 3, remaining: 0, resetMs: 700 }],
      checkWindows: [{ count: 110, remaining: 0, resetMs: 700 }],
      quotaUsed: null,
    });
    // Below 100 once the 60 leaves (110 - 60 = 50 < 100): at t=1000.
    expect(await c.admit({ windows: [], checkWindows })).toMatchObject({ reason: 'check_window', retryAfterMs: 700 });
    // Below 50 takes both entries: 110 - 60 = 50 is not below 50.
    expect(await c.admit({ windows: [], checkWindows: [{ key: 'tph', limit: 50, windowMs: 1_000 }] })).toMatchObject({ retryAfterMs: 800 });
    // A window cost of 2 needs 2 units to leave: the entry at t=0 (1) and one at t=100.
    expect(await c.admit({ windows: [{ key: 'rpm', limit: 3, windowMs: 1_000, cost: 2 }], checkWindows: [] })).toMatchObject({ retryAfterMs: 800 });

    const slot = { key: 'inflight', limit: 2, leaseMs: 500 };
    expect(await c.admit({ windows: [], checkWindows: [], slot })).toMatchObject({ allowed: true });
    clock.advance(100);
    expect(await c.acquireSlot('inflight', 2, 300)).not.toBeNull();
    clock.advance(100);
    // Leases end at t=800 and t=700; now t=500.
    expect(await c.admit({ windows: [], checkWindows: [], slot })).toMatchObject({ allowed: false, reason: 'slot', retryAfterMs: 200, remaining: 0 });
    clock.advance(200);
    expect(await c.admit({ windows: [], checkWindows: [], slot })).toMatchObject({ allowed: true });
  });

  it('does not keep what admit and settle created once it expired', async () => {
    const clock = manualClock();
    const c = new MemoryCounters({ now: clock.now, sweepIntervalMs: 1_000 });
    for (let i = 0; i < 20; i++) {
      await c.admit({
        windows: [{ key: `w${i}`, limit: 5, windowMs: 500 }],
        checkWindows: [{ key: `cw${i}`, limit: 5, windowMs: 500 }],
        slot: { key: `s${i}`, limit: 1, leaseMs: 500 },
      });
      await c.settle({ charge: [{ key: `cw${i}`, windowMs: 500, cost: 3 }] });
    }
    await c.admit({ windows: [], checkWindows: [{ key: 'never-hit', limit: 1, windowMs: 500 }] });
    await c.adjust('forever', 1);
    expect(c.keyCount()).toBe(61);
    clock.advance(1_000);
    await c.get('forever');
    expect(c.keyCount()).toBe(1);
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

describe('MemoryCounters owner leases with an injected clock', () => {
  it('expires exactly ttlMs after the last hold, and the sweep drops it', async () => {
    const clock = manualClock();
    const c = new MemoryCounters({ now: clock.now, sweepIntervalMs: 1_000 });
    expect(await c.holdLease('job', 'a', 3_000)).toBe(true);
    clock.advance(2_999);
    expect(await c.holdLease('job', 'b', 3_000)).toBe(false);
    expect(await c.holdLease('job', 'a', 3_000)).toBe(true); // renewed until 5_999
    clock.advance(2_999);
    expect(await c.holdLease('job', 'b', 3_000)).toBe(false);
    clock.advance(1);
    expect(await c.holdLease('job', 'b', 3_000)).toBe(true);
    clock.advance(10_000);
    await c.get('anything'); // runs the sweep
    expect(c.keyCount()).toBe(0);
  });
});
