/**
 * OpenAI chat request -> Gemini generateContent / streamGenerateContent request.
 *
 * Rules and the decisions where the product spec left room:
 * - A system (or developer) message is joined with the FOLLOWING user message into one text,
 *   separated by a blank line ("<system>\n\n<user>"); `systemInstruction` is not used. Several
 *   system messages in a row are joined with blank lines first; system text with no user message
 *   right after it becomes a user turn of its own.
 * - Consecutive turns of one role are merged (user/model alternation); tool results are `user`
 *   turns with `functionResponse` parts, the function name found from the earlier tool call with
 *   the same id (or the tool message's `name`).
 * - Images: `data:` URLs become `inlineData`; remote image URLs are a 400 (Gemini only reads
 *   uploaded files by URI, and `fileData` needs a MIME type the relay cannot know).
 * - `n` > 1 is a 400 (no candidateCount: the response and stream conversion carry one choice).
 * - `logprobs`, `top_logprobs`, `logit_bias`, audio output: 400. `presence_penalty`,
 *   `frequency_penalty` and `seed` map to their generationConfig equivalents.
 * - JSON schemas (tool parameters, response_format json_schema) are reduced to the OpenAPI subset
 *   Gemini's `Schema` takes (unknown keywords such as additionalProperties are dropped,
 *   `type: [x, "null"]` becomes `nullable`); `$ref` is a 400.
 */
import { BadRequestError } from '../../../errors.js';
import type { ChatCompletionRequest, ContentPart, Message, Tool, ToolChoice } from '../../schema.js';
import type { ProviderContext, UpstreamRequest } from '../provider.js';
import { isRecord, joinUrl, maxTokensOf, parseDataUrl, pushTurn, refuseFields, stopSequencesOf, textOf, toolArguments, toolChoiceOf, unsupported, type Turn } from '../shared.js';

export type GeminiPart =
  | { text: string }
  | { inlineData: { mimeType: string; data: string } }
  | { functionCall: { name: string; args: Record<string, unknown> } }
  | { functionResponse: { name: string; response: Record<string, unknown> } };

export interface GeminiContent {
  role: 'user' | 'model';
  parts: GeminiPart[];
}

export interface GeminiFunctionDeclaration {
  name: string;
  description?: string;
  parameters?: Record<string, unknown>;
}

export interface GeminiGenerationConfig {
  temperature?: number;
  topP?: number;
  maxOutputTokens?: number;
  stopSequences?: string[];
  presencePenalty?: number;
  frequencyPenalty?: number;
  seed?: number;
  responseMimeType?: string;
  responseSchema?: Record<string, unknown>;
}

export interface GeminiRequestBody {
  contents: GeminiContent[];
  generationConfig?: GeminiGenerationConfig;
  tools?: { functionDeclarations: GeminiFunctionDeclaration[] }[];
  toolConfig?: { functionCallingConfig: { mode: 'AUTO' | 'ANY' | 'NONE'; allowedFunctionNames?: string[] } };
}

