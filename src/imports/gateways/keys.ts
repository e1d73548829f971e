/**
 * one-api / new-api tokens -> Switchyard API keys, as pure functions.
 *
 * - The secret: clients send `sk-` + the token's key; the key is imported as the hash of exactly
 *   that, so the same secrets keep working (the plaintext is handed to the sink, never printed).
 * - remain_quota -> quota_limit (credits, at the same rate as the users' quota); unlimited_quota -> none.
 * - expired_time (unix seconds, -1 = never) -> expires_at.
 * - models (one-api) / model_limits (new-api, when enabled) -> allowed_models.
 * - The token's group (new-api), else its user's: the gateways route a token only to channels of
 *   that group; when the group's channels serve fewer models than all channels, those models
 *   become the key's permitted_models.
 * - subnet (one-api, CIDR ranges) / allow_ips (new-api, addresses) -> allowed_ips.
 * - Status: enabled, expired (its expiry says so) and exhausted (its quota says so) keys import as
 *   they are; disabled ones import revoked, and so do the tokens of disabled users (the gateways
 *   refuse them; Switchyard's key gate does not look at the owner).
 */
import { MICRO_PER_CREDIT } from '../../billing/money.js';
import type { KeyPolicy } from '../../commands/keys/events.js';
import { parseIpRule } from '../../relay/access/ip-rules.js';
import type { ImportSink } from '../sink.js';
import type { Mapped } from './channels.js';
import type { LegacyToken } from './rows.js';
import { DEFAULT_QUOTA_PER_UNIT, quotaToMicro } from './users.js';

export type KeyInput = Parameters<ImportSink['apiKey']>[0];

export const TOKEN_ENABLED = 1;
export const TOKEN_DISABLED = 2;
export const TOKEN_EXPIRED = 3;
export const TOKEN_EXHAUSTED = 4;

export interface TokenContext {
  quotaPerUnit?: number;
  /** The group of the token's user ('' when unknown). */
  userGroup: string;
  /** The token's user is disabled: the gateways refuse its tokens, Switchyard would not (they import revoked). */
  userDisabled?: boolean;
  /** The models a group's channels serve; null: the group reaches every channel (no restriction). */
  groupModels(group: string): string[] | null;
}

/** A legacy token as a Switchyard API key, or why it cannot be one. */
export function mapToken(token: LegacyToken, ctx: TokenContext): Mapped<KeyInput> {
  if (token.deleted) return { ok: false, reason: 'it is deleted' };
  const key = token.key.trim();
  if (!key) return { ok: false, reason: 'it has no key' };
  const badRule = token.ipRules.find((rule) => parseIpRule(rule) === null);
  if (badRule !== undefined) return { ok: false, reason: `its address restriction "${badRule}" is neither an IP address nor a CIDR range (imported unrestricted it would be wider)` };
  if (token.models !== null && token.models.length === 0) return { ok: false, reason: 'its model limits are on but list no model: it could use no model' };
  const notes: string[] = [];
  const group = token.group || ctx.userGroup;
  const groupModels = group ? ctx.groupModels(group) : null;
  if (groupModels !== null && groupModels.length === 0) return { ok: false, reason: `its group "${group}" reaches no imported channel: it could use no model` };
  if (groupModels !== null) notes.push(`group "${group}": permitted models ${groupModels.join(', ')}`);

  const quotaMicro = token.unlimitedQuota ? null : Math.max(0, quotaToMicro(token.remainQuota, ctx.quotaPerUnit ?? DEFAULT_QUOTA_PER_UNIT));
  const policy: Partial<KeyPolicy> = {
    allowed_models: token.models ?? [],
    ...(groupModels !== null && { permitted_models: groupModels }),
    quota_limit: quotaMicro === null ? null : quotaMicro / MICRO_PER_CREDIT,
    allowed_ips: token.ipRules,
    expires_at: token.expiredTime === -1 ? null : new Date(token.expiredTime * 1000).toISOString(),
  };
  const statusSaysIt = token.status === TOKEN_ENABLED || (token.status === TOKEN_EXPIRED && token.expiredTime !== -1) || (token.status === TOKEN_EXHAUSTED && !token.unlimitedQuota);
  if (!statusSaysIt) notes.push(token.status === TOKEN_DISABLED ? 'disabled: imported revoked' : `status ${token.status}: imported revoked`);
  else if (ctx.userDisabled) notes.push('its user is disabled: imported revoked');
  return {
    ok: true,
    value: { legacyId: token.id, legacyUserId: token.userId, name: token.name.trim() || `token ${token.id}`, secret: `sk-${key}`, policy, revoked: !statusSaysIt || ctx.userDisabled === true },
    notes,
  };
}

/**
 * group -> the models its channels serve, from the `abilities` table (one row per group, model and
 * channel), limited to the channels imported. A group reaching every imported model restricts
 * nothing (null); no abilities of imported channels at all: no restrictions.
 */
export function groupModelsFrom(abilities: ReadonlyArray<{ group: string; model: string; channelId: number }>, importedChannels: ReadonlySet<number>): (group: string) => string[] | null {
  const byGroup = new Map<string, Set<string>>();
  const all = new Set<string>();
  for (const a of abilities) {
    if (!importedChannels.has(a.channelId)) continue;
    all.add(a.model);
    const set = byGroup.get(a.group) ?? new Set<string>();
    set.add(a.model);
    byGroup.set(a.group, set);
  }
  return (group) => {
    if (all.size === 0) return null;
    const models = byGroup.get(group);
    if (!models) return [];
    return models.size >= all.size ? null : [...models].sort();
  };
}
