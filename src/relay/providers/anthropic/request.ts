/**
 * OpenAI chat request -> Anthropic Messages API request (POST /v1/messages).
 *
 * Decisions where the product spec left room:
 * - `response_format` json_object / json_schema: Anthropic has no JSON mode, so an instruction is
 *   appended to the top-level `system` prompt (for json_schema it carries the schema). Best effort:
 *   the model is asked, not forced.
 * - `temperature` above 1 is a 400 here (Anthropic's range is 0..1); `seed` is ignored (best
 *   effort in OpenAI too); non-zero `presence_penalty` / `frequency_penalty`, `n` > 1, `logprobs`,
 *   `top_logprobs`, `logit_bias` and audio output are 400s.
 * - `parallel_tool_calls: false` becomes `tool_choice.disable_parallel_tool_use`.
 * - `user` becomes `metadata.user_id`.
 * - Empty text is dropped (Anthropic refuses empty text blocks); a message left with no content
 *   is skipped.
 */
import { BadRequestError } from '../../../errors.js';
import type { ChatCompletionRequest, ContentPart, Message, ResponseFormat, Tool, ToolChoice } from '../../schema.js';
import type { ProviderContext, UpstreamRequest } from '../provider.js';
import { joinUrl, maxTokensOf, parseDataUrl, pushTurn, refuseFields, stopSequencesOf, textOf, toolArguments, toolChoiceOf, toolParameters, unsupported, type Turn } from '../shared.js';

export const ANTHROPIC_VERSION = '2023-06-01';
export const DEFAULT_MAX_TOKENS = 4096;
/** Media types Anthropic accepts in base64 image sources. */
const IMAGE_MEDIA_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);

export type AnthropicImageSource = { type: 'base64'; media_type: string; data: string } | { type: 'url'; url: string };

export type AnthropicBlock =
  | { type: 'text'; text: string }
  | { type: 'image'; source: AnthropicImageSource }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
  | { type: 'tool_result'; tool_use_id: string; content?: string };

export interface AnthropicMessage {
  role: 'user' | 'assistant';
  content: string | AnthropicBlock[];
}

export interface AnthropicTool {
  name: string;
  description?: string;
  input_schema: Record<string, unknown>;
}

export type AnthropicToolChoice = ({ type: 'auto' } | { type: 'any' } | { type: 'none' } | { type: 'tool'; name: string }) & { disable_parallel_tool_use?: boolean };

export interface AnthropicRequestBody {
  model: string;
  max_tokens: number;
  messages: AnthropicMessage[];
  system?: string;
  temperature?: number;
  top_p?: number;
  stop_sequences?: string[];
  tools?: AnthropicTool[];
  tool_choice?: AnthropicToolChoice;
  metadata?: { user_id: string };
  stream?: boolean;
}

export function anthropicHeaders(ctx: ProviderContext, stream: boolean): Record<string, string> {
  const version = ctx.channel.config['api_version'];
  return {
    'x-api-key': ctx.channel.apiKey,
    'anthropic-version': typeof version === 'string' && version ? version : ANTHROPIC_VERSION,
    'content-type': 'application/json',
    accept: stream ? 'text/event-stream' : 'application/json',
  };
}

export function messagesUrl(ctx: ProviderContext): string {
  return joinUrl(ctx.channel.baseUrl, '/v1/messages');
}

function defaultMaxTokens(ctx: ProviderContext): number {
  const configured = ctx.channel.config['default_max_tokens'];
  return typeof configured === 'number' && Number.isInteger(configured) && configured > 0 ? configured : DEFAULT_MAX_TOKENS;
}

/** Fields with no Anthropic equivalent: a 400 naming the field. */
function refuseUnsupported(request: ChatCompletionRequest) {
  refuseFields(request, {
    n: 'Anthropic returns one choice per request; n must be 1',
    logprobs: 'Anthropic does not return log probabilities',
    top_logprobs: 'Anthropic does not return log probabilities',
    logit_bias: 'Anthropic does not support logit_bias',
    audio: 'Anthropic does not produce audio',
    presence_penalty: 'Anthropic does not support presence_penalty',
    frequency_penalty: 'Anthropic does not support frequency_penalty',
  });
  if (request.temperature != null && request.temperature > 1) throw unsupported('temperature', 'Anthropic accepts temperature between 0 and 1');
}

function imageBlock(url: string, param: string): AnthropicBlock {
  const data = parseDataUrl(url);
  if (!data) return { type: 'image', source: { type: 'url', url } };
  if (!IMAGE_MEDIA_TYPES.has(data.mediaType)) throw unsupported(param, `Anthropic accepts images of type ${[...IMAGE_MEDIA_TYPES].join(', ')}, not ${data.mediaType}`);
  return { type: 'image', source: { type: 'base64', media_type: data.mediaType, data: data.base64 } };
}

function userBlocks(content: Message['content'], param: string): AnthropicBlock[] {
  if (content === null || content === undefined) return [];
  if (typeof content === 'string') return content ? [{ type: 'text', text: content }] : [];
  return content.flatMap((part: ContentPart): AnthropicBlock[] => {
    if (part.type === 'text') return part.text ? [{ type: 'text', text: part.text }] : [];
    return [imageBlock(part.image_url.url, param)];
  });
}

