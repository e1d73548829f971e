/**
 * Counters in Redis: the distributed mode, exact across any number of gateway instances.
 *
 * Every operation is ONE round trip: either a single native command (GET, SET, ZREM) or a Lua
 * script registered with ioredis `defineCommand` (sent as EVALSHA, with ioredis falling back to
 * EVAL on NOSCRIPT). Scripts run atomically on the server, and they read time with
 * `redis.call('TIME')`, so instances whose clocks disagree still agree on every window and lease.
 *
 * Key layout (all under the adapter's `keyPrefix`, one letter per kind so the same key name used by
 * different kinds never collides, and a kind can't hit WRONGTYPE):
 *   <prefix>c:<key>  string      adjust / reserve / get / set counter
 *   <prefix>w:<key>  sorted set  window log: member "<weight>:<unique id>", score = time (ms)
 *   <prefix>t:<key>  string      running total weight of the window log
 *   <prefix>s:<key>  sorted set  slot leases: member = lease id, score = expiry time (ms)
 *   <prefix>l:<key>  string      owner lease: the owner, expiring with the lease (PX)
 *
 * Window algorithm: an EXACT sliding window (not the two-bucket sliding-window-counter
 * approximation). Each counted hit is one sorted-set entry scored by server time, carrying its
 * weight in the member; an entry counts while `time > now - windowMs`. A running total in a side
 * key makes the check O(log n + expired entries) instead of summing the whole log on every hit:
 * the script prunes expired entries (subtracting their weights), compares total + cost with the
 * limit and adds the entry only when it fits. Exact because quota/rate decisions are billed and
 * the approximation can over-admit by up to a full window's weight after a burst; the price is
 * memory proportional to the hits in one window, which for request-rate limits is small. Both
 * keys expire `windowMs` after the newest hit, so an idle window costs nothing. A key is meant to
 * be hit with one `windowMs`; `peekWindow` may ask with any `windowMs` and never prunes.
 *
 * Admission (`admit`) and settlement (`settle`) are one script each over the same keys as the
 * single operations, every key passed in KEYS. `admit` reads and prunes every window, the slot set
 * and the quota counter, decides, and writes (window entries, lease, INCRBYFLOAT) only when every
 * check passed: Lua scripts have no rollback, so no counting write precedes the last check, and a
 * refused admission changes nothing but pruning. A script call is one round trip.
 *
 * Deployment: single node, replicated or Sentinel. Window scripts touch two keys derived from one
 * user key, and `admit`/`settle` touch all the keys of one request, which Redis Cluster would need
 * hash-tagged into one slot (e.g. user keys sharing a "{api-key-id}" tag, with no braces in
 * `keyPrefix`); not supported or tested here.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { Redis, type RedisOptions } from 'ioredis';
import type {
  AdmissionRefusal,
  AdmissionRequest,
  AdmissionResult,
  AdmissionWindow,
  ConnectionListener,
  Counters,
  Reservation,
  Settlement,
  SettlementResult,
  WindowHit,
} from '../../ports/counters.js';
import { assertAdmission, assertFinite, assertNonNegative, assertPositive, assertSettlement } from './arguments.js';

export interface RedisCountersOptions {
  /** redis://[:password@]host:port/db. Explicit fields below override the URL's. */
  url?: string;
  host?: string;
  port?: number;
  password?: string;
  db?: number;
  /** Namespace for every key this adapter touches (e.g. "switchyard:counters:"). */
  keyPrefix: string;
  /**
   * An existing client to use instead of opening one. It is not closed by `close()` (its owner
   * closes it) and must not have ioredis' own `keyPrefix` option set.
   */
  client?: Redis;
  /** Told when the connection is lost and when it is back (changes only). */
  onConnection?: ConnectionListener;
}

/** Lua prelude: server time in ms (microsecond fraction) and exact score formatting. */
const PRELUDE = `
if redis.replicate_commands then pcall(redis.replicate_commands) end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
-- Numbers passed to redis.call are formatted with %.14g, which would round epoch-ms scores.
local function fmt(x) return string.format('%.3f', x) end
local function weight(member) return tonumber(string.match(member, '^([^:]+):')) end
`;

/**
 * KEYS: log, total. ARGV: limit, windowMs, cost, unique id.
 * Returns {allowed 0|1, count, retryAfterMs} (numbers as strings: Lua numbers would be truncated
 * to integers in the reply).
 */
