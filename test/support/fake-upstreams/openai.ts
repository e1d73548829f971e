/**
 * A fake OpenAI (and Azure OpenAI) upstream: `POST {base}/chat/completions` with Bearer auth,
 * and `POST /openai/deployments/{deployment}/chat/completions?api-version=...` with `api-key`;
 * `POST {base}/embeddings` and `/openai/deployments/{deployment}/embeddings?api-version=...`
 * likewise (base64 vectors with `encoding_format: "base64"`, as OpenAI sends them).
 * The Responses API too: `POST {base}/responses` (Bearer) and `POST /openai/v1/responses`
 * (Azure, `api-key`), whole or streamed (`event:` + `data:` with `sequence_number`, no [DONE]).
 * `baseUrl` ends in /v1 (as OpenAI-compatible base URLs do); `origin` is the Azure resource URL.
 */
import type { ServerResponse } from 'node:http';
import { FAKE_COMPLETION_TOKENS, FAKE_PROMPT_TOKENS, FAKE_TOOL_ARGUMENTS, fakeEmbedding, misbehave, pieces, replyText, sleep, startFake, textsOf, type FakeUpstream, type RecordedRequest } from './fake.js';

interface Body {
  model?: string;
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  messages?: Array<{ role: string; content?: unknown }>;
  tools?: Array<{ function: { name: string } }>;
}

function lastUserText(body: Body): string {
  const last = [...(body.messages ?? [])].reverse().find((m) => m.role === 'user');
  if (!last) return '';
  if (typeof last.content === 'string') return last.content;
  if (Array.isArray(last.content)) return (last.content as Array<{ type: string; text?: string }>).filter((p) => p.type === 'text').map((p) => p.text).join('');
  return '';
}

const usage = { prompt_tokens: FAKE_PROMPT_TOKENS, completion_tokens: FAKE_COMPLETION_TOKENS, total_tokens: FAKE_PROMPT_TOKENS + FAKE_COMPLETION_TOKENS };

const SAFE = { filtered: false, severity: 'safe' };
const CONTENT_FILTER_RESULTS = { hate: SAFE, self_harm: SAFE, sexual: SAFE, violence: SAFE };
const PROMPT_FILTER_RESULTS = [{ prompt_index: 0, content_filter_results: CONTENT_FILTER_RESULTS }];

function error(res: ServerResponse, status: number, message: string, retryAfter?: number) {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (retryAfter !== undefined) headers['retry-after'] = String(retryAfter);
  res.writeHead(status, headers).end(JSON.stringify({ error: { message, type: status === 429 ? 'rate_limit_error' : 'invalid_request_error', code: status === 429 ? 'rate_limit_exceeded' : null } }));
}

interface EmbeddingsBody {
  model?: string;
  input?: unknown;
  dimensions?: number;
  encoding_format?: string;
}

async function embed(req: RecordedRequest, res: ServerResponse, mode: FakeUpstream['mode'], azure: boolean, extraHeaders: Record<string, string>) {
  const body = (req.json ?? {}) as EmbeddingsBody;
  const texts = textsOf(body.input);
  if (texts.length === 0 || texts.some((t) => t === '')) return error(res, 400, "'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference.");
  if (!azure && !body.model) return error(res, 400, 'you must provide a model parameter');
  if (mode.kind === 'slow') await sleep(mode.delayMs);
  const base64 = body.encoding_format === 'base64';
  const data = texts.map((text, index) => {
    const vector = fakeEmbedding(text, body.dimensions);
    return { object: 'embedding', index, embedding: base64 ? Buffer.from(new Float32Array(vector).buffer).toString('base64') : vector };
  });
  const model = body.model ?? decodeURIComponent(req.path.split('/')[3]!);
  const payload: Record<string, unknown> = { object: 'list', data, model };
  if (mode.kind !== 'no_usage') payload.usage = { prompt_tokens: FAKE_PROMPT_TOKENS, total_tokens: FAKE_PROMPT_TOKENS };
  res.writeHead(200, { 'content-type': 'application/json', ...extraHeaders }).end(JSON.stringify(payload));
}

export interface OpenAiFake extends FakeUpstream {
  origin: string;
  /** Headers added to successful responses (rate-limit headers, for instance). */
  extraHeaders: Record<string, string>;
}

