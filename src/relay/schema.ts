/**
 * The OpenAI chat-completions wire shapes: what clients send and get back. This is the relay's
 * canonical format; every provider converts from and to it. One schema per wire shape; types
 * come from the schemas.
 */
import { z } from 'zod';

export const TextPart = z.object({ type: z.literal('text'), text: z.string() });
export const ImagePart = z.object({
  type: z.literal('image_url'),
  image_url: z.object({ url: z.string().min(1), detail: z.enum(['auto', 'low', 'high']).optional() }),
});
export type TextPart = z.infer<typeof TextPart>;
export type ImagePart = z.infer<typeof ImagePart>;
export const ContentPart = z.discriminatedUnion('type', [TextPart, ImagePart]);
export type ContentPart = z.infer<typeof ContentPart>;

/**
 * OpenAI's file content part, by id: one of the caller's files uploaded with POST /v1/files. The
 * relay replaces it (src/relay/files.ts) before any provider sees the request, so providers only
 * ever meet text and image parts. Inline `file_data` is refused with a message saying what to do.
 */
export const FilePart = z.object({
  type: z.literal('file'),
  file: z.object({
    file_id: z
      .string()
      .min(1)
      .max(128)
      .describe('the id of one of your files (POST /v1/files), processed: a text file becomes a text part naming it; an image becomes an image part, or its recognised text where the channel takes no images'),
    filename: z.string().optional().describe('ignored: the uploaded file keeps its own name'),
  }),
});
export type FilePart = z.infer<typeof FilePart>;
export const ClientContentPart = z.discriminatedUnion('type', [TextPart, ImagePart, FilePart]);
export type ClientContentPart = z.infer<typeof ClientContentPart>;

export const ToolCall = z.object({
  id: z.string().min(1),
  type: z.literal('function'),
  function: z.object({ name: z.string().min(1), arguments: z.string() }),
});
export type ToolCall = z.infer<typeof ToolCall>;

export const Message = z.object({
  role: z.enum(['system', 'developer', 'user', 'assistant', 'tool']),
  content: z.union([z.string(), z.array(ContentPart), z.null()]).optional(),
  name: z.string().optional(),
  tool_calls: z.array(ToolCall).optional(),
  tool_call_id: z.string().optional(),
});
export type Message = z.infer<typeof Message>;

/** A message as clients send it: its content parts may also name files. */
export const ClientMessage = Message.extend({ content: z.union([z.string(), z.array(ClientContentPart), z.null()]).optional() });
export type ClientMessage = z.infer<typeof ClientMessage>;

export const Tool = z.object({
  type: z.literal('function'),
  function: z.object({
    name: z.string().min(1).max(64),
    description: z.string().optional(),
    parameters: z.record(z.string(), z.unknown()).optional(),
    strict: z.boolean().nullable().optional(),
  }),
});
export type Tool = z.infer<typeof Tool>;

export const ToolChoice = z.union([
  z.enum(['none', 'auto', 'required']),
  z.object({ type: z.literal('function'), function: z.object({ name: z.string().min(1) }) }),
]);
export type ToolChoice = z.infer<typeof ToolChoice>;

export const ResponseFormat = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text') }),
  z.object({ type: z.literal('json_object') }),
  z.object({
    type: z.literal('json_schema'),
    json_schema: z.object({ name: z.string(), description: z.string().optional(), schema: z.record(z.string(), z.unknown()).optional(), strict: z.boolean().nullable().optional() }),
  }),
]);
export type ResponseFormat = z.infer<typeof ResponseFormat>;

/** Switchyard extension: which providers to try, in order. */
export const ProviderConfig = z.object({
  primary: z.string().min(1).optional(),
  fallback: z.array(z.string().min(1)).optional(),
  retry_strategy: z.enum(['exponential_backoff', 'none']).optional(),
});

/** Switchyard extension: per-request aliases. */
export const RequestModelMapping = z.record(
  z.string(),
  z.object({
    provider: z.string().min(1).optional(),
    actual_model: z.string().min(1),
    parameters: z.object({ temperature: z.number().min(0).max(2).optional() }).optional(),
  }),
);

