/**
 * Tenants. The stream `tenant-<id>` carries the tenant's own id as its tenant_id. The `default`
 * tenant is created at bootstrap and holds the installation's operators; it cannot be disabled.
 */
import { DomainError, NotFoundError } from '../../errors.js';
import type { Decider } from '../decider.js';
import { TenantEvent } from './events.js';

/** The operators' tenant, created at first start. */
export const DEFAULT_TENANT = 'default';

export interface TenantState {
  exists: boolean;
  name: string;
  disabled: boolean;
}

export type TenantCommand =
  | { type: 'CreateTenant'; tenantId: string; name: string }
  | { type: 'DisableTenant'; tenantId: string; by: string | null }
  | { type: 'EnableTenant'; by: string | null };

function existing(state: TenantState): TenantState {
  if (!state.exists) throw new NotFoundError('tenant not found', 'tenant_not_found');
  return state;
}

export const tenants: Decider<TenantCommand, TenantState, TenantEvent> = {
  category: 'tenant',
  initialState: { exists: false, name: '', disabled: false },
  events: TenantEvent,

  decide(command, state) {
    switch (command.type) {
      case 'CreateTenant': {
        if (state.exists) throw new DomainError('tenant already exists', 'tenant_exists');
        const name = command.name.trim();
        if (!name || name.length > 200) throw new DomainError('a tenant needs a name of 1 to 200 characters', 'invalid_tenant');
        return [{ type: 'TenantCreated', data: { tenant_id: command.tenantId, name } }];
      }
      case 'DisableTenant':
        if (existing(state).disabled) return [];
        if (command.tenantId === DEFAULT_TENANT) throw new DomainError('the default tenant holds the operators and cannot be disabled', 'cannot_disable_default_tenant');
        return [{ type: 'TenantDisabled', data: { by: command.by } }];
      case 'EnableTenant':
        return existing(state).disabled ? [{ type: 'TenantEnabled', data: { by: command.by } }] : [];
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'TenantCreated':
        return { ...state, exists: true, name: event.data.name };
      case 'TenantDisabled':
        return { ...state, disabled: true };
      case 'TenantEnabled':
        return { ...state, disabled: false };
    }
  },
};
