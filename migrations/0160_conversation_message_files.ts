/**
 * Issue 18: a conversation message records the files attached to it (`file_ids`, a JSON array of
 * file ids; null when none, as for every message older than this column).
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('conversation_messages').addColumn('file_ids', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('conversation_messages').dropColumn('file_ids').execute();
}
