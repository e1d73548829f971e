/**
 * Embeddings on Gemini: `POST /v1beta/models/{model}:batchEmbedContents`, one request per input
 * (`content.parts[0].text`, `outputDimensionality` for `dimensions`); the answer's
 * `embeddings[i].values` in input order. Gemini reports no token count: the relay counts.
 * `user` has no Gemini field and is dropped.
 */
import { inputsOf } from '../../embeddings-schema.js';
import { embeddingsOf, vectorsOf } from '../embeddings.js';
import type { EmbeddingsCodec } from '../provider.js';
import { badUpstream, isRecord, joinUrl, upstreamObject } from '../shared.js';
import { modelId } from './request.js';

export const geminiEmbeddings: EmbeddingsCodec = {
  buildRequest(request, ctx) {
    const id = modelId(ctx.model);
    const requests = inputsOf(request).map((text) => ({
      model: `models/${id}`,
      content: { parts: [{ text }] },
      ...(request.dimensions !== undefined ? { outputDimensionality: request.dimensions } : {}),
    }));
    return {
      url: joinUrl(ctx.channel.baseUrl, `/v1beta/models/${encodeURIComponent(id)}:batchEmbedContents`),
      method: 'POST',
      headers: { 'x-goog-api-key': ctx.channel.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ requests }),
    };
  },
  parseResponse(text, _ctx, request) {
    const json = upstreamObject(text, 'Gemini');
    if (!Array.isArray(json.embeddings)) throw badUpstream('Gemini returned no embeddings');
    const values = json.embeddings.map((e: unknown) => (isRecord(e) ? e.values : undefined));
    return embeddingsOf(vectorsOf(values, request, 'Gemini'), request, request.model, null);
  },
};
