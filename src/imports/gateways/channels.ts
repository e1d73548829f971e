/**
 * one-api / new-api channels -> Switchyard channels, as pure functions. The two gateways number
 * their channel types differently (see each source's channel-types.ts), but map them the same way:
 *
 * - Base URLs: the gateways keep the provider's origin and append the API path themselves
 *   (`{base_url}/v1/chat/completions` for OpenAI-style kinds), while Switchyard's OpenAI-compatible
 *   kinds keep the versioned base (`{base_url}/chat/completions`): each type says what to append.
 *   An empty base_url means the gateway's default for that type, which is written out.
 * - Several keys in one channel (one per line: one-api's batch creation leftovers, new-api's
 *   multi-key channels) become one Switchyard channel per key, with the same settings, so the
 *   router balances over them as the gateway did.
 * - Priority: the gateways try the HIGHEST priority first, Switchyard the lowest: it is negated.
 * - Weight: 0 (their default) becomes 1, Switchyard's least; above 1000 is capped.
 * - Azure: the gateways call the deployment named like the model without dots (gpt-3.5-turbo ->
 *   gpt-35-turbo); Switchyard uses the upstream model name, so such models get a mapping entry.
 */
import type { ChannelType } from '../../relay/channel.js';
import { needsBaseUrl } from '../../relay/providers/index.js';
import { ownValue, type NullPrototypeRecord } from '../../own.js';
import type { ImportSink } from '../sink.js';
import { commaList, type LegacyChannel } from './rows.js';

export type ChannelInput = Parameters<ImportSink['channel']>[0];

/** A legacy channel type: its name, and how (or whether) it maps. */
export interface ChannelTypeEntry {
  name: string;
  /** The Switchyard kind; absent: no kind speaks its protocol. */
  kind?: ChannelType;
  /** The legacy gateway's default base URL for the type (used when base_url is empty). */
  base?: string;
  /** What the gateway appends before the API path Switchyard appends ('/v1' for OpenAI-style). */
  path?: string;
  /** new-api's Custom type: base_url is the complete request URL. */
  fullUrl?: boolean;
  /** Why it does not map (shown in the report). */
  why?: string;
}

export type ChannelTypeTable = Readonly<Record<number, ChannelTypeEntry>>;

export type Mapped<T> = { ok: true; value: T; notes: string[] } | { ok: false; reason: string };

const CHAT_COMPLETIONS = '/chat/completions';
const MAX_NAME = 100;

/** The Switchyard base_url of a channel: a URL, null (the kind's own default), or why there is none. */
export function baseUrlFor(entry: ChannelTypeEntry & { kind: ChannelType }, legacyBase: string): { url: string | null } | { reason: string } {
  const given = legacyBase.trim().replace(/\/+$/, '');
  if (entry.fullUrl) {
    if (!given) return { reason: 'it has no URL' };
    if (given.includes('{model}')) return { reason: `its URL ${given} names the model in the path, which an OpenAI-compatible channel cannot` };
    if (!given.endsWith(CHAT_COMPLETIONS)) return { reason: `its URL ${given} is not a …/chat/completions endpoint` };
    return { url: given.slice(0, -CHAT_COMPLETIONS.length) };
  }
  const base = given || (entry.base ?? '').replace(/\/+$/, '');
  if (!base) return needsBaseUrl(entry.kind) ? { reason: 'it has no base URL' } : { url: null };
  const path = entry.path ?? '';
  return { url: path && !base.endsWith(path) ? `${base}${path}` : base };
}

/** The model_mapping JSON text as a map; notes when it is not one (the gateways ignore it then, so does the import). */
export function parseModelMapping(text: string | null, notes: string[]): NullPrototypeRecord<string> {
  const mapping = Object.create(null) as NullPrototypeRecord<string>;
  const trimmed = (text ?? '').trim();
  if (trimmed === '' || trimmed === '{}') return mapping;
  let parsed: unknown;
  try {
    parsed = JSON.parse(trimmed);
  } catch {
    notes.push('model_mapping is not JSON: ignored');
    return mapping;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    notes.push('model_mapping is not a JSON object: ignored');
    return mapping;
  }
  for (const [from, to] of Object.entries(parsed)) {
    if (typeof to === 'string' && from.trim() && to.trim()) mapping[from.trim()] = to.trim();
    else notes.push(`model_mapping entry "${from}" is not a model name: ignored`);
  }
  return mapping;
}

