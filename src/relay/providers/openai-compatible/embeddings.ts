/**
 * Embeddings on OpenAI-compatible upstreams: `POST {base}/embeddings`, the client's request as it
 * is (the upstream model name; `encoding_format` passed through, so base64 comes back encoded by
 * the upstream). A server that ignores `encoding_format` and answers floats still gives the
 * client base64: the codec encodes them.
 */
import { inputsOf, type EmbeddingsRequest, type EmbeddingsResponse } from '../../embeddings-schema.js';
import { embeddingsOf, isVector, tokenCountOf } from '../embeddings.js';
import type { EmbeddingsCodec, ProviderContext, UpstreamRequest } from '../provider.js';
import { badUpstream, isRecord, joinUrl, upstreamObject } from '../shared.js';

/** The body OpenAI's embeddings API takes, from the fields the request set. */
export function compatEmbeddingsBody(request: EmbeddingsRequest, model: string | null): Record<string, unknown> {
  const body: Record<string, unknown> = model === null ? {} : { model };
  body.input = request.input;
  if (request.dimensions !== undefined) body.dimensions = request.dimensions;
  if (request.encoding_format !== undefined) body.encoding_format = request.encoding_format;
  if (request.user !== undefined) body.user = request.user;
  return body;
}

function compatHeaders(ctx: ProviderContext): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (ctx.channel.apiKey) headers.authorization = `Bearer ${ctx.channel.apiKey}`;
  const organization = ctx.channel.config.organization;
  if (typeof organization === 'string' && organization) headers['openai-organization'] = organization;
  return headers;
}

export function buildCompatEmbeddingsRequest(request: EmbeddingsRequest, ctx: ProviderContext): UpstreamRequest {
  return { url: joinUrl(ctx.channel.baseUrl, 'embeddings'), method: 'POST', headers: compatHeaders(ctx), body: JSON.stringify(compatEmbeddingsBody(request, ctx.model)) };
}

/** OpenAI's answer, checked: one vector (numbers or base64) per input, put in input order. */
export function parseCompatEmbeddings(text: string, request: EmbeddingsRequest, who = 'the upstream'): EmbeddingsResponse {
  const json = upstreamObject(text, who);
  const data = json.data;
  if (!Array.isArray(data)) throw badUpstream(`${who} returned no embeddings`);
  const expected = inputsOf(request).length;
  const vectors: Array<number[] | string | undefined> = Array.from({ length: expected }, () => undefined);
  for (const [position, item] of data.entries()) {
    if (!isRecord(item)) throw badUpstream(`${who} returned embeddings the relay cannot read`);
    const index = item.index === undefined ? position : item.index;
    if (!Number.isSafeInteger(index) || (index as number) < 0 || (index as number) >= expected || vectors[index as number] !== undefined) {
      throw badUpstream(`${who} returned embeddings that do not match the inputs`);
    }
    const embedding = item.embedding;
    if (typeof embedding !== 'string' && !isVector(embedding)) throw badUpstream(`${who} returned embeddings the relay cannot read`);
    vectors[index as number] = embedding;
  }
  if (vectors.some((v) => v === undefined)) throw badUpstream(`${who} returned ${data.length} embeddings for ${expected} inputs`);
  const usage = isRecord(json.usage) ? json.usage : {};
  const model = typeof json.model === 'string' && json.model ? json.model : request.model;
  return embeddingsOf(vectors as Array<number[] | string>, request, model, tokenCountOf(usage.prompt_tokens) ?? tokenCountOf(usage.total_tokens));
}

export const compatEmbeddings: EmbeddingsCodec = {
  buildRequest: buildCompatEmbeddingsRequest,
  parseResponse: (text, _ctx, request) => parseCompatEmbeddings(text, request),
};
