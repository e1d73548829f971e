/** AWS Bedrock through the Converse / ConverseStream API, SigV4-signed. */
import type { Provider, ProviderContext, UpstreamRequest } from '../provider.js';
import { buildBedrockRequest, type BuildOptions } from './request.js';
import { parseBedrockError, parseBedrockResponse } from './response.js';
import { createBedrockStreamConverter } from './stream.js';

export { signRequest } from './sigv4.js';
export { EventStreamDecoder, encodeMessage, crc32 } from './eventstream.js';

/** A Bedrock provider; `now` is the signing clock (tests pin it). */
export function createBedrockProvider(options: BuildOptions = {}): Provider {
  return {
    buildRequest: (request, ctx) => buildBedrockRequest(request, ctx, options),
    parseResponse: parseBedrockResponse,
    createStreamConverter: createBedrockStreamConverter,
    parseError: parseBedrockError,
    probeRequest: (ctx: ProviderContext): UpstreamRequest =>
      buildBedrockRequest({ model: ctx.model, messages: [{ role: 'user', content: 'ping' }], max_tokens: 1, stream: false }, ctx, options),
  };
}

export const bedrockProvider: Provider = createBedrockProvider();
