/** Given / when / then over the API key decider: creation, policy checks, owner-only changes, revocation. */
import { describe, expect, it } from 'vitest';
import { apiKeys, type ApiKeyCommand } from '../../src/commands/keys/decider.js';
import type { ApiKeyEvent, KeyPolicy } from '../../src/commands/keys/events.js';
import { DomainError, NotFoundError } from '../../src/errors.js';
import { DeciderSpec } from '../support/decider-spec.js';

const spec = DeciderSpec.for(apiKeys);

const policy: KeyPolicy = {
  allowed_models: [],
  blocked_models: [],
  model_aliases: {},
  quota_limit: null,
  rate_limits: { requests_per_minute: null, requests_per_hour: null, tokens_per_hour: null, concurrent_requests: null, burst_allowance: null },
  allowed_ips: [],
  blocked_ips: [],
  allowed_countries: [],
  blocked_countries: [],
  expires_at: null,
};
const create = (over: Partial<KeyPolicy> = {}): ApiKeyCommand => ({ type: 'CreateApiKey', keyId: 'key_1', name: 'ci', userId: 'usr_1', keyHash: 'sha256', keyPrefix: 'sk-ab', policy: { ...policy, ...over } });
const created: ApiKeyEvent = { type: 'ApiKeyCreated', data: { key_id: 'key_1', name: 'ci', user_id: 'usr_1', key_hash: 'sha256', key_prefix: 'sk-ab', policy } };
const revoked: ApiKeyEvent = { type: 'ApiKeyRevoked', data: { by: 'usr_1' } };

describe('API key decider', () => {
  it('creates a key with its hash, prefix and policy', () => {
    spec.given([]).when(create()).then([created]);
    const limited = { allowed_ips: ['10.0.0.0/8', '2001:db8::1'], blocked_ips: ['10.1.2.3'], expires_at: '2030-01-01T00:00:00.000Z' };
    spec.given([]).when(create(limited)).then([{ ...created, data: { ...created.data, policy: { ...policy, ...limited } } } as ApiKeyEvent]);
  });

  it('refuses a second creation, IP rules that are not addresses or ranges, and expiries that are not dates', () => {
    spec.given([created]).when(create()).thenThrows(DomainError, { code: 'key_exists' });
    spec.given([]).when(create({ allowed_ips: ['10.0.0.0/33'] })).thenThrows(DomainError, { code: 'invalid_ip_rule' }, /10\.0\.0\.0\/33/);
    spec.given([]).when(create({ blocked_ips: ['not-an-ip'] })).thenThrows(DomainError, { code: 'invalid_ip_rule' });
    spec.given([]).when(create({ expires_at: 'tomorrow' })).thenThrows(DomainError, { code: 'invalid_expiry' });
  });

  it('records only the fields that change, and checks a changed policy', () => {
    spec.given([created]).when({ type: 'UpdateApiKey', name: 'deploy' }).then([{ type: 'ApiKeyUpdated', data: { name: 'deploy' } }]);
    spec.given([created]).when({ type: 'UpdateApiKey', name: 'ci', policy }).thenNothingHappened();
    const blocked = { ...policy, blocked_models: ['gpt-4o'] };
    spec.given([created]).when({ type: 'UpdateApiKey', name: 'ci', policy: blocked }).then([{ type: 'ApiKeyUpdated', data: { policy: blocked } }]);
    spec.given([created]).when({ type: 'UpdateApiKey', policy: { ...policy, allowed_ips: ['nope'] } }).thenThrows(DomainError, { code: 'invalid_ip_rule' });
  });

  it("answers not found for a missing or revoked key, and for someone else's", () => {
    spec.given([]).when({ type: 'UpdateApiKey', name: 'x' }).thenThrows(NotFoundError, { code: 'key_not_found' });
    spec.given([created, revoked]).when({ type: 'UpdateApiKey', name: 'x' }).thenThrows(NotFoundError, { code: 'key_not_found' });
    spec.given([created]).when({ type: 'UpdateApiKey', name: 'x', ownerId: 'usr_2' }).thenThrows(NotFoundError, { code: 'key_not_found' });
    spec.given([created]).when({ type: 'RevokeApiKey', by: 'usr_2', ownerId: 'usr_2' }).thenThrows(NotFoundError, { code: 'key_not_found' });
    spec.given([created]).when({ type: 'UpdateApiKey', name: 'mine', ownerId: 'usr_1' }).then([{ type: 'ApiKeyUpdated', data: { name: 'mine' } }]);
  });

  it('revokes once', () => {
    spec.given([created]).when({ type: 'RevokeApiKey', by: 'usr_1', ownerId: 'usr_1' }).then([revoked]);
    spec.given([created]).when({ type: 'RevokeApiKey', by: null }).then([{ type: 'ApiKeyRevoked', data: { by: null } }]);
    spec.given([created, revoked]).when({ type: 'RevokeApiKey', by: 'usr_1' }).thenThrows(NotFoundError);
  });

  it('folds history into state', () => {
    const blocked = { ...policy, blocked_models: ['m'] };
    expect(spec.given([created, { type: 'ApiKeyUpdated', data: { name: 'renamed' } }, { type: 'ApiKeyUpdated', data: { policy: blocked } }]).state).toEqual({
      exists: true,
      revoked: false,
      userId: 'usr_1',
      name: 'renamed',
      policy: blocked,
    });
    expect(spec.given([created, revoked]).state).toMatchObject({ exists: true, revoked: true });
  });
});
