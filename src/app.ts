/**
 * The composition root: opens the adapter of every port chosen by the configuration, applies
 * schema migrations, starts the projectors and live views, and builds the HTTP server.
 * Nothing else in the code base decides which adapter runs.
 */
import { ConfigError } from './errors.js';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Server } from 'node:http';
import type { AddressInfo, Server as NetServer } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { openCounters, openEventStore, openStorage } from './adapters/index.js';
import { openSqlDatabase, type SqlDatabase } from './adapters/sql/database.js';
import { migrateToLatest } from './adapters/sql/migrate.js';
import type { AppContext } from './api/context.js';
import { Metrics, startMetricsServer } from './api/metrics.js';
import { bodyLimitOf, buildServer } from './api/server.js';
import { createLeanRelayServer, createNodeRelayServer, type FrontServer } from './api/relay-server.js';
import { loadRbac } from './auth/rbac.js';
import { RecoveryCodeHasher } from './auth/recovery-codes.js';
import { createTokenService } from './auth/tokens.js';
import { bootstrap } from './bootstrap.js';
import { createDefaultChannels } from './bootstrap/default-channels.js';
import { CommandBus } from './commands/bus.js';
import type { Config } from './config.js';
import { checkOcrLanguages } from './files/processing/ocr-languages.js';
import { logHubOf, type Logger } from './logger.js';
import { startLogFiles, type LogFiles } from './logs/files/log-files.js';
import { slowRelayRequests, startResourceMetrics } from './logs/process-logs.js';
import { VERSION } from './version.js';
import type { ConnectionListener, Counters } from './ports/counters.js';
import type { EventStore } from './ports/event-store.js';
import { projectionsOf } from './projections/index.js';
import { SecretBox } from './crypto/secret-box.js';
import { SqlDataKeys } from './adapters/data-keys/sql.js';
import { checkSecret, dataLocation, SecretMismatchError } from './secrets/canary.js';
import { loadTenants, loadUser, loadUserByEmail, loadUsers } from './queries/accounts.js';
import { loadChannelRows } from './queries/channels.js';
import { seedQuotaCounters } from './queries/quota-counters.js';
import { pruneEndedSessions } from './queries/sessions.js';
import { admitPrincipal } from './auth/access-policy.js';
import { GeoLocator } from './relay/access/geo.js';
import { KeyGate } from './relay/access/key-gate.js';
import { BillingGate } from './relay/access/billing-gate.js';
import { foldUsage } from './views/billing.js';
import { LiveViews } from './views/index.js';
import { loadMaintenance } from './queries/maintenance.js';
import { defaultBuiltinPresetsDir, publishBuiltinPresets } from './presets/builtin.js';
import { ChannelHealth } from './relay/channel-health.js';
import { ChannelLimits } from './relay/channel-limits.js';
import { Relay } from './relay/relay.js';
import { RelayGate } from './relay/gate.js';
import { Callers } from './relay/access/caller.js';
import { chatCompletionsIngress } from './relay/ingress/chat-completions.js';
import { Router } from './relay/router.js';
import { UpstreamPools } from './relay/upstream-pool.js';
import { UsagePublisher } from './relay/usage-publisher.js';
import { ProjectionRunner } from './projections/runtime/runner.js';
import { ProjectorThread, type Projectors } from './projections/runtime/projectors.js';
import { FileService } from './files/service.js';
import { openFileProcessor } from './files/processing/index.js';
import { FileProcessingRunner } from './files/processing/runner.js';
import { AlertEvaluator } from './alerts/evaluator.js';
import { WebhookDispatcher } from './webhooks/dispatcher.js';
import { logAppendedEvents } from './logs/event-log.js';
import { LogIndexBatcher } from './logs/index/batcher.js';
import { pruneLogIndex, SqlLogIndex } from './logs/index/sql-index.js';

export interface App {
  ctx: AppContext;
  server: FastifyInstance;
  /** Starts the HTTP and metrics listeners; resolves with their base URLs. */
  listen(): Promise<{ url: string; metricsUrl: string | null }>;
  close(): Promise<void>;
  /** The day's category files under LOG_DIR (null when LOG_FILES_ENABLED is false). */
  logFiles: LogFiles | null;
}

