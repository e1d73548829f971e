/**
 * This instance's live views as one group: built together, started in turn, stopped and waited
 * for together. Each member is a `LiveView` whose state the hot path reads (`views.keys.state`).
 */
import type { SqlDatabase } from '../adapters/sql/database.js';
import type { SecretBox } from '../crypto/secret-box.js';
import type { Logger } from '../logger.js';
import type { EventStore } from '../ports/event-store.js';
import { LiveView, type LiveViewOptions } from '../projections/runtime/live-view.js';
import type { MaintenanceView } from '../queries/maintenance.js';
import { accessLiveView, type AccessState } from './access.js';
import { billingLiveView, type BillingState } from './billing.js';
import { channelDirectoryView, type ChannelDirectory } from './channels.js';
import { keyDirectoryView, type KeyDirectory } from './keys.js';
import { maintenanceLiveView } from './maintenance.js';
import { activeSessionsView, type ActiveSessions } from './sessions.js';

export class LiveViews {
  readonly maintenance: LiveView<MaintenanceView>;
  readonly channels: LiveView<ChannelDirectory>;
  readonly access: LiveView<AccessState>;
  readonly sessions: LiveView<ActiveSessions>;
  readonly keys: LiveView<KeyDirectory>;
  readonly billing: LiveView<BillingState>;

  /** `secrets` opens the channels' keys; `options` apply to every view. */
  constructor(store: EventStore, sql: SqlDatabase, secrets: SecretBox, logger: Logger, options: LiveViewOptions) {
    this.maintenance = new LiveView(store, sql, maintenanceLiveView, logger, options);
    this.channels = new LiveView(store, sql, channelDirectoryView(secrets), logger, options);
    this.access = new LiveView(store, sql, accessLiveView, logger, options);
    this.sessions = new LiveView(store, sql, activeSessionsView(), logger, options);
    this.keys = new LiveView(store, sql, keyDirectoryView, logger, options);
    this.billing = new LiveView(store, sql, billingLiveView, logger, options);
  }

  private members() {
    return [this.maintenance, this.channels, this.access, this.sessions, this.keys, this.billing];
  }

  /** Starts the views one after the other. */
  async start(): Promise<void> {
    for (const view of this.members()) await view.start();
  }

  /** Stops every view, started or not. */
  async stop(): Promise<void> {
    await Promise.all(this.members().map((view) => view.stop()));
  }

  /** Resolves once every view has seen the commit at `position` (each with `LiveView.waitFor`'s timeout). */
  async waitFor(position: number, timeoutMs?: number): Promise<void> {
    await Promise.all(this.members().map((view) => view.waitFor(position, timeoutMs)));
  }
}
