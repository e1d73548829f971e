/**
 * Conversations (issue 17): the aggregate `conversation-<id>`, in its owner's tenant.
 *
 * Commands carry user texts already SEALED with the conversation's data key (src/crypto/data-seal.ts):
 * the caller looks the key up (src/ports/data-keys.ts) and seals; the decider stays pure and refuses
 * anything that is not a sealed envelope, so clear text cannot reach the log by mistake.
 *
 * Ownership: the started event names the owner (tenant_id, user_id) and the state exposes it; the
 * route (next step) answers 404 to anyone else — another user, another tenant, admins — before
 * deciding anything. Commands therefore carry no caller.
 */
import { BadRequestError, ConflictError, DomainError, NotFoundError } from '../../errors.js';
import { isSealedText, type SealedText } from '../../crypto/data-seal.js';
import type { Decider } from '../decider.js';
import { ConversationEvent, type ConversationSettingsData, type MessageUsageData } from './events.js';

export type MessageRole = 'user' | 'assistant' | 'system';
export const MESSAGE_ROLES: readonly MessageRole[] = ['user', 'assistant', 'system'];

export interface ConversationSettings {
  model: string | null;
  presetId: string | null;
  temperature: number | null;
  maxTokens: number | null;
  systemPrompt: SealedText | null;
}

export interface CurrentMessage {
  id: string;
  role: string;
}

export interface ConversationState {
  status: 'none' | 'active' | 'deleted';
  tenantId: string | null;
  userId: string | null;
  settings: ConversationSettings;
  pinned: boolean;
  archived: boolean;
  /** A title is set (given at start, renamed, or generated): a generated title never replaces it. */
  titled: boolean;
  /** The conversation as it reads now, oldest first (superseded messages left out). */
  messages: readonly CurrentMessage[];
  /** Every message id the stream ever appended, superseded ones included (ids are never reused). */
  messageIds: ReadonlySet<string>;
}

export type ConversationCommand =
  | { type: 'StartConversation'; conversationId: string; tenantId: string; userId: string; title: SealedText | null; settings: Partial<ConversationSettings> }
  | {
      type: 'AppendMessage';
      messageId: string;
      role: MessageRole;
      content: SealedText;
      modelRequested?: string | null;
      modelServed?: string | null;
      finishReason?: string | null;
      usage?: MessageUsageData | null;
      latencyMs?: number | null;
      usageRequestId?: string | null;
      /** The files attached to the message (the caller checked they are the user's and ready). */
      fileIds?: readonly string[];
    }
  /** `generated`: a title made after the first exchange; ignored once the conversation has a title. */
  | { type: 'RenameConversation'; title: SealedText; generated?: boolean }
  | { type: 'ChangeConversationSettings'; changes: Partial<ConversationSettings> }
  | { type: 'PinConversation' }
  | { type: 'UnpinConversation' }
  | { type: 'ArchiveConversation' }
  | { type: 'UnarchiveConversation' }
  | { type: 'EditMessage'; messageId: string; content: SealedText }
  /** Regenerate: the assistant replies after the last user message leave the conversation (none: nothing). */
  | { type: 'SupersedeLastReply' }
  | { type: 'DeleteConversation'; by: string | null };

const NO_SETTINGS: ConversationSettings = { model: null, presetId: null, temperature: null, maxTokens: null, systemPrompt: null };

/** Missing, deleted, or someone else's: the same answer. */
export const conversationNotFound = () => new NotFoundError('conversation not found', 'conversation_not_found');

function sealed(value: string, field: string): SealedText {
  if (!isSealedText(value)) throw new DomainError(`${field} must be sealed with the conversation's data key`, 'not_sealed');
  return value;
}

