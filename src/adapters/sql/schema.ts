/**
 * Table types of the read-model database, for Kysely. Each projection owns its tables (see the
 * projection's file in src/projections/); this interface is their union. Migrations in
 * /migrations create them portably for SQLite, MySQL/MariaDB and PostgreSQL.
 *
 * Portability rules: booleans are 0/1 integers, timestamps are ISO-8601 strings, JSON is text.
 */
export interface ProjectionCheckpointsTable {
  name: string;
  /** Position of the last commit applied (0 = nothing yet). */
  position: number;
  /** Bumped by every rebuild; a projector holding an older generation must restart. */
  generation: number;
  /** Version of the projection code that built the table (a change triggers a rebuild). */
  version: number;
  updated_at: string;
}

export interface MaintenanceStateTable {
  id: string;
  enabled: number;
  message: string;
  changed_by: string | null;
  changed_at: string;
}

export interface ChannelsTable {
  id: string;
  tenant_id: string;
  name: string;
  type: string;
  base_url: string | null;
  key_sealed: string;
  key_masked: string;
  /** JSON array of model names. */
  models: string;
  /** JSON object alias -> upstream model. */
  model_mapping: string;
  priority: number;
  weight: number;
  enabled: number;
  /** JSON object of provider-specific settings. */
  config: string;
  healthy: number;
  cooldown_until: string | null;
  health_reason: string | null;
  last_test_ok: number | null;
  last_test_status: number | null;
  last_test_latency_ms: number | null;
  last_test_error: string | null;
  last_tested_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface ApiKeysTable {
  id: string;
  tenant_id: string;
  user_id: string;
  name: string;
  key_prefix: string;
  key_hash: string;
  /** JSON of KeyPolicy (src/commands/keys/events.ts). */
  policy: string;
  revoked: number;
  created_at: string;
  updated_at: string;
  revoked_at: string | null;
}

export interface TenantsTable {
  /** The tenant's id (the row is the tenant). */
  tenant_id: string;
  name: string;
  disabled: number;
  created_at: string;
  updated_at: string;
}

export interface UsersTable {
  id: string;
  tenant_id: string;
  /** Normalised (trimmed, lower-case); unique across the installation (reserved by the user decider). */
  email: string;
  /** scrypt, PHC string (src/auth/passwords.ts). */
  password_hash: string;
  role: string;
  disabled: number;
  mfa_enabled: number;
  /** SecretBox-sealed TOTP secret in force (null without MFA). */
  mfa_secret_sealed: string | null;
  /** SecretBox-sealed TOTP secret of an enrollment awaiting its first code. */
  mfa_pending_secret_sealed: string | null;
  mfa_recovery_codes_left: number;
  /** JSON object. */
  preferences: string;
  /** Set when the role changed after creation (the access live view tracks these users' roles). */
  role_changed_at: string | null;
  created_at: string;
  updated_at: string;
}

/** Installation-wide role definitions (seeded by migration). */
export interface RolesTable {
  name: string;
  description: string;
}

/** Role -> permission grants (seeded by migration); `*` grants everything. */
export interface PermissionsTable {
  role: string;
  permission: string;
}

export interface UserRolesTable {
  user_id: string;
  tenant_id: string;
  role: string;
}

export interface SessionsTable {
  id: string;
  tenant_id: string;
  user_id: string;
  /** SHA-256 hex of the refresh token in force. */
  refresh_token_hash: string;
  expires_at: string;
  revoked: number;
  revoked_at: string | null;
  revoke_reason: string | null;
  user_agent: string | null;
  ip: string | null;
  created_at: string;
  refreshed_at: string | null;
}

export interface KeyUsageTable {
  key_id: string;
  tenant_id: string;
  requests: number;
  total_tokens: number;
  updated_at: string;
}

export interface ReadModelTables {
  projection_checkpoints: ProjectionCheckpointsTable;
  maintenance_state: MaintenanceStateTable;
  channels: ChannelsTable;
  tenants: TenantsTable;
  users: UsersTable;
  roles: RolesTable;
  permissions: PermissionsTable;
  user_roles: UserRolesTable;
  sessions: SessionsTable;
  api_keys: ApiKeysTable;
  key_usage: KeyUsageTable;
}
