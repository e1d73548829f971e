/**
 * The conversation ingress: a reply in a conversation (`POST /v1/conversations/{id}/messages`,
 * `.../regenerate`, `PUT .../messages/{message_id}`) passes the relay gate like any chat request
 * (routing, fallback, health, billing admission as chat-UI traffic, one usage event), with:
 *
 * - `prepare`: the owner's conversation (anyone else: 404), its history as the turn makes it (a
 *   new user message; the last reply taken out; an edited message and what follows it taken out),
 *   and the chat request built from them (request.ts: settings, preset, system prompt, trimming).
 * - `relay`: the write the turn needs (append the user message, supersede, edit) runs BESIDE the
 *   upstream request, not before it (an event append, an fsync on SQLite, would delay the first
 *   byte); the reply passes a `ReplyRecorder`, which forwards the chunks and reads the text. When
 *   the reply ends the assistant message is stored (id chosen up front: a retry appends nothing
 *   twice), the projection is waited for, and only then the final `conversation.reply` event and
 *   `[DONE]` go out (or, not streamed, the JSON with both messages). Stopped (stop route, on any
 *   instance) or disconnected: what was generated is stored with finish_reason `aborted`. The
 *   write failed: the generation is stopped and the error answered.
 */
import type { CommandBus } from '../../../commands/bus.js';
import { conversationNotFound, conversations, type ConversationCommand } from '../../../commands/conversations/decider.js';
import type { Config } from '../../../config.js';
import { messageField, type ConversationTexts } from '../../../conversations/texts.js';
import { AppError, BadRequestError, NotFoundError } from '../../../errors.js';
import { timeOrderedUuid } from '../../../ids.js';
import type { Logger } from '../../../logger.js';
import type { ReadModelDb } from '../../../projections/runtime/projection.js';
import type { Projectors } from '../../../projections/runtime/projectors.js';
import { currentMessages, findOwnConversation } from '../../../queries/conversations.js';
import { findVisiblePreset, presetDocument } from '../../../queries/presets.js';
import type { Ingress } from '../../gate.js';
import type { AnswerWriter } from '../../relay.js';
import type { ConversationMessageView } from '../../../conversations/views.js';
import type { RelayPreset } from '../../presets.js';
import { SSE_DONE, sseData } from '../../sse.js';
import { parseChatRequest } from '../chat-completions.js';
import { chatDefaults } from '../../../conversations/preferences.js';
import { ReplyRecorder } from './recorder.js';
import { contextLengthOf, replyRequest, replySettings, type HistoryMessage, type ReplySettings } from './request.js';
import type { GenerationStops } from './stops.js';
import type { FirstExchange } from './titles.js';
import type { AttachedFile, FileAttachments, FileOwner } from '../../../files/attachments.js';
import { attachAll, attachAvailable, fileContent, missingFileText, type FileImage, type FileImages } from '../../files.js';
import type { ContentPart } from '../../schema.js';
import { fileIdsOf } from '../../../conversations/views.js';

/** What the client asked for: a new message, the last reply again, or an edited message re-sent. */
export type Turn = { kind: 'send'; content: string; fileIds: readonly string[] } | { kind: 'regenerate' } | { kind: 'edit'; messageId: string; content: string };

export interface ReplyOrder {
  conversationId: string;
  turn: Turn;
  /** The request's model (else the conversation's, the user's default, the preset's). */
  model: string | undefined;
  stream: boolean;
}

/** The messages of a reply as the read side shows them (GET /v1/conversations/{id}). */
export type ReplyMessages = (conversationId: string, ids: readonly string[]) => Promise<ReadonlyMap<string, ConversationMessageView>>;

/** The reply's final event (streamed) or whole answer (not streamed). */
export interface ConversationReply {
  object: 'conversation.reply';
  conversation_id: string;
  user_message: ConversationMessageView | null;
  /** Null when nothing was generated (stopped before the first token). */
  assistant_message: ConversationMessageView | null;
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
  /** The relay request of the reply: its usage event's request_id, kept on the assistant message. */
  usage_request_id: string;
  /** History messages left out of the upstream request to fit the model's context window. */
  omitted_messages: number;
  /** The generation was stopped (stop route or disconnect) before it ended. */
  stopped: boolean;
}