function assistantBlocks(message: Message, index: number): AnthropicBlock[] {
  const blocks: AnthropicBlock[] = [];
  const text = textOf(message.content, `messages[${index}].content`);
  if (text) blocks.push({ type: 'text', text });
  (message.tool_calls ?? []).forEach((call, j) => {
    blocks.push({ type: 'tool_use', id: call.id, name: call.function.name, input: toolArguments(call.function.arguments, `messages[${index}].tool_calls[${j}].function.arguments`, 'invalid_request') });
  });
  return blocks;
}

function toolResultBlock(message: Message, index: number): AnthropicBlock {
  if (!message.tool_call_id) throw new BadRequestError('a tool message needs tool_call_id', 'invalid_request', `messages[${index}].tool_call_id`);
  const text = textOf(message.content, `messages[${index}].content`);
  return text ? { type: 'tool_result', tool_use_id: message.tool_call_id, content: text } : { type: 'tool_result', tool_use_id: message.tool_call_id };
}

export function jsonInstruction(format: ResponseFormat | undefined): string | null {
  if (!format || format.type === 'text') return null;
  const base = 'Respond with a single valid JSON object only: no code fences, no text before or after it.';
  if (format.type === 'json_object' || !format.json_schema.schema) return base;
  const { name, description, schema } = format.json_schema;
  return `${base} The JSON must conform to this JSON Schema (${name}${description ? `: ${description}` : ''}):\n${JSON.stringify(schema)}`;
}

/** System and developer messages -> the top-level `system`; the rest alternating user/assistant. */
export function convertMessages(messages: Message[]): { system: string[]; messages: AnthropicMessage[] } {
  const system: string[] = [];
  const turns: Turn<'user' | 'assistant', AnthropicBlock>[] = [];
  const push = (role: 'user' | 'assistant', blocks: AnthropicBlock[]) => pushTurn(turns, role, blocks);
  messages.forEach((message, i) => {
    switch (message.role) {
      case 'system':
      case 'developer': {
        const text = textOf(message.content, `messages[${i}].content`);
        if (text) system.push(text);
        break;
      }
      case 'user':
        push('user', userBlocks(message.content, `messages[${i}].content`));
        break;
      case 'assistant':
        push('assistant', assistantBlocks(message, i));
        break;
      case 'tool':
        push('user', [toolResultBlock(message, i)]);
        break;
    }
  });
  return {
    system,
    messages: turns.map(({ role, items }) => ({ role, content: items.length === 1 && items[0]!.type === 'text' ? items[0]!.text : items })),
  };
}

function convertTool(tool: Tool): AnthropicTool {
  const out: AnthropicTool = { name: tool.function.name, input_schema: toolParameters(tool) };
  if (tool.function.description) out.description = tool.function.description;
  return out;
}

function convertToolChoice(choice: ToolChoice | undefined, parallel: boolean | undefined): AnthropicToolChoice | undefined {
  let out = toolChoiceOf<AnthropicToolChoice>(choice, {
    auto: { type: 'auto' },
    required: { type: 'any' },
    none: { type: 'none' },
    named: (name) => ({ type: 'tool', name }),
  });
  if (parallel === false && out?.type !== 'none') out = { ...(out ?? { type: 'auto' }), disable_parallel_tool_use: true };
  return out;
}

export function buildAnthropicBody(request: ChatCompletionRequest, ctx: ProviderContext): AnthropicRequestBody {
  refuseUnsupported(request);
  const converted = convertMessages(request.messages);
  if (converted.messages.length === 0) throw new BadRequestError('Anthropic needs at least one user or assistant message with content', 'invalid_request', 'messages');
  const instruction = jsonInstruction(request.response_format);
  const system = instruction ? [...converted.system, instruction] : converted.system;

  const body: AnthropicRequestBody = {
    model: ctx.model,
    max_tokens: maxTokensOf(request) ?? defaultMaxTokens(ctx),
    messages: converted.messages,
  };
  if (system.length > 0) body.system = system.join('\n\n');
  if (request.temperature != null) body.temperature = request.temperature;
  if (request.top_p != null) body.top_p = request.top_p;
  const stops = stopSequencesOf(request.stop);
  if (stops) body.stop_sequences = stops;
  if (request.tools && request.tools.length > 0) {
    body.tools = request.tools.map(convertTool);
    const choice = convertToolChoice(request.tool_choice, request.parallel_tool_calls);
    if (choice) body.tool_choice = choice;
  }
  if (request.user) body.metadata = { user_id: request.user };
  if (request.stream) body.stream = true;
  return body;
}

export function buildAnthropicRequest(request: ChatCompletionRequest, ctx: ProviderContext): UpstreamRequest {
  const body = buildAnthropicBody(request, ctx);
  return { url: messagesUrl(ctx), method: 'POST', headers: anthropicHeaders(ctx, body.stream === true), body: JSON.stringify(body) };
}
