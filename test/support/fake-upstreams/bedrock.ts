/**
 * Fake AWS Bedrock runtime: `POST /model/{modelId}/converse` and `/converse-stream`, and
 * InvokeModel (`POST /model/{modelId}/invoke`) for embedding models: amazon.titan-embed-*
 * (`{inputText, dimensions?}` -> `{embedding, inputTextTokenCount}`) and cohere.embed-*
 * (`{texts, input_type, embedding_types?}` -> `{embeddings: {float}}`, no token count).
 *
 * Every request must carry a valid SigV4 signature (service `bedrock`) made with the fake
 * credentials below; the check is written here independently of the relay's signer (canonical
 * URI = each path segment of the raw path encoded once more, as AWS does for non-S3 services).
 * Otherwise: 403 with AWS's error body and `x-amzn-errortype`. Streams are real
 * `application/vnd.amazon.eventstream` frames with correct CRCs.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { encodeMessage } from '../../../src/relay/providers/bedrock/eventstream.js';
import { FAKE_COMPLETION_TOKENS, FAKE_PROMPT_TOKENS, FAKE_TOOL_ARGUMENTS, fakeEmbedding, pieces, replyText, sleep, startFake, type FakeUpstream, type RecordedRequest } from './fake.js';

export const BEDROCK_ACCESS_KEY_ID = 'AKIDEXAMPLE';
export const BEDROCK_SECRET_ACCESS_KEY = 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY';
export const BEDROCK_API_KEY = `${BEDROCK_ACCESS_KEY_ID}:${BEDROCK_SECRET_ACCESS_KEY}`;

const ERROR_TYPES: Record<number, string> = {
  400: 'ValidationException',
  403: 'AccessDeniedException',
  404: 'ResourceNotFoundException',
  408: 'ModelTimeoutException',
  424: 'ModelErrorException',
  429: 'ThrottlingException',
  500: 'InternalServerException',
  503: 'ServiceUnavailableException',
};

function sendError(res: ServerResponse, status: number, type: string, message: string, extra: Record<string, string> = {}) {
  res.writeHead(status, { 'content-type': 'application/json', 'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/`, 'x-amzn-requestid': 'fake-request-id', ...extra });
  res.end(JSON.stringify({ message }));
}

function strictEncode(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data, 'utf8').digest();
const sha256 = (data: string) => createHash('sha256').update(data, 'utf8').digest('hex');

/** Returns null when the request is correctly signed, else AWS's error type and message. */
export function verifySigV4(req: RecordedRequest, now = new Date()): { type: string; message: string } | null {
  const auth = req.headers.authorization ?? '';
  const match = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/.exec(auth);
  if (!match) return { type: 'IncompleteSignatureException', message: 'Authorization header requires Credential, SignedHeaders and Signature.' };
  const [, accessKey, date, region, service, signedHeaders, signature] = match as unknown as [string, string, string, string, string, string, string];
  if (accessKey !== BEDROCK_ACCESS_KEY_ID) return { type: 'UnrecognizedClientException', message: 'The security token included in the request is invalid.' };
  if (service !== 'bedrock') return { type: 'InvalidSignatureException', message: `Credential should be scoped to correct service: 'bedrock'.` };
  const amzDate = req.headers['x-amz-date'] ?? '';
  if (!/^\d{8}T\d{6}Z$/.test(amzDate) || amzDate.slice(0, 8) !== date) return { type: 'InvalidSignatureException', message: 'Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP.' };
  const signedAt = Date.UTC(+amzDate.slice(0, 4), +amzDate.slice(4, 6) - 1, +amzDate.slice(6, 8), +amzDate.slice(9, 11), +amzDate.slice(11, 13), +amzDate.slice(13, 15));
  if (Math.abs(now.getTime() - signedAt) > 5 * 60_000) return { type: 'InvalidSignatureException', message: 'Signature expired.' };
  const names = signedHeaders.split(';');
  if (!names.includes('host') || !names.includes('x-amz-date')) return { type: 'InvalidSignatureException', message: "'Host' and 'X-Amz-Date' must be signed." };
  const payloadHash = sha256(req.body);
  if (req.headers['x-amz-content-sha256'] !== undefined && req.headers['x-amz-content-sha256'] !== payloadHash) {
    return { type: 'InvalidSignatureException', message: 'The provided x-amz-content-sha256 header does not match what was computed.' };
  }
  const q = req.path.indexOf('?');
  const rawPath = q === -1 ? req.path : req.path.slice(0, q);
  const rawQuery = q === -1 ? '' : req.path.slice(q + 1);
  const canonicalUri = rawPath.split('/').map(strictEncode).join('/') || '/';
  const canonicalQuery = rawQuery
    .split('&')
    .filter(Boolean)
    .map((pair) => pair.split('=').map((s) => strictEncode(decodeURIComponent(s))).join('='))
    .sort()
    .join('&');
  const canonicalHeaders = names.map((n) => `${n}:${(req.headers[n] ?? '').trim().replace(/\s+/g, ' ')}\n`).join('');
  const canonical = ['POST', canonicalUri, canonicalQuery, canonicalHeaders, signedHeaders, payloadHash].join('\n');
  const toSign = ['AWS4-HMAC-SHA256', amzDate, `${date}/${region}/${service}/aws4_request`, sha256(canonical)].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${BEDROCK_SECRET_ACCESS_KEY}`, date), region), service), 'aws4_request');
  const expected = createHmac('sha256', key).update(toSign, 'utf8').digest();
  if (!timingSafeEqual(expected, Buffer.from(signature, 'hex'))) {
    return {
      type: 'InvalidSignatureException',
      message: 'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.',
    };
  }
  return null;
}

interface ConverseBody {
  messages?: Array<{ role?: string; content?: Array<{ text?: string }> }>;
  toolConfig?: { tools?: Array<{ toolSpec?: { name?: string } }> };
}

function lastUserText(body: ConverseBody): string {
  const users = (body.messages ?? []).filter((m) => m.role === 'user');
  const last = users[users.length - 1];
  return (last?.content ?? []).map((b) => (typeof b.text === 'string' ? b.text : '')).join('');
}

const USAGE = { inputTokens: FAKE_PROMPT_TOKENS, outputTokens: FAKE_COMPLETION_TOKENS, totalTokens: FAKE_PROMPT_TOKENS + FAKE_COMPLETION_TOKENS };

/** One event frame as Bedrock sends it (JSON payload with the `p` padding field). */
export function bedrockEvent(eventType: string, payload: Record<string, unknown>): Buffer {
  return encodeMessage({ ':event-type': eventType, ':content-type': 'application/json', ':message-type': 'event' }, JSON.stringify({ ...payload, p: 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJ'.slice(0, 8 + (eventType.length % 10)) }));
}

export function bedrockException(exceptionType: string, message: string): Buffer {
  return encodeMessage({ ':exception-type': exceptionType, ':content-type': 'application/json', ':message-type': 'exception' }, JSON.stringify({ message }));
}

/** InvokeModel on an embedding model, in the model family's own body. */
async function invoke(model: string, req: RecordedRequest, res: ServerResponse, fake: FakeUpstream) {
  const body = (req.json ?? {}) as { inputText?: unknown; dimensions?: number; texts?: unknown; input_type?: unknown; embedding_types?: unknown };
  const titan = model.includes('amazon.titan-embed');
  if (!titan && !model.includes('cohere.embed')) return sendError(res, 400, 'ValidationException', `this fake has no model ${model}`);
  if (titan && (typeof body.inputText !== 'string' || body.texts !== undefined)) return sendError(res, 400, 'ValidationException', 'Malformed input request: #: required key [inputText] not found');
  if (titan && body.dimensions !== undefined && ![256, 512, 1024].includes(body.dimensions)) return sendError(res, 400, 'ValidationException', 'Malformed input request: #/dimensions: 256, 512 or 1024');
  if (!titan && (!Array.isArray(body.texts) || typeof body.input_type !== 'string')) return sendError(res, 400, 'ValidationException', 'Malformed input request: #: required keys [texts, input_type]');
  const mode = fake.mode;
  if (mode.kind === 'error') return sendError(res, mode.status, ERROR_TYPES[mode.status] ?? 'InternalServerException', mode.message ?? 'fake bedrock error', mode.retryAfterSeconds !== undefined ? { 'retry-after': String(mode.retryAfterSeconds) } : {});
  if (mode.kind === 'slow') await sleep(mode.delayMs);
  res.writeHead(200, { 'content-type': 'application/json', 'x-amzn-requestid': 'fake-request-id' });
  if (titan) {
    const embedding = fakeEmbedding(body.inputText as string, body.dimensions);
    res.end(JSON.stringify({ embedding, embeddingsByType: { float: embedding }, ...(mode.kind === 'no_usage' ? {} : { inputTextTokenCount: FAKE_PROMPT_TOKENS }) }));
    return;
  }
  const texts = body.texts as string[];
  const vectors = texts.map((t) => fakeEmbedding(t));
  const byType = JSON.stringify(body.embedding_types) === '["float"]';
  res.end(JSON.stringify({ id: 'fake-embed-id', texts, embeddings: byType ? { float: vectors } : vectors, response_type: byType ? 'embeddings_by_type' : 'embeddings_floats' }));
}

export async function startBedrockFake(): Promise<FakeUpstream> {
  return startFake(async (req, res, fake) => {
    const invokeRoute = /^\/model\/([^/]+)\/invoke$/.exec(req.path.split('?')[0] ?? '');
    if (req.method === 'POST' && invokeRoute) {
      const failure = verifySigV4(req);
      if (failure) return sendError(res, 403, failure.type, failure.message);
      return invoke(decodeURIComponent(invokeRoute[1]!), req, res, fake);
    }
    const route = /^\/model\/([^/]+)\/(converse|converse-stream)$/.exec(req.path.split('?')[0] ?? '');
    if (req.method !== 'POST' || !route) {
      sendError(res, 404, 'UnknownOperationException', 'Unknown operation');
      return;
    }
    const failure = verifySigV4(req);
    if (failure) {
      sendError(res, 403, failure.type, failure.message);
      return;
    }
    const mode = fake.mode;
    if (mode.kind === 'error') {
      sendError(res, mode.status, ERROR_TYPES[mode.status] ?? 'InternalServerException', mode.message ?? 'fake bedrock error', mode.retryAfterSeconds !== undefined ? { 'retry-after': String(mode.retryAfterSeconds) } : {});
      return;
    }
    const body = (req.json ?? {}) as ConverseBody;
    const stream = route[2] === 'converse-stream';
    const delay = mode.kind === 'slow' ? mode.delayMs : 0;
    const toolName = body.toolConfig?.tools?.[0]?.toolSpec?.name ?? 'get_weather';
    const text = mode.kind === 'length' ? 'Hello! You' : replyText(lastUserText(body));
    const stopReason = mode.kind === 'tool_call' ? 'tool_use' : mode.kind === 'length' ? 'max_tokens' : 'end_turn';
    const withUsage = mode.kind !== 'no_usage';
    if (delay) await sleep(delay);

    if (!stream) {
      const content = mode.kind === 'tool_call' ? [{ toolUse: { toolUseId: 'tooluse_fake0001', name: toolName, input: JSON.parse(FAKE_TOOL_ARGUMENTS) as unknown } }] : [{ text }];
      res.writeHead(200, { 'content-type': 'application/json', 'x-amzn-requestid': 'fake-request-id' });
      res.end(JSON.stringify({ output: { message: { role: 'assistant', content } }, stopReason, ...(withUsage ? { usage: USAGE } : {}), metrics: { latencyMs: 42 } }));
      return;
    }

    res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-requestid': 'fake-request-id' });
    const send = async (frame: Buffer) => {
      res.write(frame);
      if (delay) await sleep(delay);
    };
    await send(bedrockEvent('messageStart', { role: 'assistant' }));
    if (mode.kind === 'tool_call') {
      await send(bedrockEvent('contentBlockStart', { contentBlockIndex: 0, start: { toolUse: { toolUseId: 'tooluse_fake0001', name: toolName } } }));
      for (const piece of pieces(FAKE_TOOL_ARGUMENTS, 3)) await send(bedrockEvent('contentBlockDelta', { contentBlockIndex: 0, delta: { toolUse: { input: piece } } }));
    } else if (mode.kind === 'stream_error') {
      await send(bedrockEvent('contentBlockDelta', { contentBlockIndex: 0, delta: { text: pieces(text, 3)[0] ?? text } }));
      res.end(bedrockException('modelStreamErrorException', 'fake bedrock stream error'));
      return;
    } else {
      for (const piece of pieces(text, 3)) await send(bedrockEvent('contentBlockDelta', { contentBlockIndex: 0, delta: { text: piece } }));
    }
    await send(bedrockEvent('contentBlockStop', { contentBlockIndex: 0 }));
    await send(bedrockEvent('messageStop', { stopReason }));
    if (withUsage) await send(bedrockEvent('metadata', { usage: USAGE, metrics: { latencyMs: 42 } }));
    res.end();
  });
}
