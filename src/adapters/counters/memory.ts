/**
 * Counters in process memory: the embedded, single-process default. Exact, and atomic because
 * every operation runs synchronously to completion on the one JS thread (the async signatures
 * only satisfy the port; no operation awaits between its read and its write).
 *
 * Semantics mirror the Redis adapter (src/adapters/counters/redis.ts) so both pass
 * test/contract/counters.contract.ts:
 * - Windows are exact sliding windows: a time-ordered log of (timestamp, weight) entries per key
 *   plus a running total. An entry counts while `timestamp > now - windowMs`.
 * - Counters (`adjust`/`reserve`/`get`/`set`) share one namespace; windows and slots each have
 *   their own, so the same key name used by different kinds never interferes.
 * - `adjust`/`reserve` keep an existing TTL unless `adjust` is given a new one; `set` without
 *   `ttlMs` leaves the counter without expiry (like Redis SET).
 * - Slots are leases scored by expiry; a lease is gone once `now >= expiresAt`. Owner leases
 *   (`holdLease`) have a namespace of their own, one owner and one expiry per key.
 * - `admit` reads every limit, decides, and only then writes (all in one synchronous run), so a
 *   refused admission changes nothing; `settle` likewise applies all its parts in one run. They use
 *   the same window logs, slot sets and counters as the single operations.
 *
 * Memory: every touched key prunes itself lazily, and a sweep over all keys (at most once per
 * `sweepIntervalMs`, triggered from inside operations, no timers) drops windows, slot sets and
 * counters that expired without ever being touched again.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type {
  AdmissionRefusal,
  AdmissionRefused,
  AdmissionRequest,
  AdmissionResult,
  AdmissionWindow,
  Counters,
  Reservation,
  Settlement,
  SettlementResult,
  WindowHit,
} from '../../ports/counters.js';
import { assertAdmission, assertFinite, assertNonNegative, assertPositive, assertSettlement } from './arguments.js';

export interface MemoryCountersOptions {
  /** Clock in milliseconds. Defaults to a monotonic wall clock (immune to NTP steps). */
  now?: () => number;
  /** How often (at most) a full sweep of expired keys runs. Default 10 s. */
  sweepIntervalMs?: number;
}

interface WindowEntry {
  t: number;
  w: number;
}

interface WindowState {
  /** Entries in time order; entries before `head` are already pruned (compacted lazily). */
  entries: WindowEntry[];
  head: number;
  sum: number;
  /** When the newest entry leaves the window: after this the whole window is empty. */
  expiresAt: number;
}

interface CounterState {
  value: number;
  expiresAt: number | null;
}

/** leaseId -> expiresAt. */
type SlotState = Map<string, number>;

interface LeaseState {
  owner: string;
  expiresAt: number;
}

export class MemoryCounters implements Counters {
  readonly kind = 'memory';

  private readonly now: () => number;
  private readonly sweepIntervalMs: number;
  private readonly windows = new Map<string, WindowState>();
  private readonly counters = new Map<string, CounterState>();
  private readonly slots = new Map<string, SlotState>();
  private readonly leases = new Map<string, LeaseState>();
  private lastSweep: number;
  private closed = false;

  constructor(options: MemoryCountersOptions | (() => number) = {}) {
    const opts: MemoryCountersOptions = typeof options === 'function' ? { now: options } : options;
    this.now = opts.now ?? (() => performance.timeOrigin + performance.now());
    this.sweepIntervalMs = opts.sweepIntervalMs ?? 10_000;
    this.lastSweep = this.now();
  }

  async hitWindow(key: string, options: { limit: number; windowMs: number; cost?: number }): Promise<WindowHit> {
    const { limit, windowMs } = options;
    const cost = options.cost ?? 1;
    assertFinite('limit', limit);
    assertPositive('windowMs', windowMs);
    assertNonNegative('cost', cost);
    const now = this.tick();

    const state = this.liveWindow(key, windowMs, now);
    const sum = state?.sum ?? 0;
    if (sum + cost <= limit) {
      const count = this.addToWindow(key, state, cost, windowMs, now).sum;
      return { allowed: true, count, remaining: Math.max(0, limit - count), retryAfterMs: 0 };
    }
    return { allowed: false, count: sum, remaining: Math.max(0, limit - sum), retryAfterMs: this.windowRetry(state, sum + cost - limit, false, windowMs, now) };
  }

