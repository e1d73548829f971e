/**
 * Audit: rebuild the audited read models (usage, billing; src/audit/tables.ts) from the event log
 * alone into a scratch SQLite database, and compare them with the live ones for one tenant and
 * period; and list, from the log, every event that changed a user's or a key's usage or balance.
 *
 * The comparison is made at one log position per projection: the live checkpoints are read in a
 * repeatable-read transaction that stays open until the live tables have been compared, so the
 * live side is one snapshot. The scratch copy is fed the same Projection objects by a
 * ProjectionRunner's `catchUpOnce`, up to exactly those positions, from the latest audit snapshot
 * that fits (./snapshots.ts) or else from the log's beginning (state before `from` matters: a
 * balance is the sum of everything before it). Live traffic during an audit therefore cannot show
 * up as a difference, and neither can a projection lagging behind the log: only rows that
 * disagree with the log do.
 *
 * Bounded memory whatever the log's size: the log is read through `auditEventSource` in batches
 * sized by events (./source.ts), the scratch database is a file, and the tables are compared a
 * page at a time in key order (./compare.ts). Progress goes to `progress` (the CLI: stderr).
 */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MysqlAdapter, PostgresAdapter, sql } from 'kysely';
import { openSqlDatabase, type SqlDatabase, type SqlDialectName } from '../adapters/sql/database.js';
import { migrateToLatest } from '../adapters/sql/migrate.js';
import type { Logger } from '../logger.js';
import type { EventStore, StoredEvent } from '../ports/event-store.js';
import type { Projection, ReadModelDb } from '../projections/runtime/projection.js';
import { ProjectionRunner } from '../projections/runtime/runner.js';
import { quarantineFindings, type QuarantineFinding } from './quarantine.js';
import { compareTable, type AnyDb, type AuditScope, type CompareCounters, type TableReport } from './compare.js';
import { restoreSnapshot, saveSnapshot, type SnapshotStore } from './snapshots.js';
import { ownValue } from '../own.js';
import { replayStore } from './source.js';
import { auditedProjections as defaultAudited, type AuditedProjection } from './tables.js';

export interface AuditReport {
  tenant_id: string;
  from: string;
  to: string;
  /** The log position each projection was compared at (its live checkpoint). */
  projections: Array<{ name: string; position: number }>;
  tables: TableReport[];
  /** Events the audited projections quarantined (./quarantine.ts): each one is a difference. */
  quarantined: QuarantineFinding[];
  /** Sum over the tables, plus the quarantined events: 0 means the live read models agree with the log, to the unit. */
  differences: number;
  /** How the replay was made: from which snapshot, how many events it replayed. */
  replay: ReplaySummary;
}

export interface ReplaySummary {
  /** The snapshot the replay continued from (null: from the log's beginning), with its positions. */
  from_snapshot: { id: string; positions: Record<string, number> } | null;
  /** Snapshots that fitted but whose seal did not match their contents: not used. */
  rejected_snapshots: string[];
  /** Events the replay applied (all projections). */
  events_replayed: number;
  /** The snapshot this audit saved (null: none). */
  saved_snapshot: string | null;
}

/** How audits page, where their scratch files and snapshots go (src/config.ts `audit`). */
export interface AuditSettings {
  /** Scratch files (and, under snapshots/, snapshots) go here. */
  dir: string;
  /** Rows per page and side when comparing. */
  pageSize: number;
  /** Save a snapshot after a replay of at least this many events (0: never). */
  snapshotEvery: number;
  snapshotsKept: number;
  /** SECRET: snapshots are sealed with a key derived from it. */
  secret: string;
}

