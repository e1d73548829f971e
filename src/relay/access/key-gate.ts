/**
 * Everything an API key is checked for on a relay request, in the order the answers are
 * documented: unknown/revoked (401 invalid_api_key), expired (401 key_expired), model (403
 * model_not_allowed, after the key's aliases resolve), source address and country (403
 * ip_not_allowed), then, in ONE counters round trip, rate limits (429 rate_limit_exceeded),
 * concurrency (429 rate_limit_exceeded) and quota (429 insufficient_quota). The returned ticket
 * settles real usage after the request (tokens per hour, quota, the concurrency slot).
 */
import { createHash } from 'node:crypto';
import type { HttpRequestLike } from '../../http-exchange.js';
import { AppError, ForbiddenError, UnauthorizedError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import type { AdmissionRequest, AdmissionResult, Counters } from '../../ports/counters.js';
import type { UsageData } from '../../commands/usage/events.js';
import { keyAllowsModel, type ActiveKey, type KeyDirectory } from '../../views/keys.js';
import type { GateBody } from '../relay.js';
import { ownValue } from '../../own.js';
import { clientIp } from './client-ip.js';
import type { GeoLocator } from './geo.js';
import { compileIpRules, ipAllowed, parseIpRule, type IpRule, type IpRuleSet } from './ip-rules.js';
import { routedModel } from './billing-gate.js';
import { creditsToMicro, type QuotaCost } from './quota-cost.js';

export const KEY_PREFIX = 'sk-';

/** A presented secret as an answer may echo it to its sender: the start and the last four characters. */
export function shownKey(secret: string): string {
  return secret.length <= 12 ? `${secret.slice(0, 3)}***` : `${secret.slice(0, 6)}***${secret.slice(-4)}`;
}

export function hashKey(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

export interface KeyTicket {
  key: ActiveKey;
  /** The model to route (the key's alias resolved). */
  model: string;
  /** Rate-limit headers for the response. */
  headers: Record<string, string>;
  /** Records real usage: tokens per hour, quota (reserved -> actual cost), frees the concurrency slot. Resolves with the cost charged to the quota. */
  settle(usage: UsageData): Promise<number>;
}

const MINUTE = 60_000;
const HOUR = 3_600_000;

/** The rate limits of a key whose tenant turned rate limiting off. */
const NO_RATE_LIMITS: ActiveKey['policy']['rate_limits'] = Object.freeze({ requests_per_minute: null, requests_per_hour: null, tokens_per_hour: null, concurrent_requests: null, burst_allowance: null });

/**
 * Upper bound of what a request can be billed, in tokens, for the quota reservation (settled to
 * the real usage afterwards). Nothing in it may come only from the client, or a client could make
 * its requests look cheap (`max_tokens: 1`) and overshoot the quota with concurrent requests:
 * - prompt: the UTF-8 bytes of the whole request body as JSON. A token covers at least one byte of
 *   text, and the JSON framing of each message (braces, quotes, `"role"`, `"content"`) outweighs
 *   the few template tokens a provider adds per message. (Images and audio are priced per picture
 *   or second by providers, not per byte: they are outside this bound.)
 * - completion: the client's `max_completion_tokens` / `max_tokens`, but never less than
 *   `minCompletion` (QUOTA_RESERVE_COMPLETION_TOKENS), times the number of choices `n`.
 */
export function reservationTokens(body: GateBody, minCompletion: number): { prompt: number; completion: number } {
  const requested = body.max_completion_tokens ?? body.max_tokens ?? body.max_output_tokens ?? 0;
  return { prompt: Buffer.byteLength(JSON.stringify(body)), completion: Math.max(requested, minCompletion) * (body.n ?? 1) };
}

export class KeyGate {
  private readonly proxies: IpRuleSet;

  constructor(
    private readonly counters: Counters,
    private readonly geo: GeoLocator,
    trustedProxies: readonly string[],
    private readonly slotLeaseMs: number,
    private readonly logger: Logger,
    /** What requests cost against `quota_limit`: the tenant's prices (the billing gate). */
    private readonly cost: QuotaCost,
    /** QUOTA_RESERVE_COMPLETION_TOKENS: the least completion a quota reservation counts. */
    private readonly reserveCompletionTokens: number,
  ) {
    this.proxies = compileIpRules(trustedProxies.map((p) => parseIpRule(p)).filter((r): r is IpRule => r !== null));
  }

  /** 401 for an unknown, revoked or expired key. No I/O: the directory is in memory. */
  authenticate(secret: string, directory: KeyDirectory, request?: HttpRequestLike, now = Date.now()): ActiveKey {
    const key = directory.byHash.get(hashKey(secret));
    if (!key) {
      // Unknown or revoked (a revoked key leaves the directory): the entry names neither the key nor its prefix.
      if (request) this.logRefusal(request, 'api_key_refused', 'unknown or revoked API key', null);
      throw new UnauthorizedError(`Incorrect API key provided: ${shownKey(secret)}. API keys are listed (and created) in Switchyard's web UI under API keys, or with GET /v1/keys.`, 'invalid_api_key');
    }
    if (key.expiresAt <= now) {
      if (request) this.logRefusal(request, 'api_key_refused', 'expired API key', key);
      throw new UnauthorizedError('API key expired', 'key_expired');
    }
    return key;
  }

  /** Security entries of refused API keys and sources: built only on the failure branch. */
  private logRefusal(request: HttpRequestLike, event: 'api_key_refused' | 'ip_not_allowed', reason: string, key: ActiveKey | null) {
    this.securityLog ??= this.logger.child({ category: 'security', component: 'relay' });
    this.securityLog.warn(
      { event, reason, request_id: request.id, ip_address: this.clientAddress(request), ...(key && { key_id: key.id, tenant_id: key.tenantId, user_id: key.userId }) },
      `${event === 'ip_not_allowed' ? 'request refused' : 'API key refused'}: ${reason}`,
    );
  }

  private securityLog: Logger | null = null;

  /** The model after the key's aliases, if the key may use it (403 model_not_allowed otherwise). */
  resolveModel(key: ActiveKey, requested: string): string {
    const model = ownValue(key.policy.model_aliases, requested) ?? requested;
    if (!keyAllowsModel(key, model)) {
      throw new ForbiddenError(`this API key may not use model ${model}`, 'model_not_allowed');
    }
    return model;
  }

  /** The client's address (X-Forwarded-For only through TRUSTED_PROXIES): also what login throttling counts. */
  clientAddress(request: HttpRequestLike): string {
    return clientIp(request, this.proxies).ip;
  }

  /** 403 ip_not_allowed for an address or country the key excludes. */
  checkSource(key: ActiveKey, request: HttpRequestLike): void {
    const { ip, viaTrustedProxy } = clientIp(request, this.proxies);
    if (!ipAllowed(ip, key.allowedIps, key.blockedIps)) {
      this.logRefusal(request, 'ip_not_allowed', `address ${ip} not allowed for the key`, key);
      throw new ForbiddenError(`requests from ${ip} are not allowed for this API key`, 'ip_not_allowed');
    }
    if (key.allowedCountries.size === 0 && key.blockedCountries.size === 0) return;
    const country = this.geo.country(request, ip, viaTrustedProxy);
    // Country rules fail closed: an unknown country passes no allow list and no block list.
    if (!country || key.blockedCountries.has(country) || (key.allowedCountries.size > 0 && !key.allowedCountries.has(country))) {
      this.logRefusal(request, 'ip_not_allowed', `country ${country ?? 'unknown'} not allowed for the key`, key);
      throw new ForbiddenError(`requests from ${country ?? 'an unknown country'} are not allowed for this API key`, 'ip_not_allowed');
    }
  }

  /**
   * Rate limits, concurrency and quota in one atomic counters call. With `enforceRateLimits`
   * false (the tenant's relay_settings.rate_limiting) only the quota is checked: no rate window,
   * no concurrency slot, no rate-limit headers.
   */
  async admit(key: ActiveKey, model: string, body: GateBody, enforceRateLimits = true): Promise<KeyTicket> {
    const limits = enforceRateLimits ? key.policy.rate_limits : NO_RATE_LIMITS;
    const id = key.id;
    const windows: AdmissionRequest['windows'] = [];
    let requestWindow: { limit: number; index: number } | null = null;
    if (limits.requests_per_minute) {
      const base = limits.requests_per_minute;
      const burst = limits.burst_allowance;
      // burst_allowance {multiplier, duration}: the minute also admits the extra volume of running
      // at multiplier x the rate for `duration` seconds: R + (multiplier - 1) * R * duration / 60.
      const extra = burst && burst.multiplier > 1 ? Math.floor(((burst.multiplier - 1) * base * Math.min(burst.duration * 1000, MINUTE)) / MINUTE) : 0;
      windows.push({ key: `rl:${id}:rpm`, limit: base + extra, windowMs: MINUTE });
      requestWindow = { limit: base + extra, index: 0 };
    }
    if (limits.requests_per_hour) {
      windows.push({ key: `rl:${id}:rph`, limit: limits.requests_per_hour, windowMs: HOUR });
      requestWindow ??= { limit: limits.requests_per_hour, index: windows.length - 1 };
    }
    const checkWindows: AdmissionRequest['checkWindows'] = limits.tokens_per_hour ? [{ key: `rl:${id}:tph`, limit: limits.tokens_per_hour, windowMs: HOUR }] : [];
    const slot = limits.concurrent_requests ? { key: `rl:${id}:conc`, limit: limits.concurrent_requests, leaseMs: this.slotLeaseMs } : undefined;
    const estimate = key.policy.quota_limit === null ? null : reservationTokens(body, this.reserveCompletionTokens);
    const reserved = estimate === null ? 0 : this.cost.estimate(key.tenantId, routedModel(model, body), estimate.prompt, estimate.completion);
    const reservation = key.policy.quota_limit === null ? undefined : { key: `quota:${id}`, amount: reserved, limit: creditsToMicro(key.policy.quota_limit) };

    const nothingToCount = windows.length === 0 && checkWindows.length === 0 && !slot && !reservation;
    const result: AdmissionResult = nothingToCount
      ? { allowed: true, leaseId: null, windows: [], checkWindows: [], quotaUsed: null }
      : await this.counters.admit({ windows, checkWindows, slot, reservation });

    const headers: Record<string, string> = {};
    if (requestWindow) {
      headers['x-ratelimit-limit-requests'] = String(requestWindow.limit);
      headers['x-ratelimit-remaining-requests'] = String(result.windows[requestWindow.index]?.remaining ?? 0);
    }
    if (limits.tokens_per_hour) {
      headers['x-ratelimit-limit-tokens'] = String(limits.tokens_per_hour);
      headers['x-ratelimit-remaining-tokens'] = String(result.checkWindows[0]?.remaining ?? 0);
    }

    if (!result.allowed) {
      const retryAfter = String(Math.max(1, Math.ceil(result.retryAfterMs / 1000)));
      if (result.reason === 'reservation') {
        throw new AppError(429, 'insufficient_quota', 'insufficient_quota', 'this API key has used up its quota', headers);
      }
      const what = result.reason === 'slot' ? `at most ${result.limit} concurrent requests` : result.reason === 'check_window' ? `${result.limit} tokens per hour` : `${result.limit} requests in the window`;
      throw new AppError(429, 'rate_limit_error', 'rate_limit_exceeded', `rate limit exceeded for this API key (${what}); retry after ${retryAfter}s`, { ...headers, 'retry-after': retryAfter });
    }

    const leaseId = result.leaseId;
    let settled = false;
    return {
      key,
      model,
      headers,
      settle: async (usage: UsageData) => {
        if (settled) return 0;
        settled = true;
        const totalTokens = usage.total_tokens;
        const actual = reservation ? this.cost.actual(usage) : 0;
        try {
          await this.counters.settle({
            charge: checkWindows.length > 0 && totalTokens > 0 ? [{ key: checkWindows[0]!.key, windowMs: HOUR, cost: totalTokens }] : undefined,
            reservation: reservation ? { key: reservation.key, reserved, actual } : undefined,
            slot: slot && leaseId ? { key: slot.key, leaseId } : undefined,
          });
        } catch (error) {
          // The slot lease expires by itself; the quota is re-derived from usage events at start.
          this.logger.warn({ err: error, key_id: id }, 'could not settle API key usage');
        }
        return reservation ? actual : 0;
      },
    };
  }
}
