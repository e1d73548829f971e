/**
 * The access live view: what every authenticated request checks, in memory — disabled tenants,
 * disabled users, and the current role of users whose role changed after their token was issued.
 * Seeded from the accounts read model (src/projections/accounts.ts).
 */
import type { Role } from '../auth/tokens.js';
import { UserEvent } from '../commands/users/events.js';
import { accountsProjection, tenantIdOf, userIdOf } from '../projections/accounts.js';
import type { LiveViewDefinition } from '../projections/runtime/live-view.js';

/** What every authenticated request checks, in memory (no database round trip). */
export interface AccessState {
  disabledTenants: Set<string>;
  disabledUsers: Set<string>;
  /**
   * Every user that exists: its tenant and current role (tokens carry the role they were issued
   * with). One small entry per user of the installation; a deleted user has none (its tokens are
   * refused as naming no user).
   */
  users: Map<string, { tenantId: string; role: Role }>;
}

export const accessLiveView: LiveViewDefinition<AccessState> = {
  projection: accountsProjection,
  snapshot: { version: 1 },
  async load(db) {
    const tenants = await db.selectFrom('tenants').select('tenant_id').where('disabled', '=', 1).execute();
    const users = await db.selectFrom('users').select(['id', 'tenant_id', 'role', 'disabled']).execute();
    return {
      disabledTenants: new Set(tenants.map((t) => t.tenant_id)),
      disabledUsers: new Set(users.filter((u) => u.disabled === 1).map((u) => u.id)),
      users: new Map(users.map((u) => [u.id, { tenantId: u.tenant_id, role: u.role as Role }])),
    };
  },
  evolve(state, stored) {
    switch (stored.type) {
      case 'TenantDisabled':
        state.disabledTenants.add(tenantIdOf(stored.stream));
        break;
      case 'TenantEnabled':
        state.disabledTenants.delete(tenantIdOf(stored.stream));
        break;
      case 'UserCreated':
      case 'UserRoleChanged': {
        const event = UserEvent.parse({ type: stored.type, data: stored.data });
        const id = userIdOf(stored.stream);
        if (event.type === 'UserCreated') state.users.set(id, { tenantId: stored.tenant_id, role: event.data.role });
        else if (event.type === 'UserRoleChanged') {
          const user = state.users.get(id);
          if (user) user.role = event.data.role;
        }
        break;
      }
      case 'UserDisabled':
        state.disabledUsers.add(userIdOf(stored.stream));
        break;
      case 'UserEnabled':
        state.disabledUsers.delete(userIdOf(stored.stream));
        break;
      case 'UserDeleted':
        // As the read model after the deletion, which is what a restart loads.
        state.users.delete(userIdOf(stored.stream));
        state.disabledUsers.delete(userIdOf(stored.stream));
        break;
    }
    return state;
  },
};
