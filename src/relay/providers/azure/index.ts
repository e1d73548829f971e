/** Azure OpenAI: OpenAI's responses and streams, Azure's URL and auth (see request.ts). */
import { parseCompatError, parseCompatResponse } from '../openai-compatible/response.js';
import { createCompatStreamConverter } from '../openai-compatible/stream.js';
import type { Provider } from '../provider.js';
import { azureEmbeddings } from './embeddings.js';
import { azureUrl, buildAzureRequest } from './request.js';

export const azureProvider: Provider = {
  buildRequest: buildAzureRequest,
  parseResponse: (body, _ctx, meta) => parseCompatResponse(body, meta),
  createStreamConverter: (_ctx, meta, maxEventSize) => createCompatStreamConverter(meta, maxEventSize),
  streamMediaType: 'text/event-stream',
  parseError: parseCompatError,
  probeRequest: (ctx) => ({
    url: azureUrl(ctx),
    method: 'POST',
    headers: { 'content-type': 'application/json', 'api-key': ctx.channel.apiKey },
    body: JSON.stringify({ messages: [{ role: 'user', content: 'ping' }], max_tokens: 1 }),
  }),
  embeddings: azureEmbeddings,
};