/** The upstream model id without a leading "models/". */
export function modelId(model: string): string {
  return model.replace(/^models\//, '');
}

export function geminiUrl(ctx: ProviderContext, stream: boolean): string {
  const model = encodeURIComponent(modelId(ctx.model));
  return joinUrl(ctx.channel.baseUrl, stream ? `/v1beta/models/${model}:streamGenerateContent?alt=sse` : `/v1beta/models/${model}:generateContent`);
}

export function geminiHeaders(ctx: ProviderContext, stream: boolean): Record<string, string> {
  return { 'x-goog-api-key': ctx.channel.apiKey, 'content-type': 'application/json', accept: stream ? 'text/event-stream' : 'application/json' };
}

function refuseUnsupported(request: ChatCompletionRequest) {
  refuseFields(request, {
    n: 'the relay takes one Gemini candidate per request; n must be 1',
    logprobs: 'log probabilities are not supported for Gemini channels',
    top_logprobs: 'log probabilities are not supported for Gemini channels',
    logit_bias: 'Gemini does not support logit_bias',
    audio: 'audio output is not supported for Gemini channels',
  });
}

/** The keywords of Gemini's `Schema` (an OpenAPI 3.0 subset). */
const SCHEMA_KEYS = new Set([
  'type', 'format', 'title', 'description', 'nullable', 'enum', 'maxItems', 'minItems', 'properties', 'required', 'minProperties',
  'maxProperties', 'minLength', 'maxLength', 'pattern', 'example', 'anyOf', 'propertyOrdering', 'default', 'items', 'minimum', 'maximum',
]);

/** A JSON Schema reduced to what Gemini's `Schema` accepts. */
export function toGeminiSchema(schema: unknown, param: string): unknown {
  if (Array.isArray(schema)) return schema.map((s) => toGeminiSchema(s, param));
  if (!isRecord(schema)) return schema;
  if ('$ref' in schema) throw unsupported(param, 'Gemini schemas cannot use $ref; inline the definitions');
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'oneOf' && Array.isArray(value)) out['anyOf'] = toGeminiSchema(value, param);
    else if (key === 'const') out['enum'] = [value];
    else if (!SCHEMA_KEYS.has(key)) continue;
    else if (key === 'properties' && isRecord(value)) out[key] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toGeminiSchema(v, param)]));
    else if (key === 'items' || key === 'anyOf') out[key] = toGeminiSchema(value, param);
    else if (key === 'type' && Array.isArray(value)) {
      const types = value.filter((t) => t !== 'null');
      if (types.length !== value.length) out['nullable'] = true;
      if (types.length === 1) out['type'] = types[0];
      else if (types.length > 1) out['anyOf'] = types.map((t: unknown) => ({ type: t }));
// eslint-disable-next-line switchyard/no-string-index-lookup -- key is one of SCHEMA_KEYS here
    } else out[key] = value;
  }
  return out;
}

function userParts(content: Message['content'], param: string): GeminiPart[] {
  if (content === null || content === undefined) return [];
  if (typeof content === 'string') return content ? [{ text: content }] : [];
  return content.flatMap((part: ContentPart): GeminiPart[] => {
    if (part.type === 'text') return part.text ? [{ text: part.text }] : [];
    const data = parseDataUrl(part.image_url.url);
    if (!data) throw unsupported(param, 'Gemini channels take images only as base64 data: URLs, not remote URLs');
    return [{ inlineData: { mimeType: data.mediaType, data: data.base64 } }];
  });
}

/** A tool result as Gemini's `response` object: the parsed JSON object, or `{content: text}`. */
function toolResponse(text: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(text);
    if (isRecord(parsed)) return parsed;
  } catch {
    // plain text
  }
  return { content: text };
}

export function convertContents(messages: Message[]): GeminiContent[] {
  const turns: Turn<GeminiContent['role'], GeminiPart>[] = [];
  const callNames = new Map<string, string>();
  let pendingSystem: string[] = [];
  const push = (role: GeminiContent['role'], parts: GeminiPart[]) => pushTurn(turns, role, parts);
  const takeSystem = (): string | null => {
    if (pendingSystem.length === 0) return null;
    const text = pendingSystem.join('\n\n');
    pendingSystem = [];
    return text;
  };
  /** System text not followed by a user message: a user turn of its own. */
  const flushSystem = () => {
    const text = takeSystem();
    if (text !== null) push('user', [{ text }]);
  };

  messages.forEach((message, i) => {
    const param = `messages[${i}].content`;
    switch (message.role) {
      case 'system':
      case 'developer': {
        const text = textOf(message.content, param);
        if (text) pendingSystem.push(text);
        break;
      }
      case 'user': {
        const parts = userParts(message.content, param);
        const system = takeSystem();
        if (system !== null) {
          const first = parts[0];
          if (first && 'text' in first) parts[0] = { text: `${system}\n\n${first.text}` };
          else parts.unshift({ text: system });
        }
        push('user', parts);
        break;
      }
      case 'assistant': {
        flushSystem();
        const parts: GeminiPart[] = [];
        const text = textOf(message.content, param);
        if (text) parts.push({ text });
        (message.tool_calls ?? []).forEach((call, j) => {
          callNames.set(call.id, call.function.name);
          parts.push({ functionCall: { name: call.function.name, args: toolArguments(call.function.arguments, `messages[${i}].tool_calls[${j}].function.arguments`, 'invalid_request') } });
        });
        push('model', parts);
        break;
      }
      case 'tool': {
        flushSystem();
        const name = (message.tool_call_id ? callNames.get(message.tool_call_id) : undefined) ?? message.name;
        if (!name) throw new BadRequestError('a tool message must answer an earlier assistant tool call (tool_call_id)', 'invalid_request', `messages[${i}].tool_call_id`);
        push('user', [{ functionResponse: { name, response: toolResponse(textOf(message.content, param)) } }]);
        break;
      }
    }
  });
  flushSystem();
  return turns.map(({ role, items }) => ({ role, parts: items }));
}

