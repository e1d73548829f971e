/** Shapes of the API the shell uses (the full list is the server's /openapi.json). */
export type Theme = 'light' | 'dark' | 'system';

export interface Me {
  id: string;
  email: string;
  tenant_id: string;
  role: 'admin' | 'user';
  permissions: string[];
  mfa_enabled: boolean;
  preferences: Record<string, unknown>;
  chat_defaults: { theme: Theme; language: string; default_model: string | null; temperature: number; max_tokens: number };
}

export interface ListOf<T> {
  object: 'list';
  data: T[];
  has_more?: boolean;
  next_cursor?: string | null;
}
