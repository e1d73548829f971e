/**
 * Conversations (`/v1/conversations`, issue 17): a signed-in user's chats kept on the server.
 * Only the owner reads or writes one: anyone else — another user, another tenant, an admin — gets
 * 404 `conversation_not_found`, as for a missing one. A user's credentials are needed (access
 * token or session cookie, permission `chat:use`); an API key is refused (401
 * `user_credentials_required`): keys are for the relay, conversations belong to a person.
 *
 * Texts are sealed with the conversation's data key before they reach the log
 * (src/conversations/texts.ts); reads come from the read models (src/queries/conversations.ts),
 * after the projection has caught up with the change (read-your-writes).
 */
import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { ConversationsTable } from '../../adapters/sql/schema.js';
import { Permission } from '../../auth/rbac.js';
import type { Principal } from '../../auth/tokens.js';
import { conversationNotFound, conversations, type ConversationCommand, type ConversationSettings } from '../../commands/conversations/decider.js';
import { ConversationTexts, SYSTEM_PROMPT, TITLE } from '../../conversations/texts.js';
import { ConversationMessageView, ConversationView, conversationMarkdown, conversationView, exportFileName, messageView, unixSeconds } from '../../conversations/views.js';
import { BadRequestError, NotFoundError, UnauthorizedError } from '../../errors.js';
import { truncateWal } from '../../adapters/data-keys/sql.js';
import { searchScore, searchTerms, snippetOf, SEARCH_LIMITS } from '../../conversations/search.js';
import type { HttpRequestLike } from '../../http-exchange.js';
import { timeOrderedUuid } from '../../ids.js';
import {
  conversationChanges,
  conversationCounts,
  currentMessages,
  findOwnConversation,
  isCurrentMessage,
  isOwnDeletedConversation,
  listOwnConversations,
  searchOwnConversations,
  type ConversationListRow,
  type ConversationOwner,
  type SyncCursor,
} from '../../queries/conversations.js';
import { findVisiblePreset } from '../../queries/presets.js';
import { KEY_PREFIX } from '../../relay/access/key-gate.js';
import { bearerToken, requirePermission, requirePrincipal } from '../auth.js';
import type { AppContext } from '../context.js';
import { errorResponseSchema } from '../errors.js';
import { actingTenant, EntityId } from './tenants.js';

// ---------------------------------------------------------------------------------------------
// Shapes

export const CONVERSATION_LIMITS = { title: 200, systemPrompt: 100_000, model: 200, defaultMessages: 100, maxMessages: 1000 } as const;

const Title = z.string().trim().min(1).max(CONVERSATION_LIMITS.title);
const Model = z.string().trim().min(1).max(CONVERSATION_LIMITS.model);
const PresetId = z.string().regex(/^[A-Za-z0-9._-]{1,128}$/, 'a preset id');
const SystemPrompt = z.string().max(CONVERSATION_LIMITS.systemPrompt);
const Temperature = z.number().min(0).max(2);
const MaxTokens = z.number().int().min(1).max(1_000_000);

export const CreateConversationRequest = z.object({
  title: Title.nullable().optional().describe('omitted: a title is generated after the first exchange'),
  model: Model.nullable().optional().describe("omitted: the user's default model"),
  preset_id: PresetId.nullable().optional().describe('a preset you can see (404 preset_not_found otherwise): its context comes first in every request'),
  system_prompt: SystemPrompt.nullable().optional(),
  temperature: Temperature.nullable().optional().describe("omitted: the user's default"),
  max_tokens: MaxTokens.nullable().optional().describe("omitted: the user's default"),
}).meta({ id: 'CreateConversationRequest' });

export const ConversationWithMessages = ConversationView.extend({
  messages: z.array(ConversationMessageView).describe('current messages, oldest first'),
  has_more: z.boolean().describe('older messages exist: ask again with before=<the first message id>'),
}).meta({ id: 'ConversationWithMessages' });

export const ConversationListItem = ConversationView.omit({ system_prompt: true }).describe('a conversation as lists show it (without its system prompt)').meta({ id: 'ConversationListItem' });

