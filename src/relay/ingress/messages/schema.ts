/**
 * The Anthropic Messages API wire shapes (`POST /v1/messages`, `POST /v1/messages/count_tokens`):
 * what clients send and get back. The top level is strict, as Anthropic's API is (an unknown or
 * misspelt field is a 400); content blocks keep fields they do not name (Anthropic adds block
 * fields often; an anthropic channel gets the client's own body anyway, and the conversion to the
 * chat form reads only what it knows).
 */
import { z } from 'zod';

export const CacheControl = z.looseObject({ type: z.literal('ephemeral'), ttl: z.enum(['5m', '1h']).optional() });

const cacheControl = CacheControl.nullable().optional();

export const TextBlock = z.looseObject({ type: z.literal('text'), text: z.string(), cache_control: cacheControl, citations: z.array(z.unknown()).nullable().optional() });
export type TextBlock = z.infer<typeof TextBlock>;

export const ImageSource = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('base64'), media_type: z.enum(['image/jpeg', 'image/png', 'image/gif', 'image/webp']), data: z.string().min(1) }),
  z.looseObject({ type: z.literal('url'), url: z.string().min(1) }),
  z.looseObject({ type: z.literal('file'), file_id: z.string().min(1) }),
]);
export type ImageSource = z.infer<typeof ImageSource>;

export const ImageBlock = z.looseObject({ type: z.literal('image'), source: ImageSource, cache_control: cacheControl });
export type ImageBlock = z.infer<typeof ImageBlock>;

/** A document: its source says whether it is text (convertible) or a PDF / file (anthropic channels only). */
export const DocumentBlock = z.looseObject({
  type: z.literal('document'),
  source: z.looseObject({ type: z.string(), data: z.unknown().optional(), content: z.unknown().optional(), media_type: z.string().optional() }),
  title: z.string().nullable().optional(),
  context: z.string().nullable().optional(),
  cache_control: cacheControl,
});
export type DocumentBlock = z.infer<typeof DocumentBlock>;

export const ToolUseBlock = z.looseObject({ type: z.literal('tool_use'), id: z.string().min(1), name: z.string().min(1), input: z.record(z.string(), z.unknown()), cache_control: cacheControl });
export type ToolUseBlock = z.infer<typeof ToolUseBlock>;

/** The block types this file describes: a block of one of them must have its shape. */
const KNOWN_BLOCK_TYPES = new Set(['text', 'image', 'document', 'tool_use', 'tool_result', 'thinking', 'redacted_thinking']);

/** Block types only Anthropic itself can take (server tools' calls and results, search results...). */
const OtherBlock = z.looseObject({
  type: z
    .string()
    .refine((type) => !KNOWN_BLOCK_TYPES.has(type), { message: 'invalid content block' })
    .describe('server tool blocks and others: anthropic channels only'),
});

export const ToolResultBlock = z.looseObject({
  type: z.literal('tool_result'),
  tool_use_id: z.string().min(1),
  content: z.union([z.string(), z.array(z.union([TextBlock, ImageBlock, DocumentBlock, OtherBlock]))]).optional(),
  is_error: z.boolean().optional(),
  cache_control: cacheControl,
});
export type ToolResultBlock = z.infer<typeof ToolResultBlock>;

export const ThinkingBlock = z.looseObject({ type: z.literal('thinking'), thinking: z.string(), signature: z.string() });
export const RedactedThinkingBlock = z.looseObject({ type: z.literal('redacted_thinking'), data: z.string() });

export const ContentBlock = z.union([TextBlock, ImageBlock, DocumentBlock, ToolUseBlock, ToolResultBlock, ThinkingBlock, RedactedThinkingBlock, OtherBlock]);
export type ContentBlock = z.infer<typeof ContentBlock>;

/** `system` turns inside the conversation: newer API versions take them (text only). */
export const MessageParam = z.strictObject({
  role: z.enum(['user', 'assistant', 'system']),
  content: z.union([z.string(), z.array(ContentBlock)]),
});
export type MessageParam = z.infer<typeof MessageParam>;

/** A client tool (`type` absent or "custom"); any other `type` names one of Anthropic's server or built-in tools. */
export const Tool = z.looseObject({
  type: z.string().nullable().optional(),
  name: z.string().min(1).max(128),
  description: z.string().optional(),
  input_schema: z.record(z.string(), z.unknown()).optional(),
  cache_control: cacheControl,
});
export type Tool = z.infer<typeof Tool>;

export const ToolChoice = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('auto'), disable_parallel_tool_use: z.boolean().optional() }),
  z.strictObject({ type: z.literal('any'), disable_parallel_tool_use: z.boolean().optional() }),
  z.strictObject({ type: z.literal('tool'), name: z.string().min(1), disable_parallel_tool_use: z.boolean().optional() }),
  z.strictObject({ type: z.literal('none') }),
]);
export type ToolChoice = z.infer<typeof ToolChoice>;

export const ThinkingConfig = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('enabled'), budget_tokens: z.number().int().min(1) }),
  z.looseObject({ type: z.literal('disabled') }),
  z.looseObject({ type: z.literal('adaptive') }),
]);

export const System = z.union([z.string(), z.array(TextBlock)]);

/** `output_config`: `format` (a JSON schema the answer follows) and `effort`. */
export const OutputConfig = z.looseObject({
  effort: z.string().nullable().optional(),
  format: z.looseObject({ type: z.literal('json_schema'), schema: z.record(z.string(), z.unknown()) }).nullable().optional(),
});