export interface AppOptions {
  /** Now, in ms, for time-based work that tests move by days (log files' day change and retention). */
  clock?: () => number;
  /** Append nothing at start (no root admin, default channels or built-in presets): an import's dry run. */
  noStartupWrites?: boolean;
}

export interface Stores {
  store: EventStore;
  sql: SqlDatabase;
  counters: Counters;
}

/** Opens the three stores (and migrates the read-model schema). Closes what it opened on failure. */
export async function openStores(config: Config, logger: Logger): Promise<Stores> {
  if (config.eventStore.kind === 'sqlite' || config.readModels.kind === 'sqlite') mkdirSync(config.dirs.data, { recursive: true });
  const opened: Array<{ close(): Promise<void> }> = [];
  try {
    const store = await openEventStore(config.eventStore, dependencyLog(logger, 'bus', config.eventStore.kind));
    opened.push(store);
    const sql = await openSqlDatabase(config.readModels);
    opened.push(sql);
    const applied = await migrateToLatest(sql.db);
    if (applied.length > 0) logger.info({ migrations: applied }, 'schema migrated');
    const counters = await openCounters(config.counters, dependencyLog(logger, 'cache', config.counters.kind));
    opened.push(counters);
    return { store, sql, counters };
  } catch (error) {
    for (const o of opened.reverse()) await o.close().catch(() => undefined);
    throw error;
  }
}

/** System entries for a store's connection going down and coming back (`dependency_down` / `dependency_up`). */
function dependencyLog(logger: Logger, component: 'bus' | 'cache', kind: string): ConnectionListener {
  const log = logger.child({ category: 'system', component });
  return (state, detail) => {
    if (state === 'down') log.error({ event: 'dependency_down', kind, reason: detail }, `${component} (${kind}) connection lost; reconnecting`);
    else log.warn({ event: 'dependency_up', kind }, `${component} (${kind}) connection is back`);
  };
}

function modeOf(config: Config): AppContext['mode'] {
  const embedded = [config.eventStore.kind === 'sqlite', config.readModels.kind === 'sqlite', config.counters.kind === 'memory'];
  if (embedded.every(Boolean)) return 'embedded';
  if (embedded.every((e) => !e)) return 'distributed';
  return 'mixed';
}

