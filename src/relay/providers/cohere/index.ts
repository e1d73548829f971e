/** Cohere through the v2 chat API (`/v2/chat`). */
import type { Provider, ProviderContext, UpstreamRequest } from '../provider.js';
import { buildCohereRequest } from './request.js';
import { parseCohereError, parseCohereResponse } from './response.js';
import { createCohereStreamConverter } from './stream.js';

export const cohereProvider: Provider = {
  buildRequest: buildCohereRequest,
  parseResponse: parseCohereResponse,
  createStreamConverter: createCohereStreamConverter,
  parseError: parseCohereError,
  probeRequest: (ctx: ProviderContext): UpstreamRequest =>
    buildCohereRequest({ model: ctx.model, messages: [{ role: 'user', content: 'ping' }], max_tokens: 1, stream: false }, ctx),
};
