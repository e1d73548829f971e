/**
 * Audit: rebuild the audited read models (usage; billing once it is listed in ./tables.ts) from
 * the event log alone into a scratch SQLite database, and compare them with the live ones for one
 * tenant and period; and list, from the log, every event that changed a user's or a key's usage
 * or balance.
 *
 * The comparison is made at one log position per projection: the live tables and their
 * checkpoint are read in one snapshot (a repeatable-read transaction), then the scratch copy is
 * fed the same Projection objects by a ProjectionRunner's `catchUpOnce` over the whole log from
 * the beginning up to exactly that position (state before `from` matters: a balance is the sum of
 * everything before it). Live traffic during an audit therefore cannot show up as a difference,
 * and neither can a projection lagging behind the log: only rows that disagree with the log do.
 */
import { existsSync } from 'node:fs';
import { openSqlDatabase } from '../adapters/sql/database.js';
import { migrateToLatest } from '../adapters/sql/migrate.js';
import type { Logger } from '../logger.js';
import type { Commit, EventStore, StoredEvent } from '../ports/event-store.js';
import type { Projection, ReadModelDb } from '../projections/runtime/projection.js';
import { ProjectionRunner } from '../projections/runtime/runner.js';
import { quarantineFindings, type QuarantineFinding } from './quarantine.js';
import { compareRows, scopedRows, type AnyDb, type AuditScope, type TableReport } from './compare.js';
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
}

export interface AuditDeps {
  store: EventStore;
  /** The live read-model database. */
  live: ReadModelDb;
  logger: Logger;
  /** Every registered projection (src/projections/index.ts). */
  projections: readonly Projection[];
  /** What to audit (default: src/audit/tables.ts). */
  audited?: readonly AuditedProjection[];
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

/**
 * The log as one projection's replay must see it: commits up to `until` only, and only those
 * with an event the projection reads (so the runner never has skipped positions to store).
 */
function replaySource(store: EventStore, until: number, types: ReadonlySet<string>): EventStore {
  return {
    kind: store.kind,
    append: (...args) => store.append(...args),
    readStream: (...args) => store.readStream(...args),
    headPosition: async () => until,
    subscribe: () => {
      throw new Error('an audit replay does not tail the log');
    },
    ping: () => store.ping(),
    close: async () => undefined,
    async readAll({ after, limit = 500 }) {
      const out: Commit[] = [];
      let cursor = after;
      while (out.length === 0 && cursor < until) {
        const commits = await store.readAll({ after: cursor, limit });
        if (commits.length === 0) break;
        for (const commit of commits) {
          if (commit.position > until) return out;
          cursor = commit.position;
          if (commit.events.some((e) => types.has(e.type))) out.push(commit);
        }
      }
      return out;
    },
  };
}

/**
 * Rebuilds the audited projections from the log into a scratch database (in memory, or the
 * SQLite file `scratchFile`, which must not exist yet and is kept) and compares them with the
 * live tables for the tenant and period.
 */
export async function auditReplay(deps: AuditDeps, scope: AuditScope, options: { scratchFile?: string } = {}): Promise<AuditReport> {
  const audited = auditedOf(deps);
  if (options.scratchFile && existsSync(options.scratchFile)) throw new Error(`scratch database ${options.scratchFile} already exists: name a new file`);

  // 1. One snapshot of the live side: each projection's checkpoint and the scope's rows.
  const live = await deps.live
    .transaction()
    .setIsolationLevel('repeatable read')
    .execute(async (trx) => {
      const checkpoints = await trx.selectFrom('projection_checkpoints').select(['name', 'position']).execute();
      const rows = new Map<string, Array<Record<string, unknown>>>();
      for (const entry of audited) for (const table of entry.tables) rows.set(table.table, await scopedRows(trx as unknown as AnyDb, table, scope));
      return { positions: new Map(checkpoints.map((c) => [c.name, Number(c.position)])), rows };
    });

  // 2. The scratch side: a fresh database, the same migrations, the same projections, the log
  //    from its beginning up to the live checkpoint.
  const scratch = await openSqlDatabase({ kind: 'sqlite', file: options.scratchFile ?? ':memory:' });
  try {
    await migrateToLatest(scratch.db);
    const projections: AuditReport['projections'] = [];
    for (const entry of audited) {
      const position = live.positions.get(entry.projection) ?? 0;
      projections.push({ name: entry.projection, position });
      const projection = entry.definition;
      await scratch.db.insertInto('projection_checkpoints').values({ name: projection.name, position: 0, generation: 0, version: projection.version, updated_at: new Date().toISOString() }).execute();
      const runner = new ProjectionRunner(replaySource(deps.store, position, new Set(projection.eventTypes)), scratch.db, [projection], deps.logger);
      await runner.catchUpOnce(projection, 0, position);
    }

    // 3. Table by table.
    const tables: TableReport[] = [];
    for (const entry of audited) {
      for (const table of entry.tables) {
        tables.push(compareRows(table, live.rows.get(table.table) ?? [], await scopedRows(scratch.db as unknown as AnyDb, table, scope)));
      }
    }
    const quarantined = await quarantineFindings(deps.live, scratch.db, audited.map((entry) => entry.projection), scope);
    return {
      tenant_id: scope.tenantId,
      from: scope.from.toISOString(),
      to: scope.to.toISOString(),
      projections,
      tables,
      quarantined,
      differences: tables.reduce((sum, t) => sum + t.differences, 0) + quarantined.length,
    };
  } finally {
    await scratch.close();
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
