/**
 * `projection_quarantine`: events a projection could not apply (a poison event). The projection
 * records the event here, with the error, in the same transaction that moves its checkpoint past
 * it, and goes on; an operator replays the quarantined events after a fix
 * (`switchyard projections quarantine replay`). One row per projection and event (an event is
 * identified in the log by its commit position and its version in its stream).
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('projection_quarantine')
    .addColumn('projection', 'varchar(100)', (c) => c.notNull())
    .addColumn('event_position', 'bigint', (c) => c.notNull())
    .addColumn('event_version', 'integer', (c) => c.notNull())
    .addColumn('event_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('stream', 'varchar(200)', (c) => c.notNull())
    .addColumn('event_type', 'varchar(100)', (c) => c.notNull())
    .addColumn('tenant_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('occurred_at', 'varchar(40)', (c) => c.notNull())
    .addColumn('error', 'text', (c) => c.notNull())
    .addColumn('quarantined_at', 'varchar(40)', (c) => c.notNull())
    /** Set when a replay applied the event; null while it is still quarantined. */
    .addColumn('replayed_at', 'varchar(40)')
    .addPrimaryKeyConstraint('projection_quarantine_pk', ['projection', 'event_position', 'event_version'])
    .execute();
  await db.schema.createIndex('projection_quarantine_by_tenant').on('projection_quarantine').columns(['tenant_id', 'occurred_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('projection_quarantine').execute();
}
