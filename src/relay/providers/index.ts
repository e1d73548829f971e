/**
 * The provider registry: every channel kind, written once, with its conversion and its defaults.
 * `ChannelType` (src/relay/channel.ts) is derived from these keys, so adding a kind is one entry
 * here (plus a folder under providers/<kind>/ when it does not speak the OpenAI format).
 * OpenAI-compatible kinds share one implementation; each native kind has its own folder with
 * request, response and stream conversion side by side.
 */
import { anthropicProvider } from './anthropic/index.js';
import { azureProvider } from './azure/index.js';
import { bedrockBaseUrl } from './bedrock/request.js';
import { bedrockProvider } from './bedrock/index.js';
import { cohereProvider } from './cohere/index.js';
import { geminiProvider } from './gemini/index.js';
import { ollamaProvider } from './ollama/index.js';
import { openAiCompatibleProvider } from './openai-compatible/index.js';
import { azureResponsesCodec, openAiResponsesCodec } from './openai-compatible/native.js';
import type { Provider } from './provider.js';

export interface ProviderKind {
  /** Conversion between the OpenAI chat format and the kind's wire format. */
  provider: Provider;
  /**
   * Where the kind lives when the admin gives no base_url: a URL, a URL made from the channel's
   * `config` (bedrock's region), or null when there is no sensible default and the admin must
   * give one.
   */
  defaultBaseUrl: string | ((config: Record<string, unknown>) => string) | null;
}

const compatible = openAiCompatibleProvider();
/** Servers that reject `stream_options` or `n` > 1 get their own instance. */
const singleChoice = openAiCompatibleProvider({ multipleChoices: false });
/** OpenAI itself also speaks the Responses API (other compatible servers may not). */
const openai: Provider = { ...compatible, native: { 'openai-responses': openAiResponsesCodec } };
/** DeepSeek's chat API takes text only: images from files reach it as their recognised text. */
const textOnly: Provider = { ...singleChoice, imageTypes: new Set() };

export const PROVIDER_KINDS = {
  openai: { provider: openai, defaultBaseUrl: 'https://api.openai.com/v1' },
  azure: { provider: { ...azureProvider, native: { 'openai-responses': azureResponsesCodec } }, defaultBaseUrl: null }, // each resource has its own URL
  anthropic: { provider: anthropicProvider, defaultBaseUrl: 'https://api.anthropic.com' },
  gemini: { provider: geminiProvider, defaultBaseUrl: 'https://generativelanguage.googleapis.com' },
  bedrock: { provider: bedrockProvider, defaultBaseUrl: bedrockBaseUrl },
  ollama: { provider: ollamaProvider, defaultBaseUrl: 'http://127.0.0.1:11434' },
  cohere: { provider: cohereProvider, defaultBaseUrl: 'https://api.cohere.com' },
  mistral: { provider: singleChoice, defaultBaseUrl: 'https://api.mistral.ai/v1' },
  deepseek: { provider: textOnly, defaultBaseUrl: 'https://api.deepseek.com/v1' },
  groq: { provider: singleChoice, defaultBaseUrl: 'https://api.groq.com/openai/v1' },
  openrouter: { provider: compatible, defaultBaseUrl: 'https://openrouter.ai/api/v1' },
  xai: { provider: compatible, defaultBaseUrl: 'https://api.x.ai/v1' },
  moonshot: { provider: compatible, defaultBaseUrl: 'https://api.moonshot.cn/v1' },
  zhipu: { provider: singleChoice, defaultBaseUrl: 'https://open.bigmodel.cn/api/paas/v4' },
  qwen: { provider: compatible, defaultBaseUrl: 'https://dashscope.aliyuncs.com/compatible-mode/v1' },
  vllm: { provider: compatible, defaultBaseUrl: 'http://127.0.0.1:8000/v1' },
  llamacpp: { provider: singleChoice, defaultBaseUrl: 'http://127.0.0.1:8080/v1' },
  lmstudio: { provider: singleChoice, defaultBaseUrl: 'http://127.0.0.1:1234/v1' },
  custom: { provider: compatible, defaultBaseUrl: null }, // any OpenAI-compatible server
} satisfies Record<string, ProviderKind>;

export type ProviderKindName = keyof typeof PROVIDER_KINDS;

/** The kinds in registry order (the order of the OpenAPI enum). */
export const PROVIDER_KIND_NAMES = Object.keys(PROVIDER_KINDS) as [ProviderKindName, ...ProviderKindName[]];

/** kind -> provider: the relay's one lookup per attempt. */
export const PROVIDERS = Object.fromEntries(PROVIDER_KIND_NAMES.map((kind) => [kind, PROVIDER_KINDS[kind].provider])) as Record<ProviderKindName, Provider>;

/** Where a channel of this kind lives when the admin gives no base_url (null: none, it must be given). */
export function defaultBaseUrl(kind: ProviderKindName, config: Record<string, unknown>): string | null {
  const base: ProviderKind['defaultBaseUrl'] = PROVIDER_KINDS[kind].defaultBaseUrl;
  return typeof base === 'function' ? base(config) : base;
}

/** Kinds with no default base URL: a channel of theirs is refused without one. */
export function needsBaseUrl(kind: ProviderKindName): boolean {
  return PROVIDER_KINDS[kind].defaultBaseUrl === null;
}
