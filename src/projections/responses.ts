/**
 * Stored responses read model (`responses`): one row per stored response, for
 * `GET /v1/responses/{id}` and for expanding `previous_response_id`. A deletion empties the row's
 * content and keeps its id (the id stays taken; a chain through it is broken).
 */
import { RESPONSE_EVENT_TYPES, ResponseEvent } from '../commands/responses/events.js';
import type { Projection } from './runtime/projection.js';

export const responseIdOf = (stream: string) => stream.slice('response-'.length);

export const responsesProjection: Projection = {
  name: 'responses',
  version: 1,
  eventTypes: RESPONSE_EVENT_TYPES,
  async apply(trx, stored) {
    const event = ResponseEvent.parse({ type: stored.type, data: stored.data });
    const id = responseIdOf(stored.stream);
    switch (event.type) {
      case 'ResponseStored': {
        const data = event.data;
        await trx
          .insertInto('responses')
          .values({
            id,
            tenant_id: stored.tenant_id,
            owner_id: data.owner_id,
            user_id: data.user_id,
            key_id: data.key_id,
            model: data.model,
            status: data.status,
            previous_response_id: data.previous_response_id,
            created_at: data.created_at,
            instructions: data.instructions,
            input: JSON.stringify(data.input),
            output: JSON.stringify(data.output),
            usage: data.usage === null ? null : JSON.stringify(data.usage),
            details: JSON.stringify(data.details),
            deleted: 0,
            position: stored.position,
            stored_at: stored.occurred_at,
            deleted_at: null,
          })
          .execute();
        return;
      }
      case 'ResponseDeleted':
        await trx
          .updateTable('responses')
          .set({ deleted: 1, deleted_at: stored.occurred_at, position: stored.position, instructions: null, input: '[]', output: '[]', usage: null, details: '{}' })
          .where('id', '=', id)
          .execute();
        return;
    }
  },
  async reset(trx) {
    await trx.deleteFrom('responses').execute();
  },
};
