/**
 * The channel form's state and its translation to and from the admin API (POST/PATCH
 * /v1/admin/channels). Pure functions: the page only draws them.
 */

/** The channel kinds, in the server's registry order (src/relay/providers/index.ts). */
export const CHANNEL_TYPES = [
  'openai',
  'azure',
  'anthropic',
  'gemini',
  'bedrock',
  'ollama',
  'cohere',
  'mistral',
  'deepseek',
  'groq',
  'openrouter',
  'xai',
  'moonshot',
  'zhipu',
  'qwen',
  'vllm',
  'llamacpp',
  'lmstudio',
  'custom',
] as const;
export type ChannelType = (typeof CHANNEL_TYPES)[number];

/** Where a kind lives without a base URL (null: the admin must give one). Bedrock's depends on the region. */
export function defaultBaseUrl(type: ChannelType, region = ''): string | null {
  switch (type) {
    case 'openai':
      return 'https://api.openai.com/v1';
    case 'azure':
    case 'custom':
      return null;
    case 'anthropic':
      return 'https://api.anthropic.com';
    case 'gemini':
      return 'https://generativelanguage.googleapis.com';
    case 'bedrock':
      return `https://bedrock-runtime.${region.trim() || 'us-east-1'}.amazonaws.com`;
    case 'ollama':
      return 'http://127.0.0.1:11434';
    case 'cohere':
      return 'https://api.cohere.com';
    case 'mistral':
      return 'https://api.mistral.ai/v1';
    case 'deepseek':
      return 'https://api.deepseek.com/v1';
    case 'groq':
      return 'https://api.groq.com/openai/v1';
    case 'openrouter':
      return 'https://openrouter.ai/api/v1';
    case 'xai':
      return 'https://api.x.ai/v1';
    case 'moonshot':
      return 'https://api.moonshot.cn/v1';
    case 'zhipu':
      return 'https://open.bigmodel.cn/api/paas/v4';
    case 'qwen':
      return 'https://dashscope.aliyuncs.com/compatible-mode/v1';
    case 'vllm':
      return 'http://127.0.0.1:8000/v1';
    case 'llamacpp':
      return 'http://127.0.0.1:8080/v1';
    case 'lmstudio':
      return 'http://127.0.0.1:1234/v1';
  }
}

/** A `config` key the relay reads for a kind: offered as its own field (the rest: raw JSON). */
export interface ConfigField {
  name: 'organization' | 'deployment' | 'api_version' | 'default_max_tokens' | 'region' | 'embedding_models';
  kind: 'text' | 'number' | 'list';
  /** What the relay uses when the field is empty. */
  placeholder?: string;
}

const NATIVE = new Set<ChannelType>(['azure', 'anthropic', 'gemini', 'bedrock', 'ollama', 'cohere']);
/** Kinds the relay sends embeddings to: all but anthropic (README "The relay"). */
const EMBEDDINGS = (type: ChannelType) => type !== 'anthropic';

/** The config keys the relay reads for each kind (src/relay/providers/<kind>/). */
export function configFields(type: ChannelType): ConfigField[] {
  const fields: ConfigField[] = [];
  if (!NATIVE.has(type)) fields.push({ name: 'organization', kind: 'text' });
  if (type === 'azure') fields.push({ name: 'deployment', kind: 'text' }, { name: 'api_version', kind: 'text', placeholder: '2024-10-21' });
  if (type === 'anthropic') fields.push({ name: 'api_version', kind: 'text', placeholder: '2023-06-01' }, { name: 'default_max_tokens', kind: 'number', placeholder: '4096' });
  if (type === 'bedrock') fields.push({ name: 'region', kind: 'text', placeholder: 'us-east-1' });
  if (EMBEDDINGS(type)) fields.push({ name: 'embedding_models', kind: 'list' });
  return fields;
}

export interface MappingRow {
  from: string;
  to: string;
}

export interface ChannelForm {
  name: string;
  type: ChannelType;
  baseUrl: string;
  /** The provider key; on edit, empty keeps the stored one. */
  key: string;
  /** Bedrock's credentials, joined into the key as ACCESS_KEY_ID:SECRET[:SESSION_TOKEN]. */
  awsAccessKeyId: string;
  awsSecret: string;
  awsSessionToken: string;
  models: string[];
  mapping: MappingRow[];
  priority: string;
  weight: string;
  enabled: boolean;
  requestsPerMinute: string;
  tokensPerMinute: string;
  maxRetries: string;
  backoffMultiplier: string;
  fallbackFor: string[];
  /** Known config fields as typed (lists one entry a line). */
  config: Partial<Record<ConfigField['name'], string>>;
  /** Every other config key, as a JSON object text. */
  extraConfig: string;
}

