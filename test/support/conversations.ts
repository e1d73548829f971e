/**
 * Conversations in tests: messages appended through the aggregate itself (sealed with the
 * conversation's data key, as the messages endpoint does), for tests of the read side that need
 * history without a relayed reply.
 */
import { randomUUID } from 'node:crypto';
import { conversations, type MessageRole } from '../../src/commands/conversations/decider.js';
import { ConversationTexts, messageField } from '../../src/conversations/texts.js';
import type { RunningApp } from './app.js';

export interface Owner {
  tenantId: string;
  userId: string;
}

export interface TestMessage {
  role: MessageRole;
  content: string;
  model?: string;
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
}

/** Appends the messages in order (one command each); answers their ids once projected. */
export async function appendMessages(s: RunningApp, owner: Owner, conversationId: string, messages: readonly TestMessage[]): Promise<string[]> {
  const seal = await new ConversationTexts(s.app.ctx.dataKeys).sealerFor(owner, conversationId);
  const ids: string[] = [];
  let position: number | null = null;
  for (const m of messages) {
    const id = `msg_${randomUUID().replace(/-/g, '')}`;
    const result = await s.app.ctx.commands.execute(
      conversations,
      conversationId,
      {
        type: 'AppendMessage',
        messageId: id,
        role: m.role,
        content: seal(messageField(id), m.content),
        modelRequested: m.model ?? null,
        modelServed: m.model ?? null,
        finishReason: m.role === 'assistant' ? 'stop' : null,
        usage: m.usage ?? null,
      },
      { tenantId: owner.tenantId },
    );
    position = result.position ?? position;
    ids.push(id);
  }
  if (position !== null) await s.app.ctx.runner.waitFor(position, { projections: ['conversations'] });
  return ids;
}
