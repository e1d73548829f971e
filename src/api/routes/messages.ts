/**
 * The Anthropic Messages API on fastify: `POST /v1/messages` (through the relay gate, with the
 * Messages ingress) and `POST /v1/messages/count_tokens` (the serving anthropic channel's count,
 * or the relay's tokenizer; not billed, no usage event). Every answer of these routes, errors included, is in Anthropic's shape and carries
 * `request-id` (Anthropic's header) besides `x-request-id`: the plugin has its own error handler,
 * so a body that is not JSON, a maintenance 503 or a refused caller are Anthropic errors too.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AppError, BadRequestError } from '../../errors.js';
import type { RelayGate } from '../../relay/gate.js';
import { countTokens, messagesIngress, parseCountTokensRequest } from '../../relay/ingress/messages/index.js';
import { anthropicErrorAnswer } from '../../relay/ingress/messages/errors.js';
import { tooLargeMessage } from '../errors.js';
import { AnthropicErrorBody, CountTokensRequest, CountTokensResponse, MessagesRequest, MessagesResponse } from '../../relay/ingress/messages/schema.js';
import { fastifyRelayResponse } from './relay.js';

/** Fastify's own failures (body parsing, limits) as AppErrors; anything else stays unknown (a 500). */
function appErrorOf(error: FastifyError | AppError | Error, bodyLimit: number): AppError | Error {
  if (error instanceof AppError) return error;
  const fastifyError = error as FastifyError;
  if (fastifyError.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || fastifyError.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' || (error instanceof SyntaxError && fastifyError.statusCode === 400)) {
    return new BadRequestError(`request body is not valid JSON: ${error.message}`, 'invalid_json');
  }
  if (fastifyError.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new AppError(413, 'invalid_request_error', 'request_too_large', tooLargeMessage(bodyLimit));
  if (fastifyError.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return new AppError(415, 'invalid_request_error', 'unsupported_media_type', 'unsupported content type');
  if (typeof fastifyError.statusCode === 'number' && fastifyError.statusCode >= 400 && fastifyError.statusCode < 500) {
    return new AppError(fastifyError.statusCode, 'invalid_request_error', (fastifyError.code ?? 'invalid_request').toLowerCase(), error.message);
  }
  return error;
}

function sendAnthropicError(request: FastifyRequest, reply: FastifyReply, error: FastifyError | AppError | Error) {
  const known = appErrorOf(error, request.routeOptions.bodyLimit ?? request.server.initialConfig.bodyLimit ?? 0);
  if (!(known instanceof AppError)) request.log.error({ err: error }, 'unhandled error');
  const { status, headers, body } = anthropicErrorAnswer(known, request.id);
  // Also when the server's own hooks refused the request before this plugin's could set it.
  return reply.code(status).header('request-id', request.id).headers(headers).send(body);
}

/** The body reaches the gate as sent: it validates (and records refusals) itself. */
const asSent = () => (data: unknown) => ({ value: data });

const errorResponse = (when: string) => AnthropicErrorBody.describe(`Anthropic-style error (error.type: ${when}); the relay's code starts the message`);

export function messagesRoutes(gate: RelayGate): FastifyPluginAsyncZod {
  return async (app) => {
    app.addHook('onRequest', (request, reply, done) => {
      reply.header('request-id', request.id);
      done();
    });
    app.setErrorHandler((error: FastifyError, request, reply) => sendAnthropicError(request, reply, error));

    const errors = {
      400: errorResponse('invalid_request_error: a field (its path starts the message; unknown fields are refused), or what only an anthropic channel serves (server tools, PDFs...) on a model served by other kinds'),
      401: errorResponse('authentication_error'),
      403: errorResponse('permission_error: model_not_allowed, ip_not_allowed, relay_disabled'),
      429: errorResponse('rate_limit_error (rate limits, concurrency, quota; Retry-After and rate-limit headers kept) or billing_error (insufficient_quota)'),
    };

    app.post(
      '/v1/messages',
      {
        schema: {
          tags: ['relay'],
          summary: 'Create a message (Anthropic Messages API; `stream: true` answers Anthropic\'s event stream). Auth: x-api-key or Authorization: Bearer',
          description:
            'An anthropic channel gets the request as sent (model replaced; anthropic-version and anthropic-beta forwarded) and its answer is passed through; every other kind gets it converted to a chat completion and its answer converted back.',
          headers: z.looseObject({ 'anthropic-version': z.string().optional(), 'anthropic-beta': z.string().optional() }),
          body: MessagesRequest,
          response: {
            200: MessagesResponse.describe('with stream: true, a text/event-stream of message_start, ping, content_block_start/delta/stop, message_delta, message_stop (error on an in-stream failure)'),
            ...errors,
            404: errorResponse('not_found_error: model_not_found (no channel serves the model)'),
            502: errorResponse('api_error: the upstream failed'),
            503: errorResponse('overloaded_error: no_available_channels, upstream_busy, maintenance'),
            504: errorResponse('timeout_error: upstream_timeout'),
          },
        },
        validatorCompiler: asSent,
      },
      async (request, reply) => {
        try {
          await gate.pass(messagesIngress, request, fastifyRelayResponse(reply), request.body);
        } catch (error) {
          // A stream already started: the relay has told the client in-band; nothing can follow.
          if (reply.sent || reply.raw.headersSent) throw error;
          return sendAnthropicError(request, reply, error as Error);
        }
        return reply;
      },
    );

    app.post(
      '/v1/messages/count_tokens',
      {
        schema: {
          tags: ['relay'],
          summary: 'Count the input tokens of a Messages request',
          description:
            "When the channel that would serve the model is an anthropic one, it counts (the request passed through to its /v1/messages/count_tokens); otherwise, or when that call fails, the relay's tokenizer (o200k_base) counts: exact for OpenAI models, an estimate for others; images and PDFs are not counted. The header x-token-count-source says which (upstream | tokenizer). Needs a caller that may use the model (key model and source rules apply); not billed, no usage event.",
          body: CountTokensRequest,
          response: { 200: CountTokensResponse, ...errors, 404: errorResponse('not_found_error: model_not_found (no channel serves the model)') },
        },
        validatorCompiler: asSent,
      },
      async (request, reply) => {
        const count = await gate.check(request, request.body, parseCountTokensRequest, (relay, checked) => countTokens(relay, checked, request));
        void reply.header('x-token-count-source', count.source);
        return { input_tokens: count.input_tokens };
      },
    );
  };
}
