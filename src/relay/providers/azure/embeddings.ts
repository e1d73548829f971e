/**
 * Embeddings on Azure OpenAI: OpenAI's body and answer, sent to
 * `{base_url}/openai/deployments/{deployment}/embeddings?api-version=...` with `api-key` (the
 * deployment names the model, so no `model` field is sent).
 */
import { compatEmbeddingsBody, parseCompatEmbeddings } from '../openai-compatible/embeddings.js';
import type { EmbeddingsCodec } from '../provider.js';
import { azureUrl } from './request.js';

export const azureEmbeddings: EmbeddingsCodec = {
  buildRequest: (request, ctx) => ({
    url: azureUrl(ctx, 'embeddings'),
    method: 'POST',
    headers: { 'content-type': 'application/json', 'api-key': ctx.channel.apiKey },
    body: JSON.stringify(compatEmbeddingsBody(request, null)),
  }),
  parseResponse: (text, _ctx, request) => parseCompatEmbeddings(text, request, 'Azure OpenAI'),
};
