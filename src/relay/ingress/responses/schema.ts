/**
 * The OpenAI Responses API wire shapes (`POST /v1/responses` and the response objects it
 * answers), the part Switchyard serves: text and image input, function tools, JSON output
 * formats. Built-in tools and item kinds other than messages and function calls are refused by
 * `refuseUnsupported` with a 400 naming the field, before validation.
 */
import { z } from 'zod';
import { BadRequestError } from '../../../errors.js';

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

export const InputText = z.object({ type: z.literal('input_text'), text: z.string() });
export const InputImage = z
  .object({
    type: z.literal('input_image'),
    image_url: z.string().min(1).optional(),
    file_id: z.string().min(1).max(128).optional().describe('one of your image files (POST /v1/files), instead of image_url'),
    detail: z.enum(['auto', 'low', 'high']).optional(),
  })
  .refine((part) => (part.image_url === undefined) !== (part.file_id === undefined), { message: 'an input_image gives image_url or file_id (one of them)' });
/** One of the caller's files (POST /v1/files) by id: replaced by its text before the request goes anywhere (files.ts). */
export const InputFile = z.object({
  type: z.literal('input_file'),
  file_id: z.string().min(1).max(128).describe('one of your processed files (POST /v1/files)'),
  filename: z.string().optional().describe('ignored: the uploaded file keeps its own name'),
});
/** Earlier answers' text, when a client sends the conversation back itself. */
export const OutputTextPart = z.object({ type: z.literal('output_text'), text: z.string(), annotations: z.array(z.unknown()).optional() });
export const InputContentPart = z.discriminatedUnion('type', [InputText, InputImage, InputFile, OutputTextPart]);
export type InputContentPart = z.infer<typeof InputContentPart>;

export const MessageItem = z.object({
  type: z.literal('message').optional(),
  id: z.string().optional(),
  role: z.enum(['user', 'assistant', 'system', 'developer']),
  content: z.union([z.string(), z.array(InputContentPart)]),
  status: z.string().optional(),
});
export type MessageItem = z.infer<typeof MessageItem>;

export const FunctionCallItem = z.object({
  type: z.literal('function_call'),
  id: z.string().optional(),
  call_id: z.string().min(1),
  name: z.string().min(1),
  arguments: z.string(),
  status: z.string().optional(),
});
export type FunctionCallItem = z.infer<typeof FunctionCallItem>;

export const FunctionCallOutputItem = z.object({
  type: z.literal('function_call_output'),
  id: z.string().optional(),
  call_id: z.string().min(1),
  output: z.union([z.string(), z.array(z.union([InputText, OutputTextPart]))]),
  status: z.string().optional(),
});
export type FunctionCallOutputItem = z.infer<typeof FunctionCallOutputItem>;

export const InputItem = z.union([FunctionCallItem, FunctionCallOutputItem, MessageItem]);
export type InputItem = z.infer<typeof InputItem>;

export const FunctionTool = z.object({
  type: z.literal('function'),
  name: z.string().min(1).max(64),
  description: z.string().nullable().optional(),
  parameters: z.record(z.string(), z.unknown()).nullable().optional(),
  strict: z.boolean().nullable().optional(),
});
export type FunctionTool = z.infer<typeof FunctionTool>;

export const ToolChoice = z.union([z.enum(['none', 'auto', 'required']), z.object({ type: z.literal('function'), name: z.string().min(1) })]);
export type ToolChoice = z.infer<typeof ToolChoice>;

export const TextFormat = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text') }),
  z.object({ type: z.literal('json_object') }),
  z.object({
    type: z.literal('json_schema'),
    name: z.string().min(1),
    schema: z.record(z.string(), z.unknown()),
    description: z.string().optional(),
    strict: z.boolean().nullable().optional(),
  }),
]);
export type TextFormat = z.infer<typeof TextFormat>;

