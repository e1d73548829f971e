/** Reads of the accounts read model (`tenants`, `users`; src/projections/accounts.ts). */
import type { TenantsTable, UsersTable } from '../adapters/sql/schema.js';
import type { ReadModelDb } from '../projections/runtime/projection.js';

export async function loadTenants(db: ReadModelDb, tenantId?: string): Promise<TenantsTable[]> {
  let query = db.selectFrom('tenants').selectAll();
  if (tenantId !== undefined) query = query.where('tenant_id', '=', tenantId);
  return query.orderBy('created_at').orderBy('tenant_id').execute();
}

export async function loadUsers(db: ReadModelDb, tenantId: string): Promise<UsersTable[]> {
  return db.selectFrom('users').selectAll().where('tenant_id', '=', tenantId).orderBy('created_at').orderBy('id').execute();
}

/** A user by id within a tenant; `tenantId` null searches every tenant (operators only). */
export async function loadUser(db: ReadModelDb, tenantId: string | null, id: string): Promise<UsersTable | undefined> {
  let query = db.selectFrom('users').selectAll().where('id', '=', id);
  if (tenantId !== null) query = query.where('tenant_id', '=', tenantId);
  return query.executeTakeFirst();
}

/** The login lookup: emails are unique across the installation, so this one is not tenant-scoped. */
export async function loadUserByEmail(db: ReadModelDb, normalizedEmail: string): Promise<UsersTable | undefined> {
  return db.selectFrom('users').selectAll().where('email', '=', normalizedEmail).executeTakeFirst();
}
