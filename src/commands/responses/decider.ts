/**
 * Stored responses: `response-<id>` in the owner's tenant. Stored once (a second answer with the
 * same id is a conflict: upstream ids are the upstream's), deleted once, and only by its owner:
 * anyone else, even in the same tenant, is told what they would be told of a missing one (404).
 */
import { ConflictError, NotFoundError } from '../../errors.js';
import type { Decider } from '../decider.js';
import { ResponseEvent, type ResponseStoredData } from './events.js';

export interface ResponseState {
  stored: boolean;
  deleted: boolean;
  ownerId: string | null;
}

export type ResponseCommand = { type: 'StoreResponse'; response: ResponseStoredData } | { type: 'DeleteResponse'; ownerId: string };

export const responseNotFound = (id?: string) => new NotFoundError(id === undefined ? 'response not found' : `response ${id} not found`, 'response_not_found');

export const responses: Decider<ResponseCommand, ResponseState, ResponseEvent> = {
  category: 'response',
  initialState: { stored: false, deleted: false, ownerId: null },
  events: ResponseEvent,

  decide(command, state) {
    switch (command.type) {
      case 'StoreResponse':
        if (state.stored) throw new ConflictError(`response ${command.response.response_id} is already stored`, 'response_exists');
        return [{ type: 'ResponseStored', data: command.response }];
      case 'DeleteResponse':
        if (!state.stored || state.deleted || state.ownerId !== command.ownerId) throw responseNotFound();
        return [{ type: 'ResponseDeleted', data: { by: command.ownerId } }];
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'ResponseStored':
        return { stored: true, deleted: false, ownerId: event.data.owner_id };
      case 'ResponseDeleted':
        return { ...state, deleted: true };
    }
  },
};
