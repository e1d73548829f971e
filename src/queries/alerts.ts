/** Reads of the alerting read models (migration 0180): rules and alerts, per tenant. */
import type { Kysely } from 'kysely';
import type { AlertRulesTable, AlertsTable, ReadModelTables } from '../adapters/sql/schema.js';

type Db = Kysely<ReadModelTables>;

export function loadAlertRules(db: Db, tenantId: string): Promise<AlertRulesTable[]> {
  return db.selectFrom('alert_rules').selectAll().where('tenant_id', '=', tenantId).orderBy('created_at').orderBy('rule_id').execute();
}

export function loadAlertRule(db: Db, tenantId: string, ruleId: string): Promise<AlertRulesTable | undefined> {
  return db.selectFrom('alert_rules').selectAll().where('tenant_id', '=', tenantId).where('rule_id', '=', ruleId).executeTakeFirst();
}

/** The rules the evaluator measures: enabled ones, and firing ones (a firing rule must be able to resolve). */
export function loadRulesToEvaluate(db: Db): Promise<AlertRulesTable[]> {
  return db
    .selectFrom('alert_rules')
    .selectAll()
    .where((eb) => eb.or([eb('enabled', '=', 1), eb('firing_alert_id', 'is not', null)]))
    .orderBy('tenant_id')
    .orderBy('rule_id')
    .execute();
}

export interface AlertPage {
  rows: AlertsTable[];
  hasMore: boolean;
}

/** A tenant's alerts newest first (ids are time-ordered); `cursor`: the last id of the previous page. */
export async function loadAlerts(db: Db, tenantId: string, options: { state?: 'firing' | 'resolved'; limit: number; cursor?: string; ruleId?: string }): Promise<AlertPage> {
  let query = db.selectFrom('alerts').selectAll().where('tenant_id', '=', tenantId);
  if (options.state) query = query.where('state', '=', options.state);
  if (options.ruleId) query = query.where('rule_id', '=', options.ruleId);
  if (options.cursor) query = query.where('alert_id', '<', options.cursor);
  const rows = await query.orderBy('alert_id', 'desc').limit(options.limit + 1).execute();
  return { rows: rows.slice(0, options.limit), hasMore: rows.length > options.limit };
}
