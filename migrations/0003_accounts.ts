/**
 * Tenants, users and sessions read models, and the RBAC tables.
 * `roles` and `permissions` are installation-wide definitions seeded here; `user_roles` is filled
 * by the accounts projection. Portable across SQLite, MySQL/MariaDB and PostgreSQL.
 */
import type { Kysely } from 'kysely';

/** The seed as of this migration; later changes to roles get their own migration. */
const ROLES = [
  { name: 'admin', description: 'Administers its tenant (and, in the default tenant, the installation)' },
  { name: 'user', description: 'Uses chat, files, presets and its own API keys' },
];
const PERMISSIONS = [
  { role: 'admin', permission: '*' },
  { role: 'user', permission: 'chat:use' },
  { role: 'user', permission: 'files:upload' },
  { role: 'user', permission: 'presets:read' },
  { role: 'user', permission: 'presets:write' },
  { role: 'user', permission: 'keys:manage_own' },
];

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('tenants')
    .addColumn('tenant_id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('name', 'varchar(200)', (c) => c.notNull())
    .addColumn('disabled', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'varchar(40)', (c) => c.notNull())
    .addColumn('updated_at', 'varchar(40)', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('users')
    .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('tenant_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('email', 'varchar(254)', (c) => c.notNull())
    .addColumn('password_hash', 'varchar(255)', (c) => c.notNull())
    .addColumn('role', 'varchar(32)', (c) => c.notNull())
    .addColumn('disabled', 'integer', (c) => c.notNull())
    .addColumn('mfa_enabled', 'integer', (c) => c.notNull())
    .addColumn('mfa_secret_sealed', 'text')
    .addColumn('mfa_pending_secret_sealed', 'text')
    .addColumn('mfa_recovery_codes_left', 'integer', (c) => c.notNull())
    .addColumn('preferences', 'text', (c) => c.notNull())
    .addColumn('role_changed_at', 'varchar(40)')
    .addColumn('created_at', 'varchar(40)', (c) => c.notNull())
    .addColumn('updated_at', 'varchar(40)', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('users_by_email').on('users').column('email').execute();
  await db.schema.createIndex('users_by_tenant').on('users').columns(['tenant_id', 'created_at']).execute();

  await db.schema
    .createTable('roles')
    .addColumn('name', 'varchar(32)', (c) => c.primaryKey())
    .addColumn('description', 'varchar(200)', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('permissions')
    .addColumn('role', 'varchar(32)', (c) => c.notNull())
    .addColumn('permission', 'varchar(64)', (c) => c.notNull())
    .addPrimaryKeyConstraint('permissions_pk', ['role', 'permission'])
    .execute();
  await db.schema
    .createTable('user_roles')
    .addColumn('user_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('tenant_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('role', 'varchar(32)', (c) => c.notNull())
    .addPrimaryKeyConstraint('user_roles_pk', ['user_id', 'role'])
    .execute();
  await db.schema.createIndex('user_roles_by_tenant').on('user_roles').columns(['tenant_id', 'role']).execute();

  const seed = db as unknown as Kysely<{ roles: { name: string; description: string }; permissions: { role: string; permission: string } }>;
  await seed.insertInto('roles').values(ROLES).execute();
  await seed.insertInto('permissions').values(PERMISSIONS).execute();

  await db.schema
    .createTable('sessions')
    .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('tenant_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('user_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('refresh_token_hash', 'varchar(64)', (c) => c.notNull())
    .addColumn('expires_at', 'varchar(40)', (c) => c.notNull())
    .addColumn('revoked', 'integer', (c) => c.notNull())
    .addColumn('revoked_at', 'varchar(40)')
    .addColumn('revoke_reason', 'varchar(40)')
    .addColumn('user_agent', 'varchar(255)')
    .addColumn('ip', 'varchar(64)')
    .addColumn('created_at', 'varchar(40)', (c) => c.notNull())
    .addColumn('refreshed_at', 'varchar(40)')
    .execute();
  await db.schema.createIndex('sessions_by_user').on('sessions').columns(['tenant_id', 'user_id']).execute();
  await db.schema.createIndex('sessions_by_revocation').on('sessions').columns(['revoked', 'revoked_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['sessions', 'user_roles', 'permissions', 'roles', 'users', 'tenants']) await db.schema.dropTable(table).execute();
}