/** The channel as the API answers it (the parts the form reads). */
export interface ChannelView {
  id: string;
  name: string;
  type: ChannelType;
  base_url: string | null;
  effective_base_url: string | null;
  key: string;
  models: string[];
  model_mapping: Record<string, string>;
  priority: number;
  weight: number;
  enabled: boolean;
  config: Record<string, unknown>;
  rate_limits: { requests_per_minute: number | null; tokens_per_minute: number | null } | null;
  retry_config: { max_retries: number | null; backoff_multiplier: number | null } | null;
  fallback_for: string[];
  health: { healthy: boolean; cooldown_until: string | null; reason: string | null };
  /** broken: its key does not open with the server's SECRET (the relay skips it). */
  status?: 'ok' | 'broken';
  status_reason?: string | null;
  last_test: { ok: boolean; status: number | null; latency_ms: number | null; error: string | null; tested_at: string } | null;
  created_at: string;
  updated_at: string;
}

export function emptyForm(type: ChannelType = 'openai'): ChannelForm {
  return {
    name: '',
    type,
    baseUrl: '',
    key: '',
    awsAccessKeyId: '',
    awsSecret: '',
    awsSessionToken: '',
    models: [],
    mapping: [],
    priority: '0',
    weight: '1',
    enabled: true,
    requestsPerMinute: '',
    tokensPerMinute: '',
    maxRetries: '',
    backoffMultiplier: '',
    fallbackFor: [],
    config: {},
    extraConfig: '',
  };
}

const text = (n: number | null | undefined) => (n === null || n === undefined ? '' : String(n));

/** The form for editing a stored channel (the key stays empty: it is write-only). */
export function formOf(channel: ChannelView): ChannelForm {
  const known = new Set<string>(configFields(channel.type).map((f) => f.name));
  const config: ChannelForm['config'] = {};
  const extra: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(channel.config)) {
    if (!known.has(name)) extra[name] = value;
    else if (Array.isArray(value)) config[name as ConfigField['name']] = value.map(String).join('\n');
    else if (typeof value === 'string' || typeof value === 'number') config[name as ConfigField['name']] = String(value);
    else extra[name] = value; // an odd shape stays editable as JSON
  }
  return {
    ...emptyForm(channel.type),
    name: channel.name,
    baseUrl: channel.base_url ?? '',
    models: [...channel.models],
    mapping: Object.entries(channel.model_mapping).map(([from, to]) => ({ from, to })),
    priority: String(channel.priority),
    weight: String(channel.weight),
    enabled: channel.enabled,
    requestsPerMinute: text(channel.rate_limits?.requests_per_minute),
    tokensPerMinute: text(channel.rate_limits?.tokens_per_minute),
    maxRetries: text(channel.retry_config?.max_retries),
    backoffMultiplier: text(channel.retry_config?.backoff_multiplier),
    fallbackFor: [...channel.fallback_for],
    config,
    extraConfig: Object.keys(extra).length ? JSON.stringify(extra, null, 2) : '',
  };
}

/** Adds an entry to a list (trimmed; blanks and repeats ignored). */
export function addToList(list: readonly string[], entry: string): string[] {
  const value = entry.trim();
  return value === '' || list.includes(value) ? [...list] : [...list, value];
}

/** Entries of a text with one per line or separated by commas. */
export function listOf(value: string): string[] {
  return [
    ...new Set(
      value
        .split(/[\n,]/)
        .map((s) => s.trim())
        .filter(Boolean),
    ),
  ];
}

/** A form field the client refuses before sending, with why. */
export interface FormProblem {
  field: 'mapping' | 'priority' | 'weight' | 'requestsPerMinute' | 'tokensPerMinute' | 'maxRetries' | 'backoffMultiplier' | 'extraConfig' | `config.${ConfigField['name']}`;
  problem: 'number' | 'json' | 'incomplete' | 'duplicate';
}

export type BodyResult = { ok: true; body: Record<string, unknown> } | ({ ok: false } & FormProblem);

class Problem extends Error {
  constructor(readonly detail: FormProblem) {
    super(detail.field);
  }
}

/** '' -> null; a number -> it; anything else a problem of `field`. */
function numberOf(value: string, field: FormProblem['field'], integer = true): number | null {
  const v = value.trim();
  if (v === '') return null;
  const n = Number(v);
  if (!Number.isFinite(n) || (integer && !Number.isInteger(n))) throw new Problem({ field, problem: 'number' });
  return n;
}

