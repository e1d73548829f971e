/**
 * new-api's channel types (common/constants.go ChannelType*, later constant/channel.go) with their
 * default base URLs (ChannelBaseURLs), as of Calcium-Ion/new-api ef8ae4db (2025-04-11), plus the
 * later types 49-57 of QuantumNous/new-api; the Switchyard kind each maps to. new-api numbers
 * differ from one-api's from 2 on (its 4 is Ollama, 42 Mistral, 43 DeepSeek, 48 xAI). OpenAI-style
 * requests go to `{base_url}/v1/chat/completions`, except Custom (8), whose base_url is the whole
 * request URL, and Perplexity (`{base_url}/chat/completions`).
 */
import type { ChannelTypeTable } from '../gateways/channels.js';

const NATIVE = 'new-api converts to a native protocol Switchyard does not speak';
const TASKS = 'an image, video or music task API, not chat';
const V1 = '/v1';

export const NEW_API_CHANNEL_TYPES: ChannelTypeTable = {
  0: { name: 'Unknown', why: 'the type is unset' },
  1: { name: 'OpenAI', kind: 'openai', base: 'https://api.openai.com', path: V1 },
  2: { name: 'Midjourney', why: TASKS },
  3: { name: 'Azure', kind: 'azure' },
  4: { name: 'Ollama', kind: 'ollama', base: 'http://localhost:11434' },
  5: { name: 'MidjourneyPlus', why: TASKS },
  6: { name: 'OpenAIMax', kind: 'custom', base: 'https://api.openaimax.com', path: V1 },
  7: { name: 'OhMyGPT', kind: 'custom', base: 'https://api.ohmygpt.com', path: V1 },
  8: { name: 'Custom', kind: 'custom', fullUrl: true },
  9: { name: 'AILS', kind: 'custom', base: 'https://api.caipacity.com', path: V1 },
  10: { name: 'AIProxy', why: NATIVE },
  11: { name: 'PaLM', why: 'the PaLM API is retired' },
  12: { name: 'API2GPT', kind: 'custom', base: 'https://api.api2gpt.com', path: V1 },
  13: { name: 'AIGC2D', kind: 'custom', base: 'https://api.aigc2d.com', path: V1 },
  14: { name: 'Anthropic', kind: 'anthropic', base: 'https://api.anthropic.com' },
  15: { name: 'Baidu', why: NATIVE },
  16: { name: 'Zhipu', kind: 'zhipu', base: 'https://open.bigmodel.cn', path: '/api/paas/v4' },
  17: { name: 'Ali', kind: 'qwen', base: 'https://dashscope.aliyuncs.com', path: '/compatible-mode/v1' },
  18: { name: 'Xunfei', why: NATIVE },
  19: { name: '360', kind: 'custom', base: 'https://api.360.cn', path: V1 },
  20: { name: 'OpenRouter', kind: 'openrouter', base: 'https://openrouter.ai/api', path: V1 },
  21: { name: 'AIProxyLibrary', why: NATIVE },
  22: { name: 'FastGPT', why: NATIVE },
  23: { name: 'Tencent', why: NATIVE },
  24: { name: 'Gemini', kind: 'gemini', base: 'https://generativelanguage.googleapis.com' },
  25: { name: 'Moonshot', kind: 'moonshot', base: 'https://api.moonshot.cn', path: V1 },
  26: { name: 'ZhipuV4', kind: 'zhipu', base: 'https://open.bigmodel.cn', path: '/api/paas/v4' },
  27: { name: 'Perplexity', kind: 'custom', base: 'https://api.perplexity.ai' },
  31: { name: 'LingYiWanWu', kind: 'custom', base: 'https://api.lingyiwanwu.com', path: V1 },
  33: { name: 'AWS', kind: 'bedrock' },
  34: { name: 'Cohere', kind: 'cohere', base: 'https://api.cohere.ai' },
  35: { name: 'MiniMax', why: NATIVE },
  36: { name: 'SunoAPI', why: TASKS },
  37: { name: 'Dify', why: NATIVE },
  38: { name: 'Jina', why: 'embeddings and rerank only' },
  39: { name: 'Cloudflare', why: NATIVE },
  40: { name: 'SiliconFlow', kind: 'custom', base: 'https://api.siliconflow.cn', path: V1 },
  41: { name: 'VertexAI', why: NATIVE },
  42: { name: 'Mistral', kind: 'mistral', base: 'https://api.mistral.ai', path: V1 },
  43: { name: 'DeepSeek', kind: 'deepseek', base: 'https://api.deepseek.com', path: V1 },
  44: { name: 'MokaAI', why: 'embeddings only' },
  45: { name: 'VolcEngine', why: NATIVE },
  46: { name: 'BaiduV2', why: NATIVE },
  47: { name: 'Xinference', kind: 'custom', path: V1 },
  48: { name: 'xAI', kind: 'xai', base: 'https://api.x.ai', path: V1 },
  49: { name: 'Coze', why: NATIVE },
  50: { name: 'Kling', why: TASKS },
  51: { name: 'Jimeng', why: TASKS },
  52: { name: 'Vidu', why: TASKS },
  53: { name: 'Submodel', why: NATIVE },
  54: { name: 'DoubaoVideo', why: TASKS },
  55: { name: 'Sora', why: TASKS },
  56: { name: 'Replicate', why: NATIVE },
  57: { name: 'Codex', why: NATIVE },
};
