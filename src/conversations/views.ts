/**
 * What a conversation and its messages look like to clients (`conversation`,
 * `conversation.message`), from their read-model rows: shared by the conversation routes and the
 * reply ingress (src/relay/ingress/conversations/), and the Markdown export.
 */
import { z } from 'zod';
import type { ConversationsTable } from '../adapters/sql/schema.js';
import type { MessageRow } from '../queries/conversations.js';

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
}).meta({ id: 'Conversation' });
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
  file_ids: z.array(z.string()).describe('the files attached to the message (POST /v1/files ids; empty when none)'),
  created_at: z.number().describe('unix seconds'),
  edited_at: z.number().nullable().describe('unix seconds: a user message edited and re-sent'),
}).meta({ id: 'Message' });
export type ConversationMessageView = z.infer<typeof ConversationMessageView>;

export const unixSeconds = (iso: string) => Math.floor(Date.parse(iso) / 1000);

/** A message's attached file ids, from its column (a JSON array written by the projection; null: none). */
export const fileIdsOf = (column: string | null): string[] => (column === null ? [] : (JSON.parse(column) as string[]));

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

export function messageView(row: MessageRow): ConversationMessageView {
  return {
    id: row.id,
    object: 'conversation.message',
    role: row.role,
    content: row.content,
    model: row.model_served ?? row.model_requested,
    finish_reason: row.finish_reason,
    usage: row.total_tokens === null ? null : { prompt_tokens: Number(row.prompt_tokens ?? 0), completion_tokens: Number(row.completion_tokens ?? 0), total_tokens: Number(row.total_tokens) },
    file_ids: fileIdsOf(row.file_ids),
    created_at: unixSeconds(row.created_at),
    edited_at: row.edited_at === null ? null : unixSeconds(row.edited_at),
  };
}

/** A conversation as Markdown: the title, then each message under its role. */
export function conversationMarkdown(view: ConversationView, messages: readonly ConversationMessageView[]): string {
  const lines = [`# ${view.title ?? 'Untitled conversation'}`, ''];
  const meta = [view.model && `Model: ${view.model}`, `Created: ${new Date(view.created_at * 1000).toISOString()}`].filter(Boolean);
  lines.push(`_${meta.join(' · ')}_`, '');
  if (view.system_prompt) lines.push('## System', '', view.system_prompt, '');
  for (const m of messages) {
    const who = m.role === 'user' ? 'User' : m.role === 'assistant' ? `Assistant${m.model ? ` (${m.model})` : ''}` : m.role.charAt(0).toUpperCase() + m.role.slice(1);
    lines.push(`## ${who}`, '', m.content, '');
  }
  return lines.join('\n');
}

/** An ASCII file name from the title (the id when nothing is left). */
export function exportFileName(view: ConversationView, extension: string): string {
  const slug = (view.title ?? '')
    .normalize('NFKD')
    .replace(/[^A-Za-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60)
    .toLowerCase();
  return `${slug || view.id}.${extension}`;
}

