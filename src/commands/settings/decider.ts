/** A tenant's operational settings: defaults until changed; a change records only what differs. */
import { DEFAULT_SETTINGS, type CoverageMode, type Settings } from '../../billing/rating.js';
import type { Decider } from '../decider.js';
import { SettingsEvent } from './events.js';

export type SettingsCommand = { type: 'ChangeSettings'; relay_api_enabled?: boolean; subscription_covers_relay?: CoverageMode; by: string | null };

export const settings: Decider<SettingsCommand, Settings, SettingsEvent> = {
  category: 'settings',
  initialState: DEFAULT_SETTINGS,
  events: SettingsEvent,

  decide(command, state) {
    const data: { relay_api_enabled?: boolean; subscription_covers_relay?: CoverageMode } = {};
    if (command.relay_api_enabled !== undefined && command.relay_api_enabled !== state.relay_api_enabled) data.relay_api_enabled = command.relay_api_enabled;
    if (command.subscription_covers_relay !== undefined && command.subscription_covers_relay !== state.subscription_covers_relay) data.subscription_covers_relay = command.subscription_covers_relay;
    return Object.keys(data).length === 0 ? [] : [{ type: 'TenantSettingsChanged', data: { ...data, by: command.by } }];
  },

  evolve(state, event) {
    return {
      relay_api_enabled: event.data.relay_api_enabled ?? state.relay_api_enabled,
      subscription_covers_relay: event.data.subscription_covers_relay ?? state.subscription_covers_relay,
    };
  },
};