export interface AuditDeps {
  store: EventStore;
  /** The live read-model database. */
  live: ReadModelDb;
  /** Its dialect (how it orders text keys and which page query it gets). Default: told by its Kysely adapter. */
  liveDialect?: SqlDialectName;
  /**
   * Opens a connection of the audit's own to the live database (embedded SQLite: the audit's
   * long read transaction must not hold the application's one connection). Absent: `live`.
   */
  openLiveReader?: () => Promise<SqlDatabase>;
  logger: Logger;
  /** Progress lines (events replayed, rows compared). Default: `logger`. */
  progress?: Logger;
  /** Each projection's replay as it goes (the CLI draws it: src/progress.ts); `done` once at its end. */
  onReplay?: (projection: string, position: number, target: number, done: boolean) => void;
  /** Every registered projection (src/projections/index.ts). */
  projections: readonly Projection[];
  /** What to audit (default: src/audit/tables.ts). */
  audited?: readonly AuditedProjection[];
  /** Default: scratch in the OS temp dir, no snapshots, pages of 2,000 rows. */
  settings?: AuditSettings;
  /** Filled in by the comparison (tests: the pages stay bounded). */
  counters?: CompareCounters;
}

/** The audited projections that are registered, each with its Projection object. */
function auditedOf(deps: Pick<AuditDeps, 'projections' | 'audited'>): Array<AuditedProjection & { definition: Projection }> {
  const result: Array<AuditedProjection & { definition: Projection }> = [];
  for (const entry of deps.audited ?? defaultAudited) {
    const definition = deps.projections.find((p) => p.name === entry.projection);
    if (definition) result.push({ ...entry, definition });
  }
  return result;
}

/** The dialect a Kysely instance speaks, from its adapter. */
function dialectOf(db: ReadModelDb): SqlDialectName {
  const adapter = db.getExecutor().adapter;
  if (adapter instanceof PostgresAdapter) return 'postgres';
  if (adapter instanceof MysqlAdapter) return 'mysql';
  return 'sqlite';
}

/** At most one progress line per interval. */
function throttled(logger: Logger, intervalMs = 2000): (fields: Record<string, unknown>, message: string, force?: boolean) => void {
  let last = 0;
  return (fields, message, force = false) => {
    const now = Date.now();
    if (!force && now - last < intervalMs) return;
    last = now;
    logger.info(fields, message);
  };
}

/** Replays one projection into the scratch database from `after` up to `until`; returns the events applied. */
async function replayProjection(deps: AuditDeps, scratch: SqlDatabase, projection: Projection, after: number, until: number, report: (position: number, events: number) => void): Promise<number> {
  let events = 0;
  const types = new Set(projection.eventTypes);
  const source = replayStore(deps.store, {
    after,
    until,
    types,
    onCommits: (commits) => {
      for (const commit of commits) for (const event of commit.events) if (types.has(event.type)) events++;
      report(commits[commits.length - 1]!.position, events);
    },
  });
  try {
    const runner = new ProjectionRunner(source, scratch.db, [projection], deps.logger);
    await runner.catchUpOnce(projection, 0, until);
  } finally {
    await source.close();
  }
  return events;
}

/**
 * Rebuilds the audited projections from the log into a scratch database (a SQLite file: a new
 * one in the audit directory, removed afterwards; or `scratchFile`, which must not exist yet and
 * is kept) and compares them with the live tables for the tenant and period.
 */
