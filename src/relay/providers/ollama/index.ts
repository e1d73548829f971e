/** Ollama through its native chat API (`/api/chat`, NDJSON streaming). */
import type { Provider } from '../provider.js';
import { probeWith } from '../shared.js';
import { ollamaEmbeddings } from './embeddings.js';
import { buildOllamaRequest } from './request.js';
import { parseOllamaError, parseOllamaResponse } from './response.js';
import { createOllamaStreamConverter } from './stream.js';

export const ollamaProvider: Provider = {
  buildRequest: buildOllamaRequest,
  parseResponse: parseOllamaResponse,
  createStreamConverter: createOllamaStreamConverter,
  streamMediaType: 'application/x-ndjson',
  parseError: parseOllamaError,
  probeRequest: probeWith(buildOllamaRequest),
  embeddings: ollamaEmbeddings,
};
