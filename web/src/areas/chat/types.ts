/** The API shapes the chat uses (server: src/conversations/views.ts, src/api/routes/*). */
export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export interface Conversation {
  id: string;
  object: 'conversation';
  title: string | null;
  model: string | null;
  preset_id: string | null;
  system_prompt?: string | null;
  temperature: number | null;
  max_tokens: number | null;
  pinned: boolean;
  archived: boolean;
  message_count: number;
  created_at: number;
  updated_at: number;
  last_message_at: number | null;
}

export interface Message {
  id: string;
  object: 'conversation.message';
  role: string;
  content: string;
  model: string | null;
  finish_reason: string | null;
  usage: Usage | null;
  file_ids: string[];
  created_at: number;
  edited_at: number | null;
}

export interface ConversationWithMessages extends Conversation {
  messages: Message[];
  has_more: boolean;
}

export interface Reply {
  object: 'conversation.reply';
  conversation_id: string;
  user_message: Message | null;
  assistant_message: Message | null;
  usage: Usage;
  omitted_messages: number;
  stopped: boolean;
}

export interface SearchHit extends Conversation {
  score: number;
  snippets: Array<{ field: 'title' | 'message'; text: string }>;
}

export interface SyncAnswer {
  object: 'conversation.sync';
  changes: Array<{ op: 'created' | 'updated' | 'deleted'; id: string }>;
  cursor: string;
  has_more: boolean;
}

export interface Model {
  id: string;
  capabilities: string[];
}

export interface Preset {
  id: string;
  builtin: boolean;
  name: string;
  description: string;
  avatar: string;
  category: string | null;
  tags: string[];
  model_preferences: string[];
  temperature: number | null;
  max_tokens: number | null;
  system_prompt: string | null;
}

export interface FileObject {
  id: string;
  filename: string;
  bytes: number;
  status: 'uploaded' | 'processing' | 'processed' | 'error';
  status_details: string | null;
}

export interface FileText {
  id: string;
  text: string;
  text_chars: number;
  truncated: boolean;
}
