/**
 * Quarantined events in an audit. A poison event is left out of the live read models AND out of
 * the audit's replay (the same projection code quarantines it there too), so comparing rows alone
 * would find them equal and report `differences: 0` while the tenant's usage or billing misses
 * events of the log. Each event still quarantined for an audited projection (live, or in the
 * replay) is therefore reported, and counted as a difference.
 *
 * Window: the tenant's events that occurred before the end of the period. One before `from` is
 * included too: cumulative state in the period (a balance) depends on it.
 */
import type { ReadModelDb } from '../projections/runtime/projection.js';
import { listQuarantine } from '../projections/runtime/quarantine.js';
import type { AuditScope } from './compare.js';

export interface QuarantineFinding {
  projection: string;
  event_position: number;
  event_version: number;
  event_id: string;
  event_type: string;
  occurred_at: string;
  error: string;
  /** live: quarantined in the live read models; replay: only in the audit's replay (live applied it); both. */
  found_in: 'live' | 'replay' | 'both';
}

/** The audited projections' quarantined events of the scope, from both sides, in log order. */
export async function quarantineFindings(live: ReadModelDb, replay: ReadModelDb, projections: readonly string[], scope: AuditScope): Promise<QuarantineFinding[]> {
  const filter = { projections, tenantId: scope.tenantId, to: scope.to.toISOString() };
  const findings = new Map<string, QuarantineFinding>();
  const keyOf = (row: { projection: string; event_position: number; event_version: number }) => `${row.projection}@${row.event_position}.${row.event_version}`;
  for (const [side, db] of [['live', live] as const, ['replay', replay] as const]) {
    for (const row of await listQuarantine(db, filter)) {
      const key = keyOf(row);
      const seen = findings.get(key);
      if (seen) seen.found_in = 'both';
      else findings.set(key, { projection: row.projection, event_position: row.event_position, event_version: row.event_version, event_id: row.event_id, event_type: row.event_type, occurred_at: row.occurred_at, error: row.error, found_in: side });
    }
  }
  return [...findings.values()].sort((a, b) => a.event_position - b.event_position || a.event_version - b.event_version || a.projection.localeCompare(b.projection));
}
