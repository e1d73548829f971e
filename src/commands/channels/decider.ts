/**
 * Channels: one upstream provider account each (key, base URL, models, routing weight), owned by
 * a tenant. Health changes are events too, so every instance routes around the same failures.
 */
import { createHash } from 'node:crypto';
import { ConflictError, DomainError, NotFoundError } from '../../errors.js';
import { needsBaseUrl } from '../../relay/providers/index.js';
import type { Decider } from '../decider.js';
import { ChannelEvent, ChannelNameEvent, type ChannelSettings } from './events.js';

export interface ChannelState {
  exists: boolean;
  deleted: boolean;
  settings: ChannelSettings | null;
  healthy: boolean;
  cooldownUntil: string | null;
}

interface SealedKey {
  sealed: string;
  masked: string;
}

export type ChannelCommand =
  | { type: 'CreateChannel'; channelId: string; settings: ChannelSettings; key: SealedKey }
  | { type: 'UpdateChannel'; changes: Partial<ChannelSettings>; key?: SealedKey }
  | { type: 'DeleteChannel' }
  | { type: 'SetChannelHealth'; healthy: boolean; cooldownUntil: string | null; reason: string }
  | { type: 'RecordChannelTest'; ok: boolean; status: number | null; latencyMs: number; error: string | null };

function validate(settings: ChannelSettings, keySealed: boolean) {
  if (needsBaseUrl(settings.type) && !settings.base_url) throw new DomainError(`a ${settings.type} channel needs base_url`, 'invalid_channel');
  if (settings.base_url !== null) {
    let url: URL;
    try {
      url = new URL(settings.base_url);
    } catch {
      throw new DomainError(`base_url is not a URL: ${settings.base_url}`, 'invalid_channel');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new DomainError('base_url must be http or https', 'invalid_channel');
  }
  for (const [alias, target] of Object.entries(settings.model_mapping)) {
    if (!alias || !target) throw new DomainError('model_mapping entries need an alias and a model', 'invalid_channel');
  }
  if (!keySealed) throw new DomainError('a channel needs a key', 'invalid_channel');
}

/** (Another tenant's channel never gets here: the command handler answers "not found" for it.) */
function existing(state: ChannelState): ChannelSettings {
  if (!state.exists || state.deleted || !state.settings) throw new NotFoundError('channel not found', 'channel_not_found');
  return state.settings;
}

export const channels: Decider<ChannelCommand, ChannelState, ChannelEvent> = {
  category: 'channel',
  initialState: { exists: false, deleted: false, settings: null, healthy: true, cooldownUntil: null },
  events: ChannelEvent,

  decide(command, state) {
    switch (command.type) {
      case 'CreateChannel': {
        if (state.exists) throw new DomainError('channel already exists', 'channel_exists');
        validate(command.settings, command.key.sealed.length > 0);
        return [{ type: 'ChannelCreated', data: { channel_id: command.channelId, ...command.settings, key_sealed: command.key.sealed, key_masked: command.key.masked } }];
      }
      case 'UpdateChannel': {
        const current = existing(state);
        const changes = Object.fromEntries(Object.entries(command.changes).filter(([k, v]) => v !== undefined && JSON.stringify(v) !== JSON.stringify(current[k as keyof ChannelSettings])));
        validate({ ...current, ...changes }, true);
        const keyChange = command.key ? { key_sealed: command.key.sealed, key_masked: command.key.masked } : {};
        if (Object.keys(changes).length === 0 && !command.key) return [];
        return [{ type: 'ChannelUpdated', data: { changes: { ...changes, ...keyChange } } }];
      }
      case 'DeleteChannel':
        existing(state);
        return [{ type: 'ChannelDeleted', data: {} }];
      case 'SetChannelHealth':
        if (!state.exists || state.deleted) return []; // deleted meanwhile: nothing to record
        if (state.healthy === command.healthy && state.cooldownUntil === command.cooldownUntil) return [];
        return [{ type: 'ChannelHealthChanged', data: { healthy: command.healthy, cooldown_until: command.cooldownUntil, reason: command.reason } }];
      case 'RecordChannelTest':
        existing(state);
        return [{ type: 'ChannelTested', data: { ok: command.ok, status: command.status, latency_ms: command.latencyMs, error: command.error } }];
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'ChannelCreated': {
        const { channel_id: _id, key_sealed: _k, key_masked: _m, ...settings } = event.data;
        return { ...state, exists: true, settings };
      }
      case 'ChannelUpdated': {
        const { key_sealed: _k, key_masked: _m, ...changes } = event.data.changes;
        return { ...state, settings: { ...state.settings!, ...changes } };
      }
      case 'ChannelDeleted':
        return { ...state, deleted: true };
      case 'ChannelHealthChanged':
        return { ...state, healthy: event.data.healthy, cooldownUntil: event.data.cooldown_until };
      case 'ChannelTested':
        return state;
    }
  },
};

/**
 * The form of a name that must be unique within a tenant: requests pick channels by name
 * (provider_config, fallback_for), so "OpenAI" and "openai " would be a trap.
 */
export function channelNameKey(name: string): string {
  return name.normalize('NFC').trim().toLowerCase();
}

/** Stream id of a channel name's reservation in a tenant (a hash: no names in stream ids). */
export function channelNameReservationId(tenantId: string, name: string): string {
  return createHash('sha256').update(`${tenantId}\0${channelNameKey(name)}`).digest('hex');
}

export interface ChannelNameState {
  reservedBy: string | null;
}

export type ChannelNameCommand = { type: 'ReserveChannelName'; channelId: string; name: string } | { type: 'ReleaseChannelName'; channelId: string };

/**
 * Channel names are unique within a tenant: one stream per (tenant, name), first written at
 * version 0, so two admins racing for a name conflict on the append and the loser decides again
 * and gets 409 `channel_name_taken`.
 */
export const channelNames: Decider<ChannelNameCommand, ChannelNameState, ChannelNameEvent> = {
  category: 'channelname',
  initialState: { reservedBy: null },
  events: ChannelNameEvent,

  decide(command, state) {
    switch (command.type) {
      case 'ReserveChannelName':
        if (state.reservedBy === command.channelId) return []; // a retry of the same creation or rename
        if (state.reservedBy !== null) throw new ConflictError(`a channel named "${command.name}" already exists`, 'channel_name_taken', 'name');
        return [{ type: 'ChannelNameReserved', data: { channel_id: command.channelId, name: command.name } }];
      case 'ReleaseChannelName':
        return state.reservedBy === command.channelId ? [{ type: 'ChannelNameReleased', data: { channel_id: command.channelId } }] : [];
    }
  },

  evolve(_state, event) {
    switch (event.type) {
      case 'ChannelNameReserved':
        return { reservedBy: event.data.channel_id };
      case 'ChannelNameReleased':
        return { reservedBy: null };
    }
  },
};