  async peekWindow(key: string, windowMs: number): Promise<number> {
    assertPositive('windowMs', windowMs);
    const now = this.tick();
    const state = this.windows.get(key);
    if (!state) return 0;
    // Read-only: the caller's windowMs may differ from the one the hits use, so nothing is pruned.
    const cutoff = now - windowMs;
    let total = state.sum;
    for (let i = state.head; i < state.entries.length; i++) {
      const e = state.entries[i]!;
      if (e.t > cutoff) break;
      total -= e.w;
    }
    return total;
  }

  async reserve(key: string, amount: number, limit: number): Promise<Reservation> {
    assertNonNegative('amount', amount);
    assertFinite('limit', limit);
    const now = this.tick();
    const state = this.liveCounter(key, now);
    const used = state?.value ?? 0;
    if (used + amount > limit) return { allowed: false, used };
    if (state) state.value += amount;
    else this.counters.set(key, { value: amount, expiresAt: null });
    return { allowed: true, used: used + amount };
  }

  async adjust(key: string, delta: number, ttlMs?: number): Promise<number> {
    assertFinite('delta', delta);
    if (ttlMs !== undefined) assertPositive('ttlMs', ttlMs);
    const now = this.tick();
    let state = this.liveCounter(key, now);
    if (!state) {
      state = { value: 0, expiresAt: null };
      this.counters.set(key, state);
    }
    state.value += delta;
    if (ttlMs !== undefined) state.expiresAt = now + ttlMs;
    return state.value;
  }

  async get(key: string): Promise<number> {
    const now = this.tick();
    return this.liveCounter(key, now)?.value ?? 0;
  }

  async set(key: string, value: number, ttlMs?: number): Promise<void> {
    assertFinite('value', value);
    if (ttlMs !== undefined) assertPositive('ttlMs', ttlMs);
    const now = this.tick();
    this.counters.set(key, { value, expiresAt: ttlMs === undefined ? null : now + ttlMs });
  }

  async acquireSlot(key: string, limit: number, leaseMs: number): Promise<string | null> {
    assertFinite('limit', limit);
    assertPositive('leaseMs', leaseMs);
    const now = this.tick();
    let leases = this.slots.get(key);
    if (leases) this.pruneSlots(key, leases, now);
    if ((leases?.size ?? 0) >= limit) return null;
    if (!leases || leases.size === 0) {
      leases = new Map();
      this.slots.set(key, leases);
    }
    const leaseId = randomUUID();
    leases.set(leaseId, now + leaseMs);
    return leaseId;
  }

  async releaseSlot(key: string, leaseId: string): Promise<void> {
    this.tick();
    this.release(key, leaseId);
  }

  async holdLease(key: string, owner: string, ttlMs: number): Promise<boolean> {
    assertPositive('ttlMs', ttlMs);
    const now = this.tick();
    const held = this.leases.get(key);
    if (held && held.owner !== owner && now < held.expiresAt) return false;
    this.leases.set(key, { owner, expiresAt: now + ttlMs });
    return true;
  }

  async releaseLease(key: string, owner: string): Promise<void> {
    this.tick();
    if (this.leases.get(key)?.owner === owner) this.leases.delete(key);
  }

