/** Given / when / then over the stored-responses decider: stored once, deleted once, by the owner only. */
import { describe, it } from 'vitest';
import { responses } from '../../../src/commands/responses/decider.js';
import type { ResponseEvent, ResponseStoredData } from '../../../src/commands/responses/events.js';
import { ConflictError, NotFoundError } from '../../../src/errors.js';
import { DeciderSpec } from '../../support/decider-spec.js';

const data: ResponseStoredData = {
  response_id: 'resp_1',
  owner_id: 'u1',
  user_id: 'u1',
  key_id: null,
  model: 'm',
  status: 'completed',
  created_at: 1_700_000_000,
  previous_response_id: null,
  instructions: null,
  input: [{ type: 'message', role: 'user', content: 'hi' }],
  output: [{ id: 'msg_1', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Hello', annotations: [] }] }],
  usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 },
  details: { metadata: {} },
};
const stored: ResponseEvent = { type: 'ResponseStored', data };
const deleted: ResponseEvent = { type: 'ResponseDeleted', data: { by: 'u1' } };
const spec = DeciderSpec.for(responses);

describe('responses decider', () => {
  it('stores a response once', () => {
    spec.given([]).when({ type: 'StoreResponse', response: data }).then([stored]);
    spec.given([stored]).when({ type: 'StoreResponse', response: data }).thenThrows(ConflictError, { status: 409, code: 'response_exists' });
    spec.given([stored, deleted]).when({ type: 'StoreResponse', response: data }).thenThrows(ConflictError);
  });

  it('lets only the owner delete it, once', () => {
    spec.given([stored]).when({ type: 'DeleteResponse', ownerId: 'u1' }).then([deleted]);
    spec.given([stored]).when({ type: 'DeleteResponse', ownerId: 'u2' }).thenThrows(NotFoundError, { status: 404, code: 'response_not_found' });
    spec.given([stored, deleted]).when({ type: 'DeleteResponse', ownerId: 'u1' }).thenThrows(NotFoundError, { code: 'response_not_found' });
    spec.given([]).when({ type: 'DeleteResponse', ownerId: 'u1' }).thenThrows(NotFoundError);
  });
});
