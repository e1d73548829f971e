/**
 * OpenAI chat request -> Bedrock Converse / ConverseStream request (signed with SigV4).
 *
 * Decisions where the OpenAI format has no Bedrock counterpart:
 * - `n` > 1, remote image URLs, image types other than png/jpeg/gif/webp, `response_format`
 *   json_object/json_schema (Converse has no JSON mode) -> 400 `unsupported_parameter`.
 * - `tool_choice: "none"` -> tools are left out. Bedrock insists on `toolConfig` as soon as the
 *   conversation holds toolUse/toolResult blocks, so `none` with such a history is a 400.
 * - `seed`, `frequency_penalty`, `presence_penalty`, `user`, `parallel_tool_calls` have no
 *   Converse field and are dropped.
 * - A tool message whose content is a JSON object goes as `{json}`, anything else as `{text}`.
 */
import { AppError } from '../../../errors.js';
import type { ChatCompletionRequest, Message } from '../../schema.js';
import type { ProviderContext, UpstreamRequest } from '../provider.js';
import { defined, joinUrl, maxTokensOf, parseDataUrl, pushTurn, refuseFields, stopSequencesOf, textOf, toolArguments, toolChoiceOf, toolParameters, unsupported, type Turn } from '../shared.js';
import { signRequest, uriEncode, type AwsCredentials } from './sigv4.js';
import { ownValue } from '../../../own.js';

export const BEDROCK_SERVICE = 'bedrock';
export const DEFAULT_REGION = 'us-east-1';

export type BedrockContentBlock =
  | { text: string }
  | { image: { format: 'png' | 'jpeg' | 'gif' | 'webp'; source: { bytes: string } } }
  | { toolUse: { toolUseId: string; name: string; input: unknown } }
  | { toolResult: { toolUseId: string; content: Array<{ text: string } | { json: unknown }> } };

export interface BedrockMessage {
  role: 'user' | 'assistant';
  content: BedrockContentBlock[];
}

export interface ConverseRequest {
  messages: BedrockMessage[];
  system?: Array<{ text: string }>;
  inferenceConfig?: { maxTokens?: number; temperature?: number; topP?: number; stopSequences?: string[] };
  toolConfig?: {
    tools: Array<{ toolSpec: { name: string; description?: string; inputSchema: { json: unknown } } }>;
    toolChoice?: { auto: Record<string, never> } | { any: Record<string, never> } | { tool: { name: string } };
  };
}

/** The channel's `config.region`, or us-east-1. */
export function regionOf(config: Record<string, unknown>): string {
  const region = config.region;
  return typeof region === 'string' && region.trim() !== '' ? region.trim() : DEFAULT_REGION;
}

/** The regional runtime endpoint: the kind's default base URL. */
export function bedrockBaseUrl(config: Record<string, unknown>): string {
  return `https://bedrock-runtime.${regionOf(config)}.amazonaws.com`;
}

/** "ACCESS_KEY_ID:SECRET_ACCESS_KEY[:SESSION_TOKEN]" */
export function credentialsOf(apiKey: string): AwsCredentials {
  const first = apiKey.indexOf(':');
  const second = first === -1 ? -1 : apiKey.indexOf(':', first + 1);
  const accessKeyId = first === -1 ? '' : apiKey.slice(0, first).trim();
  const secretAccessKey = first === -1 ? '' : (second === -1 ? apiKey.slice(first + 1) : apiKey.slice(first + 1, second)).trim();
  const sessionToken = second === -1 ? '' : apiKey.slice(second + 1).trim();
  if (!accessKeyId || !secretAccessKey) {
    throw new AppError(500, 'api_error', 'channel_misconfigured', 'bedrock channel key must be "ACCESS_KEY_ID:SECRET_ACCESS_KEY[:SESSION_TOKEN]"');
  }
  return sessionToken ? { accessKeyId, secretAccessKey, sessionToken } : { accessKeyId, secretAccessKey };
}

const IMAGE_FORMATS: Record<string, 'png' | 'jpeg' | 'gif' | 'webp'> = {
  'image/png': 'png',
  'image/jpeg': 'jpeg',
  'image/jpg': 'jpeg',
  'image/gif': 'gif',
  'image/webp': 'webp',
};

function userBlocks(message: Message, index: number): BedrockContentBlock[] {
  const content = message.content;
  if (content === null || content === undefined) return [];
  if (typeof content === 'string') return content === '' ? [] : [{ text: content }];
  const blocks: BedrockContentBlock[] = [];
  content.forEach((part, j) => {
    if (part.type === 'text') {
      if (part.text !== '') blocks.push({ text: part.text });
      return;
    }
    const param = `messages[${index}].content[${j}].image_url`;
    const data = parseDataUrl(part.image_url.url);
    if (!data) throw unsupported(param, 'bedrock accepts only base64 data: URLs for images, not remote URLs');
    const format = ownValue(IMAGE_FORMATS, data.mediaType.toLowerCase());
    if (!format) throw unsupported(param, `bedrock does not accept image type ${data.mediaType} (png, jpeg, gif, webp only)`);
    blocks.push({ image: { format, source: { bytes: data.base64 } } });
  });
  return blocks;
}

