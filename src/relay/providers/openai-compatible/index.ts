/** One provider implementation for every OpenAI-compatible kind, parameterised by its quirks. */
import type { Provider, ProviderContext, UpstreamRequest } from '../provider.js';
import { compatEmbeddings } from './embeddings.js';
import { joinUrl } from '../shared.js';
import { buildCompatRequest, DEFAULT_QUIRKS, type CompatQuirks } from './request.js';
import { parseCompatError, parseCompatResponse } from './response.js';
import { createCompatStreamConverter } from './stream.js';

export function compatProbe(ctx: ProviderContext): UpstreamRequest {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (ctx.channel.apiKey) headers.authorization = `Bearer ${ctx.channel.apiKey}`;
  return {
    url: joinUrl(ctx.channel.baseUrl, 'chat/completions'),
    method: 'POST',
    headers,
    body: JSON.stringify({ model: ctx.model, messages: [{ role: 'user', content: 'ping' }], max_tokens: 1 }),
  };
}

export function openAiCompatibleProvider(quirks: Partial<CompatQuirks> = {}): Provider {
  const effective = { ...DEFAULT_QUIRKS, ...quirks };
  return {
    buildRequest: (request, ctx) => buildCompatRequest(request, ctx, effective),
    parseResponse: (body, _ctx, meta) => parseCompatResponse(body, meta),
    createStreamConverter: (_ctx, meta, maxEventSize) => createCompatStreamConverter(meta, maxEventSize),
    streamMediaType: 'text/event-stream',
    parseError: parseCompatError,
    probeRequest: compatProbe,
    embeddings: compatEmbeddings,
  };
}
