/** API keys: a secret handed to API clients, with what it may use and how much. */
import { DomainError, NotFoundError } from '../../errors.js';
import { parseIpRule } from '../../relay/access/ip-rules.js';
import type { Decider } from '../decider.js';
import { ApiKeyEvent, type KeyPolicy } from './events.js';

export interface ApiKeyState {
  exists: boolean;
  revoked: boolean;
  userId: string | null;
  name: string;
  policy: KeyPolicy | null;
}

export type ApiKeyCommand =
  | { type: 'CreateApiKey'; keyId: string; name: string; userId: string; keyHash: string; keyPrefix: string; policy: KeyPolicy }
  | { type: 'UpdateApiKey'; name?: string; policy?: KeyPolicy; /** set: only the owner may change it */ ownerId?: string }
  | { type: 'RevokeApiKey'; by: string | null; ownerId?: string };

function validate(policy: KeyPolicy) {
  for (const rule of [...policy.allowed_ips, ...policy.blocked_ips]) {
    if (!parseIpRule(rule)) throw new DomainError(`not an IP address or CIDR range: ${rule}`, 'invalid_ip_rule');
  }
  if (policy.expires_at !== null && Number.isNaN(Date.parse(policy.expires_at))) throw new DomainError('expiry_date is not a date', 'invalid_expiry');
}

function live(state: ApiKeyState, ownerId: string | undefined): KeyPolicy {
  // A user acting on someone else's key sees the same thing as on a missing one.
  if (!state.exists || state.revoked || !state.policy || (ownerId !== undefined && ownerId !== state.userId)) throw new NotFoundError('API key not found', 'key_not_found');
  return state.policy;
}

export const apiKeys: Decider<ApiKeyCommand, ApiKeyState, ApiKeyEvent> = {
  category: 'apikey',
  initialState: { exists: false, revoked: false, userId: null, name: '', policy: null },
  events: ApiKeyEvent,

  decide(command, state) {
    switch (command.type) {
      case 'CreateApiKey':
        if (state.exists) throw new DomainError('API key already exists', 'key_exists');
        validate(command.policy);
        return [{ type: 'ApiKeyCreated', data: { key_id: command.keyId, name: command.name, user_id: command.userId, key_hash: command.keyHash, key_prefix: command.keyPrefix, policy: command.policy } }];
      case 'UpdateApiKey': {
        const current = live(state, command.ownerId);
        const data: { name?: string; policy?: KeyPolicy } = {};
        if (command.name !== undefined && command.name !== state.name) data.name = command.name;
        if (command.policy !== undefined && JSON.stringify(command.policy) !== JSON.stringify(current)) {
          validate(command.policy);
          data.policy = command.policy;
        }
        return Object.keys(data).length === 0 ? [] : [{ type: 'ApiKeyUpdated', data }];
      }
      case 'RevokeApiKey':
        live(state, command.ownerId);
        return [{ type: 'ApiKeyRevoked', data: { by: command.by } }];
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'ApiKeyCreated':
        return { exists: true, revoked: false, userId: event.data.user_id, name: event.data.name, policy: event.data.policy };
      case 'ApiKeyUpdated':
        return { ...state, name: event.data.name ?? state.name, policy: event.data.policy ?? state.policy };
      case 'ApiKeyRevoked':
        return { ...state, revoked: true };
    }
  },
};
