/** Given / when / then over the tenant decider. */
import { describe, expect, it } from 'vitest';
import { tenants } from '../../src/commands/tenants/decider.js';
import type { TenantEvent } from '../../src/commands/tenants/events.js';
import { DomainError, NotFoundError } from '../../src/errors.js';
import { DeciderSpec } from '../support/decider-spec.js';

const spec = DeciderSpec.for(tenants);
const created: TenantEvent = { type: 'TenantCreated', data: { tenant_id: 'ten_1', name: 'Acme' } };

describe('tenant decider', () => {
  it('creates a tenant with a trimmed name', () => {
    spec.given([]).when({ type: 'CreateTenant', tenantId: 'ten_1', name: ' Acme ' }).then([created]);
  });

  it('refuses to create twice and refuses empty names', () => {
    spec.given([created]).when({ type: 'CreateTenant', tenantId: 'ten_1', name: 'Again' }).thenThrows(expect.objectContaining({ code: 'tenant_exists' }));
    spec.given([]).when({ type: 'CreateTenant', tenantId: 'ten_1', name: '  ' }).thenThrows(DomainError);
  });

  it('disables once and enables again', () => {
    spec.given([created]).when({ type: 'DisableTenant', tenantId: 'ten_1', by: 'u1' }).then([{ type: 'TenantDisabled', data: { by: 'u1' } }]);
    const disabled: TenantEvent[] = [created, { type: 'TenantDisabled', data: { by: 'u1' } }];
    spec.given(disabled).when({ type: 'DisableTenant', tenantId: 'ten_1', by: 'u1' }).thenNothingHappened();
    spec.given(disabled).when({ type: 'EnableTenant', by: 'u2' }).then([{ type: 'TenantEnabled', data: { by: 'u2' } }]);
    spec.given([created]).when({ type: 'EnableTenant', by: 'u2' }).thenNothingHappened();
  });

  it('never disables the default tenant (it holds the operators)', () => {
    const dflt: TenantEvent = { type: 'TenantCreated', data: { tenant_id: 'default', name: 'Default' } };
    spec.given([dflt]).when({ type: 'DisableTenant', tenantId: 'default', by: null }).thenThrows(expect.objectContaining({ code: 'cannot_disable_default_tenant' }));
  });

  it('answers not found for a tenant that does not exist', () => {
    spec.given([]).when({ type: 'DisableTenant', tenantId: 'x', by: null }).thenThrows(NotFoundError);
  });
});