/** `apiKey`: the key it accepts (default `test-key`, the one test/support/relay.ts gives channels). */
export async function startOpenAiFake(options: { apiKey?: string } = {}): Promise<OpenAiFake> {
  const apiKey = options.apiKey ?? 'test-key';
  const extraHeaders: Record<string, string> = {};
  const fake = await startFake(async (req: RecordedRequest, res, self) => {
    if (req.method === 'POST' && (req.path === '/v1/responses' || req.path === '/openai/v1/responses')) return responses(req, res, self, req.path !== '/v1/responses', extraHeaders, apiKey);
    const azure = req.path.startsWith('/openai/deployments/');
    const embeddings = req.path === '/v1/embeddings' || (azure && /^\/openai\/deployments\/[^/]+\/embeddings\?api-version=/.test(req.path));
    if (req.method !== 'POST' || !(embeddings || req.path === '/v1/chat/completions' || (azure && /\/chat\/completions\?api-version=/.test(req.path)))) {
      return error(res, 404, `no route ${req.method} ${req.path}`);
    }
    const authorised = azure ? req.headers['api-key'] === apiKey : req.headers.authorization === `Bearer ${apiKey}`;
    if (!authorised) return error(res, 401, 'Incorrect API key provided');
    const mode = self.mode;
    if (mode.kind === 'error') return error(res, mode.status, mode.message ?? `fake error ${mode.status}`, mode.retryAfterSeconds);
    const body = req.json as Body;
    if (await misbehave(mode, res, body.stream === true)) return;
    if (embeddings) return embed(req, res, self.mode, azure, extraHeaders);
    const model = body.model ?? (azure ? decodeURIComponent(req.path.split('/')[3]!) : 'unknown');
    const id = 'chatcmpl-fake123';
    const created = 1_700_000_000;
    const text = mode.kind === 'length' ? 'Hello! You' : replyText(lastUserText(body));
    const finish = mode.kind === 'tool_call' ? 'tool_calls' : mode.kind === 'length' ? 'length' : mode.kind === 'azure_filters' && mode.filtered ? 'content_filter' : 'stop';
    const filters = mode.kind === 'azure_filters';
    const toolName = body.tools?.[0]?.function.name ?? 'get_weather';

    if (!body.stream) {
      const message =
        mode.kind === 'tool_call'
          ? { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: toolName, arguments: FAKE_TOOL_ARGUMENTS } }] }
          : { role: 'assistant', content: text };
      if (mode.kind === 'slow') await sleep(mode.delayMs);
      const choice = filters ? { index: 0, message, finish_reason: finish, content_filter_results: CONTENT_FILTER_RESULTS } : { index: 0, message, finish_reason: finish };
      const payload: Record<string, unknown> = { id, object: 'chat.completion', created, model, choices: [choice] };
      if (filters) payload.prompt_filter_results = PROMPT_FILTER_RESULTS;
      if (mode.kind !== 'no_usage') payload.usage = usage;
      res.writeHead(200, { 'content-type': 'application/json', 'x-ratelimit-remaining-requests': '99', ...extraHeaders }).end(JSON.stringify(payload));
      return;
    }

    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...extraHeaders });
    const send = (chunk: unknown) => res.write(`data: ${JSON.stringify(chunk)}\n\n`);
    const base = { id, object: 'chat.completion.chunk', created, model };
    if (mode.kind === 'slow') await sleep(mode.delayMs);
    if (filters) send({ choices: [], created: 0, id: '', model: '', object: '', prompt_filter_results: PROMPT_FILTER_RESULTS });
    send({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] });
    if (mode.kind === 'tool_call') {
      send({ ...base, choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: toolName, arguments: '' } }] }, finish_reason: null }] });
      for (const part of pieces(FAKE_TOOL_ARGUMENTS)) send({ ...base, choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: part } }] }, finish_reason: null }] });
    } else {
      const parts = pieces(text);
      for (let i = 0; i < parts.length; i++) {
        if (mode.kind === 'slow') await sleep(mode.delayMs);
        send({ ...base, choices: [{ index: 0, delta: { content: parts[i] }, finish_reason: null, ...(filters ? { content_filter_results: CONTENT_FILTER_RESULTS } : {}) }] });
        if (mode.kind === 'stream_error' && i === 0) {
          await sleep(30); // let the first piece reach the relay
          res.destroy(); // then the connection drops mid-stream
          return;
        }
      }
    }
    if (filters) {
      // The asynchronous filter's annotation of the text: not a chunk (no id, object or delta).
      const annotation = { index: 0, finish_reason: mode.filtered ? finish : null, content_filter_results: CONTENT_FILTER_RESULTS, content_filter_offsets: { check_offset: 0, start_offset: 0, end_offset: text.length } };
      send({ choices: [annotation], created: 0, id: '', model: '', object: '' });
    }
    if (!(filters && mode.filtered)) send({ ...base, choices: [{ index: 0, delta: {}, finish_reason: finish }] });
    if (body.stream_options?.include_usage && mode.kind !== 'no_usage') send({ ...base, choices: [], usage });
    res.end('data: [DONE]\n\n');
  });
  return Object.assign(fake, { origin: fake.baseUrl, baseUrl: `${fake.baseUrl}/v1`, extraHeaders });
}

interface ResponsesBody {
  model?: string;
  stream?: boolean;
  input?: string | Array<{ type?: string; role?: string; content?: unknown }>;
  tools?: Array<{ type: string; name?: string }>;
}

