/**
 * What the audit rebuilds and compares: projections (by name, as registered in
 * src/projections/index.ts) and their tables. A projection listed here but not registered is
 * skipped, so an entry may land before its projection does.
 *
 * To audit another projection, add `{ projection: '<name>', tables: [...] }` with each table's
 * row key and period column (see `AuditedTable` in ./compare.ts). Its events also join the audit
 * history (every event type the projection reads, for the user / key it names).
 */
import { usageAuditTables } from '../projections/usage.js';
import type { AuditedTable } from './compare.js';

export interface AuditedProjection {
  projection: string;
  tables: readonly AuditedTable[];
}

export const auditedProjections: readonly AuditedProjection[] = [
  { projection: 'usage', tables: usageAuditTables },
  {
    projection: 'billing',
    tables: [
      // Immutable entries and rated requests: those of the period.
      { table: 'billing_ledger', key: ['id'], timeColumn: 'created_at' },
      { table: 'billing_requests', key: ['dedupe_key'], pageKey: ['event_position', 'event_version'], timeColumn: 'created_at' },
      // State: every row of the tenant, as of the audited log position.
      { table: 'billing_balances', key: ['user_id'] },
      { table: 'billing_key_spend', key: ['key_id'] },
      { table: 'billing_subscriptions', key: ['user_id'] },
      { table: 'billing_prices', key: ['model'], pageKey: ['tenant_id', 'model'] },
      { table: 'billing_settings', key: ['tenant_id'] },
      { table: 'billing_plans', key: ['id'] },
    ],
  },
];
