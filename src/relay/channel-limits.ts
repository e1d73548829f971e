/**
 * A channel's own limits (`rate_limits {requests_per_minute, tokens_per_minute}`): what the relay
 * may send it per minute, counted in the counters port so that every instance shares one count
 * (Redis in the distributed mode). A request is counted as it is sent (one per attempt); tokens
 * are the real usage, charged after the request and checked before the next one. A channel over
 * a limit is skipped like a cooled-down one; when every candidate left is, the client gets 429
 * `channel_rate_limited` with Retry-After.
 *
 * Channels without limits cost nothing here: `pick` hands back the candidate without a counters
 * call (and without a promise).
 */
import { AppError } from '../errors.js';
import type { AdmissionRequest, Counters } from '../ports/counters.js';
import type { Channel } from './channel.js';
import type { Candidate } from './router.js';

const MINUTE = 60_000;

const requestsKey = (channel: Channel) => `chrl:${channel.id}:rpm`;
const tokensKey = (channel: Channel) => `chrl:${channel.id}:tpm`;

/** The next candidate to send to, from `from` on (cycling), and where the search goes on next time. */
export interface Picked {
  candidate: Candidate;
  /** Index of the candidate after it (the next attempt starts there). */
  next: number;
}

/** Every candidate was over its limits: the soonest any of them frees up. */
export class ChannelsRateLimited {
  constructor(readonly retryAfterMs: number) {}

  error(): AppError {
    const seconds = String(Math.max(1, Math.ceil(this.retryAfterMs / 1000)));
    return new AppError(429, 'rate_limit_error', 'channel_rate_limited', `every channel that serves this model is at its rate limit; retry after ${seconds}s`, { 'retry-after': seconds });
  }
}

/** The admission of one request to a channel with limits (one window per limit set). */
function admissionOf(channel: Channel): AdmissionRequest {
  const limits = channel.rateLimits!;
  return {
    windows: limits.requests_per_minute ? [{ key: requestsKey(channel), limit: limits.requests_per_minute, windowMs: MINUTE }] : [],
    checkWindows: limits.tokens_per_minute ? [{ key: tokensKey(channel), limit: limits.tokens_per_minute, windowMs: MINUTE }] : [],
  };
}

export class ChannelLimits {
  constructor(private readonly counters: Counters) {}

  /**
   * The first candidate from index `from` on (cycling through all of them once) whose limits
   * admit one more request, counting it; `ChannelsRateLimited` when none does. Synchronous when
   * the candidate at `from` has no limits (the common case).
   */
  pick(candidates: readonly Candidate[], from: number): Picked | Promise<Picked | ChannelsRateLimited> {
    const first = candidates[from % candidates.length]!;
    if (!first.channel.rateLimits) return { candidate: first, next: from + 1 };
    return this.search(candidates, from);
  }

  private async search(candidates: readonly Candidate[], from: number): Promise<Picked | ChannelsRateLimited> {
    let soonest = Infinity;
    for (let step = 0; step < candidates.length; step++) {
      const candidate = candidates[(from + step) % candidates.length]!;
      const picked = { candidate, next: from + step + 1 };
      if (!candidate.channel.rateLimits) return picked;
      const result = await this.counters.admit(admissionOf(candidate.channel));
      if (result.allowed) return picked;
      soonest = Math.min(soonest, result.retryAfterMs);
    }
    return new ChannelsRateLimited(soonest === Infinity ? MINUTE : soonest);
  }

  /** After a request the channel answered: its real tokens count against tokens_per_minute. Null without such a limit. */
  settle(channel: Channel, totalTokens: number): Promise<unknown> | null {
    if (!channel.rateLimits?.tokens_per_minute || totalTokens <= 0) return null;
    return this.counters.settle({ charge: [{ key: tokensKey(channel), windowMs: MINUTE, cost: totalTokens }] });
  }
}
