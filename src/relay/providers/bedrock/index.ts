/** AWS Bedrock through the Converse / ConverseStream API, SigV4-signed. */
import type { ChatCompletionRequest } from '../../schema.js';
import type { Provider, ProviderContext } from '../provider.js';
import { probeWith } from '../shared.js';
import { createBedrockEmbeddings } from './embeddings.js';
import { buildBedrockRequest, type BuildOptions } from './request.js';
import { parseBedrockError, parseBedrockResponse } from './response.js';
import { createBedrockStreamConverter } from './stream.js';

export { signRequest } from './sigv4.js';
export { EventStreamDecoder, encodeMessage, crc32 } from './eventstream.js';

/** A Bedrock provider; `now` is the signing clock (tests pin it). */
export function createBedrockProvider(options: BuildOptions = {}): Provider {
  const buildRequest = (request: ChatCompletionRequest, ctx: ProviderContext) => buildBedrockRequest(request, ctx, options);
  return {
    buildRequest,
    parseResponse: parseBedrockResponse,
    createStreamConverter: createBedrockStreamConverter,
    streamMediaType: 'application/vnd.amazon.eventstream',
    parseError: parseBedrockError,
    probeRequest: probeWith(buildRequest),
    embeddings: createBedrockEmbeddings(options),
  };
}

export const bedrockProvider: Provider = createBedrockProvider();
