/**
 * A fake Gemini API following the contract in fake.ts: POST
 * /v1beta/models/{model}:generateContent and :streamGenerateContent?alt=sse, `x-goog-api-key`
 * checked (401 unless `test-key`), request shape checked (contents with user/model roles, parts
 * with exactly one known field), answers in Gemini's own JSON or SSE framing (`data:` lines
 * separated by \r\n\r\n as Google sends them), errors as `{"error":{code,message,status}}`.
 * Embeddings: POST /v1beta/models/{model}:batchEmbedContents (each request's `model` must be
 * `models/{model}`, its content one text part) -> `{embeddings: [{values}]}`, no token count.
 */
import type { ServerResponse } from 'node:http';
import { FAKE_COMPLETION_TOKENS, FAKE_PROMPT_TOKENS, FAKE_TOOL_ARGUMENTS, fakeEmbedding, pieces, replyText, sleep, startFake, type FakeUpstream, type RecordedRequest } from './fake.js';

const STATUSES: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

export function geminiErrorStatus(code: number): string {
  return STATUSES[code] ?? (code >= 500 ? 'INTERNAL' : 'FAILED_PRECONDITION');
}

const PART_FIELDS = ['text', 'inlineData', 'fileData', 'functionCall', 'functionResponse'];

interface GeminiFakeRequest {
  contents?: { role?: unknown; parts?: Record<string, unknown>[] }[];
  tools?: { functionDeclarations?: { name?: unknown }[] }[];
}

function sendError(res: ServerResponse, code: number, message: string, retryAfterSeconds?: number) {
  const headers: Record<string, string> = { 'content-type': 'application/json; charset=UTF-8' };
  if (retryAfterSeconds !== undefined) headers['retry-after'] = String(retryAfterSeconds);
  res.writeHead(code, headers);
  res.end(JSON.stringify({ error: { code, message, status: geminiErrorStatus(code) } }));
}

function invalid(body: GeminiFakeRequest): string | null {
  if (!Array.isArray(body.contents) || body.contents.length === 0) return '* GenerateContentRequest.contents: contents is not specified';
  for (const [i, content] of body.contents.entries()) {
    if (content.role !== 'user' && content.role !== 'model') return `Please use a valid role: user, model. (contents[${i}])`;
    if (!Array.isArray(content.parts) || content.parts.length === 0) return `* GenerateContentRequest.contents[${i}].parts: contents.parts must not be empty.`;
    for (const part of content.parts) {
      const fields = Object.keys(part).filter((k) => PART_FIELDS.includes(k));
      if (fields.length !== 1) return `* GenerateContentRequest.contents[${i}].parts: a part must hold exactly one of ${PART_FIELDS.join(', ')}`;
    }
  }
  return null;
}

/** The text parts of the last user turn that has any text. */
function lastUserText(body: GeminiFakeRequest): string {
  for (const content of [...(body.contents ?? [])].reverse()) {
    if (content.role !== 'user') continue;
    const texts = (content.parts ?? []).filter((p) => typeof p['text'] === 'string').map((p) => p['text'] as string);
    if (texts.length > 0) return texts.join('');
  }
  return '';
}

const usageMetadata = { promptTokenCount: FAKE_PROMPT_TOKENS, candidatesTokenCount: FAKE_COMPLETION_TOKENS, totalTokenCount: FAKE_PROMPT_TOKENS + FAKE_COMPLETION_TOKENS };

function candidate(parts: unknown[], finishReason?: string) {
  const c: Record<string, unknown> = { content: { parts, role: 'model' }, index: 0 };
  if (finishReason) c['finishReason'] = finishReason;
  return c;
}

interface BatchEmbedRequest {
  requests?: Array<{ model?: unknown; content?: { parts?: Array<{ text?: unknown }> }; outputDimensionality?: number }>;
}

async function batchEmbed(model: string, req: RecordedRequest, res: ServerResponse, fake: FakeUpstream) {
  const body = (req.json ?? {}) as BatchEmbedRequest;
  if (!Array.isArray(body.requests) || body.requests.length === 0) return sendError(res, 400, '* BatchEmbedContentsRequest.requests: requests is not specified');
  const texts: string[] = [];
  for (const [i, r] of body.requests.entries()) {
    if (r.model !== `models/${model}`) return sendError(res, 400, `* BatchEmbedContentsRequest.requests[${i}].model: the model must be the one in the URL (models/${model})`);
    const text = r.content?.parts?.[0]?.text;
    if (typeof text !== 'string' || r.content?.parts?.length !== 1) return sendError(res, 400, `* BatchEmbedContentsRequest.requests[${i}].content: one text part expected`);
    texts.push(text);
  }
  const mode = fake.mode;
  if (mode.kind === 'error') return sendError(res, mode.status, mode.message ?? 'fake upstream error', mode.retryAfterSeconds);
  if (mode.kind === 'slow') await sleep(mode.delayMs);
  res.writeHead(200, { 'content-type': 'application/json; charset=UTF-8' });
  res.end(JSON.stringify({ embeddings: texts.map((text, i) => ({ values: fakeEmbedding(text, body.requests![i]!.outputDimensionality) })) }));
}