export const ResponsesRequest = z.looseObject({
  model: z.string().min(1),
  input: z.union([z.string(), z.array(InputItem)]),
  instructions: z.string().nullable().optional(),
  tools: z.array(FunctionTool).optional(),
  tool_choice: ToolChoice.optional(),
  parallel_tool_calls: z.boolean().nullable().optional(),
  max_output_tokens: z.number().int().positive().nullable().optional(),
  temperature: z.number().min(0).max(2).nullable().optional(),
  top_p: z.number().min(0).max(1).nullable().optional(),
  text: z.looseObject({ format: TextFormat.optional() }).nullable().optional(),
  stream: z.boolean().nullable().optional(),
  store: z.boolean().nullable().optional().describe('keep the response for GET /v1/responses/{id} and previous_response_id (default true)'),
  previous_response_id: z.string().min(1).nullable().optional(),
  metadata: z.record(z.string(), z.string().max(512)).nullable().optional(),
  user: z.string().optional(),
}).meta({ id: 'CreateResponseRequest' });
export type ResponsesRequest = z.infer<typeof ResponsesRequest>;

// --- The response object ----------------------------------------------------------------------

export const OutputText = z.object({ type: z.literal('output_text'), text: z.string(), annotations: z.array(z.unknown()) });

export const OutputMessage = z.object({
  id: z.string(),
  type: z.literal('message'),
  role: z.literal('assistant'),
  status: z.enum(['in_progress', 'completed', 'incomplete']),
  content: z.array(OutputText),
});
export type OutputMessage = z.infer<typeof OutputMessage>;

export const OutputFunctionCall = z.object({
  id: z.string(),
  type: z.literal('function_call'),
  call_id: z.string(),
  name: z.string(),
  arguments: z.string(),
  status: z.enum(['in_progress', 'completed', 'incomplete']),
});
export type OutputFunctionCall = z.infer<typeof OutputFunctionCall>;

export type OutputItem = OutputMessage | OutputFunctionCall;

export const ResponseUsage = z.object({
  input_tokens: z.number().int(),
  input_tokens_details: z.object({ cached_tokens: z.number().int() }),
  output_tokens: z.number().int(),
  output_tokens_details: z.object({ reasoning_tokens: z.number().int() }),
  total_tokens: z.number().int(),
});
export type ResponseUsage = z.infer<typeof ResponseUsage>;

export const ResponseStatus = z.enum(['completed', 'failed', 'in_progress', 'incomplete']);
export type ResponseStatus = z.infer<typeof ResponseStatus>;

/** What the API answers; upstreams answering natively may add fields of their own. */
export const ResponseObject = z.looseObject({
  id: z.string(),
  object: z.literal('response'),
  created_at: z.number().int(),
  status: ResponseStatus,
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
  incomplete_details: z.object({ reason: z.string() }).nullable(),
  instructions: z.string().nullable(),
  max_output_tokens: z.number().int().nullable(),
  model: z.string(),
  output: z.array(z.union([OutputMessage, OutputFunctionCall, z.looseObject({ type: z.string() })])),
  parallel_tool_calls: z.boolean(),
  previous_response_id: z.string().nullable(),
  store: z.boolean(),
  temperature: z.number().nullable(),
  text: z.object({ format: z.unknown() }),
  tool_choice: z.unknown(),
  tools: z.array(z.unknown()),
  top_p: z.number().nullable(),
  usage: ResponseUsage.nullable(),
  user: z.string().nullable().optional(),
  metadata: z.record(z.string(), z.string()),
}).meta({ id: 'Response' });
export type ResponseObject = z.infer<typeof ResponseObject>;

export const DeletedResponse = z.object({ id: z.string(), object: z.literal('response'), deleted: z.literal(true) });

// --- Streamed answers ---------------------------------------------------------------------------

const index = z.number().int().min(0);
const sequence = { sequence_number: index };
const inItem = { item_id: z.string(), output_index: index };
const inPart = { ...inItem, content_index: index };
const Item = z.union([OutputMessage, OutputFunctionCall]);
const onResponse = <T extends string>(type: T) => z.looseObject({ type: z.literal(type), ...sequence, response: ResponseObject });

/**
 * One event of a streamed response (`stream: true`): the data of an SSE event whose `event:` line
 * repeats its `type`, numbered by `sequence_number` from 0. An openai channel's native stream
 * passes through as OpenAI sent it, with fields (and event types) of its own.
 */
