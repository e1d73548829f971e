/**
 * The OpenAI-compatible relay endpoints on fastify. `/v1/chat/completions` and
 * `/api/v1/chat/completions` are the same handler; `/v1/chat` is an alias, deprecated in API v2
 * (`Deprecation` and `Sunset` headers), plain in API v1 (docs/api-versions.md). The requests pass the relay gate (src/relay/gate.ts), shared with the
 * front server on the public port (src/api/relay-server.ts), which takes most chat traffic before
 * it reaches fastify; these routes answer what the front hands over (or everything, with
 * RELAY_HTTP_SERVER=fastify), and document the API.
 */
import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { FastifyReply } from 'fastify';
import type { HeaderValue, RelayResponse } from '../../http-exchange.js';
import { ChatCompletion, ClientChatRequest } from '../../relay/schema.js';
import { ModelList, ModelObject, type RelayGate } from '../../relay/gate.js';
import { EmbeddingsRequest, EmbeddingsResponse } from '../../relay/embeddings-schema.js';
import { embeddingsIngress } from '../../relay/ingress/embeddings.js';
import type { ApiVersion } from '../../version.js';
import { apiVersionOf } from '../api-version.js';
import { errorResponseSchema } from '../errors.js';
import { nodeRelayResponse } from '../node-relay-response.js';

/** The relay's response side on a fastify reply: whole answers through fastify, streams on the raw response. */
/** The id as sent: a router may hand `%2F` over still encoded (a malformed escape is taken as written). */
function decodedOnce(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

export function fastifyRelayResponse(reply: FastifyReply): RelayResponse {
  const raw = nodeRelayResponse(reply.raw);
  return {
    setHeader: (name, value) => void reply.header(name, value),
    send(status, headers, body) {
      void reply.code(status).headers(headers).send(body);
    },
    start(status, headers) {
      reply.hijack();
      // Hijacked: fastify no longer writes its headers (x-request-id, rate limits): merge them.
      raw.start(status, { ...(reply.getHeaders() as Record<string, HeaderValue>), ...headers });
    },
    write: (text) => raw.write(text),
    drained: () => raw.drained(),
    end: () => raw.end(),
    get closed() {
      return raw.closed;
    },
    onClose: (listener) => raw.onClose(listener),
    offClose: (listener) => raw.offClose(listener),
  };
}

/** The body reaches the gate as sent: it validates (and records refusals) itself. */
const asSent = () => (data: unknown) => ({ value: data });

export function relayRoutes(gate: RelayGate, defaultApiVersion: ApiVersion): FastifyPluginAsyncZod {
  return async (app) => {
    const schema = {
      tags: ['relay'],
      summary: 'Create a chat completion (OpenAI-compatible; `stream: true` answers text/event-stream)',
      body: ClientChatRequest,
      response: {
        200: ChatCompletion.describe('with stream: true, a text/event-stream of chat.completion.chunk objects ending in data: [DONE] (an Azure upstream\'s content filter annotations that are not chunks are dropped, or sent as chunks when they carry a finish reason)'),
        400: errorResponseSchema(
          'invalid_json (not JSON), json_too_deep (nested deeper than MAX_JSON_DEPTH), duplicate_authorization (more than one Authorization header), invalid_request (a field; param names it), unsupported_parameter (a value the provider cannot take)',
        ),
        404: errorResponseSchema("model_not_found (no channel of the tenant lists the model; the message names the models served), file_not_found (a file part names a file that is not yours, or none; param names the part: messages[i].content[j].file.file_id)"),
        409: errorResponseSchema('file_not_ready (a file part names a file still being processed, or whose processing failed: the message says why)'),
        502: errorResponseSchema('upstream_error (upstream 5xx), upstream_auth_failed, upstream_unavailable (no connection), upstream_connection_lost, bad_upstream_response, upstream_response_too_large'),
        503: errorResponseSchema('no_available_channels (channels list the model but none is usable now: disabled, unhealthy or cooling down; see Retry-After), upstream_busy (every connection to the upstream busy for UPSTREAM_QUEUE_TIMEOUT; see Retry-After), maintenance'),
        504: errorResponseSchema('upstream_timeout (no answer within RELAY_FIRST_BYTE_TIMEOUT, or silence over RELAY_TIMEOUT)'),
      },
    };
    for (const url of ['/v1/chat/completions', '/api/v1/chat/completions', '/v1/chat']) {
      const alias = url === '/v1/chat';
      const options = {
        schema: alias ? { ...schema, deprecated: true, summary: 'Deprecated alias of /v1/chat/completions (API v2: Deprecation and Sunset headers; API v1: a plain alias)' } : schema,
        validatorCompiler: asSent,
      };
      app.post(url, options, async (request, reply) => {
        const deprecatedAlias = alias && apiVersionOf(request.headers, defaultApiVersion) === 'v2';
        await gate.chatCompletions(request, fastifyRelayResponse(reply), request.body, { deprecatedAlias });
        return reply;
      });
    }

    app.post(
      '/v1/embeddings',
      {
        schema: {
          tags: ['relay'],
          summary: 'Create embeddings (OpenAI-compatible) on openai-compatible, azure, gemini, cohere, bedrock and ollama channels',
          body: EmbeddingsRequest,
          response: {
            200: EmbeddingsResponse,
            400: errorResponseSchema(
              'invalid_json, invalid_request (a field; param names it), unsupported_parameter (token arrays as input; a value the channel cannot take, e.g. several inputs for a bedrock amazon.titan-embed model)',
            ),
            403: errorResponseSchema('model_not_allowed (the API key may not use the model), ip_not_allowed, relay_disabled'),
            404: errorResponseSchema('model_not_found (no channel of the tenant lists the model)'),
            429: errorResponseSchema('insufficient_quota (credits or the key\'s quota), rate_limit_exceeded (the key\'s rate or concurrency limits)'),
            502: errorResponseSchema('upstream_error, upstream_auth_failed, upstream_unavailable, upstream_connection_lost, bad_upstream_response, upstream_response_too_large'),
            503: errorResponseSchema('no_available_channels (channels list the model, but none of a kind with embeddings is usable now), upstream_busy, maintenance'),
            504: errorResponseSchema('upstream_timeout'),
          },
        },
        validatorCompiler: asSent,
      },
      async (request, reply) => {
        await gate.pass(embeddingsIngress, request, fastifyRelayResponse(reply), request.body);
        return reply;
      },
    );

    app.get('/v1/models', { schema: { tags: ['relay'], summary: 'Models the caller may use', response: { 200: ModelList } } }, (request) => gate.models(request));
    // A wildcard: model ids may hold a "/" (openrouter's `openai/gpt-4o`), sent raw or as %2F.
    app.get(
      '/v1/models/*',
      {
        schema: {
          tags: ['relay'],
          summary: 'One model the caller may use (the SDKs\' models.retrieve)',
          params: z.object({ '*': z.string().describe('the model id') }),
          response: { 200: ModelObject, 404: errorResponseSchema('model_not_found (no channel serves it, or the API key may not use it)') },
        },
      },
      (request) => gate.model(request, decodedOnce(request.params['*'])),
    );
  };
}
