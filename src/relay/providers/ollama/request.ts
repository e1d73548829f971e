/**
 * OpenAI chat request -> Ollama native `/api/chat` request.
 *
 * Decisions where the formats differ:
 * - Images: data: URLs go to the message's `images` (bare base64); remote URLs -> 400.
 * - Tool calls carry their arguments as an object (a non-object/invalid JSON string -> 400).
 *   A tool message gets `tool_name` looked up from the assistant call it answers.
 * - `tool_choice`: auto -> as is, none -> tools left out; required / a named function cannot be
 *   enforced by Ollama -> 400.
 * - `response_format` json_object -> `format: "json"`, json_schema -> `format: <schema>`.
 * - `n` > 1 -> 400; `user`, `parallel_tool_calls` are dropped. `stream` is always sent
 *   (Ollama streams when it is absent).
 */
import type { ChatCompletionRequest, Message } from '../../schema.js';
import type { ProviderContext, UpstreamRequest } from '../provider.js';
import { defined, functionTool, joinUrl, maxTokensOf, parseDataUrl, refuseFields, stopSequencesOf, textOf, toolArguments, unsupported } from '../shared.js';

export const OLLAMA_DEFAULT_BASE_URL = 'http://127.0.0.1:11434';

export interface OllamaMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  images?: string[];
  tool_calls?: Array<{ function: { name: string; arguments: Record<string, unknown> } }>;
  tool_name?: string;
}

export interface OllamaChatRequest {
  model: string;
  messages: OllamaMessage[];
  stream: boolean;
  options?: { temperature?: number; top_p?: number; num_predict?: number; stop?: string[]; seed?: number; frequency_penalty?: number; presence_penalty?: number };
  format?: 'json' | Record<string, unknown>;
  tools?: Array<{ type: 'function'; function: { name: string; description?: string; parameters: Record<string, unknown> } }>;
}

function userMessage(message: Message, index: number): OllamaMessage {
  const content = message.content;
  if (content === null || content === undefined || typeof content === 'string') return { role: 'user', content: content ?? '' };
  const texts: string[] = [];
  const images: string[] = [];
  content.forEach((part, j) => {
    if (part.type === 'text') texts.push(part.text);
    else {
      const data = parseDataUrl(part.image_url.url);
      if (!data) throw unsupported(`messages[${index}].content[${j}].image_url`, 'ollama accepts only base64 data: URLs for images, not remote URLs');
      images.push(data.base64);
    }
  });
  return images.length > 0 ? { role: 'user', content: texts.join(''), images } : { role: 'user', content: texts.join('') };
}

export function toOllamaRequest(request: ChatCompletionRequest, model: string): OllamaChatRequest {
  refuseFields(request, { n: 'ollama returns a single choice; n must be 1' });
  const choice = request.tool_choice;
  if (choice === 'required' || (choice && typeof choice === 'object')) {
    throw unsupported('tool_choice', 'ollama cannot force a tool call; use tool_choice "auto" or "none"');
  }

  const toolNames = new Map<string, string>();
  const messages = request.messages.map((message, i): OllamaMessage => {
    const param = `messages[${i}].content`;
    switch (message.role) {
      case 'system':
      case 'developer':
        return { role: 'system', content: textOf(message.content, param) };
      case 'user':
        return userMessage(message, i);
      case 'assistant': {
        const out: OllamaMessage = { role: 'assistant', content: textOf(message.content, param) };
        const calls = message.tool_calls ?? [];
        if (calls.length > 0) {
          out.tool_calls = calls.map((call, j) => {
            toolNames.set(call.id, call.function.name);
            return { function: { name: call.function.name, arguments: toolArguments(call.function.arguments, `messages[${i}].tool_calls[${j}].function.arguments`, 'unsupported_parameter') } };
          });
        }
        return out;
      }
      case 'tool': {
        const out: OllamaMessage = { role: 'tool', content: textOf(message.content, param) };
        const name = message.tool_call_id ? toolNames.get(message.tool_call_id) : undefined;
        if (name) out.tool_name = name;
        return out;
      }
    }
  });

  const body: OllamaChatRequest = { model, messages, stream: request.stream === true };
  const options: NonNullable<OllamaChatRequest['options']> = {};
  if (defined(request.temperature)) options.temperature = request.temperature;
  if (defined(request.top_p)) options.top_p = request.top_p;
  const maxTokens = maxTokensOf(request);
  if (defined(maxTokens)) options.num_predict = maxTokens;
  const stops = stopSequencesOf(request.stop);
  if (stops) options.stop = stops;
  if (defined(request.seed)) options.seed = request.seed;
  if (defined(request.frequency_penalty)) options.frequency_penalty = request.frequency_penalty;
  if (defined(request.presence_penalty)) options.presence_penalty = request.presence_penalty;
  if (Object.keys(options).length > 0) body.options = options;

  const format = request.response_format;
  if (format?.type === 'json_object') body.format = 'json';
  else if (format?.type === 'json_schema') body.format = format.json_schema.schema ?? 'json';

  const tools = request.tools ?? [];
  if (tools.length > 0 && choice !== 'none') body.tools = tools.map(functionTool);
  return body;
}

export function buildOllamaRequest(request: ChatCompletionRequest, ctx: ProviderContext): UpstreamRequest {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (ctx.channel.apiKey.trim() !== '') headers.authorization = `Bearer ${ctx.channel.apiKey.trim()}`;
  return {
    url: joinUrl(ctx.channel.baseUrl || OLLAMA_DEFAULT_BASE_URL, '/api/chat'),
    method: 'POST',
    headers,
    body: JSON.stringify(toOllamaRequest(request, ctx.model)),
  };
}
