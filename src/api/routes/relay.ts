/**
 * The OpenAI-compatible relay endpoints on fastify. `/v1/chat/completions` and
 * `/api/v1/chat/completions` are the same handler; `/v1/chat` is a deprecated alias that says so
 * in a `Deprecation` header. The chat handler itself is src/api/chat-endpoint.ts, shared with the
 * relay's own HTTP/1.1 server (src/api/relay-server.ts), which takes most chat traffic before it
 * reaches fastify; these routes answer what that server hands over, and document the API.
 */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { FastifyReply } from 'fastify';
import type { HeaderValue, RelayResponse } from '../../http-exchange.js';
import { ChatCompletion, ChatCompletionRequest } from '../../relay/schema.js';
import { ModelList, type ChatEndpoint } from '../chat-endpoint.js';

/** The relay's response side on a fastify reply: whole answers through fastify, streams on the raw response. */
export function fastifyRelayResponse(reply: FastifyReply): RelayResponse {
  const raw = reply.raw;
  // 'close' before the response finished: the client went away.
  const listeners = new Map<() => void, () => void>();
  return {
    setHeader: (name, value) => void reply.header(name, value),
    send(status, headers, body) {
      void reply.code(status).headers(headers).send(body);
    },
    start(status, headers) {
      reply.hijack();
      // Hijacked: fastify no longer writes its headers (x-request-id, rate limits): merge them.
      raw.writeHead(status, { ...(reply.getHeaders() as Record<string, HeaderValue>), ...headers });
    },
    write: (text) => raw.write(text),
    drained: () =>
      new Promise<void>((resolve) => {
        const done = () => {
          raw.off('drain', done);
          raw.off('close', done);
          resolve();
        };
        raw.once('drain', done);
        raw.once('close', done);
      }),
    end: () => raw.end(),
    get closed() {
      return raw.destroyed && !raw.writableFinished;
    },
    onClose(listener) {
      const onRawClose = () => {
        if (!raw.writableFinished) listener();
      };
      listeners.set(listener, onRawClose);
      raw.once('close', onRawClose);
    },
    offClose(listener) {
      const onRawClose = listeners.get(listener);
      if (onRawClose) raw.off('close', onRawClose);
      listeners.delete(listener);
    },
  };
}

/** The body reaches the endpoint as sent: it validates (and records refusals) itself. */
const asSent = () => (data: unknown) => ({ value: data });

export function relayRoutes(endpoint: ChatEndpoint): FastifyPluginAsyncZod {
  return async (app) => {
    const schema = {
      tags: ['relay'],
      summary: 'Create a chat completion (OpenAI-compatible; `stream: true` answers text/event-stream)',
      body: ChatCompletionRequest,
      response: { 200: ChatCompletion.describe('with stream: true, a text/event-stream of chat.completion.chunk objects ending in data: [DONE]') },
    };
    for (const url of ['/v1/chat/completions', '/api/v1/chat/completions', '/v1/chat']) {
      const deprecatedAlias = url === '/v1/chat';
      const options = {
        schema: deprecatedAlias ? { ...schema, deprecated: true, summary: 'Deprecated alias of /v1/chat/completions' } : schema,
        validatorCompiler: asSent,
      };
      app.post(url, options, async (request, reply) => {
        await endpoint.handle(request, fastifyRelayResponse(reply), request.body, { deprecatedAlias });
        return reply;
      });
    }

    app.get('/v1/models', { schema: { tags: ['relay'], summary: 'Models the caller may use', response: { 200: ModelList } } }, (request) => endpoint.models(request));
  };
}