  async admit(request: AdmissionRequest): Promise<AdmissionResult> {
    assertAdmission(request);
    const now = this.tick();
    // Everything below runs synchronously: read every limit, decide, then write (or not).
    const windows = request.windows.map((w) => ({ ...w, cost: w.cost ?? 1, state: this.liveWindow(w.key, w.windowMs, now) }));
    const checks = request.checkWindows.map((w) => ({ ...w, state: this.liveWindow(w.key, w.windowMs, now) }));
    const { slot, reservation } = request;
    const leases = slot ? this.liveSlots(slot.key, now) : undefined;
    const counter = reservation ? this.liveCounter(reservation.key, now) : undefined;
    const used = reservation ? (counter?.value ?? 0) : null;

    const refuse = (reason: AdmissionRefusal, index: number, retryAfterMs: number, limit: number, inUse: number): AdmissionRefused => ({
      allowed: false,
      reason,
      index,
      retryAfterMs,
      limit,
      remaining: Math.max(0, limit - inUse),
      windows: windows.map((w) => this.describeWindow(w.state, w.limit, w.windowMs, now)),
      checkWindows: checks.map((w) => this.describeWindow(w.state, w.limit, w.windowMs, now)),
      quotaUsed: used,
    });
    for (const [i, w] of windows.entries()) {
      const sum = w.state?.sum ?? 0;
      if (sum + w.cost > w.limit) return refuse('window', i, this.windowRetry(w.state, sum + w.cost - w.limit, false, w.windowMs, now), w.limit, sum);
    }
    for (const [i, w] of checks.entries()) {
      const sum = w.state?.sum ?? 0;
      if (sum >= w.limit) return refuse('check_window', i, this.windowRetry(w.state, sum - w.limit, true, w.windowMs, now), w.limit, sum);
    }
    if (slot && (leases?.size ?? 0) >= slot.limit) {
      let earliest = Infinity;
      for (const expiresAt of leases?.values() ?? []) earliest = Math.min(earliest, expiresAt);
      const retry = earliest === Infinity ? slot.leaseMs : earliest - now; // no lease at all: limit < 1
      return refuse('slot', 0, Math.max(1, Math.ceil(retry)), slot.limit, leases?.size ?? 0);
    }
    if (reservation && used !== null && used + reservation.amount > reservation.limit) {
      return refuse('reservation', 0, 0, reservation.limit, used);
    }

    // Everything passed: count, take, reserve.
    const counted = windows.map((w) => this.describeWindow(this.addToWindow(w.key, w.state, w.cost, w.windowMs, now), w.limit, w.windowMs, now));
    let leaseId: string | null = null;
    if (slot) {
      let held = leases;
      if (!held) {
        held = new Map();
        this.slots.set(slot.key, held);
      }
      leaseId = randomUUID();
      held.set(leaseId, now + slot.leaseMs);
    }
    let quotaUsed: number | null = null;
    if (reservation) {
      if (counter) counter.value += reservation.amount;
      else this.counters.set(reservation.key, { value: reservation.amount, expiresAt: null });
      quotaUsed = (used ?? 0) + reservation.amount;
    }
    return {
      allowed: true,
      leaseId,
      windows: counted,
      checkWindows: checks.map((w) => this.describeWindow(w.state, w.limit, w.windowMs, now)),
      quotaUsed,
    };
  }

  async settle(settlement: Settlement): Promise<SettlementResult> {
    assertSettlement(settlement);
    const now = this.tick();
    for (const c of settlement.charge ?? []) {
      if (c.cost > 0) this.addToWindow(c.key, this.liveWindow(c.key, c.windowMs, now), c.cost, c.windowMs, now);
    }
    let quotaUsed: number | null = null;
    const { reservation, slot } = settlement;
    if (reservation) {
      const counter = this.liveCounter(reservation.key, now);
      const current = counter?.value ?? 0;
      quotaUsed = Math.max(0, current + (reservation.actual - reservation.reserved));
      if (quotaUsed !== current) {
        if (counter) counter.value = quotaUsed; // keeps its expiry
        else this.counters.set(reservation.key, { value: quotaUsed, expiresAt: null });
      }
    }
    if (slot) this.release(slot.key, slot.leaseId);
    return { quotaUsed };
  }

  async clear(keyPrefix: string): Promise<void> {
    this.assertOpen();
    for (const map of [this.windows, this.counters, this.slots, this.leases] as Array<Map<string, unknown>>) {
      for (const key of [...map.keys()]) if (key.startsWith(keyPrefix)) map.delete(key);
    }
  }

  async ping(): Promise<void> {
    this.assertOpen();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.windows.clear();
    this.counters.clear();
    this.slots.clear();
    this.leases.clear();
  }

  /** Number of keys held (windows + counters + slot sets + leases). For leak checks in tests. */
  keyCount(): number {
    return this.windows.size + this.counters.size + this.slots.size + this.leases.size;
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('MemoryCounters is closed');
  }

  /** Reads the clock and runs the periodic sweep when it is due. */
  private tick(): number {
    this.assertOpen();
    const now = this.now();
    if (now - this.lastSweep >= this.sweepIntervalMs) {
      this.lastSweep = now;
      this.sweep(now);
    }
    return now;
  }