function convertTool(tool: Tool, index: number): GeminiFunctionDeclaration {
  const out: GeminiFunctionDeclaration = { name: tool.function.name };
  if (tool.function.description) out.description = tool.function.description;
  const parameters = tool.function.parameters ? toGeminiSchema(tool.function.parameters, `tools[${index}].function.parameters`) : undefined;
  // Gemini refuses an OBJECT schema with no properties: a function without parameters omits it.
  if (isRecord(parameters)) {
    const properties = parameters['properties'];
    const noProperties = !isRecord(properties) || Object.keys(properties).length === 0;
    if (!(parameters['type'] === 'object' && noProperties)) out.parameters = parameters;
  }
  return out;
}

function convertToolChoice(choice: ToolChoice | undefined): GeminiRequestBody['toolConfig'] {
  return toolChoiceOf<GeminiRequestBody['toolConfig']>(choice, {
    auto: { functionCallingConfig: { mode: 'AUTO' } },
    required: { functionCallingConfig: { mode: 'ANY' } },
    none: { functionCallingConfig: { mode: 'NONE' } },
    named: (name) => ({ functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [name] } }),
  });
}

export function buildGeminiBody(request: ChatCompletionRequest): GeminiRequestBody {
  refuseUnsupported(request);
  const contents = convertContents(request.messages);
  if (contents.length === 0) throw new BadRequestError('Gemini needs at least one message with content', 'invalid_request', 'messages');
  const body: GeminiRequestBody = { contents };

  const config: GeminiGenerationConfig = {};
  if (request.temperature != null) config.temperature = request.temperature;
  if (request.top_p != null) config.topP = request.top_p;
  const maxTokens = maxTokensOf(request);
  if (maxTokens != null) config.maxOutputTokens = maxTokens;
  const stops = stopSequencesOf(request.stop);
  if (stops) config.stopSequences = stops;
  if (request.presence_penalty != null) config.presencePenalty = request.presence_penalty;
  if (request.frequency_penalty != null) config.frequencyPenalty = request.frequency_penalty;
  if (request.seed != null) config.seed = request.seed;
  const format = request.response_format;
  if (format?.type === 'json_object') config.responseMimeType = 'application/json';
  else if (format?.type === 'json_schema') {
    config.responseMimeType = 'application/json';
    if (format.json_schema.schema) config.responseSchema = toGeminiSchema(format.json_schema.schema, 'response_format.json_schema.schema') as Record<string, unknown>;
  }
  if (Object.keys(config).length > 0) body.generationConfig = config;

  if (request.tools && request.tools.length > 0) {
    body.tools = [{ functionDeclarations: request.tools.map(convertTool) }];
    const toolConfig = convertToolChoice(request.tool_choice);
    if (toolConfig) body.toolConfig = toolConfig;
  }
  return body;
}

export function buildGeminiRequest(request: ChatCompletionRequest, ctx: ProviderContext): UpstreamRequest {
  const stream = request.stream === true;
  return { url: geminiUrl(ctx, stream), method: 'POST', headers: geminiHeaders(ctx, stream), body: JSON.stringify(buildGeminiBody(request)) };
}