const HIT_WINDOW = `${PRELUDE}
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local cutoff = fmt(now - window)

local stored = redis.call('GET', KEYS[2])
local sum = 0
local changed = false
if stored then
  sum = tonumber(stored)
  local old = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', cutoff)
  for i = 1, #old do sum = sum - weight(old[i]) end
  if #old > 0 then
    redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', cutoff)
    changed = true
  end
else
  -- Total missing (first hit, or evicted): rebuild it from the log.
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', cutoff)
  local live = redis.call('ZRANGE', KEYS[1], 0, -1)
  for i = 1, #live do sum = sum + weight(live[i]) end
  changed = true
end
local size = redis.call('ZCARD', KEYS[1])
if size == 0 then sum = 0 end -- also discards floating-point drift in the total

if sum + cost <= limit then
  redis.call('ZADD', KEYS[1], fmt(now), ARGV[3] .. ':' .. ARGV[4])
  sum = sum + cost
  local ttl = math.ceil(window) + 1
  redis.call('SET', KEYS[2], string.format('%.17g', sum), 'PX', ttl)
  redis.call('PEXPIRE', KEYS[1], ttl)
  return {1, string.format('%.17g', sum), '0'}
end

-- Refused: nothing is added; persist only what pruning changed.
if changed then
  if size == 0 then
    redis.call('DEL', KEYS[2])
  else
    local ttl = redis.call('PTTL', KEYS[1])
    if ttl <= 0 then
      ttl = math.ceil(window) + 1
      redis.call('PEXPIRE', KEYS[1], ttl)
    end
    redis.call('SET', KEYS[2], string.format('%.17g', sum), 'PX', ttl)
  end
end

-- Per the port: time until enough weight leaves for THIS hit's cost to fit (window <= limit - cost).
local mustLeave = sum + cost - limit
local retry = 0
if mustLeave > 0 then
  retry = window
  local left = 0
  local start = 0
  local found = false
  while not found do
    local chunk = redis.call('ZRANGE', KEYS[1], start, start + 63, 'WITHSCORES')
    if #chunk == 0 then break end
    for i = 1, #chunk, 2 do
      left = left + weight(chunk[i])
      retry = tonumber(chunk[i + 1]) + window - now
      if left >= mustLeave then found = true break end
    end
    start = start + 64
  end
  retry = math.max(1, math.ceil(retry))
end
return {0, string.format('%.17g', sum), tostring(retry)}
`;

/** KEYS: log, total. ARGV: windowMs. Read-only: total minus entries that left this window. */
const PEEK_WINDOW = `${PRELUDE}
local cutoff = now - tonumber(ARGV[1])
local stored = redis.call('GET', KEYS[2])
local sum = 0
if stored then
  sum = tonumber(stored)
  local old = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', fmt(cutoff))
  for i = 1, #old do sum = sum - weight(old[i]) end
else
  local live = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. fmt(cutoff), '+inf')
  for i = 1, #live do sum = sum + weight(live[i]) end
end
if redis.call('ZCOUNT', KEYS[1], '(' .. fmt(cutoff), '+inf') == 0 then sum = 0 end
return string.format('%.17g', sum)
`;

/** KEYS: counter. ARGV: amount, limit. Returns {allowed 0|1, used}. Keeps an existing TTL. */
const RESERVE = `
local current = redis.call('GET', KEYS[1])
local used = tonumber(current or '0')
if used + tonumber(ARGV[1]) <= tonumber(ARGV[2]) then
  return {1, redis.call('INCRBYFLOAT', KEYS[1], ARGV[1])}
end
return {0, current or '0'}
`;

/** KEYS: counter. ARGV: delta, ttlMs ('' = keep the current expiry). */
const ADJUST = `
local value = redis.call('INCRBYFLOAT', KEYS[1], ARGV[1])
if ARGV[2] ~= '' then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return value
`;

/** KEYS: slots. ARGV: limit, leaseMs, lease id. Returns the lease id, or nil when full. */
const ACQUIRE_SLOT = `${PRELUDE}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', fmt(now))
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return false end
redis.call('ZADD', KEYS[1], fmt(now + tonumber(ARGV[2])), ARGV[3])
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
redis.call('PEXPIRE', KEYS[1], math.ceil(tonumber(last[2]) - now) + 1)
return ARGV[3]
`;

