/**
 * Fake Ollama: `POST /api/chat`, no auth. Non-streaming JSON when `stream: false`, otherwise
 * NDJSON lines (Ollama streams when `stream` is absent); the last line has `done: true`,
 * `done_reason` and the counts. Errors are `{error}`; the in-stream error is an `{error}` line.
 * Ollama sends tool calls whole (arguments as an object), so they are not split.
 * `POST /api/embed` `{model, input, dimensions?}` -> `{model, embeddings, prompt_eval_count}`.
 */
import type { ServerResponse } from 'node:http';
import { FAKE_COMPLETION_TOKENS, FAKE_PROMPT_TOKENS, FAKE_TOOL_ARGUMENTS, fakeEmbedding, pieces, replyText, sleep, startFake, textsOf, type FakeUpstream } from './fake.js';

interface OllamaBody {
  model?: string;
  stream?: boolean;
  messages?: Array<{ role?: string; content?: string }>;
  tools?: Array<{ function?: { name?: string } }>;
}

function sendError(res: ServerResponse, status: number, message: string, extra: Record<string, string> = {}) {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...extra });
  res.end(JSON.stringify({ error: message }));
}

const CREATED_AT = '2024-07-01T12:00:00.000000Z';

export async function startOllamaFake(): Promise<FakeUpstream> {
  return startFake(async (req, res, fake) => {
    if (req.method === 'POST' && req.path.split('?')[0] === '/api/embed') {
      const body = (req.json ?? {}) as { model?: string; input?: unknown; dimensions?: number };
      const texts = textsOf(body.input);
      if (!body.model) return sendError(res, 400, 'model is required');
      if (texts.length === 0) return sendError(res, 400, 'invalid input type');
      const mode = fake.mode;
      if (mode.kind === 'error') return sendError(res, mode.status, mode.message ?? 'fake ollama error', mode.retryAfterSeconds !== undefined ? { 'retry-after': String(mode.retryAfterSeconds) } : {});
      if (mode.kind === 'slow') await sleep(mode.delayMs);
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
      res.end(JSON.stringify({ model: body.model, embeddings: texts.map((t) => fakeEmbedding(t, body.dimensions)), total_duration: 1_000_000, load_duration: 10_000, ...(mode.kind === 'no_usage' ? {} : { prompt_eval_count: FAKE_PROMPT_TOKENS }) }));
      return;
    }
    if (req.method !== 'POST' || req.path.split('?')[0] !== '/api/chat') {
      sendError(res, 404, '404 page not found');
      return;
    }
    const mode = fake.mode;
    if (mode.kind === 'error') {
      sendError(res, mode.status, mode.message ?? 'fake ollama error', mode.retryAfterSeconds !== undefined ? { 'retry-after': String(mode.retryAfterSeconds) } : {});
      return;
    }
    const body = (req.json ?? {}) as OllamaBody;
    const model = body.model ?? 'llama3.2';
    const users = (body.messages ?? []).filter((m) => m.role === 'user');
    const text = mode.kind === 'length' ? 'Hello! You' : replyText(users[users.length - 1]?.content ?? '');
    const delay = mode.kind === 'slow' ? mode.delayMs : 0;
    const toolName = body.tools?.[0]?.function?.name ?? 'get_weather';
    const toolCalls = [{ function: { name: toolName, arguments: JSON.parse(FAKE_TOOL_ARGUMENTS) as unknown } }];
    const doneReason = mode.kind === 'length' ? 'length' : 'stop';
    const counts = mode.kind === 'no_usage' ? {} : { prompt_eval_count: FAKE_PROMPT_TOKENS, eval_count: FAKE_COMPLETION_TOKENS };
    const timings = { total_duration: 1_000_000, load_duration: 10_000, prompt_eval_duration: 200_000, eval_duration: 700_000 };
    if (delay) await sleep(delay);

    if (body.stream === false) {
      const message = mode.kind === 'tool_call' ? { role: 'assistant', content: '', tool_calls: toolCalls } : { role: 'assistant', content: text };
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
      res.end(JSON.stringify({ model, created_at: CREATED_AT, message, done: true, done_reason: doneReason, ...timings, ...counts }));
      return;
    }

    res.writeHead(200, { 'content-type': 'application/x-ndjson' });
    const line = (payload: Record<string, unknown>) => `${JSON.stringify({ model, created_at: CREATED_AT, ...payload })}\n`;
    const send = async (chunk: string) => {
      res.write(chunk);
      if (delay) await sleep(delay);
    };
    if (mode.kind === 'tool_call') {
      await send(line({ message: { role: 'assistant', content: '', tool_calls: toolCalls }, done: false }));
    } else if (mode.kind === 'stream_error') {
      await send(line({ message: { role: 'assistant', content: pieces(text, 3)[0] ?? text }, done: false }));
      res.end(`${JSON.stringify({ error: 'fake ollama stream error' })}\n`);
      return;
    } else {
      for (const piece of pieces(text, 3)) await send(line({ message: { role: 'assistant', content: piece }, done: false }));
    }
    res.end(line({ message: { role: 'assistant', content: '' }, done: true, done_reason: doneReason, ...timings, ...counts }));
  });
}
