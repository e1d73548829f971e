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
 * Deployment: single node, replicated or Sentinel. Window scripts touch two keys derived from one
 * user key, which Redis Cluster would need hash-tagged into one slot (not supported here).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { Redis, type RedisOptions } from 'ioredis';
import type { Counters, Reservation, WindowHit } from '../../ports/counters.js';
import { assertFinite, assertNonNegative, assertPositive } from './arguments.js';

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

-- Per the port: time until enough weight leaves for one more unit to fit (window <= limit - 1).
local mustLeave = sum + 1 - limit
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

const SCRIPTS = {
  hitWindow: { name: 'switchyardCountersHitWindowV1', lua: HIT_WINDOW, numberOfKeys: 2 },
  peekWindow: { name: 'switchyardCountersPeekWindowV1', lua: PEEK_WINDOW, numberOfKeys: 2 },
  reserve: { name: 'switchyardCountersReserveV1', lua: RESERVE, numberOfKeys: 1 },
  adjust: { name: 'switchyardCountersAdjustV1', lua: ADJUST, numberOfKeys: 1 },
  acquireSlot: { name: 'switchyardCountersAcquireSlotV1', lua: ACQUIRE_SLOT, numberOfKeys: 1 },
} as const;

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
    for (const { name, lua, numberOfKeys } of Object.values(SCRIPTS)) {
      this.redis.defineCommand(name, { lua, numberOfKeys });
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

  /** SCAN (never KEYS) in batches, unlinking each batch; not atomic, meant for tests and rebuilds. */
  async clear(keyPrefix: string): Promise<void> {
    const pattern = `${escapeGlob(this.prefix)}[cwts]:${escapeGlob(keyPrefix)}*`;
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

  private k(kind: 'c' | 'w' | 't' | 's', key: string): string {
    return `${this.prefix}${kind}:${key}`;
  }

  private nextId(): string {
    this.seq = (this.seq + 1) % Number.MAX_SAFE_INTEGER;
    return `${this.instanceId}${this.seq.toString(36)}`;
  }

  private run(script: ScriptName, ...args: string[]): Promise<unknown> {
    const command = (this.redis as unknown as Record<string, ScriptCommand | undefined>)[SCRIPTS[script].name];
    if (!command) throw new Error(`counters: script ${script} is not registered on the client`);
    return command.apply(this.redis, args);
  }
}