const Flag = z.enum(['true', 'false']).transform((v) => v === 'true');

const ListQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z.string().regex(/^[A-Za-z0-9_-]{1,40}$/, 'a next_cursor from a previous page').optional().describe('next_cursor of the previous page'),
  archived: Flag.default(false).describe('true: the archived conversations (only); default: the others'),
  pinned: Flag.optional().describe('true: pinned ones only; false: unpinned ones only'),
});

export const ConversationList = z.object({
  object: z.literal('list'),
  data: z.array(ConversationListItem),
  has_more: z.boolean(),
  next_cursor: z.string().nullable().describe('pass as `cursor` for the next page; null on the last one'),
}).meta({ id: 'ConversationList' });

export const UpdateConversationRequest = z.object({
  title: Title.optional(),
  model: Model.nullable().optional(),
  preset_id: PresetId.nullable().optional(),
  system_prompt: SystemPrompt.nullable().optional(),
  temperature: Temperature.nullable().optional(),
  max_tokens: MaxTokens.nullable().optional(),
  pinned: z.boolean().optional(),
  archived: z.boolean().optional(),
}).meta({ id: 'UpdateConversationRequest' });

export const DeletedConversation = z.object({ id: z.string(), object: z.literal('conversation.deleted'), deleted: z.literal(true) }).meta({ id: 'DeletedConversation' });

const SearchQuery = z.object({
  q: z.string().trim().min(1).max(500).describe('words; each must occur (case-insensitive) in the title or in one message'),
  limit: z.coerce.number().int().min(1).max(50).default(20),
});

const SnippetView = z.object({
  field: z.enum(['title', 'message']),
  message_id: z.string().nullable(),
  role: z.string().nullable(),
  text: z.string().describe('the text around the match (… where cut)'),
  highlights: z.array(z.tuple([z.number(), z.number()])).describe('[start, end) of each term within text'),
});

export const ConversationSearchResult = z.object({
  object: z.literal('list'),
  data: z.array(ConversationListItem.extend({ score: z.number().describe('title match 20, plus 1 per matching message (up to 10)'), snippets: z.array(SnippetView) })),
}).meta({ id: 'ConversationSearchResult' });

const SyncQuery = z.object({
  since: z.string().regex(/^\d{1,16}(\.[A-Za-z0-9_-]{1,64})?$/, 'a cursor from a previous sync').optional().describe('cursor from the previous sync; omit for a full sync'),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});

export const ConversationSync = z.object({
  object: z.literal('conversation.sync'),
  changes: z.array(
    z.object({
      op: z.enum(['created', 'updated', 'deleted']),
      id: z.string(),
      conversation: ConversationListItem.nullable().describe('null for deletions (tombstones)'),
      deleted_at: z.number().nullable().describe('unix seconds'),
    }),
  ),
  cursor: z.string().describe('pass as `since` next time'),
  has_more: z.boolean().describe('more changes after `cursor`: ask again at once'),
}).meta({ id: 'ConversationSync' });

const ExportQuery = z.object({ format: z.enum(['json', 'markdown']).default('json') });

export const ConversationExport = ConversationView.extend({ messages: z.array(ConversationMessageView), exported_at: z.number() }).meta({ id: 'ConversationExport' });

const CountsQuery = z.object({ tenant_id: EntityId.optional().describe("operators only: another tenant (403 tenant_not_allowed for anyone else naming a tenant not their own)") });
export const ConversationCountsView = z.object({
  object: z.literal('list'),
  data: z.array(z.object({ user_id: z.string(), conversations: z.number(), archived: z.number(), messages: z.number(), last_activity_at: z.number().nullable().describe('unix seconds') })),
});

const ConversationParams = z.object({ id: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'a conversation id') });
const MessagesQuery = z.object({
  limit: z.coerce.number().int().min(1).max(CONVERSATION_LIMITS.maxMessages).default(CONVERSATION_LIMITS.defaultMessages).describe('the latest messages (before `before`)'),
  before: z.string().min(1).max(128).optional().describe('a message id: only the messages before it'),
});

