/**
 * Chatting in a conversation: send a message, regenerate the last reply, edit a message and
 * re-send, stop a running generation (on any instance). Replies pass the relay gate with the
 * conversation ingress (src/relay/ingress/conversations/). Owner only: anyone else (another user,
 * another tenant, an admin) gets 404 conversation_not_found.
 */
import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ConversationTexts } from '../../conversations/texts.js';
import { findOwnConversation, messagesById } from '../../queries/conversations.js';
import { conversationReplyIngress, type ReplyOrder, type Turn } from '../../relay/ingress/conversations/index.js';
import { GenerationStops } from '../../relay/ingress/conversations/stops.js';
import { ConversationTitles } from '../../relay/ingress/conversations/titles.js';
import type { AppContext } from '../context.js';
import { errorResponseSchema } from '../errors.js';
import { conversationNotFound } from '../../commands/conversations/decider.js';
import { ConversationMessageView, MessageUsage, messageView } from '../../conversations/views.js';
import { requireConversationUser } from './conversations.js';
import { fastifyRelayResponse } from './relay.js';
import { ChatCompletionChunk } from '../../relay/schema.js';

const ConversationParams = z.object({ id: z.string().min(1).max(128) });
const MessageParams = ConversationParams.extend({ message_id: z.string().min(1).max(128) });

const MODEL = z.string().min(1).max(256).optional().describe("else the conversation's model, your default_model preference, its preset's first usable model");
const STREAM = z.boolean().default(true).describe('true (default): text/event-stream of chat.completion.chunk events, then one conversation.reply event, then [DONE]; false: the conversation.reply object as JSON');
const CONTENT = z.string().min(1).max(1_000_000);

const SendBody = z.object({
  content: CONTENT,
  file_ids: z
    .array(z.string().min(1).max(128))
    .max(20)
    .optional()
    .describe("your processed files (POST /v1/files) attached to the message: each file's text (images: an image part where the model's channel takes images, else their recognised text) is sent after the message's text, on this and later turns; the message keeps the ids"),
  model: MODEL,
  stream: STREAM,
});
const RegenerateBody = z.object({ model: MODEL, stream: STREAM });
const EditBody = z.object({ content: CONTENT, model: MODEL, stream: STREAM });

export const ConversationReplyObject = z
  .object({
    object: z.literal('conversation.reply'),
    conversation_id: z.string(),
    user_message: ConversationMessageView.nullable().describe('the message answered (new, edited, or the last one for a regenerate)'),
    assistant_message: ConversationMessageView.nullable().describe('the reply as stored (finish_reason aborted when stopped or disconnected); null when stopped before any text'),
    usage: MessageUsage,
    usage_request_id: z.string().describe("the relay request of the reply: its usage event's request_id (kept on the assistant message)"),
    omitted_messages: z.number().int().describe("history messages left out of the model's request to fit its context window (oldest first)"),
    stopped: z.boolean().describe('the generation was stopped (POST .../stop) before it ended'),
  })
  .describe('with stream: true, the same object is the data of the last event before [DONE]').meta({ id: 'ConversationReply' });

/** One event of a streamed reply: the chunks as the relay streams them, then the reply (then [DONE]). */
export const ConversationStreamEvent = z.union([ChatCompletionChunk, ConversationReplyObject]).meta({ id: 'ConversationStreamEvent' });

const StopAnswer = z.object({ object: z.literal('conversation.stop'), conversation_id: z.string(), stopped: z.boolean().describe('a generation of the conversation was running (on any instance) and was told to stop') });

const replyResponses = {
  200: ConversationReplyObject,
  400: errorResponseSchema('invalid_request (a field; param names it), model_required, nothing_to_regenerate, message_not_editable'),
  401: errorResponseSchema('unauthorized, user_credentials_required (an API key was sent)'),
  404: errorResponseSchema('conversation_not_found (missing, deleted, or not yours), message_not_found, file_not_found (a file id that is not yours, or none; param file_ids[i])'),
  409: errorResponseSchema('file_not_ready (a file still being processed, or whose processing failed: the message says why; param file_ids[i])'),
  429: errorResponseSchema('insufficient_quota'),
  502: errorResponseSchema('upstream_error, upstream_auth_failed, upstream_unavailable, bad_upstream_response'),
  503: errorResponseSchema('no_available_channels, upstream_busy'),
};

