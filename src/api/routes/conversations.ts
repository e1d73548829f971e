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
import type { ConversationMessagesTable, ConversationsTable } from '../../adapters/sql/schema.js';
import { Permission } from '../../auth/rbac.js';
import type { Principal } from '../../auth/tokens.js';
import { conversations, type ConversationCommand } from '../../commands/conversations/decider.js';
import { ConversationTexts, SYSTEM_PROMPT, TITLE } from '../../conversations/texts.js';
import { NotFoundError, UnauthorizedError } from '../../errors.js';
import { headerOf, type HttpRequestLike } from '../../http-exchange.js';
import { timeOrderedUuid } from '../../ids.js';
import { currentMessages, findOwnConversation, isCurrentMessage, type ConversationOwner } from '../../queries/conversations.js';
import { findVisiblePreset } from '../../queries/presets.js';
import { KEY_PREFIX } from '../../relay/access/key-gate.js';
import { requirePermission, requirePrincipal } from '../auth.js';
import type { AppContext } from '../context.js';
import { errorResponseSchema } from '../errors.js';

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
});

export const ConversationView = z.object({
  id: z.string(),
  object: z.literal('conversation'),
  title: z.string().nullable(),
  model: z.string().nullable(),
  preset_id: z.string().nullable(),
  system_prompt: z.string().nullable(),
  temperature: z.number().nullable(),
  max_tokens: z.number().nullable(),
  pinned: z.boolean(),
  archived: z.boolean(),
  message_count: z.number().describe('current messages (superseded ones not counted)'),
  created_at: z.number().describe('unix seconds'),
  updated_at: z.number().describe('unix seconds: the last change of any kind'),
  last_message_at: z.number().nullable().describe('unix seconds'),
});
export type ConversationView = z.infer<typeof ConversationView>;

export const MessageUsage = z.object({ prompt_tokens: z.number(), completion_tokens: z.number(), total_tokens: z.number() });

export const ConversationMessageView = z.object({
  id: z.string(),
  object: z.literal('conversation.message'),
  role: z.string().describe('user | assistant | system'),
  content: z.string(),
  model: z.string().nullable().describe('assistant messages: the model that answered'),
  finish_reason: z.string().nullable().describe('stop, length, aborted...'),
  usage: MessageUsage.nullable(),
  created_at: z.number().describe('unix seconds'),
  edited_at: z.number().nullable().describe('unix seconds: a user message edited and re-sent'),
});
export type ConversationMessageView = z.infer<typeof ConversationMessageView>;

export const ConversationWithMessages = ConversationView.extend({
  messages: z.array(ConversationMessageView).describe('current messages, oldest first'),
  has_more: z.boolean().describe('older messages exist: ask again with before=<the first message id>'),
});

const ConversationParams = z.object({ id: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'a conversation id') });
const MessagesQuery = z.object({
  limit: z.coerce.number().int().min(1).max(CONVERSATION_LIMITS.maxMessages).default(CONVERSATION_LIMITS.defaultMessages).describe('the latest messages (before `before`)'),
  before: z.string().min(1).max(128).optional().describe('a message id: only the messages before it'),
});

// ---------------------------------------------------------------------------------------------
// Views

const unixSeconds = (iso: string) => Math.floor(Date.parse(iso) / 1000);

export function conversationView(row: ConversationsTable): ConversationView {
  return {
    id: row.id,
    object: 'conversation',
    title: row.title,
    model: row.model,
    preset_id: row.preset_id,
    system_prompt: row.system_prompt,
    temperature: row.temperature === null ? null : Number(row.temperature),
    max_tokens: row.max_tokens,
    pinned: row.pinned === 1,
    archived: row.archived === 1,
    message_count: Number(row.message_count),
    created_at: unixSeconds(row.created_at),
    updated_at: unixSeconds(row.updated_at),
    last_message_at: row.last_message_at === null ? null : unixSeconds(row.last_message_at),
  };
}

export function messageView(row: ConversationMessagesTable): ConversationMessageView {
  return {
    id: row.id,
    object: 'conversation.message',
    role: row.role,
    content: row.content,
    model: row.model_served ?? row.model_requested,
    finish_reason: row.finish_reason,
    usage: row.total_tokens === null ? null : { prompt_tokens: Number(row.prompt_tokens ?? 0), completion_tokens: Number(row.completion_tokens ?? 0), total_tokens: Number(row.total_tokens) },
    created_at: unixSeconds(row.created_at),
    edited_at: row.edited_at === null ? null : unixSeconds(row.edited_at),
  };
}

// ---------------------------------------------------------------------------------------------
// Access

export const conversationNotFound = () => new NotFoundError('conversation not found', 'conversation_not_found');

/** An API key in the Authorization header: refused before anything else, with a message saying why. */
function refuseApiKey(request: HttpRequestLike): void {
  const header = headerOf(request, 'authorization');
  if (header !== undefined && /^Bearer\s+/i.test(header) && header.replace(/^Bearer\s+/i, '').startsWith(KEY_PREFIX)) {
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

export const newConversationId = () => `conv_${timeOrderedUuid().replace(/-/g, '')}`;

// ---------------------------------------------------------------------------------------------

export function conversationRoutes(ctx: AppContext): FastifyPluginAsyncZod {
  return async (app) => {
    const user = requireConversationUser(ctx);
    const tags = ['conversations'];
    const db = ctx.sql.db;
    const texts = new ConversationTexts(ctx.dataKeys);
    const unauthorized = errorResponseSchema('unauthorized, user_credentials_required (an API key was sent)');
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
          response: { 201: ConversationView, 400: errorResponseSchema('invalid_request'), 401: unauthorized, 404: errorResponseSchema('preset_not_found') },
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
          response: { 200: ConversationWithMessages, 401: unauthorized, 404: errorResponseSchema('conversation_not_found (missing, deleted, or not yours), message_not_found (`before`)') },
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
  };
}
