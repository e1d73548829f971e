/**
 * The counters port: hot-path numbers that must be exact across instances (rate windows, quota
 * reservations, in-flight request slots). Redis (Lua scripts, one round trip per call) in the
 * distributed mode, process memory in the embedded one. Both pass
 * test/contract/counters.contract.ts.
 *
 * Every operation is atomic with respect to every other operation on the same key.
 */

/**
 * How an adapter with a network connection tells its owner that the connection went down or came
 * back (the operational log's dependency entries). Reported on changes only.
 */
export type ConnectionListener = (state: 'down' | 'up', detail?: string) => void;

export interface WindowHit {
  /** True when the hit was counted (it fit under the limit). A refused hit is not counted. */
  allowed: boolean;
  /** Weight in the window after this call (including this hit when allowed). */
  count: number;
  /** limit - count, floored at 0. */
  remaining: number;
  /**
   * 0 when allowed. When refused: milliseconds until enough weight leaves the window for THIS hit's
   * `cost` to fit, always > 0 (a cost above the whole limit never fits: the answer is then the time
   * until the window is empty, or a full window when it already is).
   */
  retryAfterMs: number;
}

export interface Reservation {
  allowed: boolean;
  /** Amount in use (reserved + settled) after this call. */
  used: number;
}

/** The state of one sliding window as reported by `admit`. */
export interface AdmissionWindow {
  /** Weight in the window (after counting this request when it was allowed). */
  count: number;
  /** limit - count, floored at 0. */
  remaining: number;
  /** Milliseconds until the oldest entry leaves the window (0 when the window is empty). */
  resetMs: number;
}

/**
 * Everything one request must pass, checked in one atomic step (one round trip in Redis). Keys are
 * the same keys, in the same data structures, as the single operations: `windows[i].key` and
 * `checkWindows[i].key` are `hitWindow`/`peekWindow` keys, `slot.key` an `acquireSlot`/`releaseSlot`
 * key, `reservation.key` a `reserve`/`get`/`adjust` counter. A window key must appear at most once
 * across `windows` and `checkWindows` (a RangeError otherwise), and like with `hitWindow` a window
 * key is meant to be used with one `windowMs`.
 */
export interface AdmissionRequest {
  /**
   * Sliding windows that count this request (requests per minute, per hour, bursts): each needs
   * count + cost <= limit, and gets `cost` (default 1) added when the whole admission passes.
   */
  windows: Array<{ key: string; limit: number; windowMs: number; cost?: number }>;
  /**
   * Sliding windows that are only checked now (current weight must be < limit) and charged later,
   * by `settle`, with the real usage (tokens per hour...).
   */
  checkWindows: Array<{ key: string; limit: number; windowMs: number }>;
  /** Concurrency: take one of `limit` slots of `key` for at most `leaseMs` (like `acquireSlot`). */
  slot?: { key: string; limit: number; leaseMs: number };
  /** Quota: reserve `amount` against `limit` on the plain counter `key` (used + amount <= limit), like `reserve`. */
  reservation?: { key: string; amount: number; limit: number };
}

/** Which kind of limit refused an admission (the first failing one in this order). */
export type AdmissionRefusal = 'window' | 'check_window' | 'slot' | 'reservation';

export interface AdmissionAllowed {
  allowed: true;
  /** The lease to pass to `settle` (or `releaseSlot`) when a slot was requested; null otherwise. */
  leaseId: string | null;
  /** Per entry of `request.windows`, in order, after counting this request. */
  windows: AdmissionWindow[];
  /** Per entry of `request.checkWindows`, in order (nothing is added to them by `admit`). */
  checkWindows: AdmissionWindow[];
  /** Counter value after the reservation, or null when none was requested. */
  quotaUsed: number | null;
}

export interface AdmissionRefused {
  allowed: false;
  /** The first failing check, in the order windows (in order), checkWindows (in order), slot, reservation. */
  reason: AdmissionRefusal;
  /** Index of the failing entry in its list (0 for slot and reservation). */
  index: number;
  /**
   * > 0 for windows, check windows and slots: for a window, the time until enough weight leaves
   * for this request's cost to fit; for a check window, until its weight drops below the limit;
   * for a slot, until the earliest lease expires. 0 for a reservation (quota does not free itself
   * with time). Other limits may still refuse a retry made after that time.
   */
  retryAfterMs: number;
  /** The failing entry's limit. */
  limit: number;
  /** The failing entry's limit minus what is in use, floored at 0 (without this request). */
  remaining: number;
  /** Current state of every window (nothing was counted). */
  windows: AdmissionWindow[];
  /** Current state of every check window. */
  checkWindows: AdmissionWindow[];
  /** Current counter value of the reservation key (nothing was reserved), or null when none was requested. */
  quotaUsed: number | null;
}

export type AdmissionResult = AdmissionAllowed | AdmissionRefused;

/** What to record after the request, in one atomic step (one round trip in Redis). */
export interface Settlement {
  /**
   * Real usage (e.g. tokens) added to check windows at the current time, even beyond their limit
   * (it was used). Entries with cost 0 change nothing.
   */
  charge?: Array<{ key: string; windowMs: number; cost: number }>;
  /** Replace a reservation by the real amount: counter += actual - reserved, floored at 0. Keeps the counter's TTL. */
  reservation?: { key: string; reserved: number; actual: number };
  /** Release the lease taken by `admit` (an unknown or expired lease id is ignored). */
  slot?: { key: string; leaseId: string };
}

export interface SettlementResult {
  /** Counter value after settling the reservation, or null when none was given. */
  quotaUsed: number | null;
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

  /**
   * The relay's hot path: checks every limit of `request` at once and, only if ALL pass, counts
   * the request in `windows`, takes the slot and makes the reservation. All-or-nothing: a refused
   * admission counts, takes and reserves nothing. One atomic step, exact across instances.
   */
  admit(request: AdmissionRequest): Promise<AdmissionResult>;

  /**
   * After the request: charges real usage to check windows, replaces the reservation by the
   * actual amount and releases the slot, in one atomic step.
   */
  settle(settlement: Settlement): Promise<SettlementResult>;

  /**
   * A lease held by one owner at a time (one instance runs a job; another takes over when it dies):
   * takes `key` for `owner` when it is free or its holder's lease expired, renews it (for `ttlMs`
   * from now) when `owner` already holds it, and answers false while another owner holds it.
   * Atomic: of owners racing for a free lease exactly one gets true.
   */
  holdLease(key: string, owner: string, ttlMs: number): Promise<boolean>;
  /** Gives the lease up if `owner` holds it (another owner's lease is left alone). */
  releaseLease(key: string, owner: string): Promise<void>;

  /** Deletes every key under this adapter's prefix that starts with `keyPrefix` (tests, rebuilds). */
  clear(keyPrefix: string): Promise<void>;

  ping(): Promise<void>;
  close(): Promise<void>;
}