/**
 * KEYS: lease. ARGV: owner, ttlMs. Takes a free (or expired: Redis dropped it) lease or renews the
 * owner's own; 1 when `owner` holds it after the call. Expiry is Redis's, so clocks need not agree.
 */
const HOLD_LEASE = `
local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
`;

/** KEYS: lease. ARGV: owner. Deletes the lease only when `owner` holds it. */
const RELEASE_LEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 0
`;

/**
 * Lua helpers for the composite scripts (admit, settle): the same window/slot/counter algorithms
 * as the single-operation scripts above, on the same keys, written as functions.
 */
const COMPOSITE_PRELUDE = `${PRELUDE}
local function num(x)
  local s = string.format('%.15g', x)
  if tonumber(s) ~= x then s = string.format('%.17g', x) end
  return s
end

-- Prunes the entries that left the window; returns the live total, the log size and whether
-- pruning changed anything (to persist with keep() when nothing is added).
local function load(log, total, window)
  local cutoff = fmt(now - window)
  local stored = redis.call('GET', total)
  local sum = 0
  local changed = false
  if stored then
    sum = tonumber(stored)
    local old = redis.call('ZRANGEBYSCORE', log, '-inf', cutoff)
    for i = 1, #old do sum = sum - weight(old[i]) end
    if #old > 0 then
      redis.call('ZREMRANGEBYSCORE', log, '-inf', cutoff)
      changed = true
    end
  else
    redis.call('ZREMRANGEBYSCORE', log, '-inf', cutoff)
    local live = redis.call('ZRANGE', log, 0, -1)
    for i = 1, #live do sum = sum + weight(live[i]) end
    changed = true
  end
  local size = redis.call('ZCARD', log)
  if size == 0 then sum = 0 end
  return sum, size, changed
end

-- Adds one entry (weight cost, given as its string) at now; returns the new total.
local function add(log, total, window, sum, cost, costArg, id)
  redis.call('ZADD', log, fmt(now), costArg .. ':' .. id)
  sum = sum + cost
  local ttl = math.ceil(window) + 1
  redis.call('SET', total, string.format('%.17g', sum), 'PX', ttl)
  redis.call('PEXPIRE', log, ttl)
  return sum
end

-- Persists what load() pruned when nothing was added.
local function keep(log, total, window, sum, size, changed)
  if not changed then return end
  if size == 0 then
    redis.call('DEL', total)
    return
  end
  local ttl = redis.call('PTTL', log)
  if ttl <= 0 then
    ttl = math.ceil(window) + 1
    redis.call('PEXPIRE', log, ttl)
  end
  redis.call('SET', total, string.format('%.17g', sum), 'PX', ttl)
end

-- Time until the weight that has left the window reaches need (exceeds it when strict), entries
-- leaving oldest first; if no amount of leaving does, until the window is empty (or a full window).
local function retry_after(log, window, need, strict)
  local retry = window
  local left = 0
  local start = 0
  while true do
    local chunk = redis.call('ZRANGE', log, start, start + 63, 'WITHSCORES')
    if #chunk == 0 then break end
    for i = 1, #chunk, 2 do
      left = left + weight(chunk[i])
      retry = tonumber(chunk[i + 1]) + window - now
      if left > need or (not strict and left >= need) then return math.max(1, math.ceil(retry)) end
    end
    start = start + 64
  end
  return math.max(1, math.ceil(retry))
end

-- Milliseconds until the oldest entry leaves the window (0 when empty).
local function reset_ms(log, window)
  local first = redis.call('ZRANGE', log, 0, 0, 'WITHSCORES')
  if #first == 0 then return 0 end
  return math.max(0, math.ceil(tonumber(first[2]) + window - now))
end
`;

/**
 * KEYS: per window (log, total), per check window (log, total), then the slot set if any, then the
 * reservation counter if any.
 * ARGV: #windows, #checkWindows, hasSlot 0|1, hasReservation 0|1; per window: limit, windowMs,
 * cost, entry id; per check window: limit, windowMs; slot: limit, leaseMs, lease id; reservation:
 * amount, limit.
 * Reads and prunes everything first, decides, and writes only when everything passes (Lua has no
 * rollback, so no write of a counted entry may precede the last check).
 * Returns {allowed 0|1, reason, index, retryAfterMs, remaining, quotaUsed|'', leaseId|'',
 * {count, resetMs per window}, {count, resetMs per check window}}.
 */
const ADMIT = `${COMPOSITE_PRELUDE}
local nw = tonumber(ARGV[1])
local nc = tonumber(ARGV[2])
local k = 1
local a = 5

