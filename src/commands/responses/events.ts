/**
 * Events of stored responses (the Responses API's `store`), one aggregate per response:
 * `response-<id>` in the caller's tenant, the id being the answer's own (`resp_...`).
 *
 * - ResponseStored: what a later `previous_response_id` needs (the new input items and the
 *   output items) and what `GET /v1/responses/{id}` answers (`details`: the rest of the response
 *   object as the client got it: tools, text format, metadata, sampling settings...).
 * - ResponseDeleted: the content is gone from the read model; the id stays taken.
 *
 * Loose on purpose (items and details are the wire format's, checked when the request came in),
 * so history written under older rules always parses.
 */
import { z } from 'zod';

export const ResponseStored = z.object({
  type: z.literal('ResponseStored'),
  data: z.object({
    response_id: z.string(),
    /** Who may read, chain and delete it: the user (a key's user for API keys). */
    owner_id: z.string(),
    user_id: z.string().nullable(),
    key_id: z.string().nullable(),
    model: z.string(),
    status: z.string(),
    /** Unix seconds, as the response says. */
    created_at: z.number().int(),
    previous_response_id: z.string().nullable(),
    instructions: z.string().nullable(),
    /** The request's new input items (a string input is one user message). */
    input: z.array(z.record(z.string(), z.unknown())),
    output: z.array(z.record(z.string(), z.unknown())),
    usage: z.record(z.string(), z.unknown()).nullable(),
    details: z.record(z.string(), z.unknown()),
  }),
});
export type ResponseStoredData = z.infer<typeof ResponseStored>['data'];

export const ResponseDeleted = z.object({ type: z.literal('ResponseDeleted'), data: z.object({ by: z.string() }) });

export const ResponseEvent = z.discriminatedUnion('type', [ResponseStored, ResponseDeleted]);
export type ResponseEvent = z.infer<typeof ResponseEvent>;

export const RESPONSE_EVENT_TYPES = ['ResponseStored', 'ResponseDeleted'] as const;
