/**
 * A Messages API request -> the relay's chat form (src/relay/schema.ts), for channels that do not
 * speak Anthropic's API (an anthropic channel gets the client's own body instead).
 *
 * What has no place in the chat form:
 * - `cache_control` (anywhere), `thinking`, `top_k`, `service_tier`, `speed`, `inference_geo`,
 *   `context_management`, `output_config.effort` and the signatures of thinking blocks: ignored
 *   (hints for Anthropic's own serving; the answer is the same without them). Thinking and
 *   redacted thinking blocks of earlier assistant turns are left out.
 * - Server and built-in tools (a tool `type` other than "custom"), `mcp_servers`, `container`,
 *   PDF / file documents, file image sources and server-tool blocks: a 400 naming the field
 *   (only Anthropic can run or read them).
 * - `tool_result.is_error`: the result's text is prefixed with "Error: ". Images in a tool result
 *   go in a user message right after the tool messages (chat tool messages carry text only).
 * - `stop_sequences` -> `stop`, `metadata.user_id` -> `user`, `tool_choice.disable_parallel_tool_use`
 *   -> `parallel_tool_calls: false`, `output_config.format` -> `response_format` json_schema.
 */
import { BadRequestError } from '../../../errors.js';
import type { ChatCompletionRequest, ContentPart, Message, Tool as ChatTool, ToolCall } from '../../schema.js';
import type { ContentBlock, CountTokensRequest, DocumentBlock, ImageBlock, MessageParam, MessagesRequest, TextBlock, Tool, ToolChoice, ToolResultBlock } from './schema.js';

/** A 400 for something only an anthropic channel can take. */
function anthropicOnly(param: string, what: string): BadRequestError {
  return new BadRequestError(`${what} can only be served by an anthropic channel; the channels serving this model are of another kind`, 'unsupported_parameter', param);
}

function imagePart(block: ImageBlock, param: string): ContentPart {
  const source = block.source;
  if (source.type === 'base64') return { type: 'image_url', image_url: { url: `data:${source.media_type};base64,${source.data}` } };
  if (source.type === 'url') return { type: 'image_url', image_url: { url: source.url } };
  throw anthropicOnly(`${param}.source`, 'an image given by file_id');
}

/** A text document as text (its title first); PDFs and files only Anthropic reads. */
function documentText(block: DocumentBlock, param: string): string {
  const { source } = block;
  let text: string | null = null;
  if (source.type === 'text' && typeof source.data === 'string') text = source.data;
  else if (source.type === 'content') {
    if (typeof source.content === 'string') text = source.content;
    else if (Array.isArray(source.content)) {
      const texts = (source.content as { type?: unknown; text?: unknown }[]).map((b) => (b.type === 'text' && typeof b.text === 'string' ? b.text : null));
      if (texts.every((t) => t !== null)) text = texts.join('\n');
    }
  }
  if (text === null) throw anthropicOnly(`${param}.source`, `a document of source type ${source.type}`);
  return block.title ? `${block.title}\n\n${text}` : text;
}

/** Adds a text part; empty text is left out (Anthropic refuses empty text blocks, some chat upstreams too). */
function pushText(parts: ContentPart[], text: string): void {
  if (text === '') return;
  parts.push({ type: 'text', text });
}

/** Parts as the chat form prefers them: a plain string when there is only text (separate blocks stay separate paragraphs). */
function contentOf(parts: ContentPart[]): string | ContentPart[] {
  if (parts.every((p) => p.type === 'text')) return parts.map((p) => (p as { text: string }).text).join('\n\n');
  return parts;
}

function toolResultMessages(block: ToolResultBlock, param: string): { tool: Message; images: ContentPart[] } {
  const texts: string[] = [];
  const images: ContentPart[] = [];
  if (typeof block.content === 'string') texts.push(block.content);
  else
    (block.content ?? []).forEach((part, i) => {
      const at = `${param}.content[${i}]`;
      if (part.type === 'text') texts.push((part as { text: string }).text);
      else if (part.type === 'image') images.push(imagePart(part as ImageBlock, at));
      else if (part.type === 'document') texts.push(documentText(part as DocumentBlock, at));
      else throw anthropicOnly(at, `a tool result block of type ${part.type}`);
    });
  const text = texts.join('\n');
  return { tool: { role: 'tool', tool_call_id: block.tool_use_id, content: block.is_error ? `Error: ${text}` : text }, images };
}

/**
 * A user turn: its tool results first, as tool messages (they answer the previous assistant turn's
 * calls, and Anthropic too wants them first), then one user message with the rest (images of tool
 * results ahead of the turn's own content).
 */
function userMessages(content: MessageParam['content'], index: number): Message[] {
  if (typeof content === 'string') return [{ role: 'user', content }];
  const tools: Message[] = [];
  const resultImages: ContentPart[] = [];
  const parts: ContentPart[] = [];
  content.forEach((block: ContentBlock, j) => {
    const param = `messages[${index}].content[${j}]`;
    switch (block.type) {
      case 'text':
        pushText(parts, (block as { text: string }).text);
        break;
      case 'image':
        parts.push(imagePart(block as ImageBlock, param));
        break;
      case 'document':
        pushText(parts, documentText(block as DocumentBlock, param));
        break;
      case 'tool_result': {
        const { tool, images } = toolResultMessages(block as ToolResultBlock, param);
        tools.push(tool);
        resultImages.push(...images);
        break;
      }
      case 'thinking':
      case 'redacted_thinking':
        break;
      default:
        throw anthropicOnly(param, `a content block of type ${block.type}`);
    }
  });
  const rest = [...resultImages, ...parts];
  return rest.length > 0 ? [...tools, { role: 'user', content: contentOf(rest) }] : tools;
}

