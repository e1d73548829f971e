/**
 * Role-based access control. Roles and their permissions are read-model tables (`roles`,
 * `permissions`, seeded by migration 0003); each user's role is in `user_roles` (the accounts
 * projection) and in the access token. The role -> permissions map is loaded once at startup and
 * checked in memory. `*` grants everything. With RBAC_ENABLED=false every authenticated caller is
 * allowed everything.
 */
import type { ReadModelDb } from '../projections/runtime/projection.js';

/** Permissions the code checks. (`user` holds the non-admin ones, `admin` holds `*`.) */
export const Permission = {
  chatUse: 'chat:use',
  filesUpload: 'files:upload',
  presetsRead: 'presets:read',
  presetsWrite: 'presets:write',
  keysManageOwn: 'keys:manage_own',
  /** Admin API: tenants (operators, i.e. admins of the default tenant, only). */
  tenantsManage: 'tenants:manage',
  /** Admin API: users of one's tenant. */
  usersManage: 'users:manage',
} as const;

export const ALL = '*';

export class Rbac {
  constructor(
    readonly enabled: boolean,
    private readonly grants: ReadonlyMap<string, ReadonlySet<string>>,
  ) {}

  /** What a role may do, as listed in the read model (`['*']` for everyone when RBAC is off). */
  permissionsOf(role: string): string[] {
    if (!this.enabled) return [ALL];
    return [...(this.grants.get(role) ?? [])].sort();
  }

  allows(role: string, permission: string): boolean {
    if (!this.enabled) return true;
    const granted = this.grants.get(role);
    return !!granted && (granted.has(ALL) || granted.has(permission));
  }
}

export async function loadRbac(db: ReadModelDb, enabled: boolean): Promise<Rbac> {
  const rows = await db.selectFrom('permissions').select(['role', 'permission']).execute();
  const grants = new Map<string, Set<string>>();
  for (const row of rows) {
    let set = grants.get(row.role);
    if (!set) grants.set(row.role, (set = new Set()));
    set.add(row.permission);
  }
  return new Rbac(enabled, grants);
}
