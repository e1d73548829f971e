/**
 * A fake Anthropic Messages API (POST /v1/messages, and /v1/messages/count_tokens answering
 * fakeCountedTokens) following the contract in fake.ts: checks
 * `x-api-key` (401 unless `test-key`), `anthropic-version`, the path and the request shape
 * (model, max_tokens, alternating user/assistant messages, no system turn first: the system
 * prompt is the top-level `system`), and
 * answers in Anthropic's own JSON or SSE framing (`event:` + `data:` lines, ping events).
 */
import type { ServerResponse } from 'node:http';
import { FAKE_COMPLETION_TOKENS, FAKE_PROMPT_TOKENS, FAKE_TOOL_ARGUMENTS, pieces, replyText, sleep, startFake, type FakeUpstream, type RecordedRequest } from './fake.js';

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  529: 'overloaded_error',
};

export function anthropicErrorType(status: number): string {
  return ERROR_TYPES[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
}

interface AnthropicFakeRequest {
  model?: unknown;
  max_tokens?: unknown;
  stream?: unknown;
  messages?: { role?: unknown; content?: unknown }[];
  tools?: { name?: unknown }[];
}

function sendError(res: ServerResponse, status: number, message: string, retryAfterSeconds?: number) {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (retryAfterSeconds !== undefined) headers['retry-after'] = String(retryAfterSeconds);
  res.writeHead(status, headers);
  res.end(JSON.stringify({ type: 'error', error: { type: anthropicErrorType(status), message } }));
}

/** The text of the last user message (string content or its text blocks; tool results skipped). */
function lastUserText(body: AnthropicFakeRequest): string {
  const last = [...(body.messages ?? [])].reverse().find((m) => m.role === 'user');
  if (!last) return '';
  if (typeof last.content === 'string') return last.content;
  if (!Array.isArray(last.content)) return '';
  return (last.content as { type?: unknown; text?: unknown }[])
    .filter((b) => b.type === 'text' && typeof b.text === 'string')
    .map((b) => b.text as string)
    .join('');
}

/** What the real API would refuse; null when the request is well-formed. */
function invalid(body: AnthropicFakeRequest): string | null {
  if (typeof body.model !== 'string' || !body.model) return 'model: Field required';
  if (typeof body.max_tokens !== 'number') return 'max_tokens: Field required';
  if (!Array.isArray(body.messages) || body.messages.length === 0) return 'messages: at least one message is required';
  // System turns may sit between the others (the API takes them, Claude Code sends them); user
  // and assistant turns still alternate around them.
  let previous: unknown = null;
  for (let i = 0; i < body.messages.length; i++) {
    const role = body.messages[i]?.role;
    if (role === 'system' && i > 0) continue;
    if (role !== 'user' && role !== 'assistant') return `messages.${i}.role: Input should be 'user' or 'assistant'${i > 0 ? " or 'system'" : ''}`;
    if (previous === role) return 'messages: roles must alternate between "user" and "assistant"';
    previous = role;
  }
  return null;
}

function sse(res: ServerResponse, event: string, data: unknown) {
  res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

async function stream(res: ServerResponse, fake: FakeUpstream, body: AnthropicFakeRequest, model: string, toolName: string) {
  const mode = fake.mode;
  const delay = mode.kind === 'slow' ? mode.delayMs : 0;
  const withUsage = mode.kind !== 'no_usage';
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' });
  if (delay) await sleep(delay);
  const message: Record<string, unknown> = { id: 'msg_fake_1', type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null };
  if (withUsage) message['usage'] = { input_tokens: FAKE_PROMPT_TOKENS, output_tokens: 1 };
  sse(res, 'message_start', { type: 'message_start', message });

  let stopReason = 'end_turn';
  if (mode.kind === 'tool_call') {
    sse(res, 'content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_fake_1', name: toolName, input: {} } });
    sse(res, 'ping', { type: 'ping' });
    sse(res, 'content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '' } });
    for (const piece of pieces(FAKE_TOOL_ARGUMENTS)) sse(res, 'content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: piece } });
    sse(res, 'content_block_stop', { type: 'content_block_stop', index: 0 });
    stopReason = 'tool_use';
  } else {
    const text = mode.kind === 'length' ? 'Hello! You' : replyText(lastUserText(body));
    sse(res, 'content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
    sse(res, 'ping', { type: 'ping' });
    const parts = pieces(text);
    for (const [i, piece] of parts.entries()) {
      if (i > 0 && delay) await sleep(delay);
      sse(res, 'content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: piece } });
      if (mode.kind === 'stream_error') {
        sse(res, 'error', { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
        res.end();
        return;
      }
    }
    sse(res, 'content_block_stop', { type: 'content_block_stop', index: 0 });
    if (mode.kind === 'length') stopReason = 'max_tokens';
  }
  const messageDelta: Record<string, unknown> = { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null } };
  if (withUsage) messageDelta['usage'] = { output_tokens: FAKE_COMPLETION_TOKENS };
  sse(res, 'message_delta', messageDelta);
  sse(res, 'message_stop', { type: 'message_stop' });
  res.end();
}

async function reply(res: ServerResponse, fake: FakeUpstream, body: AnthropicFakeRequest, model: string, toolName: string) {
  const mode = fake.mode;
  if (mode.kind === 'slow') await sleep(mode.delayMs);
  const message: Record<string, unknown> = { id: 'msg_fake_1', type: 'message', role: 'assistant', model, stop_sequence: null };
  if (mode.kind === 'tool_call') {
    message['content'] = [{ type: 'tool_use', id: 'toolu_fake_1', name: toolName, input: JSON.parse(FAKE_TOOL_ARGUMENTS) as unknown }];
    message['stop_reason'] = 'tool_use';
  } else if (mode.kind === 'length') {
    message['content'] = [{ type: 'text', text: 'Hello! You' }];
    message['stop_reason'] = 'max_tokens';
  } else {
    message['content'] = [{ type: 'text', text: replyText(lastUserText(body)) }];
    message['stop_reason'] = 'end_turn';
  }
  if (mode.kind !== 'no_usage') message['usage'] = { input_tokens: FAKE_PROMPT_TOKENS, output_tokens: FAKE_COMPLETION_TOKENS };
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(message));
}

/** What the fake's count_tokens answers: 100 + 10 per message (a count no tokenizer would give by chance). */
export function fakeCountedTokens(messages: number): number {
  return 100 + 10 * messages;
}

/** POST /v1/messages/count_tokens: the same checks (no max_tokens), `{input_tokens}`; `error` mode applies. */
function countTokens(req: RecordedRequest, res: ServerResponse, fake: FakeUpstream) {
  const body = req.json as AnthropicFakeRequest | undefined;
  if (!body || typeof body !== 'object') return sendError(res, 400, 'request body must be a JSON object');
  if ('max_tokens' in body || 'stream' in body) return sendError(res, 400, 'max_tokens: Extra inputs are not permitted');
  const problem = invalid({ ...body, max_tokens: 1 });
  if (problem) return sendError(res, 400, problem);
  if (fake.mode.kind === 'error') return sendError(res, fake.mode.status, fake.mode.message ?? 'fake upstream error');
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ input_tokens: fakeCountedTokens(body.messages!.length) }));
}

async function handle(req: RecordedRequest, res: ServerResponse, fake: FakeUpstream) {
  const path = req.path.split('?')[0];
  if (req.method === 'POST' && path === '/v1/messages/count_tokens') {
    if (req.headers['x-api-key'] !== 'test-key') return sendError(res, 401, 'invalid x-api-key');
    if (!req.headers['anthropic-version']) return sendError(res, 400, 'anthropic-version: header is required');
    return countTokens(req, res, fake);
  }
  if (req.method !== 'POST' || path !== '/v1/messages') return sendError(res, 404, `Not found: ${req.method} ${req.path}`);
  if (req.headers['x-api-key'] !== 'test-key') return sendError(res, 401, 'invalid x-api-key');
  if (!req.headers['anthropic-version']) return sendError(res, 400, 'anthropic-version: header is required');
  const body = req.json as AnthropicFakeRequest | undefined;
  if (!body || typeof body !== 'object') return sendError(res, 400, 'request body must be a JSON object');
  const problem = invalid(body);
  if (problem) return sendError(res, 400, problem);

  const mode = fake.mode;
  if (mode.kind === 'error') return sendError(res, mode.status, mode.message ?? 'fake upstream error', mode.retryAfterSeconds);
  const model = body.model as string;
  const firstTool = body.tools?.[0]?.name;
  const toolName = typeof firstTool === 'string' ? firstTool : 'get_weather';
  if (body.stream === true) return stream(res, fake, body, model, toolName);
  return reply(res, fake, body, model, toolName);
}

export function startAnthropicFake(): Promise<FakeUpstream> {
  return startFake(handle);
}