  private sweep(now: number): void {
    for (const [key, state] of this.windows) if (now >= state.expiresAt) this.windows.delete(key);
    for (const [key, state] of this.counters) if (state.expiresAt !== null && now >= state.expiresAt) this.counters.delete(key);
    for (const [key, leases] of this.slots) this.pruneSlots(key, leases, now);
    for (const [key, lease] of this.leases) if (now >= lease.expiresAt) this.leases.delete(key);
  }

  private liveCounter(key: string, now: number): CounterState | undefined {
    const state = this.counters.get(key);
    if (state && state.expiresAt !== null && now >= state.expiresAt) {
      this.counters.delete(key);
      return undefined;
    }
    return state;
  }

  /** The window of `key` pruned to the last `windowMs`, or undefined (and dropped) when empty. */
  private liveWindow(key: string, windowMs: number, now: number): WindowState | undefined {
    const state = this.windows.get(key);
    if (!state) return undefined;
    this.pruneWindow(state, now - windowMs);
    if (state.entries.length > 0) return state;
    this.windows.delete(key);
    return undefined;
  }

  /** Appends an entry of weight `cost` at `now` to the window of `key` (creating it); returns the window. */
  private addToWindow(key: string, state: WindowState | undefined, cost: number, windowMs: number, now: number): WindowState {
    if (!state) {
      state = { entries: [], head: 0, sum: 0, expiresAt: 0 };
      this.windows.set(key, state);
    }
    // Keep the log time-ordered even if an injected clock steps backwards.
    const last = state.entries[state.entries.length - 1];
    const t = last && last.t > now ? last.t : now;
    state.entries.push({ t, w: cost });
    state.sum += cost;
    state.expiresAt = Math.max(state.expiresAt, t + windowMs);
    return state;
  }

  /** Drops entries at or before `cutoff` (they have left the window). */
  private pruneWindow(state: WindowState, cutoff: number): void {
    const { entries } = state;
    while (state.head < entries.length && entries[state.head]!.t <= cutoff) {
      state.sum -= entries[state.head]!.w;
      state.head++;
    }
    if (state.head >= entries.length) {
      // Empty: reset, which also discards any floating-point drift in the running total.
      entries.length = 0;
      state.head = 0;
      state.sum = 0;
    } else if (state.head > 64 && state.head * 2 > entries.length) {
      entries.splice(0, state.head);
      state.head = 0;
    }
  }

  private describeWindow(state: WindowState | undefined, limit: number, windowMs: number, now: number): AdmissionWindow {
    const count = state?.sum ?? 0;
    const oldest = state?.entries[state.head];
    return { count, remaining: Math.max(0, limit - count), resetMs: oldest ? Math.max(0, Math.ceil(oldest.t + windowMs - now)) : 0 };
  }

  /**
   * Time until the weight that has left the (pruned) window reaches `need` (exceeds it when
   * `strict`). Entries leave in time order, each at `t + windowMs`. When even an empty window would
   * not do (a cost above the limit), the time until it is empty, or a full window. Always >= 1.
   */
  private windowRetry(state: WindowState | undefined, need: number, strict: boolean, windowMs: number, now: number): number {
    let at = windowMs;
    if (state) {
      let left = 0;
      for (let i = state.head; i < state.entries.length; i++) {
        const e = state.entries[i]!;
        left += e.w;
        at = e.t + windowMs - now;
        if (strict ? left > need : left >= need) break;
      }
    }
    return Math.max(1, Math.ceil(at));
  }

  /** The live leases of `key`, or undefined (and dropped) when none is left. */
  private liveSlots(key: string, now: number): SlotState | undefined {
    const leases = this.slots.get(key);
    if (leases) this.pruneSlots(key, leases, now);
    return this.slots.get(key);
  }

  private release(key: string, leaseId: string): void {
    const leases = this.slots.get(key);
    if (!leases) return;
    leases.delete(leaseId);
    if (leases.size === 0) this.slots.delete(key);
  }

  private pruneSlots(key: string, leases: SlotState, now: number): void {
    for (const [id, expiresAt] of leases) if (now >= expiresAt) leases.delete(id);
    if (leases.size === 0) this.slots.delete(key);
  }
}
