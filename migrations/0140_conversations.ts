/**
 * Conversations read models (src/projections/conversations.ts, issue 17).
 *
 * `conversations`: one row per conversation, the list view. Texts (title, system prompt) are in
 * the clear here, opened from the sealed events with the conversation's data key; a deleted
 * conversation keeps a tombstone row (`deleted` = 1, every text NULL) so devices syncing from a
 * cursor learn of it. `activity_position` is the log position of its last activity (start, a
 * message, an edit): unique across conversations (one commit is one stream), so it orders the
 * list and is its cursor. `position` is the log position of the row's last change (sync cursor).
 *
 * `conversation_messages`: every message ever appended, current or superseded (`superseded` = 1),
 * in stream order (`seq`, the event's version in the conversation's stream). `search_text` is the
 * lower-cased content, for search by LIKE scoped to one user: unlike an FTS index, whose segments
 * keep deleted tokens, deleting the row deletes the text (with secure_delete, see decision 0120).
 */
import { MysqlAdapter, sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // A message may be long (pasted documents): beyond MySQL's TEXT (64 KB).
  const large = db.getExecutor().adapter instanceof MysqlAdapter ? sql`mediumtext` : sql`text`;
  await db.schema
    .createTable('conversations')
    .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('tenant_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('user_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('title', 'text')
    .addColumn('title_generated', 'integer', (c) => c.notNull())
    .addColumn('search_title', 'text')
    .addColumn('model', 'varchar(200)')
    .addColumn('preset_id', 'varchar(128)')
    .addColumn('temperature', 'double precision')
    .addColumn('max_tokens', 'integer')
    .addColumn('system_prompt', large)
    .addColumn('pinned', 'integer', (c) => c.notNull())
    .addColumn('archived', 'integer', (c) => c.notNull())
    .addColumn('message_count', 'integer', (c) => c.notNull())
    .addColumn('last_message_at', 'varchar(40)')
    .addColumn('last_activity_at', 'varchar(40)', (c) => c.notNull())
    .addColumn('activity_position', 'bigint', (c) => c.notNull())
    .addColumn('deleted', 'integer', (c) => c.notNull())
    .addColumn('deleted_at', 'varchar(40)')
    .addColumn('created_position', 'bigint', (c) => c.notNull())
    .addColumn('position', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'varchar(40)', (c) => c.notNull())
    .addColumn('updated_at', 'varchar(40)', (c) => c.notNull())
    .execute();
  // Every column the list filters on, so a page's ids come from the index alone (pinned last: it
  // filters, activity orders). See listOwnConversations for why MariaDB needs that.
  await db.schema.createIndex('conversations_by_activity').on('conversations').columns(['tenant_id', 'user_id', 'deleted', 'archived', 'activity_position', 'pinned']).execute();
  await db.schema.createIndex('conversations_by_position').on('conversations').columns(['tenant_id', 'user_id', 'position']).execute();
  await db.schema.createIndex('conversations_by_tenant').on('conversations').columns(['tenant_id', 'deleted']).execute();

  await db.schema
    .createTable('conversation_messages')
    .addColumn('conversation_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('id', 'varchar(64)', (c) => c.notNull())
    .addColumn('user_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('role', 'varchar(20)', (c) => c.notNull())
    .addColumn('content', large, (c) => c.notNull())
    .addColumn('search_text', large, (c) => c.notNull())
    .addColumn('model_requested', 'varchar(200)')
    .addColumn('model_served', 'varchar(200)')
    .addColumn('finish_reason', 'varchar(40)')
    .addColumn('prompt_tokens', 'integer')
    .addColumn('completion_tokens', 'integer')
    .addColumn('total_tokens', 'integer')
    .addColumn('latency_ms', 'double precision')
    .addColumn('usage_request_id', 'varchar(128)')
    .addColumn('superseded', 'integer', (c) => c.notNull())
    .addColumn('edited_at', 'varchar(40)')
    .addColumn('created_at', 'varchar(40)', (c) => c.notNull())
    .addPrimaryKeyConstraint('conversation_messages_pk', ['conversation_id', 'id'])
    .execute();
  await db.schema.createIndex('conversation_messages_in_order').on('conversation_messages').columns(['conversation_id', 'superseded', 'seq']).execute();
  await db.schema.createIndex('conversation_messages_by_user').on('conversation_messages').columns(['user_id', 'superseded']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('conversation_messages').execute();
  await db.schema.dropTable('conversations').execute();
}