// ---------------------------------------------------------------------------------------------
// Views

export function conversationListItem(row: ConversationListRow): z.infer<typeof ConversationListItem> {
  const { system_prompt: _prompt, ...item } = conversationView({ ...row, system_prompt: null, search_title: null });
  return item;
}

// ---------------------------------------------------------------------------------------------
// Access

/** An API key in the Authorization header: refused before anything else, with a message saying why. */
function refuseApiKey(request: HttpRequestLike): void {
  if (bearerToken(request)?.startsWith(KEY_PREFIX)) {
    throw new UnauthorizedError("conversations need a user's credentials (an access token or the session cookie), not an API key", 'user_credentials_required');
  }
}

/** preHandler of every conversation route: a user (not an API key) holding `chat:use`. */
export function requireConversationUser(ctx: AppContext) {
  const permitted = requirePermission(ctx, Permission.chatUse);
  return async (request: Parameters<typeof permitted>[0], reply: Parameters<typeof permitted>[1]) => {
    refuseApiKey(request);
    await permitted.call(request.server, request, reply);
  };
}

export const ownerOf = (principal: Principal): ConversationOwner => ({ tenantId: principal.tenantId, userId: principal.userId });

/** The caller's live conversation, or 404 conversation_not_found. */
export async function ownConversation(ctx: AppContext, principal: Principal, id: string): Promise<ConversationsTable> {
  const row = await findOwnConversation(ctx.sql.db, ownerOf(principal), id);
  if (!row) throw conversationNotFound();
  return row;
}

/** The list cursor: the activity position of the page's last conversation, opaque to clients. */
const encodeCursor = (activityPosition: number) => Buffer.from(`a${activityPosition}`).toString('base64url');
function decodeCursor(cursor: string): number {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!/^a\d{1,16}$/.test(text)) throw new BadRequestError('cursor is not a next_cursor of this list', 'invalid_cursor', 'cursor');
  return Number(text.slice(1));
}

/** null: a full sync. */
function syncCursorOf(since: string | undefined): SyncCursor | null {
  if (since === undefined) return null;
  const [position, id = ''] = since.split('.');
  return { position: Number(position), id };
}

export const newConversationId = () => `conv_${timeOrderedUuid().replace(/-/g, '')}`;

// ---------------------------------------------------------------------------------------------

