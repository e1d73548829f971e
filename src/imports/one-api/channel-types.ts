/**
 * one-api's channel types (relay/channeltype/define.go, an iota list) with their default base URLs
 * (relay/channeltype/url.go), as of songquanpeng/one-api 8df4a267 (2025-02-21), and the Switchyard
 * kind each maps to. one-api sends OpenAI-style requests to `{base_url}/v1/chat/completions`, so
 * those types append /v1; OpenAICompatible (50) keeps the versioned base as Switchyard does.
 */
import type { ChannelTypeTable } from '../gateways/channels.js';

const NATIVE = 'one-api converts to a native protocol Switchyard does not speak';
const V1 = '/v1';

export const ONE_API_CHANNEL_TYPES: ChannelTypeTable = {
  0: { name: 'Unknown', why: 'the type is unset' },
  1: { name: 'OpenAI', kind: 'openai', base: 'https://api.openai.com', path: V1 },
  2: { name: 'API2D', kind: 'custom', base: 'https://oa.api2d.net', path: V1 },
  3: { name: 'Azure', kind: 'azure' },
  4: { name: 'CloseAI', kind: 'custom', base: 'https://api.closeai-proxy.xyz', path: V1 },
  5: { name: 'OpenAISB', kind: 'custom', base: 'https://api.openai-sb.com', path: V1 },
  6: { name: 'OpenAIMax', kind: 'custom', base: 'https://api.openaimax.com', path: V1 },
  7: { name: 'OhMyGPT', kind: 'custom', base: 'https://api.ohmygpt.com', path: V1 },
  8: { name: 'Custom', kind: 'custom', path: V1 },
  9: { name: 'Ails', kind: 'custom', base: 'https://api.caipacity.com', path: V1 },
  10: { name: 'AIProxy', why: NATIVE },
  11: { name: 'PaLM', why: 'the PaLM API is retired' },
  12: { name: 'API2GPT', kind: 'custom', base: 'https://api.api2gpt.com', path: V1 },
  13: { name: 'AIGC2D', kind: 'custom', base: 'https://api.aigc2d.com', path: V1 },
  14: { name: 'Anthropic', kind: 'anthropic', base: 'https://api.anthropic.com' },
  15: { name: 'Baidu', why: NATIVE },
  16: { name: 'Zhipu', kind: 'zhipu', base: 'https://open.bigmodel.cn', path: '/api/paas/v4' },
  17: { name: 'Ali', kind: 'qwen', base: 'https://dashscope.aliyuncs.com', path: '/compatible-mode/v1' },
  18: { name: 'Xunfei', why: NATIVE },
  19: { name: 'AI360', kind: 'custom', base: 'https://ai.360.cn', path: V1 },
  20: { name: 'OpenRouter', kind: 'openrouter', base: 'https://openrouter.ai/api', path: V1 },
  21: { name: 'AIProxyLibrary', why: NATIVE },
  22: { name: 'FastGPT', why: NATIVE },
  23: { name: 'Tencent', why: NATIVE },
  24: { name: 'Gemini', kind: 'gemini', base: 'https://generativelanguage.googleapis.com' },
  25: { name: 'Moonshot', kind: 'moonshot', base: 'https://api.moonshot.cn', path: V1 },
  26: { name: 'Baichuan', kind: 'custom', base: 'https://api.baichuan-ai.com', path: V1 },
  27: { name: 'Minimax', why: NATIVE },
  28: { name: 'Mistral', kind: 'mistral', base: 'https://api.mistral.ai', path: V1 },
  29: { name: 'Groq', kind: 'groq', base: 'https://api.groq.com/openai', path: V1 },
  30: { name: 'Ollama', kind: 'ollama', base: 'http://localhost:11434' },
  31: { name: 'LingYiWanWu', kind: 'custom', base: 'https://api.lingyiwanwu.com', path: V1 },
  32: { name: 'StepFun', kind: 'custom', base: 'https://api.stepfun.com', path: V1 },
  33: { name: 'AwsClaude', kind: 'bedrock' },
  34: { name: 'Coze', why: NATIVE },
  35: { name: 'Cohere', kind: 'cohere', base: 'https://api.cohere.ai' },
  36: { name: 'DeepSeek', kind: 'deepseek', base: 'https://api.deepseek.com', path: V1 },
  37: { name: 'Cloudflare', why: NATIVE },
  38: { name: 'DeepL', why: 'a translation API, not a chat model' },
  39: { name: 'TogetherAI', kind: 'custom', base: 'https://api.together.xyz', path: V1 },
  40: { name: 'Doubao', why: NATIVE },
  41: { name: 'Novita', why: NATIVE },
  42: { name: 'VertextAI', why: NATIVE },
  43: { name: 'Proxy', why: 'a pass-through proxy, not a model API' },
  44: { name: 'SiliconFlow', kind: 'custom', base: 'https://api.siliconflow.cn', path: V1 },
  45: { name: 'XAI', kind: 'xai', base: 'https://api.x.ai', path: V1 },
  46: { name: 'Replicate', why: NATIVE },
  47: { name: 'BaiduV2', why: NATIVE },
  48: { name: 'XunfeiV2', why: NATIVE },
  49: { name: 'AliBailian', why: NATIVE },
  50: { name: 'OpenAICompatible', kind: 'custom' },
  51: { name: 'GeminiOpenAICompatible', kind: 'custom', base: 'https://generativelanguage.googleapis.com/v1beta/openai' },
};