/** After the first exchange of an untitled conversation (titles.ts; never awaited by the reply). */
export type OnFirstExchange = (exchange: FirstExchange) => void;

export interface ConversationIngressDeps {
  db: ReadModelDb;
  commands: CommandBus;
  runner: Pick<Projectors, 'waitFor'>;
  texts: ConversationTexts;
  stops: GenerationStops;
  logger: Logger;
  settings: Config['conversations'];
  /** The user's stored preferences document (users.preferences). */
  preferences(tenantId: string, userId: string): Promise<Record<string, unknown>>;
  messages: ReplyMessages;
  onFirstExchange: OnFirstExchange;
  /** The user's files, for the messages' `file_ids` (src/files/attachments.ts). */
  attachments: FileAttachments;
}

const SSE_HEADERS = Object.freeze({ 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' });
const JSON_CONTENT = Object.freeze({ 'content-type': 'application/json; charset=utf-8' });

export const newMessageId = () => `msg_${timeOrderedUuid().replace(/-/g, '')}`;

/**
 * The newest messages a reply reads (older ones count as left out). Trimming to the context
 * window then works on these: a conversation of thousands of messages costs no more than this.
 */
export const HISTORY_LIMIT = 400;

/** Longest a turn's write waits for the reply's first bytes before it starts anyway (a slow model). */
export const WRITE_DELAY_MS = 50;

/** What `prepare` worked out, for `relay`. */
interface Plan {
  owner: { tenantId: string; userId: string };
  settings: ReplySettings;
  omitted: number;
  /** The user message being answered (new, existing, or edited). */
  question: { id: string; content: string };
  /** The reply's id, chosen before anything is written: storing it twice appends it once. */
  answerId: string;
  /** The conversation had no message before this turn, and no title. */
  firstExchange: boolean;
  /** Image parts made from attached files (a provider that takes no such image gets their text). */
  fileImages: FileImages | undefined;
}

/** The ingress of one reply (it carries the turn: made per request). */
export function conversationReplyIngress(deps: ConversationIngressDeps, order: ReplyOrder): Ingress {
  let plan: Plan | null = null;

  return {
    async prepare(_body, resolved, usable) {
      const { caller } = resolved;
      const userId = caller.userId;
      if (userId === null) throw conversationNotFound();
      const owner = { tenantId: caller.tenantId, userId };
      const { turn } = order;
      // One round trip to the read models (on a database server each is one): the messages and
      // preferences are read beside the ownership check, and used only when it passes.
      const [row, messages, preferences] = await Promise.all([
        findOwnConversation(deps.db, owner, order.conversationId),
        // An edit may name any current message: all of them.
        currentMessages(deps.db, order.conversationId, turn.kind === 'edit' ? {} : { limit: HISTORY_LIMIT }),
        deps.preferences(owner.tenantId, userId),
      ]);
      if (row === undefined) throw conversationNotFound();
      const presetRow = row.preset_id === null ? undefined : await findVisiblePreset(deps.db, owner, row.preset_id);
      const preset = presetRow === undefined ? null : (presetDocument(presetRow) as RelayPreset);
      const { history: texts, question } = historyOf(turn, messages);
      const { history, images } = await withFiles(deps.attachments, owner, turn, texts);
      const settings = replySettings(
        { asked: order.model, conversation: { model: row.model, temperature: row.temperature === null ? null : Number(row.temperature), maxTokens: row.max_tokens }, user: chatDefaults(preferences), preset },
        usable(resolved),
      );
      const contextTokens = contextLengthOf(settings.model, deps.settings);
      const request = replyRequest({ settings, stream: order.stream, systemPrompt: row.system_prompt, preset, history, contextTokens });
      const unread = Math.max(0, Number(row.message_count) - messages.length);
      plan = { owner, settings, omitted: unread + request.omitted, question, answerId: newMessageId(), firstExchange: turn.kind === 'send' && messages.length === 0 && row.title === null, fileImages: images.size === 0 ? undefined : images };
      return request.body;
    },

    parse: parseChatRequest,

    async relay(relay, exchange) {
      const current = plan!;
      const { conversationId } = order;
      const recorder = new ReplyRecorder(exchange.response);
      const generation = deps.stops.begin(conversationId, () => recorder.stop());
      const context = { tenantId: current.owner.tenantId, causationId: exchange.requestId };
      // The turn's own write, beside the upstream request: started once the reply's first bytes
      // went out, or WRITE_DELAY_MS after the request left, whichever comes first (the write's
      // work on the serving thread — the key read, the stream read, the decision — would
      // otherwise delay the first byte). A failure stops the generation.
      let writeError: unknown = null;
      let startWrite = () => {};
      const due = new Promise<void>((resolve) => (startWrite = resolve));
      const timer = setTimeout(startWrite, WRITE_DELAY_MS);
      recorder.afterFirstBytes(() => setImmediate(startWrite));
      const seal = due.then(() => deps.texts.sealerFor(current.owner, conversationId));
      const written = (async () => {
        const sealer = await seal;
        const { turn } = order;
        const command: ConversationCommand =
          turn.kind === 'send'
            ? { type: 'AppendMessage', messageId: current.question.id, role: 'user', content: sealer(messageField(current.question.id), turn.content), fileIds: turn.fileIds }
            : turn.kind === 'edit'
              ? { type: 'EditMessage', messageId: turn.messageId, content: sealer(messageField(turn.messageId), turn.content) }
              : { type: 'SupersedeLastReply' };
        return (await deps.commands.execute(conversations, conversationId, command, context)).position;
      })().catch((error: unknown) => {
        writeError = error;
        recorder.stop();
        return null;
      });

      let relayError: unknown = null;
      try {
        await relay.complete({ ...exchange, response: recorder, fileImages: current.fileImages });
      } catch (error) {
        relayError = error;
      } finally {
        generation.end();
        clearTimeout(timer);
        startWrite();
      }
      /**
       * What could not be stored is answered: as a JSON error while nothing went out, else as an
       * error event ending the stream (the client must not wait for a final event that never comes).
       */
      const failed = (cause: unknown): void => {
        deps.logger.error({ err: cause, request_id: exchange.requestId, conversation_id: conversationId }, 'the conversation turn could not be stored');
        const error = cause instanceof AppError ? cause : new AppError(500, 'server_error', 'conversation_not_stored', 'the conversation could not be stored');
        if (!recorder.started) throw error;
        if (!exchange.response.closed) finishStream(exchange.response, sseData({ error: { message: error.message, type: error.type, code: error.code, param: null } }));
      };

      let position = await written;
      if (writeError !== null) return failed(writeError);
      const gone = exchange.response.closed;
      const stopped = recorder.stopped || gone;
      const shown = (at: number | null) => (at === null ? Promise.resolve() : deps.runner.waitFor(at, { projections: ['conversations'] }));
      // A failure before any text (upstream refused, no channel...): the user message stays (readable
      // once the error is answered), no reply.
      if (relayError !== null && !stopped) {
        await shown(position).catch((error: unknown) => deps.logger.warn({ err: error, request_id: exchange.requestId }, 'conversation projection not reached'));
        throw relayError;
      }

      try {
        const text = recorder.text;
        const { data } = exchange.usage;
        const usage = { prompt_tokens: data.prompt_tokens, completion_tokens: data.completion_tokens, total_tokens: data.total_tokens };
        const answered = text !== '' || !stopped;
        if (answered) {
          const finishReason = stopped ? 'aborted' : (recorder.finishReason ?? (recorder.streamError !== null ? 'error' : 'stop'));
          const id = current.answerId;
          const sealer = await seal;
          const command: ConversationCommand = {
            type: 'AppendMessage',
            messageId: id,
            role: 'assistant',
            content: sealer(messageField(id), text),
            modelRequested: current.settings.model,
            modelServed: data.model_served,
            finishReason,
            usage,
            latencyMs: exchange.usage.elapsedMs(),
            usageRequestId: exchange.requestId,
          };
          position = (await deps.commands.execute(conversations, conversationId, command, context)).position ?? position;
          if (current.firstExchange && !stopped) deps.onFirstExchange({ request: exchange.request, caller: exchange.caller, conversationId, question: current.question.content, answer: text });
        }
        if (gone) return;

        // Read-your-writes: the final bytes go once the conversation shows the turn.
        await shown(position);
        const views = await deps.messages(conversationId, answered ? [current.question.id, current.answerId] : [current.question.id]);
        const reply: ConversationReply = {
          object: 'conversation.reply',
          conversation_id: conversationId,
          user_message: views.get(current.question.id) ?? null,
          assistant_message: answered ? (views.get(current.answerId) ?? null) : null,
          usage,
          usage_request_id: exchange.requestId,
          omitted_messages: current.omitted,
          stopped,
        };
        if (!order.stream) {
          exchange.response.send(200, JSON_CONTENT, JSON.stringify(reply));
          return;
        }
        if (!recorder.started) exchange.response.start(200, SSE_HEADERS);
        finishStream(exchange.response, sseData(reply));
      } catch (error) {
        failed(error);
      }
    },
  };
}

/** The stream's last event, `[DONE]` and its end (held by the gate until the usage event is durable). */
function finishStream(out: AnswerWriter, last: string): void {
  out.writeLast(last + SSE_DONE);
  out.end();
}

/** A message of the conversation as the read side has it. */
interface CurrentMessage {
  id: string;
  role: string;
  content: string;
  /** The files attached to it (JSON array), or null. */
  file_ids: string | null;
}

/** A history message with the ids of its files (not yet read). */
type TextMessage = HistoryMessage & { fileIds: readonly string[] };

const asText = (m: CurrentMessage): TextMessage => ({ role: m.role, content: m.content, fileIds: fileIdsOf(m.file_ids) });

/** The history the reply answers, and the user message it answers. */
function historyOf(turn: Turn, messages: readonly CurrentMessage[]): { history: TextMessage[]; question: Plan['question'] } {
  if (turn.kind === 'send') return { history: [...messages.map(asText), { role: 'user', content: turn.content, fileIds: turn.fileIds }], question: { id: newMessageId(), content: turn.content } };
  if (turn.kind === 'edit') {
    const at = messages.findIndex((m) => m.id === turn.messageId);
    if (at < 0) throw new NotFoundError('message not found', 'message_not_found');
    if (messages[at]!.role !== 'user') throw new BadRequestError('only user messages can be edited', 'message_not_editable', 'message_id');
    // The edited message keeps its files.
    return { history: [...messages.slice(0, at).map(asText), { role: 'user', content: turn.content, fileIds: fileIdsOf(messages[at]!.file_ids) }], question: { id: turn.messageId, content: turn.content } };
  }
  let end = messages.length;
  while (end > 0 && messages[end - 1]!.role === 'assistant') end -= 1;
  const last = messages[end - 1];
  if (last === undefined || last.role !== 'user') throw new BadRequestError('there is no user message to reply to', 'nothing_to_regenerate');
  return { history: messages.slice(0, end).map(asText), question: { id: last.id, content: last.content } };
}

/**
 * The history with each message's files as content parts (src/relay/files.ts). The files of a
 * message being sent must all be the user's and ready (404 / 409, param `file_ids[i]`); those of
 * earlier messages are used as far as they still exist (a deleted one becomes a note).
 * Conversations without files read nothing.
 */
async function withFiles(attachments: FileAttachments, owner: FileOwner, turn: Turn, texts: readonly TextMessage[]): Promise<{ history: HistoryMessage[]; images: Map<string, FileImage> }> {
  const images = new Map<string, FileImage>();
  const earlierIds: string[] = [];
  const sent = turn.kind === 'send' ? texts.at(-1) : undefined;
  for (const m of texts) if (m !== sent) earlierIds.push(...m.fileIds);
  if (earlierIds.length === 0 && (sent === undefined || sent.fileIds.length === 0)) return { history: [...texts], images };
  const [fresh, earlier] = await Promise.all([
    sent === undefined ? new Map<string, AttachedFile>() : attachAll(attachments, owner.userId, owner.tenantId, sent.fileIds.map((fileId, i) => ({ fileId, param: `file_ids[${i}]` }))),
    attachAvailable(attachments, owner, earlierIds),
  ]);
  const history = texts.map((m): HistoryMessage => {
    if (m.fileIds.length === 0) return { role: m.role, content: m.content };
    const fileParts = m.fileIds.map((id): ContentPart => {
      const file = m === sent ? fresh.get(id) : earlier.get(id);
      if (file === undefined || file === null) return missingFileText(id);
      const made = fileContent(file, m.role === 'user');
      if (made.image !== undefined) images.set(made.image.url, made.image);
      return made.part;
    });
    return { role: m.role, content: m.content, fileParts };
  });
  return { history, images };
}
