/** Helpers for relay tests: channels through the admin API, and the official OpenAI SDK as client. */
import OpenAI from 'openai';
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

export async function createChannel(s: RunningApp, input: ChannelInput, token = s.adminToken): Promise<{ id: string; [k: string]: unknown }> {
  const res = await call(`${s.url}/v1/admin/channels`, { token, body: { name: input.name ?? `${input.type}-channel`, key: 'test-key', ...input } });
  if (res.status !== 201) throw new Error(`channel create failed: ${res.status} ${res.text}`);
  return res.json as { id: string };
}

export function sdk(s: RunningApp, token = s.userToken, basePath = '/v1'): OpenAI {
  return new OpenAI({ apiKey: token, baseURL: `${s.url}${basePath}`, maxRetries: 0, timeout: 15_000 });
}

/** Reads every usage event in the log (what billing and the logs will consume). */
export async function usageEvents(s: RunningApp) {
  await s.app.ctx.usage.flush();
  const commits = await s.app.ctx.store.readAll({ after: 0, limit: 100_000 });
  return commits.flatMap((c) => c.events).filter((e) => e.type === 'UsageRecorded').map((e) => e.data as Record<string, any>); // eslint-disable-line @typescript-eslint/no-explicit-any
}
