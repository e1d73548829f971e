/**
 * Conversations read models (`conversations`, `conversation_messages`; migration 0140): the list
 * view, the messages and the search text, in the clear, opened from the sealed events with each
 * conversation's data key (src/conversations/texts.ts), read through the projection's own
 * transaction from `data_keys`.
 *
 * Deletion really deletes (docs/decisions/0120-crypto-shredding.md): a deleted conversation keeps
 * a tombstone row without any text, its messages' rows are deleted; on SQLite every write of this
 * projection runs with `secure_delete` on, so neither a delete nor an update (which frees the old
 * copy of the row) leaves the text in the file's free space. A text whose key is destroyed cannot
 * be opened: the conversation is projected as deleted, so a rebuild after a deletion shows it
 * deleted even before (or without) its ConversationDeleted event. `UserDeleted` (users aggregate)
 * turns every conversation of the user into a tombstone.
 */
import { sql, type Updateable } from 'kysely';
import type { ConversationsTable } from '../adapters/sql/schema.js';
import { readDataKey } from '../adapters/data-keys/sql.js';
import { CONVERSATION_EVENT_TYPES, ConversationEvent } from '../commands/conversations/events.js';
import type { SecretBox } from '../crypto/secret-box.js';
import { conversationKeyScope, messageField, openConversationText, SYSTEM_PROMPT, TITLE, type ConversationTextField } from '../conversations/texts.js';
import type { StoredEvent } from '../ports/event-store.js';
import type { Projection, ReadModelDb } from './runtime/projection.js';
import { securedProjection } from './runtime/secure-delete.js';

export const conversationIdOf = (stream: string) => stream.slice('conversation-'.length);

/** The users aggregate's deletion (its data as this projection reads it). */
const USER_DELETED = 'UserDeleted';

/** The lower-cased text search looks in (JS lower-casing: SQLite's lower() only knows ASCII). */
export const searchTextOf = (text: string) => text.toLowerCase();

/** Opens a conversation's texts; `gone` once its key is destroyed (the conversation is deleted). */
interface Opener {
  gone: boolean;
  open(field: ConversationTextField, sealed: string): string;
}

async function openerFor(trx: ReadModelDb, box: SecretBox, userId: string, conversationId: string): Promise<Opener> {
  const key = await readDataKey(trx, box, conversationKeyScope(userId, conversationId));
  if (key === null) return { gone: true, open: () => '' };
  return {
    gone: false,
    open(field, sealed) {
      // Sealed with a key this conversation never had: nothing to show, as with a destroyed one.
      if (key === undefined) throw new Error('a sealed text without a data key');
      return openConversationText(key, conversationId, field, sealed);
    },
  };
}

/** The columns of a deleted conversation: no text left. */
function tombstone(stored: StoredEvent): Updateable<ConversationsTable> {
  return {
    title: null,
    search_title: null,
    system_prompt: null,
    message_count: 0,
    last_message_at: null,
    deleted: 1,
    deleted_at: stored.occurred_at,
    position: stored.position,
    updated_at: stored.occurred_at,
  };
}

async function deleteConversation(trx: ReadModelDb, id: string, stored: StoredEvent): Promise<void> {
  await trx.updateTable('conversations').set(tombstone(stored)).where('id', '=', id).execute();
  await trx.deleteFrom('conversation_messages').where('conversation_id', '=', id).execute();
}

async function currentCount(trx: ReadModelDb, id: string): Promise<number> {
  const row = await trx.selectFrom('conversation_messages').select((eb) => eb.fn.countAll<number>().as('n')).where('conversation_id', '=', id).where('superseded', '=', 0).executeTakeFirstOrThrow();
  return Number(row.n);
}