/** The mapping rows as the API's object (blank rows skipped). */
export function mappingOf(rows: readonly MappingRow[]): Record<string, string> {
  const mapping: Record<string, string> = {};
  for (const row of rows) {
    const from = row.from.trim();
    const to = row.to.trim();
    if (from === '' && to === '') continue;
    if (from === '' || to === '') throw new Problem({ field: 'mapping', problem: 'incomplete' });
    if (Object.hasOwn(mapping, from)) throw new Problem({ field: 'mapping', problem: 'duplicate' });
    mapping[from] = to;
  }
  return mapping;
}

/** The config object: the raw JSON, then the known fields of the kind over it. */
export function configOf(form: ChannelForm): Record<string, unknown> {
  let config: Record<string, unknown> = {};
  if (form.extraConfig.trim() !== '') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(form.extraConfig);
    } catch {
      throw new Problem({ field: 'extraConfig', problem: 'json' });
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Problem({ field: 'extraConfig', problem: 'json' });
    config = { ...(parsed as Record<string, unknown>) };
  }
  for (const field of configFields(form.type)) {
    const raw = form.config[field.name] ?? '';
    if (raw.trim() === '') continue;
    if (field.kind === 'number') config[field.name] = numberOf(raw, `config.${field.name}`);
    else if (field.kind === 'list') config[field.name] = listOf(raw);
    else config[field.name] = raw.trim();
  }
  return config;
}

/** The key to send: bedrock's three parts joined; '' when nothing was typed. */
export function keyOf(form: ChannelForm): string {
  if (form.type !== 'bedrock') return form.key;
  const parts = [form.awsAccessKeyId.trim(), form.awsSecret.trim(), form.awsSessionToken.trim()];
  if (!parts[0] && !parts[1]) return form.key;
  return parts[2] ? parts.join(':') : `${parts[0]}:${parts[1]}`;
}

/**
 * The request body for POST (create) or PATCH (edit). Edit sends every field (they replace), but
 * the key only when one was typed. The server validates the rest (names, URLs, ranges).
 */
export function bodyOf(form: ChannelForm, mode: 'create' | 'edit'): BodyResult {
  try {
    const rpm = numberOf(form.requestsPerMinute, 'requestsPerMinute');
    const tpm = numberOf(form.tokensPerMinute, 'tokensPerMinute');
    const retries = numberOf(form.maxRetries, 'maxRetries');
    const backoff = numberOf(form.backoffMultiplier, 'backoffMultiplier', false);
    const body: Record<string, unknown> = {
      name: form.name.trim(),
      type: form.type,
      base_url: form.baseUrl.trim() || null,
      models: [...form.models],
      model_mapping: mappingOf(form.mapping),
      priority: numberOf(form.priority, 'priority') ?? 0,
      weight: numberOf(form.weight, 'weight') ?? 1,
      enabled: form.enabled,
      config: configOf(form),
      rate_limits: rpm === null && tpm === null ? null : { requests_per_minute: rpm, tokens_per_minute: tpm },
      retry_config: retries === null && backoff === null ? null : { ...(retries !== null && { max_retries: retries }), ...(backoff !== null && { backoff_multiplier: backoff }) },
      fallback_for: [...form.fallbackFor],
    };
    const key = keyOf(form);
    if (mode === 'create' || key !== '') body.key = key;
    return { ok: true, body };
  } catch (error) {
    if (error instanceof Problem) return { ok: false, ...error.detail };
    throw error;
  }
}

/** The health a channel shows in the list. */
export type HealthState = 'disabled' | 'broken' | 'healthy' | 'cooling' | 'unhealthy';

export function healthOf(channel: Pick<ChannelView, 'enabled' | 'health' | 'status'>, now = Date.now()): HealthState {
  if (!channel.enabled) return 'disabled';
  if (channel.status === 'broken') return 'broken';
  if (channel.health.healthy) return 'healthy';
  if (channel.health.cooldown_until && Date.parse(channel.health.cooldown_until) > now) return 'cooling';
  return 'unhealthy';
}

/** The channels whose name, type, base URL or a model contains every word of `query` (case-insensitive). */
export function filterChannels<C extends Pick<ChannelView, 'name' | 'type' | 'models' | 'effective_base_url'>>(channels: readonly C[], query: string): C[] {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  if (!words.length) return [...channels];
  return channels.filter((c) => {
    const text = [c.name, c.type, c.effective_base_url ?? '', ...c.models].join('\n').toLowerCase();
    return words.every((w) => text.includes(w));
  });
}
