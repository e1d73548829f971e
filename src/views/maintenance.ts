/** Maintenance mode in memory on every instance: every request checks it. */
import { foldMaintenance, maintenanceProjection } from '../projections/maintenance.js';
import type { LiveViewDefinition } from '../projections/runtime/live-view.js';
import { loadMaintenance, type MaintenanceView } from '../queries/maintenance.js';

export const maintenanceLiveView: LiveViewDefinition<MaintenanceView> = {
  projection: maintenanceProjection,
  snapshot: { version: 1 },
  load: loadMaintenance,
  evolve: foldMaintenance,
};