async function applyEvent(trx: ReadModelDb, box: SecretBox, stored: StoredEvent): Promise<void> {
  if (stored.type === USER_DELETED) {
    const userId = (stored.data as { user_id?: unknown }).user_id;
    if (typeof userId !== 'string') return;
    await trx.updateTable('conversations').set(tombstone(stored)).where('user_id', '=', userId).where('deleted', '=', 0).execute();
    await trx.deleteFrom('conversation_messages').where('user_id', '=', userId).execute();
    return;
  }
  const parsed = ConversationEvent.safeParse({ type: stored.type, data: stored.data });
  // Event types (or shapes) of a later version: not this projection's business yet.
  if (!parsed.success) return;
  const event = parsed.data;
  const id = conversationIdOf(stored.stream);

  if (event.type === 'ConversationStarted') {
    const d = event.data;
    const opener = await openerFor(trx, box, d.user_id, id);
    const title = opener.gone || d.title === null ? null : opener.open(TITLE, d.title);
    await trx
      .insertInto('conversations')
      .values({
        id,
        tenant_id: stored.tenant_id,
        user_id: d.user_id,
        title,
        title_generated: 0,
        search_title: title === null ? null : searchTextOf(title),
        model: d.model,
        preset_id: d.preset_id,
        temperature: d.temperature,
        max_tokens: d.max_tokens,
        system_prompt: opener.gone || d.system_prompt === null ? null : opener.open(SYSTEM_PROMPT, d.system_prompt),
        pinned: 0,
        archived: 0,
        message_count: 0,
        last_message_at: null,
        last_activity_at: stored.occurred_at,
        activity_position: stored.position,
        deleted: opener.gone ? 1 : 0,
        deleted_at: opener.gone ? stored.occurred_at : null,
        created_position: stored.position,
        position: stored.position,
        created_at: stored.occurred_at,
        updated_at: stored.occurred_at,
      })
      .execute();
    return;
  }

  const row = await trx.selectFrom('conversations').select(['user_id', 'deleted']).where('id', '=', id).executeTakeFirst();
  if (!row || row.deleted === 1) return;
  if (event.type === 'ConversationDeleted') return deleteConversation(trx, id, stored);

  const opener = await openerFor(trx, box, row.user_id, id);
  if (opener.gone) return deleteConversation(trx, id, stored);
  const changed = { position: stored.position, updated_at: stored.occurred_at };
  const active = { ...changed, last_activity_at: stored.occurred_at, activity_position: stored.position };
  const update = (set: Updateable<ConversationsTable>) => trx.updateTable('conversations').set(set).where('id', '=', id).execute();

  switch (event.type) {
    case 'ConversationMessageAppended': {
      const d = event.data;
      const content = opener.open(messageField(d.message_id), d.content);
      await trx
        .insertInto('conversation_messages')
        .values({
          conversation_id: id,
          id: d.message_id,
          user_id: row.user_id,
          seq: stored.version,
          role: d.role,
          content,
          search_text: searchTextOf(content),
          model_requested: d.model_requested,
          model_served: d.model_served,
          finish_reason: d.finish_reason,
          prompt_tokens: d.usage?.prompt_tokens ?? null,
          completion_tokens: d.usage?.completion_tokens ?? null,
          total_tokens: d.usage?.total_tokens ?? null,
          latency_ms: d.latency_ms,
          usage_request_id: d.usage_request_id,
          file_ids: d.file_ids === undefined || d.file_ids.length === 0 ? null : JSON.stringify(d.file_ids),
          superseded: 0,
          edited_at: null,
          created_at: stored.occurred_at,
        })
        .execute();
      await trx
        .updateTable('conversations')
        .set({ ...active, message_count: sql<number>`message_count + 1`, last_message_at: stored.occurred_at })
        .where('id', '=', id)
        .execute();
      return;
    }
    case 'ConversationRenamed': {
      const title = opener.open(TITLE, event.data.title);
      await update({ ...changed, title, search_title: searchTextOf(title), title_generated: event.data.generated === true ? 1 : 0 });
      return;
    }
    case 'ConversationSettingsChanged': {
      const d = event.data;
      const set: Updateable<ConversationsTable> = { ...changed };
      if (d.model !== undefined) set.model = d.model;
      if (d.preset_id !== undefined) set.preset_id = d.preset_id;
      if (d.temperature !== undefined) set.temperature = d.temperature;
      if (d.max_tokens !== undefined) set.max_tokens = d.max_tokens;
      if (d.system_prompt !== undefined) set.system_prompt = d.system_prompt === null ? null : opener.open(SYSTEM_PROMPT, d.system_prompt);
      await update(set);
      return;
    }
    case 'ConversationPinned':
    case 'ConversationUnpinned':
      await update({ ...changed, pinned: event.type === 'ConversationPinned' ? 1 : 0 });
      return;
    case 'ConversationArchived':
    case 'ConversationUnarchived':
      await update({ ...changed, archived: event.type === 'ConversationArchived' ? 1 : 0 });
      return;
    case 'ConversationMessageEdited':
    case 'ConversationMessagesSuperseded': {
      if (event.type === 'ConversationMessageEdited') {
        const content = opener.open(messageField(event.data.message_id), event.data.content);
        await trx
          .updateTable('conversation_messages')
          .set({ content, search_text: searchTextOf(content), edited_at: stored.occurred_at })
          .where('conversation_id', '=', id)
          .where('id', '=', event.data.message_id)
          .execute();
      }
      if (event.data.superseded_ids.length > 0) {
        await trx.updateTable('conversation_messages').set({ superseded: 1 }).where('conversation_id', '=', id).where('id', 'in', event.data.superseded_ids).execute();
      }
      await update({ ...(event.type === 'ConversationMessageEdited' ? active : changed), message_count: await currentCount(trx, id) });
      return;
    }
  }
}

/** `dataKeys`: opens the sealed keys of `data_keys` (`new SecretBox(secret, 'data-keys')`, as SqlDataKeys). */
export function conversationsProjection(dataKeys: SecretBox): Projection {
  return securedProjection({
    name: 'conversations',
    version: 1,
    eventTypes: [...CONVERSATION_EVENT_TYPES, USER_DELETED],
    tables: ['conversation_messages', 'conversations'],
    applyEvent: (trx, stored) => applyEvent(trx, dataKeys, stored),
  });
}