function checkSettings(settings: Partial<ConversationSettings>): void {
  const { temperature, maxTokens, systemPrompt } = settings;
  if (temperature !== undefined && temperature !== null && !(temperature >= 0 && temperature <= 2)) {
    throw new BadRequestError('temperature must be between 0 and 2', 'invalid_temperature', 'temperature');
  }
  if (maxTokens !== undefined && maxTokens !== null && !(Number.isInteger(maxTokens) && maxTokens > 0)) {
    throw new BadRequestError('max_tokens must be a positive integer', 'invalid_max_tokens', 'max_tokens');
  }
  if (systemPrompt !== undefined && systemPrompt !== null) sealed(systemPrompt, 'system_prompt');
}

function toData(settings: Partial<ConversationSettings>): Partial<ConversationSettingsData> {
  const data: Partial<ConversationSettingsData> = {};
  if (settings.model !== undefined) data.model = settings.model;
  if (settings.presetId !== undefined) data.preset_id = settings.presetId;
  if (settings.temperature !== undefined) data.temperature = settings.temperature;
  if (settings.maxTokens !== undefined) data.max_tokens = settings.maxTokens;
  if (settings.systemPrompt !== undefined) data.system_prompt = settings.systemPrompt;
  return data;
}

function fromData(data: Partial<ConversationSettingsData>): Partial<ConversationSettings> {
  const settings: Partial<ConversationSettings> = {};
  if (data.model !== undefined) settings.model = data.model;
  if (data.preset_id !== undefined) settings.presetId = data.preset_id;
  if (data.temperature !== undefined) settings.temperature = data.temperature;
  if (data.max_tokens !== undefined) settings.maxTokens = data.max_tokens;
  if (data.system_prompt !== undefined) settings.systemPrompt = data.system_prompt;
  return settings;
}

/** The settings that differ from the current ones. A sealed system prompt always differs (fresh IV each seal). */
function changedSettings(current: ConversationSettings, changes: Partial<ConversationSettings>): Partial<ConversationSettings> {
  const changed: Partial<ConversationSettings> = {};
  for (const key of Object.keys(NO_SETTINGS) as Array<keyof ConversationSettings>) {
    const value = changes[key];
    if (value !== undefined && value !== current[key]) (changed as Record<string, unknown>)[key] = value;
  }
  return changed;
}

function live(state: ConversationState): void {
  if (state.status !== 'active') throw conversationNotFound();
}

