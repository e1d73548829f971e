/**
 * Alerting read models (the `alerts` projection, src/projections/alerts.ts, issue 19).
 *
 * `alert_rules`: one row per live rule of a tenant (a deleted rule's row goes), with its firing
 * state (`firing_alert_id` NULL when not firing) and `version`, the rule stream's version after
 * its last event: the evaluator measures a rule at that version and fires against it.
 *
 * `alerts`: one row per firing, `state` firing until its AlertResolved (then resolved, with when,
 * why and the value then). Ids are time-ordered (`alert_` + the hex of a version 7 UUID), so the
 * id orders the list newest first and is its cursor.
 *
 * `alert_instances`: not a projection's table. Every instance running the evaluator writes its own
 * row (its usage journal's depth) each evaluation interval; the evaluating instance sums the rows
 * reported lately for `spool_backlog` (docs/decisions/0200-alerts.md).
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('alert_rules')
    .addColumn('rule_id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('tenant_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('name', 'varchar(200)', (c) => c.notNull())
    .addColumn('kind', 'varchar(32)', (c) => c.notNull())
    .addColumn('threshold', 'double precision', (c) => c.notNull())
    .addColumn('window_seconds', 'integer', (c) => c.notNull())
    .addColumn('severity', 'varchar(16)', (c) => c.notNull())
    .addColumn('notify', 'text', (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull())
    .addColumn('firing_alert_id', 'varchar(64)')
    .addColumn('firing_value', 'double precision')
    .addColumn('firing_since', 'varchar(40)')
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('created_by', 'varchar(64)')
    .addColumn('created_at', 'varchar(40)', (c) => c.notNull())
    .addColumn('updated_at', 'varchar(40)', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('alert_rules_by_tenant').on('alert_rules').columns(['tenant_id', 'created_at']).execute();
  await db.schema.createIndex('alert_rules_by_enabled').on('alert_rules').columns(['enabled', 'tenant_id']).execute();

  await db.schema
    .createTable('alerts')
    .addColumn('alert_id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('tenant_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('rule_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('rule_name', 'varchar(200)', (c) => c.notNull())
    .addColumn('kind', 'varchar(32)', (c) => c.notNull())
    .addColumn('severity', 'varchar(16)', (c) => c.notNull())
    .addColumn('state', 'varchar(16)', (c) => c.notNull())
    .addColumn('value', 'double precision', (c) => c.notNull())
    .addColumn('threshold', 'double precision', (c) => c.notNull())
    .addColumn('window_seconds', 'integer', (c) => c.notNull())
    .addColumn('notify', 'text', (c) => c.notNull())
    .addColumn('message', 'text', (c) => c.notNull())
    .addColumn('details', 'text', (c) => c.notNull())
    .addColumn('fired_at', 'varchar(40)', (c) => c.notNull())
    .addColumn('resolved_at', 'varchar(40)')
    .addColumn('resolved_value', 'double precision')
    .addColumn('resolved_reason', 'varchar(32)')
    .addColumn('resolved_message', 'text')
    .execute();
  await db.schema.createIndex('alerts_by_tenant').on('alerts').columns(['tenant_id', 'alert_id']).execute();
  await db.schema.createIndex('alerts_by_tenant_state').on('alerts').columns(['tenant_id', 'state', 'alert_id']).execute();

  await db.schema
    .createTable('alert_instances')
    .addColumn('instance_id', 'varchar(128)', (c) => c.primaryKey())
    .addColumn('spool_depth', 'integer', (c) => c.notNull())
    .addColumn('reported_at', 'varchar(40)', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('alert_instances').execute();
  await db.schema.dropTable('alerts').execute();
  await db.schema.dropTable('alert_rules').execute();
}
