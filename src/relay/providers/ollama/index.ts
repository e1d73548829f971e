/** Ollama through its native chat API (`/api/chat`, NDJSON streaming). */
import type { Provider, ProviderContext, UpstreamRequest } from '../provider.js';
import { buildOllamaRequest } from './request.js';
import { parseOllamaError, parseOllamaResponse } from './response.js';
import { createOllamaStreamConverter } from './stream.js';

export const ollamaProvider: Provider = {
  buildRequest: buildOllamaRequest,
  parseResponse: parseOllamaResponse,
  createStreamConverter: createOllamaStreamConverter,
  parseError: parseOllamaError,
  probeRequest: (ctx: ProviderContext): UpstreamRequest =>
    buildOllamaRequest({ model: ctx.model, messages: [{ role: 'user', content: 'ping' }], max_tokens: 1, stream: false }, ctx),
};