export function conversationRoutes(ctx: AppContext): FastifyPluginAsyncZod {
  return async (app) => {
    const user = requireConversationUser(ctx);
    const tags = ['conversations'];
    const db = ctx.sql.db;
    const texts = new ConversationTexts(ctx.dataKeys);
    const unauthorized = errorResponseSchema('unauthorized, user_credentials_required (an API key was sent)');
    const forbidden = errorResponseSchema('forbidden (the chat:use permission is needed)');
    const settle = async (position: number | null) => {
      if (position !== null) await ctx.runner.waitFor(position, { projections: ['conversations'] });
    };
    const execute = (principal: Principal, id: string, command: ConversationCommand, causationId: string) =>
      ctx.commands.execute(conversations, id, command, { tenantId: principal.tenantId, causationId });

    app.post(
      '/v1/conversations',
      {
        preHandler: user,
        schema: {
          tags,
          summary: 'Start a conversation',
          description: "Every field is optional; what is not set falls back to the user's preferences when a message is sent. The answer comes once the conversation can be read.",
          body: CreateConversationRequest,
          response: { 201: ConversationView, 400: errorResponseSchema('invalid_request'), 401: unauthorized, 403: forbidden, 404: errorResponseSchema('preset_not_found') },
        },
      },
      async (request, reply) => {
        const principal = await requirePrincipal(request, ctx.tokens);
        const body = request.body;
        if (body.preset_id != null && !(await findVisiblePreset(db, ownerOf(principal), body.preset_id))) throw new NotFoundError('preset not found', 'preset_not_found');
        const id = newConversationId();
        // The key is made now, even without a text yet: every later text of the conversation uses it.
        const seal = await texts.sealerFor(principal, id);
        const result = await execute(
          principal,
          id,
          {
            type: 'StartConversation',
            conversationId: id,
            tenantId: principal.tenantId,
            userId: principal.userId,
            title: body.title == null ? null : seal(TITLE, body.title),
            settings: {
              model: body.model ?? null,
              presetId: body.preset_id ?? null,
              temperature: body.temperature ?? null,
              maxTokens: body.max_tokens ?? null,
              systemPrompt: body.system_prompt == null ? null : seal(SYSTEM_PROMPT, body.system_prompt),
            },
          },
          request.id,
        );
        await settle(result.position);
        return reply.code(201).send(conversationView(await ownConversation(ctx, principal, id)));
      },
    );

    app.get(
      '/v1/conversations/:id',
      {
        preHandler: user,
        schema: {
          tags,
          summary: 'A conversation with its current messages (oldest first)',
          description: 'The latest `limit` messages (default 100); older ones with `before=<the first message id>` while `has_more`.',
          params: ConversationParams,
          querystring: MessagesQuery,
          response: { 200: ConversationWithMessages, 401: unauthorized, 403: forbidden, 404: errorResponseSchema('conversation_not_found (missing, deleted, or not yours), message_not_found (`before`)') },
        },
      },
      async (request) => {
        const principal = await requirePrincipal(request, ctx.tokens);
        const row = await ownConversation(ctx, principal, request.params.id);
        const { limit, before } = request.query;
        if (before !== undefined && !(await isCurrentMessage(db, row.id, before))) throw new NotFoundError('message not found', 'message_not_found');
        const rows = await currentMessages(db, row.id, { limit: limit + 1, before });
        const hasMore = rows.length > limit;
        return { ...conversationView(row), messages: (hasMore ? rows.slice(1) : rows).map(messageView), has_more: hasMore };
      },
    );
    app.get(
      '/v1/conversations',
      {
        preHandler: user,
        schema: {
          tags,
          summary: 'Your conversations, most recent activity first',
          description: 'Archived ones only with archived=true. Page with `cursor` = the previous page\'s next_cursor.',
          querystring: ListQuery,
          response: { 200: ConversationList, 400: errorResponseSchema('invalid_request, invalid_cursor'), 401: unauthorized, 403: forbidden },
        },
      },
      async (request) => {
        const principal = await requirePrincipal(request, ctx.tokens);
        const { limit, cursor, archived, pinned } = request.query;
        const rows = await listOwnConversations(db, ownerOf(principal), { archived, pinned, before: cursor === undefined ? undefined : decodeCursor(cursor), limit: limit + 1 });
        const page = rows.slice(0, limit);
        const hasMore = rows.length > limit;
        return { object: 'list' as const, data: page.map(conversationListItem), has_more: hasMore, next_cursor: hasMore ? encodeCursor(Number(page.at(-1)!.activity_position)) : null };
      },
    );

    app.get(
      '/v1/conversations/search',
      {
        preHandler: user,
        schema: {
          tags,
          summary: 'Search your conversations (titles and current messages), ranked, with snippets',
          description: 'Every word of q must occur, case-insensitively, in the title or in one message. Ranked by title match, then matching messages, then recent activity.',
          querystring: SearchQuery,
          response: { 200: ConversationSearchResult, 400: errorResponseSchema('invalid_request'), 401: unauthorized, 403: forbidden },
        },
      },
      async (request) => {
        const principal = await requirePrincipal(request, ctx.tokens);
        const terms = searchTerms(request.query.q);
        const hits = await searchOwnConversations(db, ownerOf(principal), terms);
        const ranked = hits
          .map((hit) => ({ hit, score: searchScore(hit.titleMatches, hit.messages.length) }))
          .sort((a, b) => b.score - a.score || Number(b.hit.conversation.activity_position) - Number(a.hit.conversation.activity_position))
          .slice(0, request.query.limit);
        return {
          object: 'list' as const,
          data: ranked.map(({ hit, score }) => {
            const snippets: Array<z.infer<typeof SnippetView>> = [];
            const title = hit.titleMatches && hit.conversation.title !== null ? snippetOf(hit.conversation.title, terms) : null;
            if (title) snippets.push({ field: 'title', message_id: null, role: null, ...title });
            for (const m of hit.messages.slice(0, SEARCH_LIMITS.snippetsPerConversation)) {
              const snippet = snippetOf(m.content, terms);
              if (snippet) snippets.push({ field: 'message', message_id: m.id, role: m.role, ...snippet });
            }
            return { ...conversationListItem(hit.conversation), score, snippets };
          }),
        };
      },
    );

    app.get(
      '/v1/conversations/sync',
      {
        preHandler: user,
        schema: {
          tags,
          summary: 'Your conversation changes since a cursor (tombstones for deletions)',
          description: 'A conversation with new messages, a new title or settings is `updated`: fetch it again. A full sync (no since) leaves deleted ones out.',
          querystring: SyncQuery,
          response: { 200: ConversationSync, 400: errorResponseSchema('invalid_request'), 401: unauthorized, 403: forbidden },
        },
      },
      async (request) => {
        const principal = await requirePrincipal(request, ctx.tokens);
        const since = syncCursorOf(request.query.since);
        const rows = await conversationChanges(db, ownerOf(principal), since, request.query.limit + 1);
        const page = rows.slice(0, request.query.limit);
        const last = page.at(-1);
        return {
          object: 'conversation.sync' as const,
          changes: page.map((row: ConversationListRow) => ({
            op: row.deleted === 1 ? ('deleted' as const) : Number(row.created_position) > (since?.position ?? 0) ? ('created' as const) : ('updated' as const),
            id: row.id,
            conversation: row.deleted === 1 ? null : conversationListItem(row),
            deleted_at: row.deleted_at === null ? null : unixSeconds(row.deleted_at),
          })),
          cursor: last === undefined ? (request.query.since ?? '0') : `${Number(last.position)}.${last.id}`,
          has_more: rows.length > page.length,
        };
      },
    );

    app.patch(
      '/v1/conversations/:id',
      {
        preHandler: user,
        schema: {
          tags,
          summary: 'Rename a conversation, change its settings, pin or archive it',
          description: 'Fields given replace; null resets a setting to the user\'s default.',
          params: ConversationParams,
          body: UpdateConversationRequest,
          response: { 200: ConversationView, 400: errorResponseSchema('invalid_request, invalid_temperature, invalid_max_tokens'), 401: unauthorized, 403: forbidden, 404: errorResponseSchema('conversation_not_found, preset_not_found') },
        },
      },
      async (request) => {
        const principal = await requirePrincipal(request, ctx.tokens);
        const row = await ownConversation(ctx, principal, request.params.id);
        const body = request.body;
        if (body.preset_id != null && !(await findVisiblePreset(db, ownerOf(principal), body.preset_id))) throw new NotFoundError('preset not found', 'preset_not_found');
        const seal = await texts.sealerFor(principal, row.id);
        const commands: ConversationCommand[] = [];
        if (body.title !== undefined) commands.push({ type: 'RenameConversation', title: seal(TITLE, body.title) });
        const settings: Partial<ConversationSettings> = {};
        if (body.model !== undefined) settings.model = body.model;
        if (body.preset_id !== undefined) settings.presetId = body.preset_id;
        if (body.temperature !== undefined) settings.temperature = body.temperature;
        if (body.max_tokens !== undefined) settings.maxTokens = body.max_tokens;
        if (body.system_prompt !== undefined) settings.systemPrompt = body.system_prompt === null ? null : seal(SYSTEM_PROMPT, body.system_prompt);
        if (Object.keys(settings).length > 0) commands.push({ type: 'ChangeConversationSettings', changes: settings });
        if (body.pinned !== undefined) commands.push({ type: body.pinned ? 'PinConversation' : 'UnpinConversation' });
        if (body.archived !== undefined) commands.push({ type: body.archived ? 'ArchiveConversation' : 'UnarchiveConversation' });
        let position: number | null = null;
        for (const command of commands) position = (await execute(principal, row.id, command, request.id)).position ?? position;
        await settle(position);
        return conversationView(await ownConversation(ctx, principal, row.id));
      },
    );

    app.delete(
      '/v1/conversations/:id',
      {
        preHandler: user,
        schema: {
          tags,
          summary: 'Delete a conversation for good',
          description:
            'Its data key is destroyed (crypto-shredding): the texts left in the event log can no longer be opened, the read models keep a tombstone without text, and on SQLite the freed pages are zeroed and the WAL emptied. Sync reports the deletion.',
          params: ConversationParams,
          response: { 200: DeletedConversation, 401: unauthorized, 403: forbidden, 404: errorResponseSchema('conversation_not_found') },
        },
      },
      async (request) => {
        const principal = await requirePrincipal(request, ctx.tokens);
        const row = await findOwnConversation(db, ownerOf(principal), request.params.id);
        if (!row) {
          // A deletion cut short between its event and the key's destruction: asking again finishes it (still a 404).
          if (await isOwnDeletedConversation(db, ownerOf(principal), request.params.id)) await texts.destroy(principal, request.params.id);
          throw conversationNotFound();
        }
        const result = await execute(principal, row.id, { type: 'DeleteConversation', by: principal.userId }, request.id);
        await texts.destroy(principal, row.id);
        await settle(result.position);
        // The projection's deletes are in the WAL, beside the pages as they were before: empty it.
        if (!(await truncateWal(ctx.sql))) ctx.logger.warn('a conversation was deleted but a reader kept the WAL from being emptied; it will be at the next complete checkpoint');
        return { id: row.id, object: 'conversation.deleted' as const, deleted: true as const };
      },
    );

    app.get(
      '/v1/conversations/:id/export',
      {
        preHandler: user,
        schema: {
          tags,
          summary: 'Export a conversation (JSON or Markdown, as a download)',
          description: 'All current messages. format=markdown answers text/markdown.',
          params: ConversationParams,
          querystring: ExportQuery,
          response: { 200: ConversationExport.describe('format=json; format=markdown: text/markdown'), 401: unauthorized, 403: forbidden, 404: errorResponseSchema('conversation_not_found') },
        },
      },
      async (request, reply) => {
        const principal = await requirePrincipal(request, ctx.tokens);
        const row = await ownConversation(ctx, principal, request.params.id);
        const view = conversationView(row);
        const messages = (await currentMessages(db, row.id)).map(messageView);
        const markdown = request.query.format === 'markdown';
        reply.header('content-disposition', `attachment; filename="${exportFileName(view, markdown ? 'md' : 'json')}"`).header('cache-control', 'private, no-store');
        if (markdown) return reply.type('text/markdown; charset=utf-8').send(conversationMarkdown(view, messages) as never);
        return reply.send({ ...view, messages, exported_at: Math.floor(Date.now() / 1000) });
      },
    );

    app.get(
      '/v1/admin/conversations/counts',
      {
        preHandler: requirePermission(ctx, Permission.usersManage),
        schema: {
          tags: ['users'],
          summary: "Per user of the tenant: conversations and messages (counts only, never a text)",
          description: 'Live conversations (archived included, and how many of them are archived) and their current messages, per user who has any. Admins never read a conversation itself: GET /v1/conversations/{id} is 404 for them as for anyone but the owner.',
          querystring: CountsQuery,
          response: { 200: ConversationCountsView, 401: unauthorized, 403: errorResponseSchema('forbidden, tenant_not_allowed') },
        },
      },
      async (request) => {
        const principal = await requirePrincipal(request, ctx.tokens);
        const rows = await conversationCounts(db, actingTenant(principal, request.query.tenant_id));
        return { object: 'list' as const, data: rows.map((r) => ({ ...r, last_activity_at: r.last_activity_at === null ? null : unixSeconds(r.last_activity_at) })) };
      },
    );
  };
}
