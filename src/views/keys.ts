/**
 * The key directory every instance keeps in memory so authenticating a key costs no database
 * round trip: looked up by the SHA-256 of the presented secret, policy pre-compiled (IP rules
 * parsed, model sets built). A revocation is one event: every instance drops the key when it sees
 * it. Seeded from the API keys read model (src/projections/keys.ts).
 */
import { ApiKeyEvent, type KeyPolicy } from '../commands/keys/events.js';
import { keyIdOf, keysProjection } from '../projections/keys.js';
import type { LiveViewDefinition } from '../projections/runtime/live-view.js';
import { compileIpRules, parseIpRule, type IpRule, type IpRuleSet } from '../relay/access/ip-rules.js';

/** A key ready for the hot path. */
export interface ActiveKey {
  id: string;
  tenantId: string;
  userId: string;
  name: string;
  policy: KeyPolicy;
  allowedIps: IpRuleSet;
  blockedIps: IpRuleSet;
  /** The models both of the policy's allow lists let through; null = every model. */
  allowedModels: ReadonlySet<string> | null;
  blockedModels: ReadonlySet<string>;
  allowedCountries: ReadonlySet<string>;
  blockedCountries: ReadonlySet<string>;
  /** Epoch ms, or Infinity. */
  expiresAt: number;
}

export interface KeyDirectory {
  byHash: Map<string, ActiveKey>;
  hashById: Map<string, string>;
}

/**
 * The models `permissions.models` and `model_restrictions.allowed_models` both allow (an empty
 * list allows every model); null when neither narrows. Two lists with nothing in common allow
 * nothing: an empty set, not null.
 */
export function allowedModelsOf(policy: Pick<KeyPolicy, 'allowed_models' | 'permitted_models'>): ReadonlySet<string> | null {
  const lists = [policy.permitted_models ?? [], policy.allowed_models].filter((list) => list.length > 0);
  if (lists.length === 0) return null;
  const [first, ...rest] = lists as [string[], ...string[][]];
  const others = rest.map((list) => new Set(list));
  return new Set(first.filter((model) => others.every((list) => list.has(model))));
}

/** Whether a key may use `model` (after its aliases): not blocked, and allowed by both lists. */
export function keyAllowsModel(key: Pick<ActiveKey, 'allowedModels' | 'blockedModels'>, model: string): boolean {
  return !key.blockedModels.has(model) && (key.allowedModels === null || key.allowedModels.has(model));
}

export function compileKey(id: string, tenantId: string, userId: string, name: string, policy: KeyPolicy): ActiveKey {
  const rules = (list: string[]) => compileIpRules(list.map((r) => parseIpRule(r)).filter((r): r is IpRule => r !== null));
  return {
    id,
    tenantId,
    userId,
    name,
    policy,
    allowedIps: rules(policy.allowed_ips),
    blockedIps: rules(policy.blocked_ips),
    allowedModels: allowedModelsOf(policy),
    blockedModels: new Set(policy.blocked_models),
    allowedCountries: new Set(policy.allowed_countries.map((c) => c.toUpperCase())),
    blockedCountries: new Set(policy.blocked_countries.map((c) => c.toUpperCase())),
    expiresAt: policy.expires_at ? Date.parse(policy.expires_at) : Infinity,
  };
}

export const keyDirectoryView: LiveViewDefinition<KeyDirectory> = {
  projection: keysProjection,
  async load(db) {
    const directory: KeyDirectory = { byHash: new Map(), hashById: new Map() };
    const rows = await db.selectFrom('api_keys').selectAll().where('revoked', '=', 0).execute();
    for (const row of rows) {
      directory.byHash.set(row.key_hash, compileKey(row.id, row.tenant_id, row.user_id, row.name, JSON.parse(row.policy) as KeyPolicy));
      directory.hashById.set(row.id, row.key_hash);
    }
    return directory;
  },
  evolve(directory, stored) {
    const id = keyIdOf(stored.stream);
    const event = ApiKeyEvent.parse({ type: stored.type, data: stored.data });
    switch (event.type) {
      case 'ApiKeyCreated':
        directory.byHash.set(event.data.key_hash, compileKey(id, stored.tenant_id, event.data.user_id, event.data.name, event.data.policy));
        directory.hashById.set(id, event.data.key_hash);
        break;
      case 'ApiKeyUpdated': {
        const hash = directory.hashById.get(id);
        const current = hash ? directory.byHash.get(hash) : undefined;
        if (hash && current) directory.byHash.set(hash, compileKey(id, current.tenantId, current.userId, event.data.name ?? current.name, event.data.policy ?? current.policy));
        break;
      }
      case 'ApiKeyRevoked': {
        const hash = directory.hashById.get(id);
        if (hash) directory.byHash.delete(hash);
        directory.hashById.delete(id);
        break;
      }
    }
    return directory;
  },
};
