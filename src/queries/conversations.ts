/**
 * Reads of the conversations read models (src/projections/conversations.ts). Only the owner reads
 * a conversation: every read here is scoped to one (tenant, user), and a deleted, missing or
 * someone else's conversation is the same `undefined`.
 */
import { sql } from 'kysely';
import type { ConversationMessagesTable, ConversationsTable } from '../adapters/sql/schema.js';
import { containsPattern } from '../conversations/search.js';
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

/** Whether `id` is a deleted conversation of the owner (its tombstone). */
export async function isOwnDeletedConversation(db: ReadModelDb, owner: ConversationOwner, id: string): Promise<boolean> {
  const row = await db
    .selectFrom('conversations')
    .select('id')
    .where('id', '=', id)
    .where('user_id', '=', owner.userId)
    .where('tenant_id', '=', owner.tenantId)
    .where('deleted', '=', 1)
    .executeTakeFirst();
  return row !== undefined;
}

/** A message as reads show it: without the lower-cased search copy of its content. */
export type MessageRow = Omit<ConversationMessagesTable, 'search_text' | 'user_id'>;

const MESSAGE_COLUMNS = [
  'conversation_id',
  'id',
  'seq',
  'role',
  'content',
  'model_requested',
  'model_served',
  'finish_reason',
  'prompt_tokens',
  'completion_tokens',
  'total_tokens',
  'latency_ms',
  'usage_request_id',
  'file_ids',
  'superseded',
  'edited_at',
  'created_at',
] as const satisfies ReadonlyArray<keyof MessageRow>;

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
export async function currentMessages(db: ReadModelDb, conversationId: string, page: MessagePage = {}): Promise<MessageRow[]> {
  let query = db.selectFrom('conversation_messages').select(MESSAGE_COLUMNS).where('conversation_id', '=', conversationId).where('superseded', '=', 0);
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

/** The list view's columns: everything but the long texts a list does not show. */
const LIST_COLUMNS = [
  'id',
  'tenant_id',
  'user_id',
  'title',
  'title_generated',
  'model',
  'preset_id',
  'temperature',
  'max_tokens',
  'pinned',
  'archived',
  'message_count',
  'last_message_at',
  'last_activity_at',
  'activity_position',
  'deleted',
  'deleted_at',
  'created_position',
  'position',
  'created_at',
  'updated_at',
] as const satisfies ReadonlyArray<keyof ConversationsTable>;

export type ConversationListRow = Omit<ConversationsTable, 'system_prompt' | 'search_title'>;

export interface ListFilter {
  archived: boolean;
  pinned?: boolean;
  /** Only conversations whose last activity is before this log position (the list cursor). */
  before?: number;
  limit: number;
}

/**
 * The owner's live conversations, most recent activity first. The page's ids come from the index
 * alone (`conversations_by_activity` holds every column filtered and the primary key), then the
 * rows: given all the columns to read at once, MariaDB took the index's equality prefix as a
 * `ref` and filtered the cursor's range row by row (17 ms for a page 5,000 down; this: under 1).
 */
export function listOwnConversations(db: ReadModelDb, owner: ConversationOwner, filter: ListFilter): Promise<ConversationListRow[]> {
  let page = db
    .selectFrom('conversations')
    .select(['id', 'activity_position'])
    .where('tenant_id', '=', owner.tenantId)
    .where('user_id', '=', owner.userId)
    .where('deleted', '=', 0)
    .where('archived', '=', filter.archived ? 1 : 0);
  if (filter.pinned !== undefined) page = page.where('pinned', '=', filter.pinned ? 1 : 0);
  if (filter.before !== undefined) page = page.where('activity_position', '<', filter.before);
  return db
    .selectFrom(page.orderBy('activity_position', 'desc').limit(filter.limit).as('page'))
    .innerJoin('conversations as c', 'c.id', 'page.id')
    .select(LIST_COLUMNS.map((column) => `c.${column}` as const))
    .orderBy('c.activity_position', 'desc')
    .execute();
}

/** A sync cursor: the last change seen (its log position, and its conversation id among changes of one position). */
export interface SyncCursor {
  position: number;
  id: string;
}

/**
 * The owner's conversations changed after `since`, in log order (ties by id: deleting a user
 * changes all of its conversations at one position). A full sync (`since` null) leaves tombstones
 * out: there is nothing on the device to delete.
 */
export function conversationChanges(db: ReadModelDb, owner: ConversationOwner, since: SyncCursor | null, limit: number): Promise<ConversationListRow[]> {
  const from = since ?? { position: 0, id: '' };
  let query = db
    .selectFrom('conversations')
    .select(LIST_COLUMNS)
    .where('user_id', '=', owner.userId)
    .where('tenant_id', '=', owner.tenantId)
    .where((eb) => eb.or([eb('position', '>', from.position), eb.and([eb('position', '=', from.position), eb('id', '>', from.id)])]));
  if (since === null) query = query.where('deleted', '=', 0);
  return query.orderBy('position').orderBy('id').limit(limit).execute();
}

export interface ConversationSearchHit {
  conversation: ConversationListRow;
  titleMatches: boolean;
  /** Matching current messages, latest first. */
  messages: Array<Pick<ConversationMessagesTable, 'id' | 'role' | 'content'>>;
}

/** At most this many matching messages are read per search: enough to rank, bounded for huge histories. */
const MESSAGE_MATCHES_READ = 2000;

/**
 * The owner's live conversations whose title, or one of whose current messages, holds every term
 * (lower-cased; see src/conversations/search.ts), unranked.
 */
export async function searchOwnConversations(db: ReadModelDb, owner: ConversationOwner, terms: readonly string[]): Promise<ConversationSearchHit[]> {
  if (terms.length === 0) return [];
  const like = (column: 'search_title' | 'search_text', term: string) => sql<boolean>`${sql.ref(column)} LIKE ${containsPattern(term)} ESCAPE '!'`;
  const titled = await db
    .selectFrom('conversations')
    .select('id')
    .where('user_id', '=', owner.userId)
    .where('deleted', '=', 0)
    .where('tenant_id', '=', owner.tenantId)
    .where((eb) => eb.and(terms.map((t) => like('search_title', t))))
    .execute();
  const messages = await db
    .selectFrom('conversation_messages')
    .select(['conversation_id', 'id', 'role', 'content', 'seq'])
    .where('user_id', '=', owner.userId)
    .where('superseded', '=', 0)
    .where((eb) => eb.and(terms.map((t) => like('search_text', t))))
    .limit(MESSAGE_MATCHES_READ)
    .execute();
  const byConversation = new Map<string, Array<Pick<ConversationMessagesTable, 'id' | 'role' | 'content' | 'seq'>>>();
  for (const m of messages) {
    const list = byConversation.get(m.conversation_id) ?? [];
    list.push(m);
    byConversation.set(m.conversation_id, list);
  }
  const titleIds = new Set(titled.map((r) => r.id));
  const ids = [...new Set([...titleIds, ...byConversation.keys()])];
  if (ids.length === 0) return [];
  const rows: ConversationListRow[] = [];
  // Bounded IN lists: a search may touch thousands of conversations.
  for (let i = 0; i < ids.length; i += 500) {
    rows.push(
      ...(await db
        .selectFrom('conversations')
        .select(LIST_COLUMNS)
        .where('id', 'in', ids.slice(i, i + 500))
        .where('user_id', '=', owner.userId)
        .where('tenant_id', '=', owner.tenantId)
        .where('deleted', '=', 0)
        .execute()),
    );
  }
  return rows.map((conversation) => ({
    conversation,
    titleMatches: titleIds.has(conversation.id),
    messages: (byConversation.get(conversation.id) ?? []).sort((a, b) => Number(b.seq) - Number(a.seq)).map(({ id, role, content }) => ({ id, role, content })),
  }));
}

export interface ConversationCounts {
  user_id: string;
  conversations: number;
  archived: number;
  messages: number;
  last_activity_at: string | null;
}

/** Per user of a tenant: live conversations and their current messages. Counts only, never a text. */
export async function conversationCounts(db: ReadModelDb, tenantId: string): Promise<ConversationCounts[]> {
  const rows = await db
    .selectFrom('conversations')
    .select((eb) => [
      'user_id',
      eb.fn.countAll<number>().as('conversations'),
      eb.fn.sum<number>('archived').as('archived'),
      eb.fn.sum<number>('message_count').as('messages'),
      eb.fn.max('last_activity_at').as('last_activity_at'),
    ])
    .where('tenant_id', '=', tenantId)
    .where('deleted', '=', 0)
    .groupBy('user_id')
    .orderBy('user_id')
    .execute();
  return rows.map((r) => ({ user_id: r.user_id, conversations: Number(r.conversations), archived: Number(r.archived ?? 0), messages: Number(r.messages ?? 0), last_activity_at: r.last_activity_at ?? null }));
}

/** Some of the conversation's messages by id (current or not), e.g. the two of a reply just stored. */
export function messagesById(db: ReadModelDb, conversationId: string, ids: readonly string[]): Promise<ConversationMessagesTable[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return db.selectFrom('conversation_messages').selectAll().where('conversation_id', '=', conversationId).where('id', 'in', ids).execute();
}