export const ResponsesStreamEvent = z
  .discriminatedUnion('type', [
    onResponse('response.created'),
    onResponse('response.in_progress'),
    z.looseObject({ type: z.literal('response.output_item.added'), ...sequence, output_index: index, item: Item }),
    z.looseObject({ type: z.literal('response.content_part.added'), ...sequence, ...inPart, part: OutputText }),
    z.looseObject({ type: z.literal('response.output_text.delta'), ...sequence, ...inPart, delta: z.string(), logprobs: z.array(z.unknown()) }),
    z.looseObject({ type: z.literal('response.output_text.done'), ...sequence, ...inPart, text: z.string(), logprobs: z.array(z.unknown()) }),
    z.looseObject({ type: z.literal('response.content_part.done'), ...sequence, ...inPart, part: OutputText }),
    z.looseObject({ type: z.literal('response.function_call_arguments.delta'), ...sequence, ...inItem, delta: z.string() }),
    z.looseObject({ type: z.literal('response.function_call_arguments.done'), ...sequence, ...inItem, name: z.string(), arguments: z.string() }),
    z.looseObject({ type: z.literal('response.output_item.done'), ...sequence, output_index: index, item: Item }),
    onResponse('response.completed'),
    onResponse('response.incomplete'),
    onResponse('response.failed'),
    z.looseObject({ type: z.literal('error'), ...sequence, code: z.string(), message: z.string(), param: z.string().nullable() }),
  ])
  .meta({ id: 'ResponseStreamEvent' });

// --- Refusals -----------------------------------------------------------------------------------

const unsupported = (param: string, message: string) => new BadRequestError(message, 'unsupported_parameter', param);

/**
 * The built-in tools and the item kinds Switchyard does not serve, named in a 400 (zod would
 * answer "invalid input" for a union). Only looks at fields present: validation follows.
 */
export function refuseUnsupported(body: unknown): BadRequestError | null {
  if (!isRecord(body)) return null;
  const { tools, input, tool_choice: choice } = body;
  if (Array.isArray(tools)) {
    for (let i = 0; i < tools.length; i++) {
      const tool: unknown = tools[i];
      if (isRecord(tool) && tool.type !== 'function' && typeof tool.type === 'string') {
        return unsupported(`tools[${i}].type`, `tools of type "${tool.type}" (built-in tools) are not supported: only function tools are`);
      }
    }
  }
  if (isRecord(choice) && choice.type !== 'function' && typeof choice.type === 'string') {
    return unsupported('tool_choice', `tool_choice of type "${choice.type}" is not supported: only none, auto, required and function`);
  }
  if (Array.isArray(input)) {
    for (let i = 0; i < input.length; i++) {
      const item: unknown = input[i];
      if (!isRecord(item)) continue;
      if (item.type !== undefined && !ITEM_TYPES.has(item.type)) {
        return unsupported(`input[${i}].type`, `input items of type "${String(item.type)}" are not supported: only message, function_call and function_call_output`);
      }
      if (Array.isArray(item.content)) {
        for (let j = 0; j < item.content.length; j++) {
          const part: unknown = item.content[j];
          if (isRecord(part) && typeof part.type === 'string' && !PART_TYPES.has(part.type)) {
            return unsupported(`input[${i}].content[${j}].type`, `content parts of type "${part.type}" are not supported: only input_text, input_image, input_file and output_text`);
          }
          if (isRecord(part) && part.type === 'input_file' && typeof part.file_id !== 'string') {
            return unsupported(`input[${i}].content[${j}].file_id`, 'an input_file names an uploaded file by file_id: upload the file with POST /v1/files first (file_data and file_url are not accepted)');
          }
        }
      }
    }
  }
  return null;
}

const ITEM_TYPES: ReadonlySet<unknown> = new Set(['message', 'function_call', 'function_call_output']);
const PART_TYPES: ReadonlySet<string> = new Set(['input_text', 'input_image', 'input_file', 'output_text']);