local wins = {}
for i = 1, nw do
  local w = { log = KEYS[k], total = KEYS[k + 1], limit = tonumber(ARGV[a]), window = tonumber(ARGV[a + 1]),
    cost = tonumber(ARGV[a + 2]), costArg = ARGV[a + 2], id = ARGV[a + 3] }
  w.sum, w.size, w.changed = load(w.log, w.total, w.window)
  wins[i] = w
  k = k + 2
  a = a + 4
end
local checks = {}
for i = 1, nc do
  local w = { log = KEYS[k], total = KEYS[k + 1], limit = tonumber(ARGV[a]), window = tonumber(ARGV[a + 1]) }
  w.sum, w.size, w.changed = load(w.log, w.total, w.window)
  checks[i] = w
  k = k + 2
  a = a + 2
end
local slot = nil
if ARGV[3] == '1' then
  slot = { key = KEYS[k], limit = tonumber(ARGV[a]), lease = tonumber(ARGV[a + 1]), id = ARGV[a + 2] }
  redis.call('ZREMRANGEBYSCORE', slot.key, '-inf', fmt(now))
  slot.held = redis.call('ZCARD', slot.key)
  k = k + 1
  a = a + 3
end
local res = nil
local quota = ''
if ARGV[4] == '1' then
  local stored = redis.call('GET', KEYS[k])
  res = { key = KEYS[k], amount = tonumber(ARGV[a]), amountArg = ARGV[a], limit = tonumber(ARGV[a + 1]), used = tonumber(stored or '0') }
  quota = stored or '0'
end

local reason = nil
local index = 0
local retry = 0
local remaining = 0
for i = 1, nw do
  local w = wins[i]
  if w.sum + w.cost > w.limit then
    reason, index = 'window', i - 1
    retry = retry_after(w.log, w.window, w.sum + w.cost - w.limit, false)
    remaining = w.limit - w.sum
    break
  end
end
if not reason then
  for i = 1, nc do
    local w = checks[i]
    if w.sum >= w.limit then
      reason, index = 'check_window', i - 1
      retry = retry_after(w.log, w.window, w.sum - w.limit, true)
      remaining = w.limit - w.sum
      break
    end
  end
end
if not reason and slot and slot.held >= slot.limit then
  reason = 'slot'
  local first = redis.call('ZRANGE', slot.key, 0, 0, 'WITHSCORES')
  if #first == 0 then retry = slot.lease else retry = tonumber(first[2]) - now end
  retry = math.max(1, math.ceil(retry))
  remaining = slot.limit - slot.held
end
if not reason and res and res.used + res.amount > res.limit then
  reason = 'reservation'
  remaining = res.limit - res.used
end

local lease = ''
if reason then
  for i = 1, nw do keep(wins[i].log, wins[i].total, wins[i].window, wins[i].sum, wins[i].size, wins[i].changed) end
else
  for i = 1, nw do
    local w = wins[i]
    w.sum = add(w.log, w.total, w.window, w.sum, w.cost, w.costArg, w.id)
  end
  if slot then
    redis.call('ZADD', slot.key, fmt(now + slot.lease), slot.id)
    local last = redis.call('ZRANGE', slot.key, -1, -1, 'WITHSCORES')
    redis.call('PEXPIRE', slot.key, math.ceil(tonumber(last[2]) - now) + 1)
    lease = slot.id
  end
  if res then quota = redis.call('INCRBYFLOAT', res.key, res.amountArg) end
end
for i = 1, nc do keep(checks[i].log, checks[i].total, checks[i].window, checks[i].sum, checks[i].size, checks[i].changed) end

local wout = {}
for i = 1, nw do
  wout[2 * i - 1] = num(wins[i].sum)
  wout[2 * i] = reset_ms(wins[i].log, wins[i].window)
end
local cout = {}
for i = 1, nc do
  cout[2 * i - 1] = num(checks[i].sum)
  cout[2 * i] = reset_ms(checks[i].log, checks[i].window)
