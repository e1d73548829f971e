/**
 * OpenAI chat request -> Cohere v2 `/v2/chat` request.
 *
 * Decisions where the formats differ:
 * - System/developer messages stay inline as `role: system` (v2 takes them anywhere).
 * - Assistant text that comes with tool calls becomes the v2 `tool_plan`.
 * - `tool_choice`: auto -> omitted, required -> REQUIRED, none -> NONE; a named function is
 *   emulated by offering only that tool with REQUIRED.
 * - `response_format` json_object -> `{type:'json_object'}`, json_schema ->
 *   `{type:'json_object', json_schema}`.
 * - Image parts are passed as v2 `image_url` content parts (vision models take data: and https URLs).
 * - `n` > 1 -> 400; `user`, `parallel_tool_calls` are dropped.
 */
import type { ChatCompletionRequest, Message } from '../../schema.js';
import type { ProviderContext, UpstreamRequest } from '../provider.js';
import { defined, functionTool, joinUrl, maxTokensOf, refuseFields, stopSequencesOf, textOf, toolChoiceOf, unsupported } from '../shared.js';

export const COHERE_DEFAULT_BASE_URL = 'https://api.cohere.com';

type CohereUserContent = string | Array<{ type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string; detail?: 'auto' | 'low' | 'high' } }>;

export type CohereMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: CohereUserContent }
  | { role: 'assistant'; content?: string; tool_plan?: string; tool_calls?: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }> }
  | { role: 'tool'; tool_call_id: string; content: string };

export interface CohereChatRequest {
  model: string;
  messages: CohereMessage[];
  stream?: boolean;
  max_tokens?: number;
  temperature?: number;
  p?: number;
  seed?: number;
  stop_sequences?: string[];
  frequency_penalty?: number;
  presence_penalty?: number;
  tools?: Array<{ type: 'function'; function: { name: string; description?: string; parameters: Record<string, unknown> } }>;
  tool_choice?: 'REQUIRED' | 'NONE';
  response_format?: { type: 'json_object'; json_schema?: Record<string, unknown> };
}

function userContent(message: Message): CohereUserContent {
  const content = message.content;
  if (content === null || content === undefined) return '';
  if (typeof content === 'string') return content;
  if (content.every((part) => part.type === 'text')) return content.map((part) => (part.type === 'text' ? part.text : '')).join('');
  return content.map((part) => (part.type === 'text' ? { type: 'text' as const, text: part.text } : { type: 'image_url' as const, image_url: { ...part.image_url } }));
}

export function toCohereRequest(request: ChatCompletionRequest, model: string): CohereChatRequest {
  refuseFields(request, { n: 'cohere returns a single choice; n must be 1' });

  const messages: CohereMessage[] = request.messages.map((message, i): CohereMessage => {
    const param = `messages[${i}].content`;
    switch (message.role) {
      case 'system':
      case 'developer':
        return { role: 'system', content: textOf(message.content, param) };
      case 'user':
        return { role: 'user', content: userContent(message) };
      case 'assistant': {
        const text = textOf(message.content, param);
        const calls = message.tool_calls ?? [];
        if (calls.length === 0) return { role: 'assistant', content: text };
        return {
          role: 'assistant',
          ...(text !== '' ? { tool_plan: text } : {}),
          tool_calls: calls.map((call) => ({ id: call.id, type: 'function', function: { name: call.function.name, arguments: call.function.arguments || '{}' } })),
        };
      }
      case 'tool':
        if (!message.tool_call_id) throw unsupported(`messages[${i}].tool_call_id`, 'a tool message needs tool_call_id');
        return { role: 'tool', tool_call_id: message.tool_call_id, content: textOf(message.content, param) };
    }
  });

  const body: CohereChatRequest = { model, messages };
  if (request.stream === true) body.stream = true;
  const maxTokens = maxTokensOf(request);
  if (defined(maxTokens)) body.max_tokens = maxTokens;
  if (defined(request.temperature)) body.temperature = request.temperature;
  if (defined(request.top_p)) body.p = request.top_p;
  if (defined(request.seed)) body.seed = request.seed;
  const stops = stopSequencesOf(request.stop);
  if (stops) body.stop_sequences = stops;
  if (defined(request.frequency_penalty)) body.frequency_penalty = request.frequency_penalty;
  if (defined(request.presence_penalty)) body.presence_penalty = request.presence_penalty;

  let tools = request.tools ?? [];
  if (tools.length > 0) {
    const choice = toolChoiceOf<CohereChatRequest['tool_choice']>(request.tool_choice, {
      auto: undefined, // Cohere's default
      required: 'REQUIRED',
      none: 'NONE',
      named: (name) => {
        tools = tools.filter((tool) => tool.function.name === name);
        if (tools.length === 0) throw unsupported('tool_choice', `tool_choice names ${name}, which is not in tools`);
        return 'REQUIRED';
      },
    });
    if (choice) body.tool_choice = choice;
    body.tools = tools.map(functionTool);
  }

  const format = request.response_format;
  if (format?.type === 'json_object') body.response_format = { type: 'json_object' };
  else if (format?.type === 'json_schema') {
    body.response_format = format.json_schema.schema ? { type: 'json_object', json_schema: format.json_schema.schema } : { type: 'json_object' };
  }
  return body;
}

export function buildCohereRequest(request: ChatCompletionRequest, ctx: ProviderContext): UpstreamRequest {
  const stream = request.stream === true;
  return {
    url: joinUrl(ctx.channel.baseUrl || COHERE_DEFAULT_BASE_URL, '/v2/chat'),
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: stream ? 'text/event-stream' : 'application/json',
      authorization: `Bearer ${ctx.channel.apiKey}`,
    },
    body: JSON.stringify(toCohereRequest(request, ctx.model)),
  };
}
