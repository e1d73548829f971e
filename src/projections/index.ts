/** Every projection the runner drives, by name. Add a new one here after writing its file. */
import { accountsProjection } from './accounts.js';
import { billingProjection } from './billing/projection.js';
import { channelsProjection } from './channels.js';
import { keyUsageProjection } from './key-usage.js';
import { keysProjection } from './keys.js';
import { maintenanceProjection } from './maintenance.js';
import { presetsProjection } from './presets.js';
import { responsesProjection } from './responses.js';
import type { Projection } from './runtime/projection.js';
import { sessionsProjection } from './sessions.js';
import { usageProjection } from './usage.js';

export const projections: readonly Projection[] = [maintenanceProjection, channelsProjection, accountsProjection, sessionsProjection, keysProjection, keyUsageProjection, presetsProjection, responsesProjection, billingProjection, usageProjection];
