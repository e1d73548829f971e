/**
 * Events of conversations: the aggregate `conversation-<id>`, in its owner's tenant (issue 17).
 *
 * Every user text (message content, title, system prompt) is a SEALED text (src/crypto/data-seal.ts,
 * `dk1.` envelope) made with the conversation's data key (src/ports/data-keys.ts, scope
 * `user:<userId>:conversation:<id>`, src/conversations/texts.ts): the log never holds it in the clear, and destroying the key when the
 * conversation (or its user) is deleted makes every copy unreadable (crypto-shredding). The schemas
 * refuse a clear string where a sealed one belongs.
 *
 * Other fields are deliberately loose (plain strings, not enums) so history written under older
 * rules always parses.
 */
import { z } from 'zod';
import { isSealedText } from '../../crypto/data-seal.js';

export const SealedTextSchema = z.string().refine(isSealedText, { message: 'expected a sealed text (dk1 envelope), never clear text' });

/** What a conversation sets for its replies; null means "the user's default". */
export const ConversationSettingsData = z.object({
  model: z.string().nullable(),
  preset_id: z.string().nullable(),
  temperature: z.number().nullable(),
  max_tokens: z.number().int().nullable(),
  system_prompt: SealedTextSchema.nullable(),
});
export type ConversationSettingsData = z.infer<typeof ConversationSettingsData>;

export const MessageUsageData = z.object({
  prompt_tokens: z.number().int(),
  completion_tokens: z.number().int(),
  total_tokens: z.number().int(),
});
export type MessageUsageData = z.infer<typeof MessageUsageData>;

export const ConversationStarted = z.object({
  type: z.literal('ConversationStarted'),
  data: ConversationSettingsData.extend({
    conversation_id: z.string(),
    /** The owner: only this user of this tenant reads or writes the conversation. */
    tenant_id: z.string(),
    user_id: z.string(),
    title: SealedTextSchema.nullable(),
  }),
});

export const ConversationMessageAppended = z.object({
  type: z.literal('ConversationMessageAppended'),
  data: z.object({
    message_id: z.string(),
    /** user | assistant | system */
    role: z.string(),
    content: SealedTextSchema,
    /** For assistant messages: the model asked for, and the one that answered (after routing/fallback). */
    model_requested: z.string().nullable(),
    model_served: z.string().nullable(),
    /** stop, length, content_filter, tool_calls, aborted... */
    finish_reason: z.string().nullable(),
    usage: MessageUsageData.nullable(),
    latency_ms: z.number().nullable(),
    /** The relay request whose usage event billed this reply. */
    usage_request_id: z.string().nullable(),
    /** User messages: the files attached (issue 18). Absent in older events and when none were. */
    file_ids: z.array(z.string()).optional(),
  }),
});

/** `generated`: a title made after the first exchange (a user's own title is never replaced by one). */
export const ConversationRenamed = z.object({ type: z.literal('ConversationRenamed'), data: z.object({ title: SealedTextSchema, generated: z.boolean().optional() }) });

/** Only the settings that changed. */
export const ConversationSettingsChanged = z.object({ type: z.literal('ConversationSettingsChanged'), data: ConversationSettingsData.partial() });

export const ConversationPinned = z.object({ type: z.literal('ConversationPinned'), data: z.object({}) });
export const ConversationUnpinned = z.object({ type: z.literal('ConversationUnpinned'), data: z.object({}) });
export const ConversationArchived = z.object({ type: z.literal('ConversationArchived'), data: z.object({}) });
export const ConversationUnarchived = z.object({ type: z.literal('ConversationUnarchived'), data: z.object({}) });

/**
 * A user message edited (to be re-sent): its content is replaced, and every message after it is
 * superseded (out of the conversation's current messages, still in the log).
 */
export const ConversationMessageEdited = z.object({
  type: z.literal('ConversationMessageEdited'),
  data: z.object({
    message_id: z.string(),
    content: SealedTextSchema,
    superseded_ids: z.array(z.string()),
  }),
});

/**
 * Messages taken out of the conversation without an edit (regenerate: the last assistant reply,
 * replaced by the reply that follows). Still in the log, no longer current.
 */
export const ConversationMessagesSuperseded = z.object({
  type: z.literal('ConversationMessagesSuperseded'),
  data: z.object({ superseded_ids: z.array(z.string()), reason: z.string() }),
});

/** The conversation is gone; its data key is destroyed beside this event, so its texts are too. */
export const ConversationDeleted = z.object({ type: z.literal('ConversationDeleted'), data: z.object({ by: z.string().nullable() }) });

export const ConversationEvent = z.discriminatedUnion('type', [
  ConversationStarted,
  ConversationMessageAppended,
  ConversationRenamed,
  ConversationSettingsChanged,
  ConversationPinned,
  ConversationUnpinned,
  ConversationArchived,
  ConversationUnarchived,
  ConversationMessageEdited,
  ConversationMessagesSuperseded,
  ConversationDeleted,
]);
export type ConversationEvent = z.infer<typeof ConversationEvent>;

export const CONVERSATION_EVENT_TYPES = [
  'ConversationStarted',
  'ConversationMessageAppended',
  'ConversationRenamed',
  'ConversationSettingsChanged',
  'ConversationPinned',
  'ConversationUnpinned',
  'ConversationArchived',
  'ConversationUnarchived',
  'ConversationMessageEdited',
  'ConversationMessagesSuperseded',
  'ConversationDeleted',
] as const satisfies ReadonlyArray<ConversationEvent['type']>;