export const ChatCompletionRequest = z.looseObject({
  model: z.string().min(1),
  messages: z.array(Message).min(1),
  temperature: z.number().min(0).max(2).nullable().optional(),
  top_p: z.number().min(0).max(1).nullable().optional(),
  max_tokens: z.number().int().positive().nullable().optional(),
  max_completion_tokens: z.number().int().positive().nullable().optional(),
  stop: z.union([z.string(), z.array(z.string()).max(4)]).nullable().optional(),
  stream: z.boolean().nullable().optional(),
  stream_options: z.object({ include_usage: z.boolean().optional() }).nullable().optional(),
  n: z.number().int().min(1).max(128).nullable().optional(),
  presence_penalty: z.number().min(-2).max(2).nullable().optional(),
  frequency_penalty: z.number().min(-2).max(2).nullable().optional(),
  seed: z.number().int().nullable().optional(),
  user: z.string().optional(),
  tools: z.array(Tool).optional(),
  tool_choice: ToolChoice.optional(),
  parallel_tool_calls: z.boolean().optional(),
  response_format: ResponseFormat.optional(),
  provider_config: ProviderConfig.optional(),
  model_mapping: RequestModelMapping.optional(),
  /** Switchyard extension: apply this preset (its context, model preference and settings); never forwarded upstream. */
  preset_id: z.string().min(1).max(128).optional().describe('Switchyard extension: a preset whose context is prepended and whose settings fill what the request leaves unset'),
});
export type ChatCompletionRequest = z.infer<typeof ChatCompletionRequest>;

/**
 * The request as clients send it to POST /v1/chat/completions: the relay's request, whose
 * messages may also carry file parts (replaced before the relay routes it, src/relay/files.ts).
 */
export const ClientChatRequest = ChatCompletionRequest.extend({ messages: z.array(ClientMessage).min(1) }).meta({ id: 'CreateChatCompletionRequest' });
export type ClientChatRequest = z.infer<typeof ClientChatRequest>;

export const FinishReason = z.enum(['stop', 'length', 'tool_calls', 'content_filter']);
export type FinishReason = z.infer<typeof FinishReason>;

export const Usage = z.object({
  prompt_tokens: z.number().int().min(0),
  completion_tokens: z.number().int().min(0),
  total_tokens: z.number().int().min(0),
});
export type Usage = z.infer<typeof Usage>;

export const ChatCompletion = z.object({
  id: z.string(),
  object: z.literal('chat.completion'),
  created: z.number().int(),
  model: z.string(),
  choices: z.array(
    z.object({
      index: z.number().int(),
      message: z.object({ role: z.literal('assistant'), content: z.string().nullable(), tool_calls: z.array(ToolCall).optional() }),
      finish_reason: FinishReason.nullable(),
    }),
  ),
  usage: Usage,
}).meta({ id: 'ChatCompletion' });
export type ChatCompletion = z.infer<typeof ChatCompletion>;

export const ToolCallDelta = z.object({
  index: z.number().int(),
  id: z.string().optional(),
  type: z.literal('function').optional(),
  function: z.object({ name: z.string().optional(), arguments: z.string().optional() }).optional(),
});
export type ToolCallDelta = z.infer<typeof ToolCallDelta>;

export const ChatCompletionChunk = z.object({
  id: z.string(),
  object: z.literal('chat.completion.chunk'),
  created: z.number().int(),
  model: z.string(),
  choices: z.array(
    z.object({
      index: z.number().int(),
      delta: z.object({ role: z.literal('assistant').optional(), content: z.string().nullable().optional(), tool_calls: z.array(ToolCallDelta).optional() }),
      finish_reason: FinishReason.nullable(),
    }),
  ),
  usage: Usage.nullable().optional(),
}).meta({ id: 'ChatCompletionChunk' });
export type ChatCompletionChunk = z.infer<typeof ChatCompletionChunk>;
