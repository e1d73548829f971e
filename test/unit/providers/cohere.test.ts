import { describe, expect, it } from 'vitest';
import { AppError } from '../../../src/errors.js';
import { cohereProvider } from '../../../src/relay/providers/cohere/index.js';
import type { ChatCompletionRequest } from '../../../src/relay/schema.js';
import { channelOf, chunksOf, ctxOf, expect400, metaOf, runEverySplit } from './stream-helpers.js';

const channel = channelOf('cohere', {}, 'https://api.cohere.com', { models: ['command-r-plus'] });
const ctx = ctxOf(channel, 'command-r-plus');
const meta = metaOf(true, { id: 'chatcmpl-test', model: 'command-r-plus' });

function req(partial: Partial<ChatCompletionRequest>): ChatCompletionRequest {
  return { model: 'cmd', messages: [{ role: 'user', content: 'hi' }], ...partial };
}

function bodyOf(request: ChatCompletionRequest): Record<string, unknown> {
  return JSON.parse(cohereProvider.buildRequest(request, ctx).body!) as Record<string, unknown>;
}

const sse = (type: string, payload: Record<string, unknown> = {}) => `event: ${type}\ndata: ${JSON.stringify({ type, ...payload })}\n\n`;

describe('cohere request', () => {
  it('posts to /v2/chat with the bearer key', () => {
    const r = cohereProvider.buildRequest(req({}), ctx);
    expect(r).toMatchObject({ url: 'https://api.cohere.com/v2/chat', method: 'POST' });
    expect(r.headers.authorization).toBe('Bearer test-key');
    expect(r.headers['content-type']).toBe('application/json');
    expect(bodyOf(req({}))).toEqual({ model: 'command-r-plus', messages: [{ role: 'user', content: 'hi' }] });
    expect(bodyOf(req({ stream: true })).stream).toBe(true);
    expect(cohereProvider.buildRequest(req({}), { channel: { ...channel, baseUrl: 'http://127.0.0.1:1234/' }, model: 'm' }).url).toBe('http://127.0.0.1:1234/v2/chat');
  });

  it('maps messages, tool calls and tool results to v2 shapes', () => {
    const body = bodyOf(
      req({
        messages: [
          { role: 'system', content: 'be brief' },
          { role: 'developer', content: [{ type: 'text', text: 'dev' }] },
          { role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] },
          { role: 'user', content: [{ type: 'text', text: 'see' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AA==' } }] },
          { role: 'assistant', content: 'I will check.', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
          { role: 'tool', tool_call_id: 'call_1', content: '{"temp":21}' },
          { role: 'assistant', content: 'It is 21.' },
        ],
      }),
    );
    expect(body.messages).toEqual([
      { role: 'system', content: 'be brief' },
      { role: 'system', content: 'dev' },
      { role: 'user', content: 'ab' },
      { role: 'user', content: [{ type: 'text', text: 'see' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AA==' } }] },
      { role: 'assistant', tool_plan: 'I will check.', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: '{"temp":21}' },
      { role: 'assistant', content: 'It is 21.' },
    ]);
  });

  it('maps sampling parameters', () => {
    expect(bodyOf(req({ temperature: 0.3, top_p: 0.8, max_tokens: 50, stop: 'END', seed: 7, frequency_penalty: 0.1, presence_penalty: 0.2 }))).toEqual({
      model: 'command-r-plus',
      messages: [{ role: 'user', content: 'hi' }],
      temperature: 0.3,
      p: 0.8,
      max_tokens: 50,
      stop_sequences: ['END'],
      seed: 7,
      frequency_penalty: 0.1,
      presence_penalty: 0.2,
    });
    expect(bodyOf(req({ max_completion_tokens: 9, max_tokens: 50 })).max_tokens).toBe(9);
  });

  it('maps tools, tool_choice and response_format', () => {
    const tools: ChatCompletionRequest['tools'] = [
      { type: 'function', function: { name: 'get_weather', description: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } },
      { type: 'function', function: { name: 'noop' } },
    ];
    const plain = bodyOf(req({ tools }));
    expect(plain.tools).toEqual([
      { type: 'function', function: { name: 'get_weather', description: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } },
      { type: 'function', function: { name: 'noop', parameters: { type: 'object', properties: {} } } },
    ]);
    expect(plain.tool_choice).toBeUndefined();
    expect(bodyOf(req({ tools, tool_choice: 'auto' })).tool_choice).toBeUndefined();
    expect(bodyOf(req({ tools, tool_choice: 'required' })).tool_choice).toBe('REQUIRED');
    expect(bodyOf(req({ tools, tool_choice: 'none' })).tool_choice).toBe('NONE');
    const named = bodyOf(req({ tools, tool_choice: { type: 'function', function: { name: 'noop' } } }));
    expect(named.tool_choice).toBe('REQUIRED');
    expect((named.tools as unknown[]).length).toBe(1);
    expect400(() => bodyOf(req({ tools, tool_choice: { type: 'function', function: { name: 'x' } } })), /^tool_choice$/);

    expect(bodyOf(req({ response_format: { type: 'json_object' } })).response_format).toEqual({ type: 'json_object' });
    expect(bodyOf(req({ response_format: { type: 'json_schema', json_schema: { name: 's', schema: { type: 'object' } } } })).response_format).toEqual({
      type: 'json_object',
      json_schema: { type: 'object' },
    });
    expect(bodyOf(req({ response_format: { type: 'text' } })).response_format).toBeUndefined();
  });

  it('answers 400 for values Cohere cannot take', () => {
    expect400(() => bodyOf(req({ n: 3 })), /^n$/);
    expect400(() => bodyOf(req({ messages: [{ role: 'tool', content: 'x' }] })), /tool_call_id/);
    expect400(() => bodyOf(req({ messages: [{ role: 'system', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,AA==' } }] }] })), /messages\[0\]/);
  });

  it('probes with "ping", max_tokens 1', () => {
    const probe = cohereProvider.probeRequest(ctx);
    expect(probe.url).toBe('https://api.cohere.com/v2/chat');
    expect(JSON.parse(probe.body!)).toEqual({ model: 'command-r-plus', messages: [{ role: 'user', content: 'ping' }], max_tokens: 1 });
  });
});

describe('cohere response', () => {
  const body = (finish: string, message: unknown = { role: 'assistant', content: [{ type: 'text', text: 'Hi' }] }, usage: unknown = { billed_units: { input_tokens: 11, output_tokens: 7 }, tokens: { input_tokens: 70, output_tokens: 7 } }) =>
    JSON.stringify({ id: 'co-1', finish_reason: finish, message, usage });

  it.each([
    ['COMPLETE', 'stop'],
    ['STOP_SEQUENCE', 'stop'],
    ['MAX_TOKENS', 'length'],
    ['TOOL_CALL', 'tool_calls'],
    ['ERROR_TOXIC', 'content_filter'],
    ['ERROR_LIMIT', 'length'],
  ])('maps finish_reason %s to %s', (finish, expected) => {
    expect(cohereProvider.parseResponse(body(finish), ctx, meta).choices[0]!.finish_reason).toBe(expected);
  });

  it('throws an upstream error for finish_reason ERROR', () => {
    expect(() => cohereProvider.parseResponse(JSON.stringify({ finish_reason: 'ERROR', error: 'model crashed', message: { role: 'assistant' } }), ctx, meta)).toThrow(AppError);
    expect(() => cohereProvider.parseResponse(JSON.stringify({ finish_reason: 'ERROR', error: 'model crashed', message: { role: 'assistant' } }), ctx, meta)).toThrow('model crashed');
  });

  it('joins text, prefers billed units, uses the relay id', () => {
    const c = cohereProvider.parseResponse(body('COMPLETE', { role: 'assistant', content: [{ type: 'text', text: 'Hel' }, { type: 'text', text: 'lo' }] }), ctx, meta);
    expect(c).toEqual({
      id: 'chatcmpl-test',
      object: 'chat.completion',
      created: 1_700_000_000,
      model: 'command-r-plus',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hello' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 },
    });
    expect(cohereProvider.parseResponse(body('COMPLETE', undefined, { tokens: { input_tokens: 70, output_tokens: 5 } }), ctx, meta).usage).toEqual({ prompt_tokens: 70, completion_tokens: 5, total_tokens: 75 });
    expect(cohereProvider.parseResponse(body('COMPLETE', undefined, null), ctx, meta).usage).toEqual({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });
  });

  it('maps tool_calls (tool_plan becomes the content)', () => {
    const c = cohereProvider.parseResponse(
      body('TOOL_CALL', { role: 'assistant', tool_plan: 'Checking.', tool_calls: [{ id: 'gw_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] }),
      ctx,
      meta,
    );
    expect(c.choices[0]!.message).toEqual({ role: 'assistant', content: 'Checking.', tool_calls: [{ id: 'gw_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] });
    const bare = cohereProvider.parseResponse(body('TOOL_CALL', { role: 'assistant', tool_calls: [{ id: 'gw_1', type: 'function', function: { name: 'f', arguments: '{}' } }] }), ctx, meta);
    expect(bare.choices[0]!.message.content).toBeNull();
  });

  it('reads error bodies', () => {
    expect(cohereProvider.parseError(400, '{"id":"x","message":"invalid request: model not found"}')).toEqual({ message: 'invalid request: model not found' });
    expect(cohereProvider.parseError(500, 'oops')).toEqual({ message: 'oops' });
    expect(cohereProvider.parseError(503, '{}')).toEqual({ message: 'cohere returned HTTP 503' });
  });
});

describe('cohere stream', () => {
  const usage = { billed_units: { input_tokens: 11, output_tokens: 7 }, tokens: { input_tokens: 70, output_tokens: 7 } };

  it('converts text identically for every split (mid UTF-8 included); role first, finish last, usage before [DONE]', () => {
    const bytes = Buffer.from(
      sse('message-start', { id: 'co-1', delta: { message: { role: 'assistant', content: [], tool_plan: '', tool_calls: [], citations: [] } } }) +
        sse('content-start', { index: 0, delta: { message: { content: { type: 'text', text: '' } } } }) +
        sse('content-delta', { index: 0, delta: { message: { content: { text: 'Héllo ' } } } }) +
        ': keep-alive comment\n\n' +
        sse('content-delta', { index: 0, delta: { message: { content: { text: '世界 🎉' } } } }) +
        sse('content-end', { index: 0 }) +
        sse('message-end', { delta: { finish_reason: 'COMPLETE', usage } }),
      'utf8',
    );
    const { out, outcome } = runEverySplit(() => cohereProvider.createStreamConverter(ctx, meta), bytes);
    const { chunks, done } = chunksOf(out);
    expect(done).toBe(true);
    expect(chunks.map((c) => c.choices[0]?.delta)).toEqual([{ role: 'assistant', content: '' }, { content: 'Héllo ' }, { content: '世界 🎉' }, {}, undefined]);
    expect(chunks.every((c) => c.id === 'chatcmpl-test')).toBe(true);
    expect(chunks[3]!.choices[0]!.finish_reason).toBe('stop');
    expect(chunks[4]!.usage).toEqual({ prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 });
    expect(outcome).toEqual({ usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 }, finishReason: 'stop', completionText: 'Héllo 世界 🎉', error: null });
  });

  it.each([
    ['MAX_TOKENS', 'length'],
    ['STOP_SEQUENCE', 'stop'],
    ['TOOL_CALL', 'tool_calls'],
    ['ERROR_TOXIC', 'content_filter'],
  ])('maps finish_reason %s to %s', (finish, expected) => {
    const c = cohereProvider.createStreamConverter(ctx, { ...meta, includeUsage: false });
    const { chunks } = chunksOf(c.push(Buffer.from(sse('message-start', { id: 'x' }) + sse('message-end', { delta: { finish_reason: finish } }))) + c.end());
    expect(chunks[chunks.length - 1]!.choices[0]!.finish_reason).toBe(expected);
    expect(c.outcome().usage).toBeNull();
  });

  it('streams tool calls for every split', () => {
    const bytes = Buffer.from(
      sse('message-start', { id: 'co-2', delta: { message: { role: 'assistant' } } }) +
        sse('tool-plan-delta', { delta: { message: { tool_plan: 'Checking.' } } }) +
        sse('tool-call-start', { index: 0, delta: { message: { tool_calls: { id: 'gw_1', type: 'function', function: { name: 'get_weather', arguments: '' } } } } }) +
        sse('tool-call-delta', { index: 0, delta: { message: { tool_calls: { function: { arguments: '{"city":' } } } } }) +
        sse('tool-call-delta', { index: 0, delta: { message: { tool_calls: { function: { arguments: '"Paris"}' } } } } }) +
        sse('tool-call-end', { index: 0 }) +
        sse('tool-call-start', { index: 1, delta: { message: { tool_calls: { id: 'gw_2', type: 'function', function: { name: 'noop', arguments: '{}' } } } } }) +
        sse('tool-call-end', { index: 1 }) +
        sse('message-end', { delta: { finish_reason: 'TOOL_CALL', usage } }),
    );
    const { out, outcome } = runEverySplit(() => cohereProvider.createStreamConverter(ctx, meta), bytes);
    expect(chunksOf(out).chunks.map((c) => c.choices[0]?.delta)).toEqual([
      { role: 'assistant', content: '' },
      { content: 'Checking.' },
      { tool_calls: [{ index: 0, id: 'gw_1', type: 'function', function: { name: 'get_weather', arguments: '' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] },
      { tool_calls: [{ index: 1, id: 'gw_2', type: 'function', function: { name: 'noop', arguments: '{}' } }] },
      {},
      undefined,
    ]);
    expect(outcome.finishReason).toBe('tool_calls');
  });

  it('turns message-end ERROR into outcome.error and one in-band error event', () => {
    const bytes = Buffer.from(
      sse('message-start', { id: 'co-3' }) +
        sse('content-delta', { index: 0, delta: { message: { content: { text: 'Hel' } } } }) +
        sse('message-end', { delta: { finish_reason: 'ERROR', error: 'model overloaded', usage } }) +
        sse('content-delta', { index: 0, delta: { message: { content: { text: 'ignored' } } } }),
    );
    const { out, outcome } = runEverySplit(() => cohereProvider.createStreamConverter(ctx, meta), bytes);
    expect(outcome.error).toEqual({ message: 'model overloaded', code: 'ERROR' });
    expect(outcome.finishReason).toBeNull();
    expect(outcome.completionText).toBe('Hel');
    const { chunks, errors, done } = chunksOf(out);
    expect(done).toBe(true);
    expect(errors).toEqual([{ error: { message: 'model overloaded', type: 'upstream_error', code: 'ERROR', param: null } }]);
    expect(chunks.map((c) => c.choices[0]?.delta)).toEqual([{ role: 'assistant', content: '' }, { content: 'Hel' }]); // no usage chunk after an error
  });

  it('turns an error event into outcome.error', () => {
    const c = cohereProvider.createStreamConverter(ctx, meta);
    const out = c.push(Buffer.from('event: error\ndata: {"message":"internal failure"}\n\n')) + c.end();
    expect(c.outcome().error).toEqual({ message: 'internal failure', code: 'stream_error' });
    expect(chunksOf(out).errors).toHaveLength(1);
  });

  it('handles a missing final blank line and \\r\\n line ends', () => {
    const text = (sse('message-start', { id: 'a' }) + sse('content-delta', { delta: { message: { content: { text: 'x' } } } }) + sse('message-end', { delta: { finish_reason: 'COMPLETE' } })).replace(/\n/g, '\r\n').replace(/\r\n\r\n$/, '');
    const { outcome } = runEverySplit(() => cohereProvider.createStreamConverter(ctx, meta), Buffer.from(text));
    expect(outcome.finishReason).toBe('stop');
    expect(outcome.completionText).toBe('x');
  });
});
