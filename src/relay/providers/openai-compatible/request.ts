/**
 * OpenAI-compatible upstreams (OpenAI itself, Mistral, DeepSeek, Groq, OpenRouter, xAI, Moonshot,
 * Zhipu, Qwen, vLLM, llama.cpp, LM Studio, custom): the body is the client's, minus Switchyard's
 * extension fields, with the upstream model name.
 */
import type { ChatCompletionRequest } from '../../schema.js';
import type { ProviderContext, UpstreamRequest } from '../provider.js';
import { joinUrl, unsupported } from '../shared.js';

/** Per-kind differences among the "compatible" servers. */
export interface CompatQuirks {
  /** Accepts `stream_options.include_usage` (so streams report usage). */
  streamUsage: boolean;
  /** Accepts `n` > 1. */
  multipleChoices: boolean;
}

export const DEFAULT_QUIRKS: CompatQuirks = { streamUsage: true, multipleChoices: true };

/** Fields Switchyard understands itself and never forwards. */
const EXTENSION_FIELDS = new Set(['provider_config', 'model_mapping', 'preset_id']);

/** Whether `compatBody` would return a copy equal to `request` itself (same keys, same order, same values). */
function forwardsAsIs(request: ChatCompletionRequest, ctx: ProviderContext, quirks: CompatQuirks): boolean {
  if (request.model !== ctx.model || (request.stream && quirks.streamUsage)) return false;
  for (const key in request) if (EXTENSION_FIELDS.has(key)) return false;
  return true;
}

export function compatBody(request: ChatCompletionRequest, ctx: ProviderContext, quirks: CompatQuirks, includeModel = true): Record<string, unknown> {
  if (!quirks.multipleChoices && (request.n ?? 1) > 1) throw unsupported('n', `${ctx.channel.type} channels return one choice: n must be 1`);
  const body: Record<string, unknown> = {};
  for (const key in request) {
    // `__proto__` (an own key of a parsed body) would set the copy's prototype, not a field.
    // eslint-disable-next-line switchyard/no-string-index-lookup -- own keys of the parsed body (for-in), `__proto__` excluded
    if (!EXTENSION_FIELDS.has(key) && key !== '__proto__') body[key] = request[key as keyof ChatCompletionRequest];
  }
  if (includeModel) body.model = ctx.model;
  else delete body.model;
  if (request.stream && quirks.streamUsage) {
    // Always ask for usage: the relay records it even when the client did not ask to see it.
    body.stream_options = { ...(request.stream_options ?? {}), include_usage: true };
  }
  return body;
}

/** What a channel's requests share, built once per channel (and again if its settings change). */
interface ChannelTarget {
  baseUrl: string;
  apiKey: string;
  organization: unknown;
  url: string;
  headers: Readonly<Record<string, string>>;
  streamHeaders: Readonly<Record<string, string>>;
}

/**
 * Per channel object; each entry remembers the settings it was built from and is rebuilt when
 * they differ, so a channel changed in place is never served stale headers. The relay sends the
 * same URL and headers on every request of a channel: building them (two regex replaces, the
 * Authorization string) each time showed in profiles, and a URL string seen before also makes
 * the pool's URL lookup cheaper (its hash is cached).
 */
const channelTargets = new WeakMap<ProviderContext['channel'], ChannelTarget>();

function channelTarget(channel: ProviderContext['channel']): ChannelTarget {
  const organization = channel.config.organization;
  const cached = channelTargets.get(channel);
  if (cached && cached.baseUrl === channel.baseUrl && cached.apiKey === channel.apiKey && cached.organization === organization) return cached;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (channel.apiKey) headers.authorization = `Bearer ${channel.apiKey}`;
  if (typeof organization === 'string' && organization) headers['openai-organization'] = organization;
  const target: ChannelTarget = {
    baseUrl: channel.baseUrl,
    apiKey: channel.apiKey,
    organization,
    url: joinUrl(channel.baseUrl, 'chat/completions'),
    // Frozen: every request of the channel shares them.
    headers: Object.freeze(headers),
    streamHeaders: Object.freeze({ ...headers, accept: 'text/event-stream' }),
  };
  channelTargets.set(channel, target);
  return target;
}

export function buildCompatRequest(request: ChatCompletionRequest, ctx: ProviderContext, quirks: CompatQuirks = DEFAULT_QUIRKS): UpstreamRequest {
  const target = channelTarget(ctx.channel);
  // The common request (nothing to drop or change) is serialised as it is, without a copy first.
  const body = forwardsAsIs(request, ctx, quirks) && (quirks.multipleChoices || (request.n ?? 1) <= 1) ? request : compatBody(request, ctx, quirks);
  return { url: target.url, method: 'POST', headers: request.stream ? target.streamHeaders : target.headers, body: JSON.stringify(body) };
}
