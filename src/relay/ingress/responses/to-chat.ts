/**
 * A Responses request in the relay's chat form (src/relay/schema.ts), for channels that do not
 * speak the Responses API themselves. Pure: the stored conversation a `previous_response_id`
 * names comes in as `history` (its items, oldest first), already read by the ingress.
 */
import { unsupported } from '../../providers/shared.js';
import type { ChatCompletionRequest, ContentPart, Message, ResponseFormat, Tool, ToolChoice as ChatToolChoice } from '../../schema.js';
import type { FunctionTool, InputContentPart, InputItem, ResponsesRequest, TextFormat, ToolChoice } from './schema.js';

/** The request's own input as items: a string is one user message. */
export function inputItemsOf(request: Pick<ResponsesRequest, 'input'>): InputItem[] {
  return typeof request.input === 'string' ? [{ type: 'message', role: 'user', content: request.input }] : request.input;
}

/** The text of a function's output (Responses allows text parts there; chat tool messages take text). */
function outputText(output: string | Array<{ text: string }>): string {
  return typeof output === 'string' ? output : output.map((part) => part.text).join('');
}

function chatPart(part: InputContentPart, param: string): ContentPart {
  if (part.type === 'input_image') {
    // Parts naming files were replaced before (files.ts): an image here has its URL.
    if (part.image_url === undefined) throw unsupported(param, 'an input_image by file_id was not resolved');
    return { type: 'image_url', image_url: { url: part.image_url, ...(part.detail !== undefined && { detail: part.detail }) } };
  }
  if (part.type === 'input_file') throw unsupported(param, 'an input_file was not resolved');
  return { type: 'text', text: part.text };
}

/** Assistant turns carry text: output_text parts joined; anything else in them is refused. */
function assistantText(content: string | InputContentPart[], param: string): string {
  if (typeof content === 'string') return content;
  return content
    .map((part) => {
      if (part.type === 'input_image' || part.type === 'input_file') throw unsupported(param, 'assistant messages carry text only');
      return part.text;
    })
    .join('');
}

/** Conversation items as chat messages; consecutive function calls join one assistant turn. */
export function chatMessagesOf(items: readonly InputItem[], param = 'input'): Message[] {
  const messages: Message[] = [];
  items.forEach((item, i) => {
    switch (item.type) {
      case 'function_call': {
        const call = { id: item.call_id, type: 'function' as const, function: { name: item.name, arguments: item.arguments } };
        const last = messages.at(-1);
        if (last?.role === 'assistant') (last.tool_calls ??= []).push(call);
        else messages.push({ role: 'assistant', content: null, tool_calls: [call] });
        return;
      }
      case 'function_call_output':
        messages.push({ role: 'tool', tool_call_id: item.call_id, content: outputText(item.output) });
        return;
      default: {
        if (item.role === 'assistant') {
          messages.push({ role: 'assistant', content: assistantText(item.content, `${param}[${i}].content`) });
          return;
        }
        const content = typeof item.content === 'string' ? item.content : item.content.map((part, j) => chatPart(part, `${param}[${i}].content[${j}]`));
        messages.push({ role: item.role, content });
      }
    }
  });
  return messages;
}

function chatTool(tool: FunctionTool): Tool {
  const fn: Tool['function'] = { name: tool.name };
  if (tool.description !== undefined && tool.description !== null) fn.description = tool.description;
  if (tool.parameters !== undefined && tool.parameters !== null) fn.parameters = tool.parameters;
  if (tool.strict !== undefined) fn.strict = tool.strict;
  return { type: 'function', function: fn };
}

function chatToolChoice(choice: ToolChoice): ChatToolChoice {
  return typeof choice === 'string' ? choice : { type: 'function', function: { name: choice.name } };
}

function responseFormat(format: TextFormat): ResponseFormat | undefined {
  switch (format.type) {
    case 'text':
      return undefined;
    case 'json_object':
      return { type: 'json_object' };
    case 'json_schema':
      return {
        type: 'json_schema',
        json_schema: {
          name: format.name,
          schema: format.schema,
          ...(format.description !== undefined && { description: format.description }),
          ...(format.strict !== undefined && { strict: format.strict }),
        },
      };
  }
}

/**
 * The chat request: instructions as the first (system) message, then the stored conversation,
 * then the new input. Instructions of earlier responses are not carried over (as with OpenAI).
 */
export function toChatRequest(request: ResponsesRequest, history: readonly InputItem[] = []): ChatCompletionRequest {
  const messages: Message[] = [];
  if (request.instructions) messages.push({ role: 'system', content: request.instructions });
  messages.push(...chatMessagesOf(history, 'previous_response_id'), ...chatMessagesOf(inputItemsOf(request)));
  if (messages.length === 0) throw unsupported('input', 'input is empty: give at least one message');
  const chat: ChatCompletionRequest = { model: request.model, messages };
  if (request.max_output_tokens !== undefined && request.max_output_tokens !== null) chat.max_tokens = request.max_output_tokens;
  if (request.temperature !== undefined && request.temperature !== null) chat.temperature = request.temperature;
  if (request.top_p !== undefined && request.top_p !== null) chat.top_p = request.top_p;
  if (request.tools !== undefined && request.tools.length > 0) chat.tools = request.tools.map(chatTool);
  if (request.tool_choice !== undefined) chat.tool_choice = chatToolChoice(request.tool_choice);
  if (request.parallel_tool_calls !== undefined && request.parallel_tool_calls !== null) chat.parallel_tool_calls = request.parallel_tool_calls;
  const format = request.text?.format === undefined ? undefined : responseFormat(request.text.format);
  if (format !== undefined) chat.response_format = format;
  if (request.user !== undefined) chat.user = request.user;
  if (request.stream === true) {
    chat.stream = true;
    chat.stream_options = { include_usage: true };
  }
  return chat;
}
