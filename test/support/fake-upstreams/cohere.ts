/**
 * Fake Cohere v2 chat: `POST /v2/chat`, `Authorization: Bearer test-key`. Non-streaming JSON or,
 * with `stream: true`, Cohere's SSE events (message-start, content-start, content-delta,
 * content-end, tool-plan-delta, tool-call-start/-delta/-end, message-end). Errors are
 * `{id, message}`; the in-stream error is a message-end with finish_reason ERROR and `error`.
 * `POST /v2/embed` (`model`, `texts`, `input_type` required, `embedding_types` ["float"]) answers
 * `{embeddings: {float}, meta: {billed_units: {input_tokens}}}`.
 */
import type { ServerResponse } from 'node:http';
import { FAKE_COMPLETION_TOKENS, FAKE_PROMPT_TOKENS, FAKE_TOOL_ARGUMENTS, fakeEmbedding, pieces, replyText, sleep, startFake, type FakeUpstream, type RecordedRequest } from './fake.js';

export const COHERE_API_KEY = 'test-key';

const USAGE = {
  billed_units: { input_tokens: FAKE_PROMPT_TOKENS, output_tokens: FAKE_COMPLETION_TOKENS },
  tokens: { input_tokens: FAKE_PROMPT_TOKENS + 60, output_tokens: FAKE_COMPLETION_TOKENS },
};

interface CohereBody {
  stream?: boolean;
  messages?: Array<{ role?: string; content?: string | Array<{ type?: string; text?: string }> }>;
  tools?: Array<{ function?: { name?: string } }>;
}

function lastUserText(body: CohereBody): string {
  const users = (body.messages ?? []).filter((m) => m.role === 'user');
  const content = users[users.length - 1]?.content;
  if (typeof content === 'string') return content;
  return (content ?? []).map((p) => (p.type === 'text' && typeof p.text === 'string' ? p.text : '')).join('');
}

function sendError(res: ServerResponse, status: number, message: string, extra: Record<string, string> = {}) {
  res.writeHead(status, { 'content-type': 'application/json', ...extra });
  res.end(JSON.stringify({ id: 'fake-error-id', message }));
}

const event = (type: string, payload: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, ...payload })}\n\n`;

interface EmbedBody {
  model?: string;
  texts?: unknown;
  input_type?: string;
  embedding_types?: unknown;
  output_dimension?: number;
}

async function embed(req: RecordedRequest, res: ServerResponse, fake: FakeUpstream) {
  const body = (req.json ?? {}) as EmbedBody;
  if (!body.model) return sendError(res, 400, 'invalid request: model must be specified');
  if (!Array.isArray(body.texts) || body.texts.length === 0 || body.texts.length > 96 || !body.texts.every((t) => typeof t === 'string')) {
    return sendError(res, 400, 'invalid request: texts must be a list of 1 to 96 strings');
  }
  if (!['search_document', 'search_query', 'classification', 'clustering'].includes(body.input_type ?? '')) return sendError(res, 400, 'invalid request: valid input_type must be provided with the provided model');
  if (JSON.stringify(body.embedding_types) !== '["float"]') return sendError(res, 400, 'this fake answers embedding_types ["float"] only');
  const mode = fake.mode;
  if (mode.kind === 'error') return sendError(res, mode.status, mode.message ?? 'fake cohere error', mode.retryAfterSeconds !== undefined ? { 'retry-after': String(mode.retryAfterSeconds) } : {});
  if (mode.kind === 'slow') await sleep(mode.delayMs);
  const texts = body.texts as string[];
  const meta: Record<string, unknown> = { api_version: { version: '2' } };
  if (mode.kind !== 'no_usage') meta.billed_units = { input_tokens: FAKE_PROMPT_TOKENS };
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ id: 'fake-embed-id', embeddings: { float: texts.map((t) => fakeEmbedding(t, body.output_dimension)) }, texts, meta, response_type: 'embeddings_by_type' }));
}

export async function startCohereFake(): Promise<FakeUpstream> {
  return startFake(async (req, res, fake) => {
    if (req.method === 'POST' && req.path.split('?')[0] === '/v2/embed') {
      if (req.headers.authorization !== `Bearer ${COHERE_API_KEY}`) return sendError(res, 401, 'invalid api token');
      return embed(req, res, fake);
    }
    if (req.method !== 'POST' || req.path.split('?')[0] !== '/v2/chat') {
      sendError(res, 404, `route ${req.path} not found`);
      return;
    }
    if (req.headers.authorization !== `Bearer ${COHERE_API_KEY}`) {
      sendError(res, 401, 'invalid api token');
      return;
    }
    const mode = fake.mode;
    if (mode.kind === 'error') {
      sendError(res, mode.status, mode.message ?? 'fake cohere error', mode.retryAfterSeconds !== undefined ? { 'retry-after': String(mode.retryAfterSeconds) } : {});
      return;
    }
    const body = (req.json ?? {}) as CohereBody;
    const delay = mode.kind === 'slow' ? mode.delayMs : 0;
    const toolName = body.tools?.[0]?.function?.name ?? 'get_weather';
    const text = mode.kind === 'length' ? 'Hello! You' : replyText(lastUserText(body));
    const finish = mode.kind === 'tool_call' ? 'TOOL_CALL' : mode.kind === 'length' ? 'MAX_TOKENS' : 'COMPLETE';
    const withUsage = mode.kind !== 'no_usage';
    const toolCall = { id: 'get_weather_fake0001', type: 'function', function: { name: toolName, arguments: FAKE_TOOL_ARGUMENTS } };
    if (delay) await sleep(delay);

    if (body.stream !== true) {
      const message =
        mode.kind === 'tool_call'
          ? { role: 'assistant', tool_plan: 'I will call the tool.', tool_calls: [toolCall] }
          : { role: 'assistant', content: [{ type: 'text', text }] };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'fake-cohere-id', finish_reason: finish, message, ...(withUsage ? { usage: USAGE } : {}) }));
      return;
    }

    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const send = async (chunk: string) => {
      res.write(chunk);
      if (delay) await sleep(delay);
    };
    await send(event('message-start', { id: 'fake-cohere-id', delta: { message: { role: 'assistant', content: [], tool_plan: '', tool_calls: [], citations: [] } } }));
    if (mode.kind === 'tool_call') {
      await send(event('tool-plan-delta', { delta: { message: { tool_plan: 'I will call the tool.' } } }));
      await send(event('tool-call-start', { index: 0, delta: { message: { tool_calls: { ...toolCall, function: { name: toolName, arguments: '' } } } } }));
      for (const piece of pieces(FAKE_TOOL_ARGUMENTS, 3)) await send(event('tool-call-delta', { index: 0, delta: { message: { tool_calls: { function: { arguments: piece } } } } }));
      await send(event('tool-call-end', { index: 0 }));
    } else {
      await send(event('content-start', { index: 0, delta: { message: { content: { type: 'text', text: '' } } } }));
      const parts = mode.kind === 'stream_error' ? pieces(text, 3).slice(0, 1) : pieces(text, 3);
      for (const piece of parts) await send(event('content-delta', { index: 0, delta: { message: { content: { text: piece } } } }));
      if (mode.kind === 'stream_error') {
        res.end(event('message-end', { delta: { finish_reason: 'ERROR', error: 'fake cohere stream error' } }));
        return;
      }
      await send(event('content-end', { index: 0 }));
    }
    await send(event('message-end', { delta: { finish_reason: finish, ...(withUsage ? { usage: USAGE } : {}) } }));
    res.end();
  });
}
