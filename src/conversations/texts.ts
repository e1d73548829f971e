/**
 * The texts of conversations (titles, system prompts, messages), sealed with the conversation's
 * data key (crypto-shredding: docs/decisions/0120-crypto-shredding.md). The one place that knows
 * the key's scope and each field's sealing context, for the routes (sealing) and the projection
 * (opening).
 *
 * Scope `user:<userId>:conversation:<conversationId>`: deleting a user is one
 * `destroyPrefix(userKeyPrefix(userId))`, including conversations not projected yet.
 * Context `conversation:<id>:<field>`: a sealed text moved to another conversation or field does
 * not open there.
 */
import { openText, sealText, type SealedText } from '../crypto/data-seal.js';
import type { DataKeys } from '../ports/data-keys.js';

export type ConversationTextField = { kind: 'title' } | { kind: 'system_prompt' } | { kind: 'message'; messageId: string };

export const TITLE: ConversationTextField = { kind: 'title' };
export const SYSTEM_PROMPT: ConversationTextField = { kind: 'system_prompt' };
export const messageField = (messageId: string): ConversationTextField => ({ kind: 'message', messageId });

/** Every data key of a user's conversations starts with this. */
export const userKeyPrefix = (userId: string) => `user:${userId}:`;

export const conversationKeyScope = (userId: string, conversationId: string) => `${userKeyPrefix(userId)}conversation:${conversationId}`;

export function sealingContext(conversationId: string, field: ConversationTextField): string {
  return field.kind === 'message' ? `conversation:${conversationId}:message:${field.messageId}` : `conversation:${conversationId}:${field.kind}`;
}

/** Opens with a key already read (the projection reads keys through its transaction). Throws on a wrong key or context. */
export function openConversationText(key: Buffer, conversationId: string, field: ConversationTextField, sealed: SealedText): string {
  return openText(key, sealed, sealingContext(conversationId, field));
}

/** Who owns the conversation: the key's scope is under the user. */
export interface ConversationKeyOwner {
  userId: string;
}

export class ConversationTexts {
  constructor(private readonly keys: DataKeys) {}

  /**
   * A sealer for one conversation: its key is made on first use (DataKeyDestroyedError once
   * the conversation, or its user, was deleted).
   */
  async sealerFor(owner: ConversationKeyOwner, conversationId: string): Promise<(field: ConversationTextField, text: string) => SealedText> {
    const scope = conversationKeyScope(owner.userId, conversationId);
    // Read first: the key exists from the conversation's start on, and a create is a write (on
    // SQLite, a transaction on the serving thread) that every message would pay for.
    const key = (await this.keys.get(scope)) ?? (await this.keys.create(scope));
    return (field, text) => sealText(key, text, sealingContext(conversationId, field));
  }

  async seal(owner: ConversationKeyOwner, conversationId: string, field: ConversationTextField, text: string): Promise<SealedText> {
    return (await this.sealerFor(owner, conversationId))(field, text);
  }

  /** The clear text, or null when the conversation's key is gone (deleted) or never existed. */
  async open(owner: ConversationKeyOwner, conversationId: string, field: ConversationTextField, sealed: SealedText): Promise<string | null> {
    const key = await this.keys.get(conversationKeyScope(owner.userId, conversationId));
    return key === null ? null : openConversationText(key, conversationId, field, sealed);
  }

  /** Crypto-shreds the conversation: every sealed copy of its texts (log, replicas, backups) becomes unreadable. */
  destroy(owner: ConversationKeyOwner, conversationId: string): Promise<void> {
    return this.keys.destroy(conversationKeyScope(owner.userId, conversationId));
  }
}