/** What both endpoints read: the conversation and its tools. */
const conversation = {
  model: z.string().min(1),
  messages: z.array(MessageParam),
  system: System.optional(),
  tools: z.array(Tool).optional(),
  tool_choice: ToolChoice.optional(),
  thinking: ThinkingConfig.optional(),
  output_config: OutputConfig.optional(),
  cache_control: cacheControl,
  // Anthropic-side options an anthropic channel acts on; the chat form has no place for them.
  context_management: z.unknown().optional(),
  mcp_servers: z.array(z.unknown()).optional(),
  speed: z.string().nullable().optional(),
};

export const MessagesRequest = z.strictObject({
  ...conversation,
  max_tokens: z.number().int().min(1),
  stop_sequences: z.array(z.string()).optional(),
  stream: z.boolean().optional(),
  temperature: z.number().min(0).max(1).optional(),
  top_p: z.number().min(0).max(1).optional(),
  top_k: z.number().int().min(0).optional(),
  metadata: z.strictObject({ user_id: z.string().max(256).nullable().optional() }).optional(),
  service_tier: z.enum(['auto', 'standard_only']).optional(),
  container: z.unknown().optional(),
  inference_geo: z.string().nullable().optional(),
}).meta({ id: 'CreateMessageRequest' });
export type MessagesRequest = z.infer<typeof MessagesRequest>;

export const CountTokensRequest = z.strictObject(conversation).meta({ id: 'CountMessageTokensRequest' });
export type CountTokensRequest = z.infer<typeof CountTokensRequest>;

// --- Answers ----------------------------------------------------------------------------------

export const StopReason = z.enum(['end_turn', 'max_tokens', 'stop_sequence', 'tool_use', 'pause_turn', 'refusal']);
export type StopReason = z.infer<typeof StopReason>;

export const MessagesUsage = z.object({
  input_tokens: z.number().int(),
  output_tokens: z.number().int(),
  cache_creation_input_tokens: z.number().int().nullable(),
  cache_read_input_tokens: z.number().int().nullable(),
});
export type MessagesUsage = z.infer<typeof MessagesUsage>;

export const ResponseBlock = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text'), text: z.string() }),
  z.object({ type: z.literal('tool_use'), id: z.string(), name: z.string(), input: z.record(z.string(), z.unknown()) }),
  z.object({ type: z.literal('thinking'), thinking: z.string(), signature: z.string() }),
]);
export type ResponseBlock = z.infer<typeof ResponseBlock>;

export const MessagesResponse = z.object({
  id: z.string(),
  type: z.literal('message'),
  role: z.literal('assistant'),
  model: z.string(),
  content: z.array(ResponseBlock),
  stop_reason: StopReason.nullable(),
  stop_sequence: z.string().nullable(),
  usage: MessagesUsage,
}).meta({ id: 'AnthropicMessage' });
export type MessagesResponse = z.infer<typeof MessagesResponse>;

export const CountTokensResponse = z.object({ input_tokens: z.number().int() }).meta({ id: 'MessageTokenCount' });

export const AnthropicErrorType = z.enum([
  'invalid_request_error',
  'authentication_error',
  'billing_error',
  'permission_error',
  'not_found_error',
  'request_too_large',
  'rate_limit_error',
  'timeout_error',
  'api_error',
  'overloaded_error',
]);
export type AnthropicErrorType = z.infer<typeof AnthropicErrorType>;

export const AnthropicErrorBody = z
  .object({
    type: z.literal('error'),
    error: z.object({ type: AnthropicErrorType, message: z.string() }),
    request_id: z.string().optional(),
  })
  .meta({ id: 'AnthropicError' });
export type AnthropicErrorBody = z.infer<typeof AnthropicErrorBody>;

// --- Streamed answers ---------------------------------------------------------------------------

const blockIndex = z.number().int().min(0);
/** Anthropic's own streams (a native channel) carry what they carry: usage in part, fields of their own. */
const StreamUsage = MessagesUsage.partial().loose();

/**
 * One event of a streamed answer (`stream: true`): the data of an SSE event whose `event:` line
 * repeats its `type`. A native anthropic channel's stream passes through as Anthropic sent it,
 * with fields (and delta types, e.g. citations) of its own.
 */
export const MessagesStreamEvent = z
  .discriminatedUnion('type', [
    z.looseObject({ type: z.literal('message_start'), message: z.looseObject({ ...MessagesResponse.shape, usage: StreamUsage.optional() }) }),
    z.looseObject({ type: z.literal('ping') }),
    z.looseObject({ type: z.literal('content_block_start'), index: blockIndex, content_block: ResponseBlock }),
    z.looseObject({
      type: z.literal('content_block_delta'),
      index: blockIndex,
      delta: z.discriminatedUnion('type', [
        z.looseObject({ type: z.literal('text_delta'), text: z.string() }),
        z.looseObject({ type: z.literal('input_json_delta'), partial_json: z.string() }),
        z.looseObject({ type: z.literal('thinking_delta'), thinking: z.string() }),
        z.looseObject({ type: z.literal('signature_delta'), signature: z.string() }),
      ]),
    }),
    z.looseObject({ type: z.literal('content_block_stop'), index: blockIndex }),
    z.looseObject({ type: z.literal('message_delta'), delta: z.looseObject({ stop_reason: StopReason.nullable(), stop_sequence: z.string().nullable() }), usage: StreamUsage.optional() }),
    z.looseObject({ type: z.literal('message_stop') }),
    z.looseObject({ type: z.literal('error'), error: z.looseObject({ type: AnthropicErrorType, message: z.string() }) }),
  ])
  .meta({ id: 'AnthropicMessageStreamEvent' });