function lastUserInput(body: ResponsesBody): string {
  if (typeof body.input === 'string') return body.input;
  const last = [...(body.input ?? [])].reverse().find((item) => (item.type === undefined || item.type === 'message') && item.role === 'user');
  if (!last) return '';
  if (typeof last.content === 'string') return last.content;
  if (Array.isArray(last.content)) return (last.content as Array<{ type: string; text?: string }>).filter((p) => p.type === 'input_text').map((p) => p.text).join('');
  return '';
}

let responseCount = 0;

/** The Responses API, as OpenAI answers it (the body's own fields echoed, as OpenAI does). */
async function responses(req: RecordedRequest, res: ServerResponse, self: FakeUpstream, azure: boolean, extraHeaders: Record<string, string>, apiKey: string) {
  const authorised = azure ? req.headers['api-key'] === apiKey : req.headers.authorization === `Bearer ${apiKey}`;
  if (!authorised) return error(res, 401, 'Incorrect API key provided');
  const mode = self.mode;
  if (mode.kind === 'error') return error(res, mode.status, mode.message ?? `fake error ${mode.status}`, mode.retryAfterSeconds);
  const body = req.json as ResponsesBody;
  if (await misbehave(mode, res, body.stream === true)) return;
  const n = ++responseCount;
  const id = `resp_fake${n}_${Date.now().toString(16)}`;
  const text = mode.kind === 'length' ? 'Hello! You' : replyText(lastUserInput(body));
  const toolName = body.tools?.find((t) => t.type === 'function')?.name ?? 'get_weather';
  const status = mode.kind === 'length' ? 'incomplete' : 'completed';
  const item =
    mode.kind === 'tool_call'
      ? { id: `fc_fake${n}`, type: 'function_call', status: 'completed', call_id: 'call_1', name: toolName, arguments: FAKE_TOOL_ARGUMENTS }
      : { id: `msg_fake${n}`, type: 'message', status, role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] };
  const response = (state: string, output: unknown[], withUsage: boolean) => ({
    id,
    object: 'response',
    created_at: 1_700_000_000,
    status: state,
    error: null,
    incomplete_details: state === 'incomplete' ? { reason: 'max_output_tokens' } : null,
    instructions: (req.json as { instructions?: string }).instructions ?? null,
    max_output_tokens: null,
    model: `${body.model ?? 'unknown'}-2024-08-06`,
    output,
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    store: (req.json as { store?: boolean }).store ?? true,
    temperature: 1,
    text: { format: { type: 'text' } },
    tool_choice: 'auto',
    tools: body.tools ?? [],
    top_p: 1,
    truncation: 'disabled',
    usage: withUsage && mode.kind !== 'no_usage' ? { input_tokens: FAKE_PROMPT_TOKENS, input_tokens_details: { cached_tokens: 0 }, output_tokens: FAKE_COMPLETION_TOKENS, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: FAKE_PROMPT_TOKENS + FAKE_COMPLETION_TOKENS } : null,
    user: null,
    metadata: {},
  });

  if (!body.stream) {
    if (mode.kind === 'slow') await sleep(mode.delayMs);
    res.writeHead(200, { 'content-type': 'application/json', ...extraHeaders }).end(JSON.stringify(response(status, [item], true)));
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', ...extraHeaders });
  let sequence = 0;
  const send = (type: string, fields: Record<string, unknown>) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...fields })}\n\n`);
  if (mode.kind === 'slow') await sleep(mode.delayMs);
  send('response.created', { response: response('in_progress', [], false) });
  send('response.in_progress', { response: response('in_progress', [], false) });
  if (item.type === 'function_call') {
    send('response.output_item.added', { output_index: 0, item: { ...item, arguments: '', status: 'in_progress' } });
    for (const part of pieces(FAKE_TOOL_ARGUMENTS)) send('response.function_call_arguments.delta', { item_id: item.id, output_index: 0, delta: part });
    send('response.function_call_arguments.done', { item_id: item.id, output_index: 0, arguments: FAKE_TOOL_ARGUMENTS });
  } else {
    send('response.output_item.added', { output_index: 0, item: { ...item, status: 'in_progress', content: [] } });
    send('response.content_part.added', { item_id: item.id, output_index: 0, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } });
    const parts = pieces(text);
    for (let i = 0; i < parts.length; i++) {
      if (mode.kind === 'slow') await sleep(mode.delayMs);
      send('response.output_text.delta', { item_id: item.id, output_index: 0, content_index: 0, delta: parts[i], logprobs: [] });
      if (mode.kind === 'stream_error' && i === 0) {
        send('error', { code: 'server_error', message: 'fake stream error', param: null });
        res.end();
        return;
      }
    }
    send('response.output_text.done', { item_id: item.id, output_index: 0, content_index: 0, text, logprobs: [] });
    send('response.content_part.done', { item_id: item.id, output_index: 0, content_index: 0, part: { type: 'output_text', text, annotations: [] } });
  }
  send('response.output_item.done', { output_index: 0, item });
  send(status === 'completed' ? 'response.completed' : 'response.incomplete', { response: response(status, [item], true) });
  res.end();
}
