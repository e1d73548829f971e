/** Helpers for relay tests: channels through the admin API, and the official OpenAI SDK as client. */
import OpenAI from 'openai';
import { Agent } from 'undici';
import type { ChannelType } from '../../src/relay/channel.js';
import { call, type RunningApp } from './app.js';

export interface ChannelInput {
  name?: string;
  type: ChannelType;
  base_url?: string | null;
  key?: string;
  models: string[];
  model_mapping?: Record<string, string>;
  priority?: number;
  weight?: number;
  enabled?: boolean;
  config?: Record<string, unknown>;
}

/** Default names differ: names are unique within a tenant. */
let channelCount = 0;

export async function createChannel(s: RunningApp, input: ChannelInput, token = s.adminToken): Promise<{ id: string; [k: string]: unknown }> {
  const res = await call(`${s.url}/v1/admin/channels`, { token, body: { name: input.name ?? `${input.type}-channel-${++channelCount}`, key: 'test-key', ...input } });
  if (res.status !== 201) throw new Error(`channel create failed: ${res.status} ${res.text}`);
  return res.json as { id: string };
}

/**
 * Connections of the SDK's own, one pool per running app: the global fetch pool also carries the
 * tests' admin calls, and a connection that served one belongs to fastify for good (see
 * src/api/relay-server.ts). With a pool of its own, SDK traffic takes the path API clients take:
 * the relay's own HTTP/1.1 server.
 */
const sdkPools = new WeakMap<RunningApp, Agent>();

export function sdk(s: RunningApp, token = s.userToken, basePath = '/v1'): OpenAI {
  let dispatcher = sdkPools.get(s);
  if (!dispatcher) sdkPools.set(s, (dispatcher = new Agent({ keepAliveTimeout: 1_000 })));
  return new OpenAI({ apiKey: token, baseURL: `${s.url}${basePath}`, maxRetries: 0, timeout: 15_000, fetchOptions: { dispatcher } as never });
}

/** Reads every usage event in the log (what billing and the logs will consume). */
export async function usageEvents(s: RunningApp) {
  await s.app.ctx.usage.flush();
  const commits = await s.app.ctx.store.readAll({ after: 0, limit: 100_000 });
  return commits.flatMap((c) => c.events).filter((e) => e.type === 'UsageRecorded').map((e) => e.data as Record<string, any>); // eslint-disable-line @typescript-eslint/no-explicit-any
}
