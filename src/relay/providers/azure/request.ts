/**
 * Azure OpenAI: the OpenAI body, sent to a deployment URL with an `api-key` header.
 * `{base_url}/openai/deployments/{deployment}/chat/completions?api-version={api_version}`;
 * the deployment is `config.deployment`, else the upstream model name.
 */
import type { ChatCompletionRequest } from '../../schema.js';
import { compatBody, DEFAULT_QUIRKS } from '../openai-compatible/request.js';
import type { ProviderContext, UpstreamRequest } from '../provider.js';
import { joinUrl } from '../shared.js';

export const DEFAULT_AZURE_API_VERSION = '2024-10-21';

/** The deployment's URL for `operation` (`chat/completions`, `embeddings`). */
export function azureUrl(ctx: ProviderContext, operation = 'chat/completions'): string {
  const deployment = typeof ctx.channel.config.deployment === 'string' && ctx.channel.config.deployment ? ctx.channel.config.deployment : ctx.model;
  const apiVersion = typeof ctx.channel.config.api_version === 'string' && ctx.channel.config.api_version ? ctx.channel.config.api_version : DEFAULT_AZURE_API_VERSION;
  return `${joinUrl(ctx.channel.baseUrl, `openai/deployments/${encodeURIComponent(deployment)}/${operation}`)}?api-version=${encodeURIComponent(apiVersion)}`;
}

export function buildAzureRequest(request: ChatCompletionRequest, ctx: ProviderContext): UpstreamRequest {
  const headers: Record<string, string> = { 'content-type': 'application/json', 'api-key': ctx.channel.apiKey };
  if (request.stream) headers.accept = 'text/event-stream';
  // The deployment names the model; Azure ignores a `model` field, so none is sent.
  return { url: azureUrl(ctx), method: 'POST', headers, body: JSON.stringify(compatBody(request, ctx, DEFAULT_QUIRKS, false)) };
}
