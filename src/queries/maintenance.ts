/** Reads of the maintenance read model (`maintenance_state`, src/projections/maintenance.ts). */
import { MAINTENANCE_ID, type MaintenanceState } from '../commands/maintenance/decider.js';
import type { ReadModelDb } from '../projections/runtime/projection.js';

export interface MaintenanceView extends MaintenanceState {
  changed_by: string | null;
  changed_at: string | null;
}

const EMPTY: MaintenanceView = { enabled: false, message: '', changed_by: null, changed_at: null };

export async function loadMaintenance(db: ReadModelDb): Promise<MaintenanceView> {
  const row = await db.selectFrom('maintenance_state').selectAll().where('id', '=', MAINTENANCE_ID).executeTakeFirst();
  if (!row) return EMPTY;
  return { enabled: row.enabled === 1, message: row.message, changed_by: row.changed_by, changed_at: row.changed_at };
}
