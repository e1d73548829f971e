/** Every projection the runner drives, by name. Add a new one here after writing its file. */
import { channelsProjection } from './channels.js';
import { maintenanceProjection } from './maintenance.js';
import type { Projection } from './runtime/projection.js';

export const projections: readonly Projection[] = [maintenanceProjection, channelsProjection];
