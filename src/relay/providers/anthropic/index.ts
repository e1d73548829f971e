/** The Anthropic Messages API provider: request, response and stream conversion side by side. */
import type { Provider } from '../provider.js';
import { probeWith } from '../shared.js';
import { anthropicMessagesCodec } from './native.js';
import { buildAnthropicRequest } from './request.js';
import { parseAnthropicError, parseAnthropicResponse } from './response.js';
import { createAnthropicStreamConverter } from './stream.js';

export const anthropicProvider: Provider = {
  buildRequest: buildAnthropicRequest,
  parseResponse: parseAnthropicResponse,
  createStreamConverter: createAnthropicStreamConverter,
  streamMediaType: 'text/event-stream',
  parseError: parseAnthropicError,
  probeRequest: probeWith(buildAnthropicRequest),
  // Messages API requests (POST /v1/messages) reach an anthropic channel as the client sent them.
  native: { 'anthropic-messages': anthropicMessagesCodec },
};
