/**
 * Embeddings on Bedrock through InvokeModel (`POST /model/{modelId}/invoke`, SigV4-signed like
 * Converse). The body is the model family's own:
 * - `amazon.titan-embed-*`: `{inputText, dimensions?}` -> `{embedding, inputTextTokenCount}`.
 *   Titan embeds ONE text per call: a request with several inputs is a 400 (one upstream call
 *   per request keeps retries, fallback and billing per request; the client batches by sending
 *   several requests).
 * - `cohere.embed-*`: Cohere's embed body without `model` (`texts`, `input_type`,
 *   `embedding_types`, `output_dimension`) -> `{embeddings: {float}}`; no token count (the relay
 *   counts).
 * Other models are a 400. `user` has no Bedrock field and is dropped.
 */
import { inputsOf } from '../../embeddings-schema.js';
import { cohereEmbedBody, cohereVectors } from '../cohere/embeddings.js';
import { embeddingsOf, tokenCountOf, vectorsOf } from '../embeddings.js';
import type { EmbeddingsCodec, ProviderContext, UpstreamRequest } from '../provider.js';
import { joinUrl, unsupported, upstreamObject } from '../shared.js';
import { BEDROCK_SERVICE, bedrockBaseUrl, credentialsOf, regionOf, type BuildOptions } from './request.js';
import { signRequest, uriEncode } from './sigv4.js';

type Family = 'titan' | 'cohere';

/** The model family, from the model id (which may carry a region prefix or an ARN). */
function familyOf(model: string): Family | null {
  if (model.includes('amazon.titan-embed')) return 'titan';
  if (model.includes('cohere.embed')) return 'cohere';
  return null;
}

function signed(ctx: ProviderContext, body: string, options: BuildOptions): UpstreamRequest {
  const url = joinUrl(ctx.channel.baseUrl || bedrockBaseUrl(ctx.channel.config), `/model/${uriEncode(ctx.model)}/invoke`);
  const { headers } = signRequest({
    method: 'POST',
    url,
    body,
    region: regionOf(ctx.channel.config),
    service: BEDROCK_SERVICE,
    credentials: credentialsOf(ctx.channel.apiKey),
    now: (options.now ?? (() => new Date()))(),
  });
  return { url, method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json', ...headers }, body };
}

/** A Bedrock embeddings codec; `now` is the signing clock (tests pin it). */
export function createBedrockEmbeddings(options: BuildOptions = {}): EmbeddingsCodec {
  return {
    buildRequest(request, ctx) {
      const family = familyOf(ctx.model);
      if (family === null) throw unsupported('model', `bedrock embeddings take amazon.titan-embed-* and cohere.embed-* models, not ${ctx.model}`);
      if (family === 'cohere') return signed(ctx, JSON.stringify(cohereEmbedBody(request)), options);
      const inputs = inputsOf(request);
      if (inputs.length !== 1) throw unsupported('input', `${ctx.model} embeds one text per request: send one input (this request has ${inputs.length})`);
      const body: Record<string, unknown> = { inputText: inputs[0] };
      if (request.dimensions !== undefined) body.dimensions = request.dimensions;
      return signed(ctx, JSON.stringify(body), options);
    },
    parseResponse(text, ctx, request) {
      const json = upstreamObject(text, 'bedrock');
      if (familyOf(ctx.model) === 'cohere') return embeddingsOf(cohereVectors(json.embeddings, request, 'bedrock'), request, request.model, null);
      return embeddingsOf(vectorsOf([json.embedding], request, 'bedrock'), request, request.model, tokenCountOf(json.inputTextTokenCount));
    },
  };
}