export function conversationMessageRoutes(ctx: AppContext): FastifyPluginAsyncZod {
  const texts = new ConversationTexts(ctx.dataKeys);
  const stops = new GenerationStops(ctx.counters, ctx.config.conversations.stopPollMs, ctx.logger);
  const titles = new ConversationTitles({
    gate: ctx.gate,
    commands: ctx.commands,
    texts,
    logger: ctx.logger,
    titleModel: (tenantId) => ctx.billing.settings(tenantId).relay_settings.conversation_title_model,
  });
  const deps = {
    db: ctx.sql.db,
    commands: ctx.commands,
    runner: ctx.runner,
    texts,
    stops,
    logger: ctx.logger,
    settings: ctx.config.conversations,
    preferences: async (tenantId: string, userId: string) => {
      const user = await ctx.queries.user(tenantId, userId);
      return user === undefined ? {} : (JSON.parse(user.preferences) as Record<string, unknown>);
    },
    messages: async (conversationId: string, ids: readonly string[]) => new Map((await messagesById(ctx.sql.db, conversationId, ids)).map((row) => [row.id, messageView(row)] as const)),
    onFirstExchange: (exchange: Parameters<ConversationTitles['afterFirstExchange']>[0]) => titles.afterFirstExchange(exchange),
    attachments: ctx.files.attachments,
  };
  const tags = ['conversations'];

  return async (app) => {
    const user = requireConversationUser(ctx);
    const reply = async (request: Parameters<typeof ctx.gate.pass>[1], raw: Parameters<typeof fastifyRelayResponse>[0], order: ReplyOrder) => {
      await ctx.gate.pass(conversationReplyIngress(deps, order), request, fastifyRelayResponse(raw), null);
      return raw;
    };

    app.post(
      '/v1/conversations/:id/messages',
      {
        preHandler: user,
        schema: {
          tags,
          summary: 'Send a message and get the reply (streamed by default)',
          description:
            "Appends your message, then relays the conversation to the model (the preset's system prompt and context, the conversation's system prompt, the history trimmed to the model's context window, your message) " +
            'like any chat request: routing, fallback, billing as chat-UI traffic, one usage event. The reply is stored when it ends, before the last bytes go out; stopped or disconnected, with finish_reason aborted.',
          params: ConversationParams,
          body: SendBody,
          response: replyResponses,
        },
      },
      async (request, raw) => {
        const { content, file_ids: fileIds, model, stream } = request.body;
        const turn: Turn = { kind: 'send', content, fileIds: fileIds ?? [] };
        return reply(request, raw, { conversationId: request.params.id, turn, model, stream });
      },
    );

    app.post(
      '/v1/conversations/:id/regenerate',
      {
        preHandler: user,
        schema: {
          tags,
          summary: 'Replace the last reply with a new one (optionally from another model)',
          description: 'The last assistant reply leaves the conversation (kept in its history of changes), and the last user message is answered again.',
          params: ConversationParams,
          body: RegenerateBody,
          response: replyResponses,
        },
      },
      async (request, raw) => reply(request, raw, { conversationId: request.params.id, turn: { kind: 'regenerate' }, model: request.body.model, stream: request.body.stream }),
    );

    app.put(
      '/v1/conversations/:id/messages/:message_id',
      {
        preHandler: user,
        schema: {
          tags,
          summary: 'Edit one of your messages and re-send it',
          description: 'The message gets the new content; every message after it leaves the conversation; the edited message is answered.',
          params: MessageParams,
          body: EditBody,
          response: replyResponses,
        },
      },
      async (request, raw) =>
        reply(request, raw, { conversationId: request.params.id, turn: { kind: 'edit', messageId: request.params.message_id, content: request.body.content }, model: request.body.model, stream: request.body.stream }),
    );

    app.post(
      '/v1/conversations/:id/stop',
      {
        preHandler: user,
        schema: {
          tags,
          summary: "Stop the conversation's running generation, on whichever instance it runs",
          description: 'The reply stream ends with what was generated so far, stored with finish_reason aborted.',
          params: ConversationParams,
          response: { 200: StopAnswer, 401: errorResponseSchema('unauthorized, user_credentials_required (an API key was sent)'), 404: errorResponseSchema('conversation_not_found (missing, deleted, or not yours)') },
        },
      },
      async (request) => {
        const caller = await ctx.gate.caller(request);
        const id = request.params.id;
        if (caller.userId === null || (await findOwnConversation(ctx.sql.db, { tenantId: caller.tenantId, userId: caller.userId }, id)) === undefined) throw conversationNotFound();
        return { object: 'conversation.stop' as const, conversation_id: id, stopped: await stops.stop(id) };
      },
    );
  };
}
