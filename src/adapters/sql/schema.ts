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

export interface ReadModelTables {
  projection_checkpoints: ProjectionCheckpointsTable;
  maintenance_state: MaintenanceStateTable;
  channels: ChannelsTable;
}