export async function auditReplay(deps: AuditDeps, scope: AuditScope, options: { scratchFile?: string } = {}): Promise<AuditReport> {
  const audited = auditedOf(deps);
  if (options.scratchFile && existsSync(options.scratchFile)) throw new Error(`scratch database ${options.scratchFile} already exists: name a new file`);
  const settings = deps.settings;
  const pageSize = settings?.pageSize ?? 2000;
  const progress = throttled(deps.progress ?? deps.logger);
  const scratchDir = settings?.dir ?? tmpdir();
  mkdirSync(scratchDir, { recursive: true });
  const scratchFile = options.scratchFile ?? join(scratchDir, `scratch-${randomUUID()}.db`);
  const snapshots: SnapshotStore | null = settings ? { dir: join(settings.dir, 'snapshots'), secret: settings.secret, kept: settings.snapshotsKept } : null;
  const reader = deps.openLiveReader ? await deps.openLiveReader() : null;
  const liveDb = reader?.db ?? deps.live;
  const liveDialect = reader?.dialect ?? deps.liveDialect ?? dialectOf(liveDb);
  let scratch: SqlDatabase | null = null;
  try {
    const { tables, projections, summary } = await liveDb
      .transaction()
      .setIsolationLevel('repeatable read')
      .execute(async (trx) => {
        // 1. The live side's positions, in the snapshot the live tables are compared in (step 4).
        const checkpoints = await trx.selectFrom('projection_checkpoints').select(['name', 'position']).execute();
        const positions = new Map(checkpoints.map((c) => [c.name, Number(c.position)]));
        const targets = new Map(audited.map((entry) => [entry.projection, { position: positions.get(entry.projection) ?? 0, version: entry.definition.version }]));

        // 2. The scratch side: the furthest sealed snapshot that fits, else a fresh database.
        const restored = snapshots && !options.scratchFile ? await restoreSnapshot(snapshots, targets, scratchFile) : { snapshot: null, rejected: [] };
        for (const id of restored.rejected) deps.logger.warn({ snapshot: id }, 'audit snapshot does not match its seal: not used');
        scratch = await openSqlDatabase({ kind: 'sqlite', file: scratchFile });
        // A scratch copy: nothing to keep if the machine stops mid-audit.
        await sql`pragma synchronous = off`.execute(scratch.db);
        if (!restored.snapshot) {
          await migrateToLatest(scratch.db);
          for (const entry of audited) {
            await scratch.db.insertInto('projection_checkpoints').values({ name: entry.projection, position: 0, generation: 0, version: entry.definition.version, updated_at: new Date().toISOString() }).execute();
          }
        }

        // 3. Replay each projection from the snapshot's position (or the beginning) to the live one.
        let eventsReplayed = 0;
        for (const entry of audited) {
          const target = targets.get(entry.projection)!.position;
          const start = ownValue(restored.snapshot?.positions, entry.projection) ?? 0;
          progress({ projection: entry.projection, from_position: start, to_position: target }, 'audit replay: replaying', true);
          const events = await replayProjection(deps, scratch, entry.definition, start, target, (position, applied) => {
            deps.onReplay?.(entry.projection, position, target, false);
            progress({ projection: entry.projection, position, to_position: target, events: applied }, 'audit replay: replaying');
          });
          deps.onReplay?.(entry.projection, target, target, true);
          eventsReplayed += events;
          progress({ projection: entry.projection, position: target, events }, 'audit replay: replayed', true);
        }
        let saved: string | null = null;
        if (snapshots && settings!.snapshotEvery > 0 && eventsReplayed >= settings!.snapshotEvery) {
          const reached = Object.fromEntries([...targets].map(([name, t]) => [name, t.position]));
          const versions = Object.fromEntries([...targets].map(([name, t]) => [name, t.version]));
          saved = await saveSnapshot(snapshots, scratch.db, reached, versions);
          progress({ snapshot: saved, positions: reached }, 'audit replay: snapshot saved', true);
        }

        // 4. Table by table, a page at a time on each side.
        const reports: TableReport[] = [];
        const live = { db: trx as unknown as AnyDb, dialect: liveDialect };
        const replayed = { db: scratch.db as unknown as AnyDb, dialect: 'sqlite' as const };
        for (const entry of audited) {
          for (const table of entry.tables) {
            reports.push(
              await compareTable(live, replayed, table, scope, {
                pageSize,
                counters: deps.counters,
                onProgress: (name, rows) => progress({ table: name, rows }, 'audit replay: comparing'),
              }),
            );
          }
        }
        return {
          tables: reports,
          projections: [...targets].map(([name, t]) => ({ name, position: t.position })),
          summary: { from_snapshot: restored.snapshot, rejected_snapshots: restored.rejected, events_replayed: eventsReplayed, saved_snapshot: saved } satisfies ReplaySummary,
        };
      });
    const quarantined = await quarantineFindings(liveDb, (scratch as SqlDatabase | null)!.db, audited.map((entry) => entry.projection), scope);
    const report: AuditReport = {
      tenant_id: scope.tenantId,
      from: scope.from.toISOString(),
      to: scope.to.toISOString(),
      projections,
      tables,
      quarantined,
      differences: tables.reduce((sum, t) => sum + t.differences, 0) + quarantined.length,
      replay: summary,
    };
    progress({ differences: report.differences }, 'audit replay: done', true);
    return report;
  } finally {
    await (scratch as SqlDatabase | null)?.close();
    await reader?.close();
    if (!options.scratchFile) for (const suffix of ['', '-wal', '-shm']) await rm(scratchFile + suffix, { force: true });
  }
}

