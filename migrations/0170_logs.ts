/**
 * The searchable log index (issue 19; src/logs/index/, decision 0190): one row per log entry
 * (src/logs/entry.ts), written by every instance's process log (`source` = 'process') and by the
 * `logs` projection (`source` = 'event', entries derived from domain events; a rebuild deletes
 * only those).
 *
 * `seq` is a surrogate key the full-text index points at (SQLite's FTS5 external content needs a
 * stable integer rowid: an implicit rowid may change on VACUUM); `id` is the entry's own id,
 * unique, so a retried write or a replayed event is ignored. Timestamps are ISO-8601 UTC strings
 * (they sort as text); `level_rank` (0 DEBUG .. 4 CRITICAL) makes "this level and above" a range.
 *
 * Full text over message + details, per dialect:
 * - SQLite: an FTS5 table with external content (`log_entries_fts`), kept in sync by triggers.
 * - MySQL/MariaDB: an InnoDB FULLTEXT index on (message, details), whose columns use a
 *   case-insensitive collation (the database's default is binary, which makes full-text matching
 *   case-sensitive).
 * - PostgreSQL: a stored generated tsvector ('simple' configuration: log text is not prose of one
 *   language) with a GIN index; ip_address in the C collation so a wildcard prefix is a range.
 */
import { MysqlAdapter, PostgresAdapter, sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  const adapter = db.getExecutor().adapter;
  const mysql = adapter instanceof MysqlAdapter;
  const postgres = adapter instanceof PostgresAdapter;
  const text = mysql ? sql`mediumtext collate utf8mb4_unicode_ci` : sql`text`;
  const ip = postgres ? sql`varchar(64) collate "C"` : sql`varchar(64)`;

  await db.schema
    .createTable('log_entries')
    .addColumn('seq', postgres ? 'bigserial' : mysql ? 'bigint' : 'integer', (c) => (postgres ? c.primaryKey() : c.primaryKey().autoIncrement()))
    .addColumn('id', 'varchar(100)', (c) => c.notNull().unique())
    .addColumn('timestamp', 'varchar(32)', (c) => c.notNull())
    .addColumn('level', 'varchar(10)', (c) => c.notNull())
    .addColumn('level_rank', 'integer', (c) => c.notNull())
    .addColumn('category', 'varchar(20)', (c) => c.notNull())
    .addColumn('component', 'varchar(100)', (c) => c.notNull())
    .addColumn('event', 'varchar(100)', (c) => c.notNull())
    .addColumn('user_id', 'varchar(64)')
    .addColumn('session_id', 'varchar(64)')
    .addColumn('tenant_id', 'varchar(64)')
    .addColumn('request_id', 'varchar(128)')
    .addColumn('ip_address', ip)
    .addColumn('message', text, (c) => c.notNull())
    .addColumn('details', text, (c) => c.notNull())
    .addColumn('instance', 'varchar(100)')
    .addColumn('source', 'varchar(10)', (c) => c.notNull())
    .execute();

  // Newest first, all entries (operators) or one tenant's (admins); the keyset is (timestamp, id).
  await db.schema.createIndex('log_entries_by_time').on('log_entries').columns(['timestamp', 'id']).execute();
  await db.schema.createIndex('log_entries_by_tenant').on('log_entries').columns(['tenant_id', 'timestamp', 'id']).execute();
  // Filters that narrow a lot: a component, a user, an address prefix, a level and above.
  await db.schema.createIndex('log_entries_by_component').on('log_entries').columns(['component', 'timestamp']).execute();
  await db.schema.createIndex('log_entries_by_user').on('log_entries').columns(['user_id', 'timestamp']).execute();
  await db.schema.createIndex('log_entries_by_ip').on('log_entries').columns(['ip_address', 'timestamp']).execute();
  await db.schema.createIndex('log_entries_by_level').on('log_entries').columns(['level_rank', 'timestamp']).execute();
  // Retention, per category.
  await db.schema.createIndex('log_entries_by_category').on('log_entries').columns(['category', 'timestamp']).execute();

  if (mysql) {
    // No stopwords: in logs "not", "after", "off" are words operators search for. The setting is
    // read when the index is made (Kysely's migrator runs MySQL migrations on one connection).
    await sql`set session innodb_ft_enable_stopword = 0`.execute(db);
    await sql`alter table log_entries add fulltext index log_entries_text (message, details)`.execute(db);
    await sql`set session innodb_ft_enable_stopword = 1`.execute(db);
  } else if (postgres) {
    await sql`alter table log_entries add column search tsvector generated always as (to_tsvector('simple', message || ' ' || details)) stored`.execute(db);
    await sql`create index log_entries_search on log_entries using gin (search)`.execute(db);
  } else {
    await sql`create virtual table log_entries_fts using fts5(message, details, content='log_entries', content_rowid='seq', tokenize='unicode61 remove_diacritics 2')`.execute(db);
    await sql`create trigger log_entries_fts_insert after insert on log_entries begin
      insert into log_entries_fts(rowid, message, details) values (new.seq, new.message, new.details);
    end`.execute(db);
    await sql`create trigger log_entries_fts_delete after delete on log_entries begin
      insert into log_entries_fts(log_entries_fts, rowid, message, details) values ('delete', old.seq, old.message, old.details);
    end`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  const adapter = db.getExecutor().adapter;
  if (!(adapter instanceof MysqlAdapter) && !(adapter instanceof PostgresAdapter)) {
    await sql`drop trigger if exists log_entries_fts_insert`.execute(db);
    await sql`drop trigger if exists log_entries_fts_delete`.execute(db);
    await sql`drop table if exists log_entries_fts`.execute(db);
  }
  await db.schema.dropTable('log_entries').execute();
}
