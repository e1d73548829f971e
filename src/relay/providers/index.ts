/**
 * Every channel kind and its provider. OpenAI-compatible kinds share one implementation; each
 * native kind has its own folder with request, response and stream conversion side by side.
 */
import type { ChannelType } from '../channel.js';
import { anthropicProvider } from './anthropic/index.js';
import { azureProvider } from './azure/index.js';
import { bedrockProvider } from './bedrock/index.js';
import { cohereProvider } from './cohere/index.js';
import { geminiProvider } from './gemini/index.js';
import { ollamaProvider } from './ollama/index.js';
import { openAiCompatibleProvider } from './openai-compatible/index.js';
import type { Provider } from './provider.js';

const compatible = openAiCompatibleProvider();
/** Servers that reject `stream_options` or `n` > 1 get their own instance. */
const singleChoice = openAiCompatibleProvider({ multipleChoices: false });

export const PROVIDERS: Record<ChannelType, Provider> = {
  openai: compatible,
  azure: azureProvider,
  anthropic: anthropicProvider,
  gemini: geminiProvider,
  bedrock: bedrockProvider,
  ollama: ollamaProvider,
  cohere: cohereProvider,
  mistral: singleChoice,
  deepseek: singleChoice,
  groq: singleChoice,
  openrouter: compatible,
  xai: compatible,
  moonshot: compatible,
  zhipu: singleChoice,
  qwen: compatible,
  vllm: compatible,
  llamacpp: singleChoice,
  lmstudio: singleChoice,
  custom: compatible,
};

/** Where each kind lives when the admin gives no base_url. */
export function defaultBaseUrl(type: ChannelType, config: Record<string, unknown>): string | null {
  switch (type) {
    case 'openai':
      return 'https://api.openai.com/v1';
    case 'anthropic':
      return 'https://api.anthropic.com';
    case 'gemini':
      return 'https://generativelanguage.googleapis.com';
    case 'bedrock':
      return `https://bedrock-runtime.${typeof config.region === 'string' && config.region ? config.region : 'us-east-1'}.amazonaws.com`;
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
    case 'azure':
    case 'custom':
      return null;
  }
}
