/** Everything the HTTP layer may use, built once by src/app.ts (the composition root). */
import type { SqlDatabase } from '../adapters/sql/database.js';
import type { Rbac } from '../auth/rbac.js';
import type { RecoveryCodeHasher } from '../auth/recovery-codes.js';
import type { TokenService } from '../auth/tokens.js';
import type { CommandBus } from '../commands/bus.js';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import type { Counters } from '../ports/counters.js';
import type { DataKeys } from '../ports/data-keys.js';
import type { EventStore } from '../ports/event-store.js';
import type { ChannelsTable, SessionsTable, TenantsTable, UsersTable } from '../adapters/sql/schema.js';
import type { SecretBox } from '../crypto/secret-box.js';
import type { KeyGate } from '../relay/access/key-gate.js';
import type { BillingGate } from '../relay/access/billing-gate.js';
import type { MaintenanceView } from '../queries/maintenance.js';
import type { ChannelHealth } from '../relay/channel-health.js';
import type { RelayGate } from '../relay/gate.js';
import type { UpstreamPools } from '../relay/upstream-pool.js';
import type { UsagePublisher } from '../relay/usage-publisher.js';
import type { Projectors } from '../projections/runtime/projectors.js';
import type { LiveViews } from '../views/index.js';
import type { Metrics } from './metrics.js';
import type { FileAttachments } from '../files/attachments.js';
import type { FileProcessingRunner } from '../files/processing/runner.js';
import type { FileService } from '../files/service.js';
import type { Storage } from '../ports/storage.js';
import type { AlertEvaluator } from '../alerts/evaluator.js';
import type { WebhookDispatcher } from '../webhooks/dispatcher.js';
import type { LogHub } from '../logs/hub.js';
import type { LogIndexBatcher } from '../logs/index/batcher.js';

export interface AppContext {
  config: Config;
  logger: Logger;
  /** embedded: SQLite + memory; distributed: servers for all three stores; mixed: anything else. */
  mode: 'embedded' | 'distributed' | 'mixed';
  store: EventStore;
  sql: SqlDatabase;
  counters: Counters;
  commands: CommandBus;
  runner: Projectors;
  views: LiveViews;
  /** Query side: reads of projected read models (never the event log). */
  queries: {
    maintenance(): Promise<MaintenanceView>;
    channels(tenantId: string): Promise<ChannelsTable[]>;
    channel(tenantId: string, id: string): Promise<ChannelsTable | undefined>;
    /** Every tenant, or only `tenantId`'s row. */
    tenants(tenantId?: string): Promise<TenantsTable[]>;
    users(tenantId: string): Promise<UsersTable[]>;
    /** `tenantId` null: any tenant (operators). */
    user(tenantId: string | null, id: string): Promise<UsersTable | undefined>;
    userByEmail(normalizedEmail: string): Promise<UsersTable | undefined>;
    session(id: string): Promise<SessionsTable | undefined>;
  };
  secrets: SecretBox;
  /** Per-scope keys of deletable texts (conversations: src/conversations/texts.ts), outside the log. */
  dataKeys: DataKeys;
  /** Checks API keys on the relay (see src/relay/access/key-gate.ts). */
  keyGate: KeyGate;
  /** Billing on the relay: relay_disabled, admission (insufficient_quota), prices (see src/relay/access/billing-gate.ts). */
  billing: BillingGate;
  /** Every relay request passes it (src/relay/gate.ts). */
  gate: RelayGate;
  pools: UpstreamPools;
  health: ChannelHealth;
  usage: UsagePublisher;
  tokens: TokenService;
  rbac: Rbac;
  /** TOTP secrets sealed at rest, recovery codes hashed. */
  mfa: { secrets: SecretBox; recoveryCodes: RecoveryCodeHasher };
  metrics: Metrics;
  /** Uploaded files (issue 18): the service behind /v1/files, its storage, background processing (null: FILE_PROCESSING_ENGINE=none), and files for chat. */
  files: { service: FileService; storage: Storage; processing: FileProcessingRunner | null; attachments: FileAttachments };
  /** Alert rules evaluated under a lease (issue 19); null when ALERTS_ENABLED=false. */
  alerts: AlertEvaluator | null;
  /** Sends webhook deliveries from the outbox (issue 19; src/webhooks/dispatcher.ts). */
  webhooks: WebhookDispatcher;
  /** Operational logs (issue 19): the hub entries are published to, and the batching writer of the searchable index. */
  logs: { hub: LogHub; index: LogIndexBatcher };
}