export const conversations: Decider<ConversationCommand, ConversationState, ConversationEvent> = {
  category: 'conversation',
  initialState: { status: 'none', tenantId: null, userId: null, settings: NO_SETTINGS, pinned: false, archived: false, titled: false, messages: [], messageIds: new Set() },
  events: ConversationEvent,

  decide(command, state) {
    switch (command.type) {
      case 'StartConversation': {
        if (state.status !== 'none') throw new ConflictError('conversation already exists', 'conversation_exists');
        checkSettings(command.settings);
        const title = command.title === null ? null : sealed(command.title, 'title');
        const settings = { ...NO_SETTINGS, ...definedOnly(command.settings) };
        return [
          {
            type: 'ConversationStarted',
            data: { conversation_id: command.conversationId, tenant_id: command.tenantId, user_id: command.userId, title, ...(toData(settings) as ConversationSettingsData) },
          },
        ];
      }
      case 'AppendMessage': {
        live(state);
        if (!MESSAGE_ROLES.includes(command.role)) throw new BadRequestError(`role must be one of ${MESSAGE_ROLES.join(', ')}`, 'invalid_role', 'role');
        const content = sealed(command.content, 'content');
        // The same id again is a retried command: it was appended already.
        if (state.messageIds.has(command.messageId)) return [];
        return [
          {
            type: 'ConversationMessageAppended',
            data: {
              message_id: command.messageId,
              role: command.role,
              content,
              model_requested: command.modelRequested ?? null,
              model_served: command.modelServed ?? null,
              finish_reason: command.finishReason ?? null,
              usage: command.usage ?? null,
              latency_ms: command.latencyMs ?? null,
              usage_request_id: command.usageRequestId ?? null,
              // Only when there are some: events without files keep the shape they always had.
              ...(command.fileIds !== undefined && command.fileIds.length > 0 ? { file_ids: [...command.fileIds] } : {}),
            },
          },
        ];
      }
      case 'RenameConversation': {
        live(state);
        const title = sealed(command.title, 'title');
        if (command.generated === true) return state.titled ? [] : [{ type: 'ConversationRenamed', data: { title, generated: true } }];
        return [{ type: 'ConversationRenamed', data: { title } }];
      }
      case 'ChangeConversationSettings': {
        live(state);
        checkSettings(command.changes);
        const changed = changedSettings(state.settings, command.changes);
        return Object.keys(changed).length === 0 ? [] : [{ type: 'ConversationSettingsChanged', data: toData(changed) }];
      }
      case 'PinConversation':
        live(state);
        return state.pinned ? [] : [{ type: 'ConversationPinned', data: {} }];
      case 'UnpinConversation':
        live(state);
        return state.pinned ? [{ type: 'ConversationUnpinned', data: {} }] : [];
      case 'ArchiveConversation':
        live(state);
        return state.archived ? [] : [{ type: 'ConversationArchived', data: {} }];
      case 'UnarchiveConversation':
        live(state);
        return state.archived ? [{ type: 'ConversationUnarchived', data: {} }] : [];
      case 'EditMessage': {
        live(state);
        const content = sealed(command.content, 'content');
        const at = state.messages.findIndex((m) => m.id === command.messageId);
        // A superseded message is no longer part of the conversation: as unknown as a missing one.
        if (at < 0) throw new NotFoundError('message not found', 'message_not_found');
        if (state.messages[at]!.role !== 'user') throw new BadRequestError('only user messages can be edited', 'message_not_editable', 'message_id');
        return [{ type: 'ConversationMessageEdited', data: { message_id: command.messageId, content, superseded_ids: state.messages.slice(at + 1).map((m) => m.id) } }];
      }
      case 'SupersedeLastReply': {
        live(state);
        let at = state.messages.length;
        while (at > 0 && state.messages[at - 1]!.role === 'assistant') at -= 1;
        const ids = state.messages.slice(at).map((m) => m.id);
        return ids.length === 0 ? [] : [{ type: 'ConversationMessagesSuperseded', data: { superseded_ids: ids, reason: 'regenerate' } }];
      }
      case 'DeleteConversation':
        if (state.status === 'deleted') return [];
        live(state);
        return [{ type: 'ConversationDeleted', data: { by: command.by } }];
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'ConversationStarted': {
        const { conversation_id: _id, tenant_id, user_id, title: _title, ...settings } = event.data;
        return { ...state, status: 'active', tenantId: tenant_id, userId: user_id, titled: event.data.title !== null, settings: { ...NO_SETTINGS, ...fromData(settings) } };
      }
      case 'ConversationMessageAppended':
        return {
          ...state,
          messages: [...state.messages, { id: event.data.message_id, role: event.data.role }],
          messageIds: new Set(state.messageIds).add(event.data.message_id),
        };
      case 'ConversationRenamed':
        return state.titled ? state : { ...state, titled: true };
      case 'ConversationSettingsChanged':
        return { ...state, settings: { ...state.settings, ...fromData(event.data) } };
      case 'ConversationPinned':
        return { ...state, pinned: true };
      case 'ConversationUnpinned':
        return { ...state, pinned: false };
      case 'ConversationArchived':
        return { ...state, archived: true };
      case 'ConversationUnarchived':
        return { ...state, archived: false };
      case 'ConversationMessagesSuperseded':
      case 'ConversationMessageEdited': {
        const superseded = new Set(event.data.superseded_ids);
        return { ...state, messages: state.messages.filter((m) => !superseded.has(m.id)) };
      }
      case 'ConversationDeleted':
        return { ...state, status: 'deleted', messages: [] };
    }
  },
};

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
