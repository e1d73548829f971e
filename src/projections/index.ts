/** Every projection the runner drives, by name. Add a new one here after writing its file. */
import { SecretBox } from '../crypto/secret-box.js';
import { accountsProjection } from './accounts.js';
import { alertsProjection } from './alerts.js';
import { billingProjection } from './billing/projection.js';
import { channelsProjection } from './channels.js';
import { conversationsProjection } from './conversations.js';
import { filesProjection } from './files.js';
import { keyUsageProjection } from './key-usage.js';
import { keysProjection } from './keys.js';
import { logsProjection } from './logs.js';
import { maintenanceProjection } from './maintenance.js';
import { presetsProjection } from './presets.js';
import { responsesProjection } from './responses.js';
import type { Projection } from './runtime/projection.js';
import { sessionsProjection } from './sessions.js';
import { usageProjection } from './usage.js';
import { webhooksProjection } from './webhooks.js';

/**
 * What some projections need beyond their transaction: SECRET (conversations open data keys sealed
 * with it); the slow-request threshold (the logs projection; default 10 s).
 */
export interface ProjectionDeps {
  secret: string;
  logs?: { slowRequestMs: number };
}

export function projectionsOf(deps: ProjectionDeps): readonly Projection[] {
  return [
    maintenanceProjection,
    channelsProjection,
    accountsProjection,
    sessionsProjection,
    keysProjection,
    keyUsageProjection,
    presetsProjection,
    responsesProjection,
    billingProjection,
    usageProjection,
    conversationsProjection(new SecretBox(deps.secret, 'data-keys')),
    filesProjection(new SecretBox(deps.secret, 'data-keys')),
    alertsProjection,
    webhooksProjection,
    logsProjection({ slowRequestMs: deps.logs?.slowRequestMs ?? 10_000 }),
  ];
}
