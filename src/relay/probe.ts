/** One real request that proves a channel works (channel test and health probes). */
import type { Logger } from '../logger.js';
import type { Channel } from './channel.js';
import { PROVIDERS } from './providers/index.js';
import { upstreamFailureOf } from './attempt-failure.js';
import type { ProviderContext, UpstreamRequest } from './providers/provider.js';
import { isEmbeddingModel } from './router.js';
import type { UpstreamPools } from './upstream-pool.js';

export interface ProbeResult {
  ok: boolean;
  status: number | null;
  latencyMs: number;
  /** Why it failed, written for an operator reading the channel (never the client's exception text). */
  error: string | null;
}

/** The probe's own deadline passed (AbortSignal.timeout rejects with a DOMException named TimeoutError). */
function isTimeout(error: unknown): boolean {
  return error instanceof Error && error.name === 'TimeoutError';
}

/** What a failed probe says: the same words a caller of the relay gets for the same failure. */
export function probeFailureMessage(error: unknown, timeoutMs: number): string {
  if (isTimeout(error)) return `the upstream did not answer within ${Math.round(timeoutMs / 100) / 10} s`;
  return upstreamFailureOf(error).message;
}

/** A chat ping, or for an embedding model the smallest embeddings request (a chat ping would fail on it). */
function probeRequestOf(channel: Channel, model: string): UpstreamRequest {
  const provider = PROVIDERS[channel.type];
  const ctx: ProviderContext = { channel, model };
  if (provider.embeddings !== undefined && isEmbeddingModel(channel, model)) return provider.embeddings.buildRequest({ model, input: 'ping' }, ctx);
  return provider.probeRequest(ctx);
}

export async function probeChannel(channel: Channel, pools: UpstreamPools, timeoutMs = 15_000, logger?: Logger): Promise<ProbeResult> {
  const provider = PROVIDERS[channel.type];
  const model = channel.models[0] ?? Object.values(channel.modelMapping)[0] ?? '';
  const started = performance.now();
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    const response = await pools.request(probeRequestOf(channel, model), signal);
    const text = await response.body.text();
    const latencyMs = Math.round(performance.now() - started);
    if (response.statusCode < 400) return { ok: true, status: response.statusCode, latencyMs, error: null };
    // The upstream's own error message: written by the provider for its API's callers.
    return { ok: false, status: response.statusCode, latencyMs, error: provider.parseError(response.statusCode, text).message };
  } catch (error) {
    logger?.warn({ err: error, channel: channel.id }, 'channel probe failed');
    return { ok: false, status: null, latencyMs: Math.round(performance.now() - started), error: probeFailureMessage(error, timeoutMs) };
  }
}
