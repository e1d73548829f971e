/**
 * Reads of the conversations read models (src/projections/conversations.ts). Only the owner reads
 * a conversation: every read here is scoped to one (tenant, user), and a deleted, missing or
 * someone else's conversation is the same `undefined`.
 */
import type { ConversationMessagesTable, ConversationsTable } from '../adapters/sql/schema.js';
import type { ReadModelDb } from '../projections/runtime/projection.js';

export interface ConversationOwner {
  tenantId: string;
  userId: string;
}

/** The owner's live conversation, or undefined (deleted, missing, or not the owner's). */
export function findOwnConversation(db: ReadModelDb, owner: ConversationOwner, id: string): Promise<ConversationsTable | undefined> {
  return db
    .selectFrom('conversations')
    .selectAll()
    .where('id', '=', id)
    .where('user_id', '=', owner.userId)
    .where('tenant_id', '=', owner.tenantId)
    .where('deleted', '=', 0)
    .executeTakeFirst();
}

export interface MessagePage {
  /** At most this many: the latest ones (before `before`). Omitted: all. */
  limit?: number;
  /** A current message's id: only the messages before it. */
  before?: string;
}

/**
 * The conversation's current messages (superseded ones left out), oldest first, with their clear
 * content. With `limit`, the latest `limit` of them (before `before`): what a chat view shows
 * first, and what scrolling back asks for. The caller checks ownership first.
 */
export async function currentMessages(db: ReadModelDb, conversationId: string, page: MessagePage = {}): Promise<ConversationMessagesTable[]> {
  let query = db.selectFrom('conversation_messages').selectAll().where('conversation_id', '=', conversationId).where('superseded', '=', 0);
  if (page.before !== undefined) {
    const before = page.before;
    query = query.where('seq', '<', (eb) =>
      eb.selectFrom('conversation_messages').select('seq').where('conversation_id', '=', conversationId).where('id', '=', before),
    );
  }
  if (page.limit === undefined) return query.orderBy('seq', 'asc').execute();
  const latest = await query.orderBy('seq', 'desc').limit(page.limit).execute();
  return latest.reverse();
}

/** Whether `messageId` is one of the conversation's current messages. */
export async function isCurrentMessage(db: ReadModelDb, conversationId: string, messageId: string): Promise<boolean> {
  const row = await db.selectFrom('conversation_messages').select('seq').where('conversation_id', '=', conversationId).where('id', '=', messageId).where('superseded', '=', 0).executeTakeFirst();
  return row !== undefined;
}

/** Some of the conversation's messages by id (current or not), e.g. the two of a reply just stored. */
export function messagesById(db: ReadModelDb, conversationId: string, ids: readonly string[]): Promise<ConversationMessagesTable[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return db.selectFrom('conversation_messages').selectAll().where('conversation_id', '=', conversationId).where('id', 'in', ids).execute();
}
