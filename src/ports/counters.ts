/**
 * The counters port: hot-path numbers that must be exact across instances (rate windows, quota
 * reservations, in-flight request slots). Redis (Lua scripts, one round trip per call) in the
 * distributed mode, process memory in the embedded one. Both pass
 * test/contract/counters.contract.ts.
 *
 * Every operation is atomic with respect to every other operation on the same key.
 */

export interface WindowHit {
  /** True when the hit was counted (it fit under the limit). A refused hit is not counted. */
  allowed: boolean;
  /** Weight in the window after this call (including this hit when allowed). */
  count: number;
  /** limit - count, floored at 0. */
  remaining: number;
  /** Milliseconds until enough weight leaves the window for one more unit to fit (0 if allowed). */
  retryAfterMs: number;
}

export interface Reservation {
  allowed: boolean;
  /** Amount in use (reserved + settled) after this call. */
  used: number;
}

export interface Counters {
  readonly kind: string;

  /**
   * Sliding-window rate check: adds `cost` (default 1) to the window of `key` if the weight of the
   * last `windowMs` stays <= `limit`. Sliding, so a client cannot double its rate at a window edge.
   */
  hitWindow(key: string, options: { limit: number; windowMs: number; cost?: number }): Promise<WindowHit>;

  /** Weight currently in the window of `key` without adding to it. */
  peekWindow(key: string, windowMs: number): Promise<number>;

  /**
   * Reserve `amount` against `limit`: succeeds only if used + amount <= limit, atomically.
   * Quota is reserved before an upstream call and settled with `adjust` after.
   */
  reserve(key: string, amount: number, limit: number): Promise<Reservation>;

  /** Adds `delta` (may be negative) unconditionally; returns the new value. */
  adjust(key: string, delta: number, ttlMs?: number): Promise<number>;

  /** Current value of an `adjust`/`reserve` counter (0 when absent). */
  get(key: string): Promise<number>;

  /** Sets a plain counter (used when a projection recomputes a total). */
  set(key: string, value: number, ttlMs?: number): Promise<void>;

  /**
   * Takes one of `limit` slots of `key` for at most `leaseMs` (a crashed holder's slot frees
   * itself). Returns a lease id to release, or null when all slots are taken.
   */
  acquireSlot(key: string, limit: number, leaseMs: number): Promise<string | null>;
  releaseSlot(key: string, leaseId: string): Promise<void>;

  /** Deletes every key under this adapter's prefix that starts with `keyPrefix` (tests, rebuilds). */
  clear(keyPrefix: string): Promise<void>;

  ping(): Promise<void>;
  close(): Promise<void>;
}
