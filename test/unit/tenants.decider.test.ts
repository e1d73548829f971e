/** Given / when / then over the tenant decider. */
import { describe, expect, it } from 'vitest';
import { tenants, type TenantCommand } from '../../src/commands/tenants/decider.js';
import type { TenantEvent } from '../../src/commands/tenants/events.js';
import { DomainError, NotFoundError } from '../../src/errors.js';

function given(history: TenantEvent[]) {
  const state = history.reduce(tenants.evolve, tenants.initialState);
  return { when: (command: TenantCommand) => tenants.decide(command, state) };
}

const created: TenantEvent = { type: 'TenantCreated', data: { tenant_id: 'ten_1', name: 'Acme' } };

describe('tenant decider', () => {
  it('creates a tenant with a trimmed name', () => {
    expect(given([]).when({ type: 'CreateTenant', tenantId: 'ten_1', name: ' Acme ' })).toEqual([created]);
  });

  it('refuses to create twice and refuses empty names', () => {
    expect(() => given([created]).when({ type: 'CreateTenant', tenantId: 'ten_1', name: 'Again' })).toThrow(expect.objectContaining({ code: 'tenant_exists' }));
    expect(() => given([]).when({ type: 'CreateTenant', tenantId: 'ten_1', name: '  ' })).toThrow(DomainError);
  });

  it('disables once and enables again', () => {
    expect(given([created]).when({ type: 'DisableTenant', tenantId: 'ten_1', by: 'u1' })).toEqual([{ type: 'TenantDisabled', data: { by: 'u1' } }]);
    const disabled: TenantEvent[] = [created, { type: 'TenantDisabled', data: { by: 'u1' } }];
    expect(given(disabled).when({ type: 'DisableTenant', tenantId: 'ten_1', by: 'u1' })).toEqual([]);
    expect(given(disabled).when({ type: 'EnableTenant', by: 'u2' })).toEqual([{ type: 'TenantEnabled', data: { by: 'u2' } }]);
    expect(given([created]).when({ type: 'EnableTenant', by: 'u2' })).toEqual([]);
  });

  it('never disables the default tenant (it holds the operators)', () => {
    const dflt: TenantEvent = { type: 'TenantCreated', data: { tenant_id: 'default', name: 'Default' } };
    expect(() => given([dflt]).when({ type: 'DisableTenant', tenantId: 'default', by: null })).toThrow(expect.objectContaining({ code: 'cannot_disable_default_tenant' }));
  });

  it('answers not found for a tenant that does not exist', () => {
    expect(() => given([]).when({ type: 'DisableTenant', tenantId: 'x', by: null })).toThrow(NotFoundError);
  });
});
