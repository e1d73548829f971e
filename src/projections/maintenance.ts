/**
 * Maintenance-mode read model: one row per installation (`maintenance_state`). Admins query it;
 * every instance also keeps it in memory (src/views/maintenance.ts) because every request checks it.
 */
import { MAINTENANCE_ID, maintenance } from '../commands/maintenance/decider.js';
import { MaintenanceEvent } from '../commands/maintenance/events.js';
import type { StoredEvent } from '../ports/event-store.js';
import { loadMaintenance, type MaintenanceView } from '../queries/maintenance.js';
import type { Projection } from './runtime/projection.js';

/** The state after one event: the table's row and the live view follow the same rule. */
export function foldMaintenance(view: MaintenanceView, stored: StoredEvent): MaintenanceView {
  const event = MaintenanceEvent.parse({ type: stored.type, data: stored.data });
  return { ...maintenance.evolve(view, event), changed_by: event.data.by, changed_at: stored.occurred_at };
}

export const maintenanceProjection: Projection = {
  name: 'maintenance',
  version: 1,
  eventTypes: ['MaintenanceEnabled', 'MaintenanceDisabled'],
  async apply(trx, event) {
    const current = await loadMaintenance(trx);
    const next = foldMaintenance(current, event);
    const row = { enabled: next.enabled ? 1 : 0, message: next.message, changed_by: next.changed_by, changed_at: next.changed_at ?? event.occurred_at };
    const updated = await trx.updateTable('maintenance_state').set(row).where('id', '=', MAINTENANCE_ID).executeTakeFirst();
    if (Number(updated.numUpdatedRows) === 0) await trx.insertInto('maintenance_state').values({ id: MAINTENANCE_ID, ...row }).execute();
  },
  async reset(trx) {
    await trx.deleteFrom('maintenance_state').execute();
  },
};
