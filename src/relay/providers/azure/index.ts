/**
 * Azure OpenAI: OpenAI's responses, Azure's URL and auth (see request.ts), and OpenAI's streams
 * without Azure's content filter annotations that are not chunks (see stream.ts). A non-streamed
 * answer keeps its `prompt_filter_results` and `content_filter_results` as extra fields.
 */
import { parseCompatError, parseCompatResponse } from '../openai-compatible/response.js';
import type { Provider } from '../provider.js';
import { azureEmbeddings } from './embeddings.js';
import { azureUrl, buildAzureRequest } from './request.js';
import { createAzureStreamConverter } from './stream.js';

export const azureProvider: Provider = {
  buildRequest: buildAzureRequest,
  parseResponse: (body, _ctx, meta) => parseCompatResponse(body, meta),
  createStreamConverter: (_ctx, meta, maxEventSize) => createAzureStreamConverter(meta, maxEventSize),
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