export async function createApp(config: Config, logger: Logger, options: AppOptions = {}): Promise<App> {
  // Before anything opens: a configured OCR language without data stops startup, naming it.
  if (config.files.engine === 'builtin' && config.files.ocr.enabled) checkOcrLanguages(config.files.ocr);
  const logHub = logHubOf(logger);
  const systemLog = logger.child({ category: 'system' });
  const stores = await openStores(config, logger).catch((error: unknown) => {
    systemLog.fatal({ component: 'database', event: 'dependency_failed', err: error }, 'could not open the stores');
    throw error;
  });
  // Before anything opens a sealed value: a SECRET that does not open the data stops startup, in one line.
  await checkSecret(stores.sql, config.secret, dataLocation(config)).catch(async (error: unknown) => {
    if (error instanceof SecretMismatchError) systemLog.fatal({ component: 'app', event: 'secret_mismatch' }, error.message);
    else systemLog.fatal({ component: 'database', event: 'dependency_failed', err: error }, 'could not check the SECRET against the data');
    await Promise.all([stores.store.close(), stores.sql.close(), stores.counters.close()]);
    throw error;
  });
  // Only the server writes log files (one-shot commands log to stderr alone); from here on, every entry reaches them.
  const logFiles: LogFiles | null = config.logs.files
    ? startLogFiles({
        hub: logHub,
        dir: config.dirs.logs,
        config: config.logs,
        clock: options.clock,
        onError: (error, what) => systemLog.error({ component: 'log_files', event: 'log_files_failed', err: error }, what),
        onRetention: (done) => {
          if (done.compressed + done.archived + done.deleted > 0) systemLog.info({ component: 'jobs', event: 'log_retention', ...done }, `log retention: ${done.compressed} compressed, ${done.archived} days archived, ${done.deleted} removed`);
        },
      })
    : null;
  // Renamed and removed variables (2.0), once per start (in the log files too); the message names the variable, never its value.
  for (const warning of config.warnings) systemLog.warn({ component: 'config', event: 'config_warning', variable: warning.variable }, warning.message);
  const { store, sql, counters } = stores;
  const metrics = new Metrics();
  const projectionsLog = logger.child({ component: 'projections' });
  const runner: Projectors = config.projectorsThread ? new ProjectorThread(config, projectionsLog) : new ProjectionRunner(store, sql.db, projectionsOf(config), projectionsLog);
  // Its failures are appends to the event log (the bus in distributed mode) and its journal.
  const usage = new UsagePublisher(store, logger.child({ component: 'bus' }), {
    journalDir: join(config.dirs.data, 'usage-journal'),
    journalWait: config.usageJournal.wait,
    journalFsyncMs: config.usageJournal.fsyncMs,
    journalSegmentBytes: config.usageJournal.segmentBytes,
    legacySpoolDir: join(config.dirs.data, 'spool'),
    onDeadLetter: () => metrics.usageDeadLettered.inc(),
  });
  metrics.watchUsagePublisher(usage);
  const secrets = new SecretBox(config.secret);
  // This instance's usage events reach its billing view as the relay publishes them, so admission
  // sees a request's cost at once; the views skip them when the log hands them back, so the
  // serving thread never parses its own usage commits (only the billing view folds usage events).
  const views = new LiveViews(store, sql, secrets, projectionsLog, { skipEventsOf: (stream) => stream === usage.stream, snapshotEvery: config.retention.liveViewSnapshotEvery });
  usage.addSink('billing view', (data) => foldUsage(views.billing.state, data));
  metrics.watchRelay(usage, () => views.channels.state, () => views.channels.eventsFolded);
  usage.addSink('slow requests', slowRelayRequests(logger, config.logs.slowRequestMs));
  const commands = new CommandBus(store, metrics);
  commands.onAppended(logAppendedEvents(logger, { slowRequestMs: config.logs.slowRequestMs }));
  const mode = modeOf(config);
  if (mode === 'mixed') logger.warn({ eventStore: config.eventStore.kind, readModels: config.readModels.kind, counters: config.counters.kind }, 'mixed mode: only run one instance');

  try {
    await runner.start();
    await views.start();
    // Quota counters are not durable: put back what each key has spent (from the billing read model).
    await runner.waitFor(await store.headPosition(), { projections: ['key_usage', 'billing'], timeoutMs: 60_000 }).catch(() => undefined);
    await seedQuotaCounters(sql.db, counters);
    // First start: the default tenant and the root admin, projected before the first login.
    const bootstrapped = options.noStartupWrites ? 0 : await bootstrap(store, commands, config, logger);
    // <PROVIDER>_API_KEY variables: a channel each when the default tenant has none yet, routable before serving.
    const channelsCreated = await createDefaultChannels(options.noStartupWrites ? [] : config.defaultChannels, {
      commands,
      db: sql.db,
      secrets,
      logger,
      channelsCaughtUp: async () => runner.waitFor(await store.headPosition(), { projections: ['channels'], timeoutMs: 60_000 }),
    });
    if (channelsCreated > 0) await Promise.all([runner.waitFor(channelsCreated, { projections: ['channels'] }), views.channels.waitFor(channelsCreated)]);
    // Built-in presets new or newer in the data files (once across instances), projected before serving.
    const presetsPublished = options.noStartupWrites ? { position: null } : await publishBuiltinPresets(commands, config.presets.builtinDir ?? defaultBuiltinPresetsDir(), logger);
    if (presetsPublished.position !== null) await runner.waitFor(presetsPublished.position, { projections: ['presets'], timeoutMs: 60_000 });
    if (bootstrapped > 0) {
      // Every projection and view past the bootstrap commits before the first request.
      await Promise.all([runner.waitFor(bootstrapped), views.waitFor(bootstrapped)]);
    }
  } catch (error) {
    systemLog.fatal({ component: 'app', event: 'startup_failed', err: error }, 'startup failed');
    await views.stop();
    await runner.stop();
    await Promise.all([store.close(), sql.close(), counters.close()]);
    await logFiles?.close();
    throw error;
  }

  const pools = new UpstreamPools(config.upstreamHttp, config.relay, { queueTimedOut: (origin) => metrics.upstreamBusy.inc({ origin }) });
  const health = new ChannelHealth(commands, counters, () => views.channels.state, config.relay, logger);
  if (config.healthCheckEnabled) health.startProber(pools);
  usage.start();
  const billing = new BillingGate(() => views.billing.state);
  const keyGate = new KeyGate(counters, await GeoLocator.open(config.access.geoipDatabase, config.access.geoipCountryHeader), config.access.trustedProxies, Math.max(config.relay.timeoutMs, 600_000), logger, billing, config.access.quotaReserveCompletionTokens);
  const relay = new Relay({
    router: new Router(() => views.channels.state),
    pools,
    health,
    settings: config.relay,
    logger,
    limits: new ChannelLimits(counters),
    tenantSettings: (tenantId) => billing.settings(tenantId).relay_settings,
  });

  const tokens = createTokenService(config);
  // Every authenticated request: refused at once when the user is not one of the token's tenant or
  // is disabled, its tenant is disabled, or its session is revoked or ended, on any instance; a
  // changed role applies without a new token. Memory only. A user or session not in the views (a
  // login on another instance a moment ago) is decided again once both views have reached the
  // log's head, then refused if still unknown.
  tokens.useAccessPolicy(
    (principal) => admitPrincipal(principal, views.access.state, views.sessions.state),
    async () => {
      const head = await store.headPosition();
      await Promise.all([views.access.waitFor(head, 2000), views.sessions.waitFor(head, 2000)]);
    },
  );
  const rbac = await loadRbac(sql.db, config.auth.rbacEnabled);
  // Files (issue 18) before the gate: chat requests use them (file parts).
  const dataKeys = new SqlDataKeys(sql, new SecretBox(config.secret, 'data-keys'));
  const storage = await openStorage(config.files.storage);
  const fileService = new FileService({ commands, storage, db: sql.db, dataKeys, runner, config: config.files, logger, quotaOf: (tenantId) => billing.settings(tenantId).storage_quota_bytes });
  const processor = await openFileProcessor(config, logger);
  const processing = processor ? new FileProcessingRunner({ commands, storage, db: sql.db, processor, config: config.files, tmpDir: join(config.dirs.data, 'tmp'), logger }) : null;
  // Webhook deliveries (issue 19): every instance sends the due ones, claimed one attempt at a time.
  const webhooks = new WebhookDispatcher({ db: sql.db, secrets: new SecretBox(config.secret, 'webhook-secrets'), settings: config.webhooks, logger });
  // The searchable log index (issue 19): process entries from the hub, batched into the read-model
  // database (entries derived from events are the logs projection's, published with index: false).
  const logIndex = new LogIndexBatcher(new SqlLogIndex(sql.db), {
    minLevel: config.logs.indexLevel,
    onTrouble: ({ state, error, dropped, queued }) => {
      if (state === 'failing') systemLog.warn({ component: 'log_index', event: 'log_index_failing', err: error, dropped, queued }, 'log index: writes fail, entries wait in memory (bounded)');
      else systemLog.info({ component: 'log_index', event: 'log_index_recovered', dropped, queued }, 'log index: writes work again');
    },
  });
  const unsubscribeLogIndex = logHub.subscribe((entry, { index }) => {
    if (index) logIndex.push(entry);
  });
  const gate = new RelayGate({
    callers: new Callers(keyGate, () => views.keys.state, tokens, rbac, () => views.access.state),
    keyGate,
    billing,
    relay,
    usage,
    ingress: { chatCompletions: chatCompletionsIngress(sql.db, fileService) },
  });

  // Alert rules: every instance reports its spool depth; the one holding the lease evaluates.
  const alerts = config.alerts.enabled
    ? new AlertEvaluator({ db: sql.db, counters, commands, projections: () => runner.status(), spoolDepth: () => usage.depth, metrics, logger, intervalMs: config.alerts.evaluationIntervalMs })
    : null;
  const ctx: AppContext = {
    config,
    logger,
    mode,
    store,
    sql,
    counters,
    commands,
    runner,
    views,
    queries: {
      maintenance: () => loadMaintenance(sql.db),
      channels: (tenantId) => loadChannelRows(sql.db, tenantId),
      channel: (tenantId, id) => sql.db.selectFrom('channels').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst(),
      tenants: (tenantId) => loadTenants(sql.db, tenantId),
      users: (tenantId) => loadUsers(sql.db, tenantId),
      user: (tenantId, id) => loadUser(sql.db, tenantId, id),
      userByEmail: (email) => loadUserByEmail(sql.db, email),
      session: (id) => sql.db.selectFrom('sessions').selectAll().where('id', '=', id).executeTakeFirst(),
    },
    secrets,
    dataKeys,
    keyGate,
    billing,
    gate,
    pools,
    health,
    usage,
    tokens,
    rbac,
    mfa: { secrets: new SecretBox(config.secret, 'mfa-secrets'), recoveryCodes: new RecoveryCodeHasher(config.secret) },
    metrics,
    files: { service: fileService, storage, processing, attachments: fileService },
    alerts,
    webhooks,
    logs: { hub: logHub, index: logIndex },
  };
  const server = await buildServer(ctx);
  // Files a dead instance left waiting or half-processed (processed in the background).
  if (processing) {
    await runner.waitFor(await store.headPosition(), { projections: ['files'], timeoutMs: 60_000 }).catch(() => undefined);
    const picked = await processing.pickUp();
    if (picked > 0) logger.info({ files: picked }, 'file processing picked up files left by an earlier run');
  }
  webhooks.start();
  let metricsServer: Server | null = null;
  /** The front server on the public port, in front of fastify (RELAY_HTTP_SERVER lean or node). */
  let front: FrontServer | null = null;
  // Ended sessions leave the sessions table (every instance may do it: the delete is idempotent).
  let pruning: Promise<void> = Promise.resolve();
  const jobsLog = logger.child({ category: 'system', component: 'jobs', event: 'session_pruning' });
  const sessionRetention = setInterval(() => {
    pruning = pruneEndedSessions(sql.db, config.auth.jwtExpireMs).then(
      (removed) => {
        if (removed > 0) jobsLog.debug({ removed }, 'ended sessions removed');
      },
      (error: unknown) => jobsLog.warn({ err: error }, 'could not remove ended sessions'),
    );
  }, config.auth.sessionRetentionIntervalMs);
  sessionRetention.unref();
  alerts?.start();
  const stopResourceMetrics = startResourceMetrics(logger, config.logs.resourceMetricsIntervalMs, () => runner.status());
  systemLog.info(
    { component: 'app', event: 'startup', version: VERSION, mode, eventStore: config.eventStore.kind, readModels: config.readModels.kind, counters: config.counters.kind, logFiles: config.logs.files ? config.dirs.logs : null },
    `switchyard ${VERSION} started (${mode})`,
  );
  // Searchable log entries past their retention (idempotent: every instance may run it).
  let logPruning: Promise<void> = Promise.resolve();
  const logRetention = setInterval(() => {
    logPruning = pruneLogIndex(sql.db, config.logs.retentionDays, new Date()).then(
      (removed) => {
        if (removed > 0) systemLog.info({ component: 'jobs', event: 'log_retention', removed }, 'expired log entries removed from the index');
      },
      (error: unknown) => systemLog.warn({ component: 'jobs', event: 'log_retention', err: error }, 'could not remove expired log entries'),
    );
  }, config.logs.retentionIntervalMs);
  logRetention.unref();

  return {
    ctx,
    server,
    logFiles,
    async listen() {
      let url: string;
      const kind = config.server.httpServer;
      try {
        if (kind !== 'fastify') {
          await server.ready();
          const create = kind === 'lean' ? createLeanRelayServer : createNodeRelayServer;
          const created = create(ctx, server.server, bodyLimitOf(config));
          front = created;
          url = await listenOn(created, listenOptionsOf(config));
        } else {
          url = await server.listen(listenOptionsOf(config));
        }
      } catch (error) {
        throw listenError(error, 'SERVER_PORT', config.server.host, config.server.port);
      }
      let metricsUrl: string | null = null;
      if (config.metrics.enabled) {
        metricsServer = await startMetricsServer(metrics, config.server.host, config.metrics.port, async () => {
          metrics.sampleUpstreams(pools.stats());
          for (const s of await runner.status()) {
            metrics.projectionLag.set({ projection: s.name }, s.lag);
            metrics.projectionQuarantined.set({ projection: s.name }, s.quarantined);
          }
        }).catch((error: unknown) => {
          throw listenError(error, 'METRICS_PORT', config.server.host, config.metrics.port);
        });
        const address = metricsServer.address();
        const port = typeof address === 'object' && address ? address.port : config.metrics.port;
        metricsUrl = `http://${config.server.host === '0.0.0.0' ? '127.0.0.1' : config.server.host}:${port}`;
      }
      return { url: url.replace('0.0.0.0', '127.0.0.1'), metricsUrl };
    },
    async close() {
      systemLog.info({ component: 'app', event: 'shutdown' }, 'switchyard is stopping');
      stopResourceMetrics();
      clearInterval(sessionRetention);
      clearInterval(logRetention);
      await pruning;
      // Before the stores close: a round in progress finishes and the lease goes to another instance.
      await alerts?.close();
      await logPruning;
      // No new connections; idle keep-alive ones close; those fastify took over close with it.
      const frontClosed = front ? new Promise<void>((resolve) => front!.close(() => resolve())) : Promise.resolve();
      front?.closeIdleConnections();
      await server.close();
      await frontClosed;
      if (metricsServer) await new Promise<void>((resolve) => metricsServer!.close(() => resolve()));
      health.stop();
      // Health changes the last requests caused still reach the log, like their usage events.
      await health.settled();
      await usage.close();
      await processing?.close();
      await webhooks.close();
      await pools.close();
      // The last entries reach the index before its database closes.
      unsubscribeLogIndex();
      await logIndex.close();
      await views.stop();
      await runner.stop();
      await counters.close();
      await sql.close();
      await store.close();
      await storage.close();
      // Last: every entry the shutdown wrote is in its file.
      await logFiles?.close();
    },
  };
}

