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

export function compatBody(request: ChatCompletionRequest, ctx: ProviderContext, quirks: CompatQuirks, includeModel = true): Record<string, unknown> {
  if (!quirks.multipleChoices && (request.n ?? 1) > 1) throw unsupported('n', `${ctx.channel.type} channels return one choice: n must be 1`);
  const body: Record<string, unknown> = {};
  for (const key in request) {
    if (!EXTENSION_FIELDS.has(key)) body[key] = request[key as keyof ChatCompletionRequest];
  }
  if (includeModel) body.model = ctx.model;
  else delete body.model;
  if (request.stream && quirks.streamUsage) {
    // Always ask for usage: the relay records it even when the client did not ask to see it.
    body.stream_options = { ...(request.stream_options ?? {}), include_usage: true };
  }
  return body;
}

export function buildCompatRequest(request: ChatCompletionRequest, ctx: ProviderContext, quirks: CompatQuirks = DEFAULT_QUIRKS): UpstreamRequest {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (ctx.channel.apiKey) headers.authorization = `Bearer ${ctx.channel.apiKey}`;
  const organization = ctx.channel.config.organization;
  if (typeof organization === 'string' && organization) headers['openai-organization'] = organization;
  if (request.stream) headers.accept = 'text/event-stream';
  return { url: joinUrl(ctx.channel.baseUrl, 'chat/completions'), method: 'POST', headers, body: JSON.stringify(compatBody(request, ctx, quirks)) };
}
