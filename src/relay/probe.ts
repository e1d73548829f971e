/** One real request that proves a channel works (channel test and health probes). */
import type { Channel } from './channel.js';
import { PROVIDERS } from './providers/index.js';
import type { UpstreamPools } from './upstream-pool.js';

export interface ProbeResult {
  ok: boolean;
  status: number | null;
  latencyMs: number;
  error: string | null;
}

export async function probeChannel(channel: Channel, pools: UpstreamPools, timeoutMs = 15_000): Promise<ProbeResult> {
  const provider = PROVIDERS[channel.type];
  const model = channel.models[0] ?? Object.values(channel.modelMapping)[0] ?? '';
  const started = performance.now();
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    const response = await pools.request(provider.probeRequest({ channel, model }), signal);
    const text = await response.body.text();
    const latencyMs = Math.round(performance.now() - started);
    if (response.statusCode < 400) return { ok: true, status: response.statusCode, latencyMs, error: null };
    return { ok: false, status: response.statusCode, latencyMs, error: provider.parseError(response.statusCode, text).message };
  } catch (error) {
    return { ok: false, status: null, latencyMs: Math.round(performance.now() - started), error: error instanceof Error ? error.message : String(error) };
  }
}
