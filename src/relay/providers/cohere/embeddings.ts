/**
 * Embeddings on Cohere (v2): `POST /v2/embed` with `texts`, `input_type: "search_document"`
 * (OpenAI's request has no input type; documents are what most callers embed),
 * `embedding_types: ["float"]` and `output_dimension` for `dimensions`. The answer's
 * `embeddings.float` in input order; tokens from `meta.billed_units.input_tokens`. `user` has no
 * Cohere field and is dropped.
 */
import { inputsOf, type EmbeddingsRequest } from '../../embeddings-schema.js';
import { embeddingsOf, tokenCountOf, vectorsOf } from '../embeddings.js';
import type { EmbeddingsCodec } from '../provider.js';
import { isRecord, joinUrl, upstreamObject } from '../shared.js';
import { COHERE_DEFAULT_BASE_URL } from './request.js';

/** The embed body Cohere's v2 API and its Bedrock models share (Bedrock's has no `model`). */
export function cohereEmbedBody(request: EmbeddingsRequest): Record<string, unknown> {
  const body: Record<string, unknown> = { texts: inputsOf(request), input_type: 'search_document', embedding_types: ['float'] };
  if (request.dimensions !== undefined) body.output_dimension = request.dimensions;
  return body;
}

/** `embeddings` as Cohere sends it: by type (`{float: [...]}`), or a plain list (Bedrock without embedding_types). */
export function cohereVectors(embeddings: unknown, request: EmbeddingsRequest, who: string): number[][] {
  return vectorsOf(isRecord(embeddings) ? embeddings.float : embeddings, request, who);
}

export const cohereEmbeddings: EmbeddingsCodec = {
  buildRequest: (request, ctx) => ({
    url: joinUrl(ctx.channel.baseUrl || COHERE_DEFAULT_BASE_URL, '/v2/embed'),
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', authorization: `Bearer ${ctx.channel.apiKey}` },
    body: JSON.stringify({ model: ctx.model, ...cohereEmbedBody(request) }),
  }),
  parseResponse(text, _ctx, request) {
    const json = upstreamObject(text, 'cohere');
    const meta = isRecord(json.meta) ? json.meta : {};
    const billed = isRecord(meta.billed_units) ? meta.billed_units : {};
    return embeddingsOf(cohereVectors(json.embeddings, request, 'cohere'), request, request.model, tokenCountOf(billed.input_tokens));
  },
};