function toolResultContent(text: string): Array<{ text: string } | { json: unknown }> {
  const trimmed = text.trim();
  if (trimmed.startsWith('{')) {
    try {
      const value: unknown = JSON.parse(trimmed);
      if (value !== null && typeof value === 'object' && !Array.isArray(value)) return [{ json: value }];
    } catch {
      // not JSON: plain text
    }
  }
  return [{ text }];
}

/** The Converse body (no model: that goes in the path). */
export function toConverseRequest(request: ChatCompletionRequest): ConverseRequest {
  refuseFields(request, { n: 'bedrock returns a single choice; n must be 1' });
  const format = request.response_format?.type;
  if (format === 'json_object' || format === 'json_schema') throw unsupported('response_format', `bedrock converse has no ${format} mode`);

  const system: Array<{ text: string }> = [];
  const turns: Turn<BedrockMessage['role'], BedrockContentBlock>[] = [];
  let usesTools = false;
  const append = (role: BedrockMessage['role'], blocks: BedrockContentBlock[]) => pushTurn(turns, role, blocks);

  request.messages.forEach((message, i) => {
    switch (message.role) {
      case 'system':
      case 'developer': {
        const text = textOf(message.content, `messages[${i}].content`);
        if (text !== '') system.push({ text });
        break;
      }
      case 'user':
        append('user', userBlocks(message, i));
        break;
      case 'assistant': {
        const blocks: BedrockContentBlock[] = [];
        const text = textOf(message.content, `messages[${i}].content`);
        if (text !== '') blocks.push({ text });
        (message.tool_calls ?? []).forEach((call, j) => {
          usesTools = true;
          blocks.push({ toolUse: { toolUseId: call.id, name: call.function.name, input: toolArguments(call.function.arguments, `messages[${i}].tool_calls[${j}].function.arguments`, 'unsupported_parameter') } });
        });
        append('assistant', blocks);
        break;
      }
      case 'tool': {
        if (!message.tool_call_id) throw unsupported(`messages[${i}].tool_call_id`, 'a tool message needs tool_call_id');
        usesTools = true;
        const text = textOf(message.content, `messages[${i}].content`);
        append('user', [{ toolResult: { toolUseId: message.tool_call_id, content: toolResultContent(text) } }]);
        break;
      }
    }
  });

  const body: ConverseRequest = { messages: turns.map(({ role, items }) => ({ role, content: items })) };
  if (system.length > 0) body.system = system;

  const inference: NonNullable<ConverseRequest['inferenceConfig']> = {};
  const maxTokens = maxTokensOf(request);
  if (defined(maxTokens)) inference.maxTokens = maxTokens;
  if (defined(request.temperature)) inference.temperature = request.temperature;
  if (defined(request.top_p)) inference.topP = request.top_p;
  const stops = stopSequencesOf(request.stop);
  if (stops) inference.stopSequences = stops;
  if (Object.keys(inference).length > 0) body.inferenceConfig = inference;

  const tools = request.tools ?? [];
  const choice = request.tool_choice;
  if (tools.length > 0) {
    if (choice === 'none') {
      if (usesTools) throw unsupported('tool_choice', 'bedrock cannot take tool_choice "none" when the conversation already holds tool calls');
    } else {
      body.toolConfig = {
        tools: tools.map((tool) => ({
          toolSpec: {
            name: tool.function.name,
            ...(tool.function.description !== undefined ? { description: tool.function.description } : {}),
            inputSchema: { json: toolParameters(tool) },
          },
        })),
      };
      const toolChoice = toolChoiceOf<NonNullable<ConverseRequest['toolConfig']>['toolChoice']>(choice, {
        auto: { auto: {} },
        required: { any: {} },
        none: undefined, // not reached: "none" leaves the tools out (above)
        named: (name) => {
          if (!tools.some((t) => t.function.name === name)) throw unsupported('tool_choice', `tool_choice names ${name}, which is not in tools`);
          return { tool: { name } };
        },
      });
      if (toolChoice) body.toolConfig.toolChoice = toolChoice;
    }
  }
  return body;
}

export interface BuildOptions {
  now?: () => Date;
}

/** `/model/{modelId}/converse[-stream]` with the model id percent-encoded (`:` -> `%3A`). */
export function converseUrl(baseUrl: string, model: string, stream: boolean): string {
  return joinUrl(baseUrl, `/model/${uriEncode(model)}/${stream ? 'converse-stream' : 'converse'}`);
}

export function buildBedrockRequest(request: ChatCompletionRequest, ctx: ProviderContext, options: BuildOptions = {}): UpstreamRequest {
  const stream = request.stream === true;
  const body = JSON.stringify(toConverseRequest(request));
  const region = regionOf(ctx.channel.config);
  const url = converseUrl(ctx.channel.baseUrl || bedrockBaseUrl(ctx.channel.config), ctx.model, stream);
  const signed = signRequest({
    method: 'POST',
    url,
    body,
    region,
    service: BEDROCK_SERVICE,
    credentials: credentialsOf(ctx.channel.apiKey),
    now: (options.now ?? (() => new Date()))(),
  });
  return {
    url,
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: stream ? 'application/vnd.amazon.eventstream' : 'application/json',
      ...signed.headers,
    },
    body,
  };
}
