/**
 * Maintenance mode: while on, everyone but admins gets 503 with the operator's message.
 * There is one instance for the whole installation, owned by the system tenant.
 */
import { DomainError } from '../../errors.js';
import type { Decider } from '../decider.js';
import { MaintenanceEvent } from './events.js';

export const SYSTEM_TENANT = '_system';
export const MAINTENANCE_ID = 'global';
export const DEFAULT_MAINTENANCE_MESSAGE = 'Switchyard is under maintenance. Please try again later.';

export interface MaintenanceState {
  enabled: boolean;
  message: string;
}

export type MaintenanceCommand = { type: 'SetMaintenance'; enabled: boolean; message?: string | null; by: string | null };

export const maintenance: Decider<MaintenanceCommand, MaintenanceState, MaintenanceEvent> = {
  category: 'maintenance',
  initialState: { enabled: false, message: '' },
  events: MaintenanceEvent,

  decide(command, state) {
    if (!command.enabled) return state.enabled ? [{ type: 'MaintenanceDisabled', data: { by: command.by } }] : [];
    const message = command.message?.trim() || DEFAULT_MAINTENANCE_MESSAGE;
    if (message.length > 1000) throw new DomainError('maintenance message must be at most 1000 characters', 'invalid_message');
    // Re-enabling with the same message changes nothing: keep the history free of no-ops.
    if (state.enabled && state.message === message) return [];
    return [{ type: 'MaintenanceEnabled', data: { message, by: command.by } }];
  },

  evolve(state, event) {
    switch (event.type) {
      case 'MaintenanceEnabled':
        return { enabled: true, message: event.data.message };
      case 'MaintenanceDisabled':
        return { enabled: false, message: '' };
    }
  },
};
