/**
 * Sessions read model (`sessions`, one row per login or CLI-minted token), read by refresh and
 * logout; every authenticated request is checked against its live view (src/views/sessions.ts).
 */
import { SESSION_EVENT_TYPES, SessionEvent } from '../commands/sessions/events.js';
import type { StoredEvent } from '../ports/event-store.js';
import type { Projection } from './runtime/projection.js';

export const sessionIdOfStream = (stream: string) => stream.slice('session-'.length);

function parse(stored: StoredEvent): SessionEvent {
  return SessionEvent.parse({ type: stored.type, data: stored.data });
}

export const sessionsProjection: Projection = {
  name: 'sessions',
  version: 1,
  eventTypes: SESSION_EVENT_TYPES,
  async apply(trx, stored) {
    const id = sessionIdOfStream(stored.stream);
    const event = parse(stored);
    const at = stored.occurred_at;
    switch (event.type) {
      case 'SessionStarted':
        await trx
          .insertInto('sessions')
          .values({
            id,
            tenant_id: stored.tenant_id,
            user_id: event.data.user_id,
            refresh_token_hash: event.data.refresh_token_hash,
            expires_at: event.data.expires_at,
            revoked: 0,
            revoked_at: null,
            revoke_reason: null,
            user_agent: event.data.user_agent?.slice(0, 255) ?? null,
            ip: event.data.ip?.slice(0, 64) ?? null,
            created_at: at,
            refreshed_at: null,
          })
          .execute();
        return;
      case 'SessionRefreshed':
        await trx.updateTable('sessions').set({ refresh_token_hash: event.data.refresh_token_hash, expires_at: event.data.expires_at, refreshed_at: at }).where('id', '=', id).execute();
        return;
      case 'SessionRevoked':
        await trx.updateTable('sessions').set({ revoked: 1, revoked_at: at, revoke_reason: event.data.reason }).where('id', '=', id).execute();
        return;
    }
  },
  async reset(trx) {
    await trx.deleteFrom('sessions').execute();
  },
};