export interface HistoryEntry {
  position: number;
  event_id: string;
  type: string;
  stream: string;
  version: number;
  occurred_at: string;
  tenant_id: string;
  /** The envelope's causation and correlation ids, as stored. */
  causation_id: string | null;
  correlation_id: string | null;
  /** The request the event is about (its `request_id`), when it names one. */
  request_id: string | null;
  data: Record<string, unknown>;
}

export interface HistoryQuery {
  tenantId: string;
  /** A user id or a key id (`kind` says which to match; `any`: either). */
  subjectId: string;
  kind?: 'user' | 'key' | 'any';
  /** Exclusive log position to start after (pagination). */
  after?: number;
  /** Stop after the commit that brings the page to this many entries. */
  limit?: number;
}

/** The tenant an event belongs to: the one its data names (usage batches mix tenants), else the envelope's. */
const tenantOf = (event: StoredEvent) => (typeof event.data.tenant_id === 'string' ? event.data.tenant_id : event.tenant_id);

function concerns(event: StoredEvent, subjectId: string, kind: 'user' | 'key' | 'any'): boolean {
  const { data } = event;
  if ((kind !== 'key' && data.user_id === subjectId) || (kind !== 'user' && data.key_id === subjectId)) return true;
  // An aggregate of its own (a credit account per user, say): the stream `<category>-<id>`.
  return event.stream.slice(event.stream.indexOf('-') + 1) === subjectId;
}

/**
 * Every event of the audited projections (usage, and billing's credits, charges and fees once
 * listed) that concerns the user or key, read from the log in order.
 */
export async function auditHistory(deps: Pick<AuditDeps, 'store' | 'projections' | 'audited'>, query: HistoryQuery): Promise<{ entries: HistoryEntry[]; next_after: number | null }> {
  const types = new Set(auditedOf(deps).flatMap((a) => a.definition.eventTypes));
  const limit = query.limit ?? 1000;
  const kind = query.kind ?? 'any';
  const entries: HistoryEntry[] = [];
  let after = query.after ?? 0;
  for (;;) {
    const commits = await deps.store.readAll({ after, limit: 500 });
    if (commits.length === 0) return { entries, next_after: null };
    for (const commit of commits) {
      after = commit.position;
      for (const event of commit.events) {
        if (!types.has(event.type) || tenantOf(event) !== query.tenantId || !concerns(event, query.subjectId, kind)) continue;
        entries.push({
          position: event.position,
          event_id: event.id,
          type: event.type,
          stream: event.stream,
          version: event.version,
          occurred_at: event.occurred_at,
          tenant_id: tenantOf(event),
          causation_id: event.causation_id,
          correlation_id: event.correlation_id,
          request_id: typeof event.data.request_id === 'string' ? event.data.request_id : null,
          data: event.data,
        });
      }
      if (entries.length >= limit) return { entries, next_after: after };
    }
  }
}