function parseJsonObject(text: string | null): Record<string, unknown> {
  if (!text?.trim()) return {};
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

const nonEmpty = (value: unknown): string | undefined => (typeof value === 'string' && value.trim() ? value.trim() : undefined);

/** The channel's keys, one per line (empty lines dropped). */
export function channelKeys(key: string): string[] {
  return key
    .split('\n')
    .map((k) => k.trim())
    .filter(Boolean);
}

/** Bedrock credentials: one-api keeps them in config {ak, sk, region}, new-api (and older one-api) in the key as AK|SK|REGION. */
function bedrockKey(key: string, config: Record<string, unknown>): { key: string; region: string | undefined } | null {
  const ak = nonEmpty(config.ak);
  const sk = nonEmpty(config.sk);
  if (ak && sk) return { key: `${ak}:${sk}`, region: nonEmpty(config.region) };
  const parts = key.split('|').map((p) => p.trim());
  if (parts.length >= 2 && parts[0] && parts[1]) return { key: `${parts[0]}:${parts[1]}`, region: parts[2] || nonEmpty(config.region) };
  return null;
}

function clampWeight(weight: number): number {
  return Math.min(1000, Math.max(1, Math.trunc(weight)));
}

/** A legacy channel as the Switchyard channels it becomes (one per key), or why it cannot be one. */
export function mapChannel(channel: LegacyChannel, types: ChannelTypeTable): Mapped<ChannelInput[]> {
  const entry = types[channel.type];
  if (!entry) return { ok: false, reason: `unknown channel type ${channel.type}` };
  if (!entry.kind) return { ok: false, reason: `${entry.name} channels (type ${channel.type}) have no Switchyard kind${entry.why ? `: ${entry.why}` : ''}` };
  const kind = entry.kind;
  const notes: string[] = [];
  const models = commaList(channel.models);
  if (models.length === 0) return { ok: false, reason: 'it lists no models' };
  const base = baseUrlFor({ ...entry, kind }, channel.baseUrl);
  if ('reason' in base) return { ok: false, reason: base.reason };
  let keys = channelKeys(channel.key);
  const legacyConfig = parseJsonObject(channel.config);
  const config: Record<string, unknown> = {};
  const modelMapping = parseModelMapping(channel.modelMapping, notes);
  if (kind === 'azure') {
    const apiVersion = nonEmpty(legacyConfig.api_version) ?? nonEmpty(channel.other);
    if (apiVersion) config.api_version = apiVersion;
    for (const model of models) {
      const deployment = (modelMapping[model] ?? model).replace(/\./g, '');
      if (deployment !== model) modelMapping[model] = deployment;
    }
  }
  if (kind === 'bedrock') {
    // One credential set per channel: the key's lines are not separate keys here.
    const credentials = bedrockKey(channel.key.trim(), legacyConfig);
    if (!credentials) return { ok: false, reason: 'its AWS credentials are neither in config (ak, sk) nor in the key as AK|SK|REGION' };
    keys = [credentials.key];
    if (credentials.region) config.region = credentials.region;
  }
  if (keys.length === 0) return { ok: false, reason: 'it has no key' };
  const organization = nonEmpty(channel.organization);
  if (organization && kind !== 'azure' && kind !== 'bedrock') config.organization = organization;

  let weight = clampWeight(channel.weight);
  if (channel.weight > 1000) notes.push(`weight ${channel.weight} capped at 1000`);
  if (!Number.isFinite(weight)) weight = 1;
  const name = channel.name.trim() || `${entry.name} #${channel.id}`;
  const channelEnabled = channel.status === 1;
  if (keys.length > 1) notes.push(`${keys.length} keys: one Switchyard channel per key`);
  const value = keys.map((key, index): ChannelInput => {
    const keyStatus = ownValue(channel.keyStatuses, String(index));
    const suffix = keys.length > 1 ? ` (key ${index + 1}/${keys.length})` : '';
    return {
      legacyId: index === 0 ? channel.id : `${channel.id}/key${index + 1}`,
      name: `${name.slice(0, MAX_NAME - suffix.length)}${suffix}`,
      type: kind,
      key,
      base_url: base.url,
      models,
      model_mapping: { ...modelMapping },
      priority: channel.priority === 0 ? 0 : -channel.priority,
      weight,
      enabled: channelEnabled && (keyStatus === undefined || keyStatus === 1),
      config: { ...config },
    };
  });
  return { ok: true, value, notes };
}