end
if reason then
  return {0, reason, index, tostring(retry), num(math.max(0, remaining)), quota, '', wout, cout}
end
return {1, '', 0, '0', '0', quota, lease, wout, cout}
`;

/**
 * KEYS: per charge (log, total), then the reservation counter if any, then the slot set if any.
 * ARGV: #charges, hasReservation 0|1, hasSlot 0|1; per charge: windowMs, cost, entry id;
 * reservation: delta (actual - reserved); slot: lease id.
 * Returns the counter value after the reservation is settled, or ''.
 */
const SETTLE = `${COMPOSITE_PRELUDE}
local n = tonumber(ARGV[1])
local k = 1
local a = 4
for i = 1, n do
  local window = tonumber(ARGV[a])
  local cost = tonumber(ARGV[a + 1])
  if cost > 0 then
    local sum = load(KEYS[k], KEYS[k + 1], window)
    add(KEYS[k], KEYS[k + 1], window, sum, cost, ARGV[a + 1], ARGV[a + 2])
  end
  k = k + 2
  a = a + 3
end
local quota = ''
if ARGV[2] == '1' then
  local stored = redis.call('GET', KEYS[k])
  local current = tonumber(stored or '0')
  local value = math.max(0, current + tonumber(ARGV[a]))
  if value ~= current then redis.call('SET', KEYS[k], num(value), 'KEEPTTL') end
  quota = num(value)
  k = k + 1
  a = a + 1
