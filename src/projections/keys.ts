/**
 * API keys read model (`api_keys`) for the admin and user APIs; the key directory in memory is its
 * live view (src/views/keys.ts).
 */
import { API_KEY_EVENT_TYPES, ApiKeyEvent } from '../commands/keys/events.js';
import type { StoredEvent } from '../ports/event-store.js';
import type { Projection } from './runtime/projection.js';

export const keyIdOf = (stream: string) => stream.slice('apikey-'.length);

const parse = (event: StoredEvent) => ApiKeyEvent.parse({ type: event.type, data: event.data });

export const keysProjection: Projection = {
  name: 'api_keys',
  version: 1,
  eventTypes: API_KEY_EVENT_TYPES,
  async apply(trx, stored) {
    const id = keyIdOf(stored.stream);
    const event = parse(stored);
    switch (event.type) {
      case 'ApiKeyCreated':
        await trx
          .insertInto('api_keys')
          .values({
            id,
            tenant_id: stored.tenant_id,
            user_id: event.data.user_id,
            name: event.data.name,
            key_prefix: event.data.key_prefix,
            key_hash: event.data.key_hash,
            policy: JSON.stringify(event.data.policy),
            revoked: 0,
            created_at: stored.occurred_at,
            updated_at: stored.occurred_at,
            revoked_at: null,
          })
          .execute();
        return;
      case 'ApiKeyUpdated':
        await trx
          .updateTable('api_keys')
          .set({
            ...(event.data.name !== undefined && { name: event.data.name }),
            ...(event.data.policy !== undefined && { policy: JSON.stringify(event.data.policy) }),
            updated_at: stored.occurred_at,
          })
          .where('id', '=', id)
          .execute();
        return;
      case 'ApiKeyRevoked':
        await trx.updateTable('api_keys').set({ revoked: 1, revoked_at: stored.occurred_at, updated_at: stored.occurred_at }).where('id', '=', id).execute();
        return;
    }
  },
  async reset(trx) {
    await trx.deleteFrom('api_keys').execute();
  },
};