function assistantMessage(content: MessageParam['content'], index: number): Message | null {
  if (typeof content === 'string') return { role: 'assistant', content };
  const texts: string[] = [];
  const calls: ToolCall[] = [];
  content.forEach((block: ContentBlock, j) => {
    switch (block.type) {
      case 'text':
        texts.push((block as { text: string }).text);
        break;
      case 'tool_use': {
        const use = block as { id: string; name: string; input: Record<string, unknown> };
        calls.push({ id: use.id, type: 'function', function: { name: use.name, arguments: JSON.stringify(use.input) } });
        break;
      }
      case 'thinking':
      case 'redacted_thinking':
        break; // the reasoning of an earlier turn: only Anthropic can check its signature
      default:
        throw anthropicOnly(`messages[${index}].content[${j}]`, `a content block of type ${block.type} in an assistant turn`);
    }
  });
  const text = texts.join('');
  if (text === '' && calls.length === 0) return null;
  const message: Message = { role: 'assistant', content: text === '' && calls.length > 0 ? null : text };
  if (calls.length > 0) message.tool_calls = calls;
  return message;
}

/** A system turn's text blocks (nothing else belongs in one). */
function systemText(content: MessageParam['content'], index: number): string | TextBlock[] {
  if (typeof content === 'string') return content;
  content.forEach((block, j) => {
    if (block.type !== 'text') throw new BadRequestError(`a system message takes text blocks only, not ${block.type}`, 'invalid_request', `messages[${index}].content[${j}]`);
  });
  return content as TextBlock[];
}

/** `system` as one chat system message (blocks joined by blank lines), or nothing. */
function systemMessage(system: MessagesRequest['system']): Message[] {
  if (system === undefined) return [];
  const text = typeof system === 'string' ? system : system.map((b) => b.text).join('\n\n');
  return text === '' ? [] : [{ role: 'system', content: text }];
}

function chatTool(tool: Tool, index: number): ChatTool {
  if (tool.type !== undefined && tool.type !== null && tool.type !== 'custom') {
    throw anthropicOnly(`tools[${index}]`, `the server tool ${tool.type} (${tool.name})`);
  }
  if (tool.name.length > 64) throw new BadRequestError('tool names longer than 64 characters can only be served by an anthropic channel', 'unsupported_parameter', `tools[${index}].name`);
  const fn: ChatTool['function'] = { name: tool.name, parameters: tool.input_schema ?? { type: 'object', properties: {} } };
  if (tool.description !== undefined) fn.description = tool.description;
  return { type: 'function', function: fn };
}

function chatToolChoice(choice: ToolChoice): ChatCompletionRequest['tool_choice'] {
  switch (choice.type) {
    case 'auto':
      return 'auto';
    case 'any':
      return 'required';
    case 'none':
      return 'none';
    case 'tool':
      return { type: 'function', function: { name: choice.name } };
  }
}

/** The conversation (system, messages) in chat messages: what both endpoints convert. */
export function chatMessages(request: Pick<MessagesRequest, 'system' | 'messages'>): Message[] {
  const messages = systemMessage(request.system);
  request.messages.forEach((message, i) => {
    if (message.role === 'user') messages.push(...userMessages(message.content, i));
    else if (message.role === 'system') messages.push(...systemMessage(systemText(message.content, i)));
    else {
      const converted = assistantMessage(message.content, i);
      if (converted) messages.push(converted);
    }
  });
  return messages;
}

/** Refuses what only Anthropic can run: MCP servers and containers (code execution's). */
function refuseAnthropicOnly(request: MessagesRequest | CountTokensRequest): void {
  if (request.mcp_servers !== undefined && request.mcp_servers.length > 0) throw anthropicOnly('mcp_servers', 'MCP servers');
  if ('container' in request && request.container !== undefined && request.container !== null) throw anthropicOnly('container', 'a container');
}

/** The chat tools of a request (both endpoints). */
export function chatTools(tools: Tool[] | undefined): ChatTool[] | undefined {
  return tools && tools.length > 0 ? tools.map(chatTool) : undefined;
}

/** The chat form of a Messages request. Throws BadRequestError (400) for what only Anthropic can serve. */
export function toChatRequest(request: MessagesRequest): ChatCompletionRequest {
  refuseAnthropicOnly(request);
  const chat: ChatCompletionRequest = { model: request.model, messages: chatMessages(request), max_tokens: request.max_tokens };
  if (chat.messages.length === 0) throw new BadRequestError('messages: at least one message is required', 'invalid_request', 'messages');
  if (request.temperature !== undefined) chat.temperature = request.temperature;
  if (request.top_p !== undefined) chat.top_p = request.top_p;
  if (request.stop_sequences !== undefined && request.stop_sequences.length > 0) chat.stop = request.stop_sequences;
  if (request.stream === true) chat.stream = true;
  const user = request.metadata?.user_id;
  if (typeof user === 'string' && user !== '') chat.user = user;
  const tools = chatTools(request.tools);
  if (tools) {
    chat.tools = tools;
    if (request.tool_choice) {
      chat.tool_choice = chatToolChoice(request.tool_choice);
      if (request.tool_choice.type !== 'none' && request.tool_choice.disable_parallel_tool_use === true) chat.parallel_tool_calls = false;
    }
  }
  const format = request.output_config?.format;
  if (format) chat.response_format = { type: 'json_schema', json_schema: { name: 'output', schema: format.schema } };
  return chat;
}
