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
   * The position, from `from` on (cycling through the candidates once), of the first candidate
   * whose limits admit one more request (counting it): the candidate is
   * `candidates[position % candidates.length]`, the next search starts at `position + 1`.
   * `ChannelsRateLimited` when none does. Synchronous, and allocating nothing, when the candidate
   * at `from` has no limits (the common case).
   */
  pick(candidates: readonly Candidate[], from: number): number | Promise<number | ChannelsRateLimited> {
    if (!candidates[from % candidates.length]!.channel.rateLimits) return from;
    return this.search(candidates, from);
  }

  private async search(candidates: readonly Candidate[], from: number): Promise<number | ChannelsRateLimited> {
    let soonest = Infinity;
    for (let position = from; position < from + candidates.length; position++) {
      const channel = candidates[position % candidates.length]!.channel;
      if (!channel.rateLimits) return position;
      const result = await this.counters.admit(admissionOf(channel));
      if (result.allowed) return position;
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
