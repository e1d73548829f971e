/** Cohere through the v2 chat API (`/v2/chat`). */
import type { Provider } from '../provider.js';
import { probeWith } from '../shared.js';
import { cohereEmbeddings } from './embeddings.js';
import { buildCohereRequest } from './request.js';
import { parseCohereError, parseCohereResponse } from './response.js';
import { createCohereStreamConverter } from './stream.js';

export const cohereProvider: Provider = {
  buildRequest: buildCohereRequest,
  parseResponse: parseCohereResponse,
  createStreamConverter: createCohereStreamConverter,
  streamMediaType: 'text/event-stream',
  parseError: parseCohereError,
  probeRequest: probeWith(buildCohereRequest),
  embeddings: cohereEmbeddings,
};