/**
 * How the public port listens, on either server. The backlog is raised from Node's 511: a burst of
 * thousands of connections overflowed it (the kernel caps it at net.core.somaxconn).
 */
/** A port that cannot be listened on, said in one line naming the setting (the CLI prints ConfigErrors as they are). */
function listenError(error: unknown, setting: 'SERVER_PORT' | 'METRICS_PORT', host: string, port: number): unknown {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'EADDRINUSE') return new ConfigError(`${setting}: port ${port} on ${host} is already in use by another process: stop it or set ${setting} to a free port${setting === 'METRICS_PORT' ? ' (9090 is also Prometheus\'s own default port)' : ''}`);
  if (code === 'EACCES') return new ConfigError(`${setting}: not allowed to listen on port ${port} (ports below 1024 need privileges): set ${setting} to a port of 1024 or more`);
  if (code === 'EADDRNOTAVAIL') return new ConfigError(`HOST: ${host} is not an address of this machine (${setting} ${port})`);
  return error;
}

export function listenOptionsOf(config: Config): { host: string; port: number; backlog: number } {
  return { host: config.server.host, port: config.server.port, backlog: config.server.listenBacklog };
}

/** Starts `server` listening; resolves with its base URL (as fastify's listen does). */
function listenOn(server: NetServer, options: { host: string; port: number; backlog: number }): Promise<string> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options, () => {
      server.off('error', reject);
      const address = server.address() as AddressInfo;
      const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      resolve(`http://${shown}:${address.port}`);
    });
  });
}
