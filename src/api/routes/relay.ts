/**
 * The OpenAI-compatible relay endpoints. `/v1/chat/completions` and `/api/v1/chat/completions`
 * are the same handler; `/v1/chat` is a deprecated alias that says so in a `Deprecation` header.
 */
import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { FastifyRequest } from 'fastify';
import type { RelayCaller } from '../../relay/relay.js';
import { ChatCompletion, ChatCompletionRequest } from '../../relay/schema.js';
import { requirePrincipal } from '../auth.js';
import { validationError } from '../errors.js';
import type { AppContext } from '../context.js';

export const ModelList = z.object({
  object: z.literal('list'),
  data: z.array(z.object({ id: z.string(), object: z.literal('model'), created: z.number(), owned_by: z.string() })),
});

export function relayRoutes(ctx: AppContext): FastifyPluginAsyncZod {
  /** Until API keys arrive, relay callers authenticate with an access token. */
  const callerOf = async (request: FastifyRequest): Promise<RelayCaller> => {
    const principal = await requirePrincipal(request, ctx.tokens);
    return { tenantId: principal.tenantId, userId: principal.userId, keyId: null };
  };

  return async (app) => {
    const schema = {
      tags: ['relay'],
      summary: 'Create a chat completion (OpenAI-compatible; `stream: true` answers text/event-stream)',
      body: ChatCompletionRequest,
      response: { 200: ChatCompletion.describe('with stream: true, a text/event-stream of chat.completion.chunk objects ending in data: [DONE]') },
    };
    for (const url of ['/v1/chat/completions', '/api/v1/chat/completions', '/v1/chat']) {
      // attachValidation: an invalid body still reaches the handler, so that it too is answered
      // with a 400 naming the field AND recorded as a usage event like every relay request.
      const options = { schema: url === '/v1/chat' ? { ...schema, deprecated: true, summary: 'Deprecated alias of /v1/chat/completions' } : schema, attachValidation: true };
      app.post(url, options, async (request, reply) => {
        if (url === '/v1/chat') {
          reply.header('deprecation', 'true');
          reply.header('link', '</v1/chat/completions>; rel="successor-version"');
        }
        const caller = await callerOf(request);
        if (request.validationError) ctx.relay.reject(request, caller, validationError(request.validationError), request.body);
        await ctx.relay.chatCompletions(request, reply, request.body, caller);
        return reply;
      });
    }

    app.get('/v1/models', { schema: { tags: ['relay'], summary: 'Models the caller may use', response: { 200: ModelList } } }, async (request) => {
      const caller = await callerOf(request);
      return { object: 'list' as const, data: ctx.relay.models(caller).map((id) => ({ id, object: 'model' as const, created: 0, owned_by: 'switchyard' })) };
    });
  };
}
