/** The Gemini (Generative Language API, v1beta) provider: request, response and stream conversion side by side. */
import type { Provider } from '../provider.js';
import { probeWith } from '../shared.js';
import { geminiEmbeddings } from './embeddings.js';
import { buildGeminiRequest } from './request.js';
import { parseGeminiError, parseGeminiResponse } from './response.js';
import { createGeminiStreamConverter } from './stream.js';

export const geminiProvider: Provider = {
  buildRequest: buildGeminiRequest,
  parseResponse: parseGeminiResponse,
  createStreamConverter: createGeminiStreamConverter,
  streamMediaType: 'text/event-stream',
  parseError: parseGeminiError,
  probeRequest: probeWith(buildGeminiRequest),
  embeddings: geminiEmbeddings,
  // Gemini's documented image types (no GIF).
  imageTypes: new Set(['image/png', 'image/jpeg', 'image/webp', 'image/heic', 'image/heif']),
};
