/**
 * Poison events: events a projection cannot apply (its code throws on them) are set aside in
 * `projection_quarantine` so that the projection moves on instead of retrying one event forever.
 * The runner (runner.ts) writes a row in the transaction that moves the checkpoint past the event;
 * an operator replays the quarantined events after a fix (CLI and admin API), in log order.
 *
 * Only the projection's own code is a reason to quarantine: an error while the read-model
 * database does not answer (an outage, a failover) is retried from the checkpoint, never
 * quarantined (see `databaseAnswers`).
 */
import { sql } from 'kysely';
import type { EventStore, StoredEvent } from '../../ports/event-store.js';
import type { Projection, ReadModelDb } from './projection.js';

/** Longest error message kept per row (a stack of zod issues can be long). */
const ERROR_CHARS = 2000;

/** The error as stored: the message only (no stack: it is shown to operators). */
export function errorText(error: unknown): string {
  const text = error instanceof Error ? `${error.name === 'Error' ? '' : `${error.name}: `}${error.message}` : String(error);
  return text.length > ERROR_CHARS ? `${text.slice(0, ERROR_CHARS - 1)}…` : text;
}

/** Whether the read-model database answers a trivial query: if not, a failure is the outage's, not the event's. */
export async function databaseAnswers(db: ReadModelDb, timeoutMs = 2000): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      sql`SELECT 1`.execute(db),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error('no answer')), timeoutMs);
      }),
    ]);
    return true;
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

/** Records `event` as quarantined for `projection` (inside the runner's transaction). */
export async function quarantineEvent(trx: ReadModelDb, projection: string, event: StoredEvent, error: unknown, at: string): Promise<void> {
  const updated = await trx
    .updateTable('projection_quarantine')
    .set({ error: errorText(error), quarantined_at: at, replayed_at: null })
    .where('projection', '=', projection)
    .where('event_position', '=', event.position)
    .where('event_version', '=', event.version)
    .executeTakeFirst();
  if (Number(updated.numUpdatedRows) > 0) return;
  await trx
    .insertInto('projection_quarantine')
    .values({
      projection,
      event_position: event.position,
      event_version: event.version,
      event_id: event.id,
      stream: event.stream,
      event_type: event.type,
      tenant_id: event.tenant_id,
      occurred_at: event.occurred_at,
      error: errorText(error),
      quarantined_at: at,
      replayed_at: null,
    })
    .execute();
}

/** Forgets a projection's quarantine: part of its reset (a rebuild meets the same events again). */
export async function clearQuarantine(trx: ReadModelDb, projection: string): Promise<void> {
  await trx.deleteFrom('projection_quarantine').where('projection', '=', projection).execute();
}

/** Events still quarantined, per projection (projections without any are absent). */
export async function quarantinedCounts(db: ReadModelDb): Promise<Map<string, number>> {
  const rows = await db
    .selectFrom('projection_quarantine')
    .select(['projection', (eb) => eb.fn.countAll<number | string | bigint>().as('n')])
    .where('replayed_at', 'is', null)
    .groupBy('projection')
    .execute();
  return new Map(rows.map((r) => [r.projection, Number(r.n)]));
}

export interface QuarantinedEvent {
  projection: string;
  event_position: number;
  event_version: number;
  event_id: string;
  stream: string;
  event_type: string;
  tenant_id: string;
  occurred_at: string;
  error: string;
  quarantined_at: string;
  replayed_at: string | null;
}

export interface QuarantineFilter {
  projections?: readonly string[];
  tenantId?: string;
  /** ISO bounds on the event's occurred_at: [from, to). */
  from?: string;
  to?: string;
  /** Also the events a replay has applied since. */
  includeReplayed?: boolean;
  limit?: number;
}

/** Quarantined events in log order. */
export async function listQuarantine(db: ReadModelDb, filter: QuarantineFilter = {}): Promise<QuarantinedEvent[]> {
  let query = db.selectFrom('projection_quarantine').selectAll();
  if (filter.projections) {
    if (filter.projections.length === 0) return [];
    query = query.where('projection', 'in', filter.projections);
  }
  if (filter.tenantId !== undefined) query = query.where('tenant_id', '=', filter.tenantId);
  if (filter.from !== undefined) query = query.where('occurred_at', '>=', filter.from);
  if (filter.to !== undefined) query = query.where('occurred_at', '<', filter.to);
  if (!filter.includeReplayed) query = query.where('replayed_at', 'is', null);
  query = query.orderBy('event_position').orderBy('event_version').orderBy('projection');
  if (filter.limit !== undefined) query = query.limit(filter.limit);
  const rows = await query.execute();
  return rows.map((r) => ({ ...r, event_position: Number(r.event_position), event_version: Number(r.event_version) }));
}

export interface ReplayOutcome {
  projection: string;
  event_position: number;
  event_version: number;
  event_id: string;
  /** applied: the projection took it (marked replayed); failed: still quarantined, with `error`. */
  result: 'applied' | 'failed' | 'missing';
  error?: string;
}

/** The event at (position, version), read back from the log. */
async function readEvent(store: EventStore, position: number, version: number, id: string): Promise<StoredEvent | null> {
  const [commit] = await store.readAll({ after: position - 1, limit: 1 });
  if (!commit || commit.position !== position) return null;
  return commit.events.find((e) => e.version === version && e.id === id) ?? null;
}

/**
 * Re-applies the quarantined events (of the named projections, or all) in log order, each in its
 * own transaction: an event that now applies is marked replayed, one that still fails stays
 * quarantined with the new error. The events apply AFTER everything the projection has applied
 * since, not at their place in the log (see the README, "Quarantined events").
 */
export async function replayQuarantine(db: ReadModelDb, store: EventStore, projections: readonly Projection[], names?: readonly string[]): Promise<ReplayOutcome[]> {
  const byName = new Map(projections.map((p) => [p.name, p]));
  for (const name of names ?? []) if (!byName.has(name)) throw new Error(`unknown projection "${name}" (known: ${[...byName.keys()].join(', ')})`);
  const pending = await listQuarantine(db, { projections: names ?? [...byName.keys()] });
  const outcomes: ReplayOutcome[] = [];
  for (const row of pending) {
    const projection = byName.get(row.projection)!;
    const which = { projection: row.projection, event_position: row.event_position, event_version: row.event_version, event_id: row.event_id };
    const event = await readEvent(store, row.event_position, row.event_version, row.event_id);
    if (!event) {
      outcomes.push({ ...which, result: 'missing', error: 'the event is no longer in the log' });
      continue;
    }
    const mark = (trx: ReadModelDb) =>
      trx.updateTable('projection_quarantine').where('projection', '=', row.projection).where('event_position', '=', row.event_position).where('event_version', '=', row.event_version);
    try {
      const applied = await db.transaction().execute(async (trx) => {
        // Claimed first: a replay running beside this one (another operator, another instance)
        // waits on the row and then finds it replayed, so the event applies once.
        const claim = await mark(trx).set({ replayed_at: new Date().toISOString() }).where('replayed_at', 'is', null).executeTakeFirst();
        if (Number(claim.numUpdatedRows) === 0) return false;
        if (projection.applyCommit) await projection.applyCommit(trx, [event]);
        else await projection.apply(trx, event);
        return true;
      });
      if (applied) outcomes.push({ ...which, result: 'applied' });
    } catch (error) {
      if (!(await databaseAnswers(db))) throw error;
      await mark(db).set({ error: errorText(error) }).execute();
      outcomes.push({ ...which, result: 'failed', error: errorText(error) });
    }
  }
  return outcomes;
}