async function handle(req: RecordedRequest, res: ServerResponse, fake: FakeUpstream) {
  const url = new URL(req.path, 'http://fake');
  const embedRoute = /^\/v1beta\/models\/([^/:]+):batchEmbedContents$/.exec(url.pathname);
  if (req.method === 'POST' && embedRoute) {
    if (req.headers['x-goog-api-key'] !== 'test-key') return sendError(res, 401, 'API key not valid. Please pass a valid API key.');
    return batchEmbed(decodeURIComponent(embedRoute[1]!), req, res, fake);
  }
  const match = /^\/v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent)$/.exec(url.pathname);
  if (req.method !== 'POST' || !match) return sendError(res, 404, `Method not found: ${req.method} ${url.pathname}`);
  if (req.headers['x-goog-api-key'] !== 'test-key') return sendError(res, 401, 'API key not valid. Please pass a valid API key.');
  const streaming = match[2] === 'streamGenerateContent';
  if (streaming && url.searchParams.get('alt') !== 'sse') return sendError(res, 400, 'this fake streams only with alt=sse');
  const body = req.json as GeminiFakeRequest | undefined;
  if (!body || typeof body !== 'object') return sendError(res, 400, 'Invalid JSON payload received.');
  const problem = invalid(body);
  if (problem) return sendError(res, 400, problem);

  const mode = fake.mode;
  if (mode.kind === 'error') return sendError(res, mode.status, mode.message ?? 'fake upstream error', mode.retryAfterSeconds);
  const model = decodeURIComponent(match[1]!);
  const firstTool = body.tools?.[0]?.functionDeclarations?.[0]?.name;
  const toolName = typeof firstTool === 'string' ? firstTool : 'get_weather';
  const delay = mode.kind === 'slow' ? mode.delayMs : 0;
  const withUsage = mode.kind !== 'no_usage';
  const functionCall = { functionCall: { name: toolName, args: JSON.parse(FAKE_TOOL_ARGUMENTS) as unknown } };
  const text = mode.kind === 'length' ? 'Hello! You' : replyText(lastUserText(body));
  const finish = mode.kind === 'length' ? 'MAX_TOKENS' : 'STOP';

  if (!streaming) {
    if (delay) await sleep(delay);
    const response: Record<string, unknown> = {
      candidates: [candidate(mode.kind === 'tool_call' ? [functionCall] : [{ text }], finish)],
      modelVersion: model,
      responseId: 'fake-response-1',
    };
    if (withUsage) response['usageMetadata'] = usageMetadata;
    res.writeHead(200, { 'content-type': 'application/json; charset=UTF-8' });
    res.end(JSON.stringify(response));
    return;
  }

  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const send = (event: Record<string, unknown>) => res.write(`data: ${JSON.stringify({ ...event, modelVersion: model, responseId: 'fake-response-1' })}\r\n\r\n`);
  if (delay) await sleep(delay);
  if (mode.kind === 'tool_call') {
    // Gemini sends a function call whole, in one event.
    send({ candidates: [candidate([functionCall], 'STOP')], ...(withUsage ? { usageMetadata } : {}) });
    res.end();
    return;
  }
  const parts = pieces(text);
  for (const [i, piece] of parts.entries()) {
    if (i > 0 && delay) await sleep(delay);
    const last = i === parts.length - 1;
    send({ candidates: [candidate([{ text: piece }], last ? finish : undefined)], ...(last && withUsage ? { usageMetadata } : {}) });
    if (mode.kind === 'stream_error') {
      res.write(`data: ${JSON.stringify({ error: { code: 503, message: 'The model is overloaded. Please try again later.', status: 'UNAVAILABLE' } })}\r\n\r\n`);
      res.end();
      return;
    }
  }
  res.end();
}

export function startGeminiFake(): Promise<FakeUpstream> {
  return startFake(handle);
}