end
if ARGV[3] == '1' then redis.call('ZREM', KEYS[k], ARGV[a]) end
return quota
`;

interface ScriptDefinition {
  name: string;
  lua: string;
  /** Absent for scripts with a variable number of keys: the call then passes the count first. */
  numberOfKeys?: number;
}

const SCRIPTS = {
  hitWindow: { name: 'switchyardCountersHitWindowV1', lua: HIT_WINDOW, numberOfKeys: 2 },
  peekWindow: { name: 'switchyardCountersPeekWindowV1', lua: PEEK_WINDOW, numberOfKeys: 2 },
  reserve: { name: 'switchyardCountersReserveV1', lua: RESERVE, numberOfKeys: 1 },
  adjust: { name: 'switchyardCountersAdjustV1', lua: ADJUST, numberOfKeys: 1 },
  acquireSlot: { name: 'switchyardCountersAcquireSlotV1', lua: ACQUIRE_SLOT, numberOfKeys: 1 },
  holdLease: { name: 'switchyardCountersHoldLeaseV1', lua: HOLD_LEASE, numberOfKeys: 1 },
  releaseLease: { name: 'switchyardCountersReleaseLeaseV1', lua: RELEASE_LEASE, numberOfKeys: 1 },
  admit: { name: 'switchyardCountersAdmitV1', lua: ADMIT },
  settle: { name: 'switchyardCountersSettleV1', lua: SETTLE },
} satisfies Record<string, ScriptDefinition>;

type ScriptName = keyof typeof SCRIPTS;
type ScriptCommand = (...args: Array<string | number>) => Promise<unknown>;

/** Escapes Redis glob metacharacters so a literal string can be used in SCAN MATCH. */
function escapeGlob(s: string): string {
  return s.replace(/[*?[\]\\^]/g, '\\$&');
}

function toNumber(reply: unknown): number {
  if (reply === null || reply === undefined) return 0;
  const n = Number(typeof reply === 'string' ? reply : String(reply));
  if (Number.isNaN(n)) throw new Error(`counters: unexpected non-numeric reply ${String(reply)}`);
  return n;
}

export class RedisCounters implements Counters {
  readonly kind = 'redis';

  private readonly redis: Redis;
  private readonly ownsClient: boolean;
  private readonly prefix: string;
  /** Window log members must be unique per key: instance id + sequence number. */
  private readonly instanceId = randomBytes(6).toString('base64url');
  private seq = 0;

  constructor(options: RedisCountersOptions) {
    this.prefix = options.keyPrefix;
    if (options.client) {
      if (options.client.options.keyPrefix) {
        throw new Error('RedisCounters: the given client has an ioredis keyPrefix; pass the prefix as keyPrefix instead');
      }
      this.redis = options.client;
      this.ownsClient = false;
    } else {
      const overrides: RedisOptions = {};
      if (options.host !== undefined) overrides.host = options.host;
      if (options.port !== undefined) overrides.port = options.port;
      if (options.password !== undefined) overrides.password = options.password;
      if (options.db !== undefined) overrides.db = options.db;
      this.redis = options.url ? new Redis(options.url, overrides) : new Redis(overrides);
      this.ownsClient = true;
    }
    const onConnection = options.onConnection;
    if (onConnection) {
      // ioredis reconnects by itself; an error while connected means the connection is gone.
      let up = true;
      this.redis.on('error', (error: Error) => {
        if (up) onConnection('down', error.message);
        up = false;
      });
      this.redis.on('ready', () => {
        if (!up) onConnection('up');
        up = true;
      });
    }
    for (const { name, lua, numberOfKeys } of Object.values(SCRIPTS) as ScriptDefinition[]) {
      this.redis.defineCommand(name, numberOfKeys === undefined ? { lua } : { lua, numberOfKeys });
    }
  }

  async hitWindow(key: string, options: { limit: number; windowMs: number; cost?: number }): Promise<WindowHit> {
    const { limit, windowMs } = options;
    const cost = options.cost ?? 1;
    assertFinite('limit', limit);
    assertPositive('windowMs', windowMs);
    assertNonNegative('cost', cost);
    const reply = (await this.run('hitWindow', this.k('w', key), this.k('t', key), String(limit), String(windowMs), String(cost), this.nextId())) as [
      number,
      string,
      string,
    ];
    const allowed = reply[0] === 1;
    const count = toNumber(reply[1]);
    return { allowed, count, remaining: Math.max(0, limit - count), retryAfterMs: allowed ? 0 : toNumber(reply[2]) };
  }

  async peekWindow(key: string, windowMs: number): Promise<number> {
    assertPositive('windowMs', windowMs);
    return toNumber(await this.run('peekWindow', this.k('w', key), this.k('t', key), String(windowMs)));
  }

  async reserve(key: string, amount: number, limit: number): Promise<Reservation> {
    assertNonNegative('amount', amount);
    assertFinite('limit', limit);
    const reply = (await this.run('reserve', this.k('c', key), String(amount), String(limit))) as [number, string];
    return { allowed: reply[0] === 1, used: toNumber(reply[1]) };
  }

  async adjust(key: string, delta: number, ttlMs?: number): Promise<number> {
    assertFinite('delta', delta);
    if (ttlMs !== undefined) assertPositive('ttlMs', ttlMs);
    return toNumber(await this.run('adjust', this.k('c', key), String(delta), ttlMs === undefined ? '' : String(Math.ceil(ttlMs))));
  }

  async get(key: string): Promise<number> {
    return toNumber(await this.redis.get(this.k('c', key)));
  }

  async set(key: string, value: number, ttlMs?: number): Promise<void> {
    assertFinite('value', value);
    if (ttlMs === undefined) {
      await this.redis.set(this.k('c', key), String(value));
    } else {
      assertPositive('ttlMs', ttlMs);
      await this.redis.set(this.k('c', key), String(value), 'PX', Math.ceil(ttlMs));
    }
  }

  async acquireSlot(key: string, limit: number, leaseMs: number): Promise<string | null> {
    assertFinite('limit', limit);
    assertPositive('leaseMs', leaseMs);
    const reply = await this.run('acquireSlot', this.k('s', key), String(limit), String(leaseMs), randomUUID());
    return typeof reply === 'string' ? reply : null;
  }

  async releaseSlot(key: string, leaseId: string): Promise<void> {
    await this.redis.zrem(this.k('s', key), leaseId);
  }

  async holdLease(key: string, owner: string, ttlMs: number): Promise<boolean> {
    assertPositive('ttlMs', ttlMs);
    return (await this.run('holdLease', this.k('l', key), owner, String(Math.ceil(ttlMs)))) === 1;
  }

  async releaseLease(key: string, owner: string): Promise<void> {
    await this.run('releaseLease', this.k('l', key), owner);
  }

  async admit(request: AdmissionRequest): Promise<AdmissionResult> {
    assertAdmission(request);
    const { windows, checkWindows, slot, reservation } = request;
    const keys: string[] = [];
    const argv: string[] = [String(windows.length), String(checkWindows.length), slot ? '1' : '0', reservation ? '1' : '0'];
    for (const w of windows) {
      keys.push(this.k('w', w.key), this.k('t', w.key));
      argv.push(String(w.limit), String(w.windowMs), String(w.cost ?? 1), this.nextId());
    }
    for (const w of checkWindows) {
      keys.push(this.k('w', w.key), this.k('t', w.key));
      argv.push(String(w.limit), String(w.windowMs));
    }
    if (slot) {
      keys.push(this.k('s', slot.key));
      argv.push(String(slot.limit), String(slot.leaseMs), randomUUID());
    }
    if (reservation) {
      keys.push(this.k('c', reservation.key));
      argv.push(String(reservation.amount), String(reservation.limit));
    }
    const reply = (await this.run('admit', String(keys.length), ...keys, ...argv)) as [
      number,
      string,
      number,
      string,
      string,
      string,
      string,
      Array<string | number>,
      Array<string | number>,
    ];
    const [allowed, reason, index, retryAfterMs, remaining, quota, leaseId, windowStates, checkStates] = reply;
    const states = (flat: Array<string | number>, limits: Array<{ limit: number }>): AdmissionWindow[] =>
      limits.map((w, i) => {
        const count = toNumber(flat[2 * i]);
        return { count, remaining: Math.max(0, w.limit - count), resetMs: toNumber(flat[2 * i + 1]) };
      });
    const common = {
      windows: states(windowStates, windows),
      checkWindows: states(checkStates, checkWindows),
      quotaUsed: reservation ? toNumber(quota) : null,
    };
    if (allowed === 1) return { allowed: true, leaseId: slot ? leaseId : null, ...common };
    const refusal = reason as AdmissionRefusal;
    const limit =
      refusal === 'window'
        ? windows[index]?.limit
        : refusal === 'check_window'
          ? checkWindows[index]?.limit
          : refusal === 'slot'
            ? slot?.limit
            : reservation?.limit;
    if (limit === undefined) throw new Error(`counters: unexpected admission refusal ${reason}[${index}]`);
    return { allowed: false, reason: refusal, index, retryAfterMs: toNumber(retryAfterMs), limit, remaining: toNumber(remaining), ...common };
  }

  async settle(settlement: Settlement): Promise<SettlementResult> {
    assertSettlement(settlement);
    const { charge = [], reservation, slot } = settlement;
    const keys: string[] = [];
    const argv: string[] = [String(charge.length), reservation ? '1' : '0', slot ? '1' : '0'];
    for (const c of charge) {
      keys.push(this.k('w', c.key), this.k('t', c.key));
      argv.push(String(c.windowMs), String(c.cost), this.nextId());
    }
    if (reservation) {
      keys.push(this.k('c', reservation.key));
      argv.push(String(reservation.actual - reservation.reserved));
    }
    if (slot) {
      keys.push(this.k('s', slot.key));
      argv.push(slot.leaseId);
    }
    const reply = await this.run('settle', String(keys.length), ...keys, ...argv);
    return { quotaUsed: reservation ? toNumber(reply) : null };
  }

  /** SCAN (never KEYS) in batches, unlinking each batch; not atomic, meant for tests and rebuilds. */
  async clear(keyPrefix: string): Promise<void> {
    const pattern = `${escapeGlob(this.prefix)}[cwtsl]:${escapeGlob(keyPrefix)}*`;
    let cursor = '0';
    do {
      const [next, keys] = await this.redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await this.redis.unlink(...keys);
    } while (cursor !== '0');
  }

  async ping(): Promise<void> {
    await this.redis.ping();
  }

  async close(): Promise<void> {
    if (!this.ownsClient) return;
    try {
      await this.redis.quit();
    } catch {
      this.redis.disconnect();
    }
  }

  private k(kind: 'c' | 'w' | 't' | 's' | 'l', key: string): string {
    return `${this.prefix}${kind}:${key}`;
  }

  private nextId(): string {
    this.seq = (this.seq + 1) % Number.MAX_SAFE_INTEGER;
    return `${this.instanceId}${this.seq.toString(36)}`;
  }

  private run(script: ScriptName, ...args: string[]): Promise<unknown> {
// eslint-disable-next-line switchyard/no-string-index-lookup -- script names are the code's own
    const command = (this.redis as unknown as Record<string, ScriptCommand | undefined>)[SCRIPTS[script].name];
    if (!command) throw new Error(`counters: script ${script} is not registered on the client`);
    return command.apply(this.redis, args);
  }
}
