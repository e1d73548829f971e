/**
 * Embeddings on Ollama: `POST /api/embed` with `{model, input, dimensions?}`; the answer's
 * `embeddings` in input order and `prompt_eval_count` as the token count. `user` has no Ollama
 * field and is dropped.
 */
import { embeddingsOf, tokenCountOf, vectorsOf } from '../embeddings.js';
import type { EmbeddingsCodec } from '../provider.js';
import { joinUrl, upstreamObject } from '../shared.js';
import { OLLAMA_DEFAULT_BASE_URL } from './request.js';

export const ollamaEmbeddings: EmbeddingsCodec = {
  buildRequest(request, ctx) {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (ctx.channel.apiKey.trim() !== '') headers.authorization = `Bearer ${ctx.channel.apiKey.trim()}`;
    const body: Record<string, unknown> = { model: ctx.model, input: request.input };
    if (request.dimensions !== undefined) body.dimensions = request.dimensions;
    return { url: joinUrl(ctx.channel.baseUrl || OLLAMA_DEFAULT_BASE_URL, '/api/embed'), method: 'POST', headers, body: JSON.stringify(body) };
  },
  parseResponse(text, _ctx, request) {
    const json = upstreamObject(text, 'ollama');
    return embeddingsOf(vectorsOf(json.embeddings, request, 'ollama'), request, request.model, tokenCountOf(json.prompt_eval_count));
  },
};
