/** A tenant's operational settings: defaults until changed; a change records only what differs. */
import { applySettingsChange, DEFAULT_SETTINGS, type CoverageMode, type Settings } from '../../billing/rating.js';
import type { Decider } from '../decider.js';
import { SettingsEvent, type RelaySettingsChange } from './events.js';

export type SettingsCommand = {
  type: 'ChangeSettings';
  relay_api_enabled?: boolean;
  subscription_covers_relay?: CoverageMode;
  relay_settings?: RelaySettingsChange;
  storage_quota_bytes?: number | null;
  by: string | null;
};

/** The fields of `change` whose value differs from `current` (compared as JSON: lists too). */
function differing<T extends object>(change: Partial<T>, current: T): Partial<T> {
  const out: Partial<T> = {};
  for (const [name, value] of Object.entries(change) as Array<[keyof T, T[keyof T] | undefined]>) {
    if (value !== undefined && JSON.stringify(value) !== JSON.stringify(current[name])) out[name] = value;
  }
  return out;
}

export const settings: Decider<SettingsCommand, Settings, SettingsEvent> = {
  category: 'settings',
  initialState: DEFAULT_SETTINGS,
  events: SettingsEvent,

  decide(command, state) {
    const data: { relay_api_enabled?: boolean; subscription_covers_relay?: CoverageMode; relay_settings?: RelaySettingsChange; storage_quota_bytes?: number | null } = {};
    if (command.relay_api_enabled !== undefined && command.relay_api_enabled !== state.relay_api_enabled) data.relay_api_enabled = command.relay_api_enabled;
    if (command.subscription_covers_relay !== undefined && command.subscription_covers_relay !== state.subscription_covers_relay) data.subscription_covers_relay = command.subscription_covers_relay;
    const relay = command.relay_settings ? differing(command.relay_settings, state.relay_settings) : {};
    if (Object.keys(relay).length > 0) data.relay_settings = relay;
    if (command.storage_quota_bytes !== undefined && command.storage_quota_bytes !== state.storage_quota_bytes) data.storage_quota_bytes = command.storage_quota_bytes;
    return Object.keys(data).length === 0 ? [] : [{ type: 'TenantSettingsChanged', data: { ...data, by: command.by } }];
  },

  evolve(state, event) {
    return applySettingsChange(state, event.data);
  },
};
