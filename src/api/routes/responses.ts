/**
 * The OpenAI Responses API: `POST /v1/responses` passes the relay gate with the Responses ingress
 * (src/relay/ingress/responses/); stored responses are read and deleted here, by their owner
 * only (anyone else, same tenant or not, gets 404 `response_not_found`).
 */
import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { responseNotFound, responses } from '../../commands/responses/decider.js';
import { findOwnResponse, storedInputItems, storedResponseObject } from '../../queries/responses.js';
import { responseOwnerOf, responsesIngress } from '../../relay/ingress/responses/index.js';
import { DeletedResponse, ResponseObject, ResponsesRequest } from '../../relay/ingress/responses/schema.js';
import type { AppContext } from '../context.js';
import { errorResponseSchema } from '../errors.js';
import { fastifyRelayResponse } from './relay.js';

const ResponseId = z.object({ id: z.string().min(1).max(128) });

const InputItemList = z.object({
  object: z.literal('list'),
  data: z.array(z.looseObject({ id: z.string(), type: z.string() })),
  first_id: z.string().nullable(),
  last_id: z.string().nullable(),
  has_more: z.boolean(),
});

const InputItemsQuery = z.object({
  order: z.enum(['asc', 'desc']).default('desc'),
  limit: z.coerce.number().int().min(1).max(100).default(20),
  after: z.string().optional(),
});

/** The body reaches the gate as sent: it validates (and records refusals) itself. */
const asSent = () => (data: unknown) => ({ value: data });

const JSON_TYPE = 'application/json; charset=utf-8';

export function responseRoutes(ctx: AppContext): FastifyPluginAsyncZod {
  const ingress = responsesIngress({ db: ctx.sql.db, commands: ctx.commands, runner: ctx.runner, logger: ctx.logger, attachments: ctx.files.attachments });
  const tags = ['relay'];
  const notFound = errorResponseSchema('response_not_found (missing, deleted, or not yours)');
  const unauthorized = errorResponseSchema('unauthorized, key_expired');

  return async (app) => {
    app.post(
      '/v1/responses',
      {
        schema: {
          tags,
          summary: 'Create a model response (OpenAI Responses API; `stream: true` answers text/event-stream)',
          description:
            'Function tools only (built-in tools: 400 unsupported_parameter). Served natively by openai and azure channels, converted through chat completions for every other kind. ' +
            '`store` (default true) keeps the response for GET /v1/responses/{id} and `previous_response_id`, per user; the answer ends once the stored response can be read.',
          body: ResponsesRequest,
          response: {
            200: ResponseObject.describe('with stream: true, a text/event-stream of Responses events (response.created ... response.completed), each with sequence_number'),
            400: errorResponseSchema('invalid_json, invalid_request (a field; param names it), unsupported_parameter (built-in tools, other item kinds, input_file without file_id; param names the field)'),
            404: errorResponseSchema('model_not_found (no channel of the tenant lists the model), previous_response_not_found (missing, deleted, or not yours), file_not_found (an input_file / input_image file_id that is not yours, or none; param input[i].content[j].file_id)'),
            409: errorResponseSchema('file_not_ready (a file still being processed, or whose processing failed: the message says why)'),
            502: errorResponseSchema('upstream_error, upstream_auth_failed, upstream_unavailable, bad_upstream_response, upstream_response_too_large'),
            503: errorResponseSchema('no_available_channels, upstream_busy, maintenance'),
          },
        },
        validatorCompiler: asSent,
      },
      async (request, reply) => {
        await ctx.gate.pass(ingress, request, fastifyRelayResponse(reply), request.body);
        return reply;
      },
    );

    app.get(
      '/v1/responses/:id',
      { schema: { tags, summary: 'A stored response (yours only)', params: ResponseId, response: { 200: ResponseObject, 401: unauthorized, 404: notFound } } },
      async (request, reply) => {
        const caller = await ctx.gate.caller(request);
        const row = await findOwnResponse(ctx.sql.db, responseOwnerOf(caller), request.params.id);
        if (row === undefined) throw responseNotFound(request.params.id);
        // Sent as text, as POST answered it (a native upstream's object has fields of its own): not
        // re-checked against the schema, which documents the fields every response has.
        return reply.type(JSON_TYPE).send(JSON.stringify(storedResponseObject(row)) as never);
      },
    );

    app.get(
      '/v1/responses/:id/input_items',
      {
        schema: {
          tags,
          summary: "A stored response's input items (its own new input, not the chain's)",
          params: ResponseId,
          querystring: InputItemsQuery,
          response: { 200: InputItemList, 401: unauthorized, 404: notFound },
        },
      },
      async (request, reply) => {
        const caller = await ctx.gate.caller(request);
        const row = await findOwnResponse(ctx.sql.db, responseOwnerOf(caller), request.params.id);
        if (row === undefined) throw responseNotFound(request.params.id);
        const { order, limit, after } = request.query;
        let items = storedInputItems(row);
        if (order === 'desc') items = items.reverse();
        if (after !== undefined) items = items.slice(items.findIndex((item) => item.id === after) + 1);
        const page = items.slice(0, limit);
        const list = { object: 'list', data: page, first_id: (page[0]?.id as string | undefined) ?? null, last_id: (page.at(-1)?.id as string | undefined) ?? null, has_more: items.length > page.length };
        return reply.type(JSON_TYPE).send(JSON.stringify(list) as never);
      },
    );

    app.delete(
      '/v1/responses/:id',
      { schema: { tags, summary: 'Delete a stored response (yours only); chains through it end there', params: ResponseId, response: { 200: DeletedResponse, 401: unauthorized, 404: notFound } } },
      async (request) => {
        const caller = await ctx.gate.caller(request);
        const owner = responseOwnerOf(caller);
        const id = request.params.id;
        // The aggregate checks the owner too; reading first keeps another tenant's id a plain 404.
        if ((await findOwnResponse(ctx.sql.db, owner, id)) === undefined) throw responseNotFound(id);
        const { position } = await ctx.commands.execute(responses, id, { type: 'DeleteResponse', ownerId: owner.ownerId }, { tenantId: owner.tenantId, causationId: request.id });
        if (position !== null) await ctx.runner.waitFor(position, { projections: ['responses'] });
        return { id, object: 'response' as const, deleted: true as const };
      },
    );
  };
}
