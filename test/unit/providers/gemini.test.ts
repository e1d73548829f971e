import { describe, expect, it } from 'vitest';
import { geminiProvider } from '../../../src/relay/providers/gemini/index.js';
import type { ChatCompletionChunk, ChatCompletionRequest } from '../../../src/relay/schema.js';
import { badRequest, channelOf, ctxOf, metaOf, payloadsOf, runEverySplit } from './stream-helpers.js';

const ctx = ctxOf(channelOf('gemini'), 'gemini-x');
const meta = metaOf();

function req(extra: Partial<ChatCompletionRequest> = {}): ChatCompletionRequest {
  return { model: 'alias', messages: [{ role: 'user', content: 'Hi' }], ...extra };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
function body(request: ChatCompletionRequest): any {
  return JSON.parse(geminiProvider.buildRequest(request, ctx).body!);
}

describe('gemini buildRequest', () => {
  it('POSTs generateContent for ctx.model with x-goog-api-key', () => {
    const r = geminiProvider.buildRequest(req(), ctx);
    expect(r.method).toBe('POST');
    expect(r.url).toBe('https://upstream.example/v1beta/models/gemini-x:generateContent');
    expect(r.headers['x-goog-api-key']).toBe('test-key');
    expect(r.headers['content-type']).toBe('application/json');
    expect(r.url).not.toContain('key=');
  });

  it('streams through streamGenerateContent?alt=sse', () => {
    const r = geminiProvider.buildRequest(req({ stream: true }), ctx);
    expect(r.url).toBe('https://upstream.example/v1beta/models/gemini-x:streamGenerateContent?alt=sse');
    expect(JSON.parse(r.body!).stream).toBeUndefined();
  });

  it('turns messages into contents with user/model roles and text parts', () => {
    const b = body(req({ messages: [{ role: 'user', content: 'Hi' }, { role: 'assistant', content: 'Hello' }, { role: 'user', content: [{ type: 'text', text: 'Bye' }] }] }));
    expect(b.contents).toEqual([
      { role: 'user', parts: [{ text: 'Hi' }] },
      { role: 'model', parts: [{ text: 'Hello' }] },
      { role: 'user', parts: [{ text: 'Bye' }] },
    ]);
    expect(b.systemInstruction).toBeUndefined();
    expect(b.generationConfig).toBeUndefined();
  });

  it('joins a system message and the following user message into ONE text separated by a blank line', () => {
    const b = body(req({ messages: [{ role: 'system', content: 'You are terse.' }, { role: 'user', content: 'Hello?' }] }));
    expect(b.contents).toEqual([{ role: 'user', parts: [{ text: 'You are terse.\n\nHello?' }] }]);
    expect(b.systemInstruction).toBeUndefined();
  });

  it('joins several system/developer messages first, and keeps images after the joined text', () => {
    const b = body(
      req({
        messages: [
          { role: 'system', content: 'A' },
          { role: 'developer', content: 'B' },
          { role: 'user', content: [{ type: 'text', text: 'C' }, { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,/9j/4AAQ' } }] },
        ],
      }),
    );
    expect(b.contents).toEqual([{ role: 'user', parts: [{ text: 'A\n\nB\n\nC' }, { inlineData: { mimeType: 'image/jpeg', data: '/9j/4AAQ' } }] }]);
  });

  it('makes a system message with no following user message a user turn of its own', () => {
    expect(body(req({ messages: [{ role: 'user', content: 'Hi' }, { role: 'assistant', content: 'Yo' }, { role: 'system', content: 'Sys' }] })).contents).toEqual([
      { role: 'user', parts: [{ text: 'Hi' }] },
      { role: 'model', parts: [{ text: 'Yo' }] },
      { role: 'user', parts: [{ text: 'Sys' }] },
    ]);
    expect(body(req({ messages: [{ role: 'system', content: 'Sys' }, { role: 'assistant', content: 'Yo' }] })).contents).toEqual([
      { role: 'user', parts: [{ text: 'Sys' }] },
      { role: 'model', parts: [{ text: 'Yo' }] },
    ]);
  });

  it('merges consecutive turns of one role', () => {
    expect(body(req({ messages: [{ role: 'user', content: 'a' }, { role: 'user', content: 'b' }, { role: 'assistant', content: 'c' }, { role: 'assistant', content: 'd' }] })).contents).toEqual([
      { role: 'user', parts: [{ text: 'a' }, { text: 'b' }] },
      { role: 'model', parts: [{ text: 'c' }, { text: 'd' }] },
    ]);
  });

  it('maps temperature/top_p/max tokens/stop (+penalties, seed) to generationConfig', () => {
    expect(body(req({ temperature: 1.4, top_p: 0.8, max_tokens: 100, stop: 'END', presence_penalty: 0.5, frequency_penalty: -0.5, seed: 42 })).generationConfig).toEqual({
      temperature: 1.4,
      topP: 0.8,
      maxOutputTokens: 100,
      stopSequences: ['END'],
      presencePenalty: 0.5,
      frequencyPenalty: -0.5,
      seed: 42,
    });
    expect(body(req({ max_tokens: 100, max_completion_tokens: 30, stop: ['a', 'b'] })).generationConfig).toEqual({ maxOutputTokens: 30, stopSequences: ['a', 'b'] });
  });

  it('maps response_format json_object / json_schema to responseMimeType (+ responseSchema)', () => {
    expect(body(req({ response_format: { type: 'json_object' } })).generationConfig).toEqual({ responseMimeType: 'application/json' });
    const schema = {
      type: 'object',
      properties: { name: { type: 'string' }, age: { type: ['integer', 'null'] }, tags: { type: 'array', items: { type: 'string', const: 'x' } } },
      required: ['name'],
      additionalProperties: false,
      $schema: 'http://json-schema.org/draft-07/schema#',
    };
    expect(body(req({ response_format: { type: 'json_schema', json_schema: { name: 'p', schema, strict: true } } })).generationConfig).toEqual({
      responseMimeType: 'application/json',
      responseSchema: {
        type: 'object',
        properties: { name: { type: 'string' }, age: { type: 'integer', nullable: true }, tags: { type: 'array', items: { type: 'string', enum: ['x'] } } },
        required: ['name'],
      },
    });
    expect(body(req({ response_format: { type: 'text' } })).generationConfig).toBeUndefined();
  });

  it('converts tools to functionDeclarations and tool_choice to functionCallingConfig', () => {
    const params = { type: 'object', properties: { city: { type: 'string', description: 'City' } }, required: ['city'], additionalProperties: false };
    const tools: ChatCompletionRequest['tools'] = [
      { type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: params } },
      { type: 'function', function: { name: 'now', parameters: { type: 'object', properties: {} } } },
    ];
    const b = body(req({ tools }));
    expect(b.tools).toEqual([
      {
        functionDeclarations: [
          { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string', description: 'City' } }, required: ['city'] } },
          { name: 'now' },
        ],
      },
    ]);
    expect(b.toolConfig).toBeUndefined();
    expect(body(req({ tools, tool_choice: 'auto' })).toolConfig).toEqual({ functionCallingConfig: { mode: 'AUTO' } });
    expect(body(req({ tools, tool_choice: 'required' })).toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY' } });
    expect(body(req({ tools, tool_choice: 'none' })).toolConfig).toEqual({ functionCallingConfig: { mode: 'NONE' } });
    expect(body(req({ tools, tool_choice: { type: 'function', function: { name: 'now' } } })).toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['now'] } });
  });

  it('converts assistant tool_calls to functionCall parts and tool messages to functionResponse parts', () => {
    const b = body(
      req({
        messages: [
          { role: 'user', content: 'Weather?' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
              { id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '{}' } },
            ],
          },
          { role: 'tool', tool_call_id: 'call_a', content: '{"temp":21}' },
          { role: 'tool', tool_call_id: 'call_b', content: 'noon' },
          { role: 'tool', tool_call_id: 'unknown', name: 'legacy_fn', content: '[1,2]' },
        ],
      }),
    );
    expect(b.contents).toEqual([
      { role: 'user', parts: [{ text: 'Weather?' }] },
      {
        role: 'model',
        parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }, { functionCall: { name: 'get_time', args: {} } }],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'get_weather', response: { temp: 21 } } },
          { functionResponse: { name: 'get_time', response: { content: 'noon' } } },
          { functionResponse: { name: 'legacy_fn', response: { content: '[1,2]' } } },
        ],
      },
    ]);
  });

  it('refuses unsupported values with a 400 naming the field', () => {
    const e = badRequest(() => geminiProvider.buildRequest(req({ n: 3 }), ctx), 'n');
    expect(e.code).toBe('unsupported_parameter');
    badRequest(() => geminiProvider.buildRequest(req({ logprobs: true }), ctx), 'logprobs');
    badRequest(() => geminiProvider.buildRequest(req({ top_logprobs: 2 }), ctx), 'top_logprobs');
    badRequest(() => geminiProvider.buildRequest(req({ logit_bias: { '1': 1 } }), ctx), 'logit_bias');
    badRequest(() => geminiProvider.buildRequest(req({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://img.example/cat.png' } }] }] }), ctx), 'messages[0].content');
    badRequest(
      () => geminiProvider.buildRequest(req({ messages: [{ role: 'user', content: 'x' }, { role: 'assistant', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,AA' } }] }] }), ctx),
      'messages[1].content',
    );
    badRequest(() => geminiProvider.buildRequest(req({ messages: [{ role: 'user', content: 'x' }, { role: 'tool', tool_call_id: 'nope', content: 'r' }] }), ctx), 'messages[1].tool_call_id');
    badRequest(
      () => geminiProvider.buildRequest(req({ messages: [{ role: 'user', content: 'x' }, { role: 'assistant', tool_calls: [{ id: 't', type: 'function', function: { name: 'f', arguments: '[1]' } }] }] }), ctx),
      'messages[1].tool_calls[0].function.arguments',
    );
    badRequest(() => geminiProvider.buildRequest(req({ response_format: { type: 'json_schema', json_schema: { name: 'r', schema: { $ref: '#/$defs/x' } } } }), ctx), 'response_format.json_schema.schema');
    badRequest(() => geminiProvider.buildRequest(req({ messages: [{ role: 'user', content: '' }] }), ctx), 'messages');
    expect(() => geminiProvider.buildRequest(req({ n: 1 }), ctx)).not.toThrow();
  });

  it('probeRequest is generateContent with "ping" and maxOutputTokens 1', () => {
    const probe = geminiProvider.probeRequest(ctx);
    expect(probe.url).toBe('https://upstream.example/v1beta/models/gemini-x:generateContent');
    expect(probe.headers['x-goog-api-key']).toBe('test-key');
    expect(JSON.parse(probe.body!)).toEqual({ contents: [{ role: 'user', parts: [{ text: 'ping' }] }], generationConfig: { maxOutputTokens: 1 } });
  });
});

describe('gemini parseResponse', () => {
  const response = (candidate: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    JSON.stringify({
      candidates: [{ content: { role: 'model', parts: [{ text: 'Hi' }] }, finishReason: 'STOP', index: 0, ...candidate }],
      usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 4, thoughtsTokenCount: 6, totalTokenCount: 20 },
      modelVersion: 'gemini-x-001',
      ...extra,
    });

  it('joins text parts (skipping thoughts), maps usage (thoughts count as completion) and the model', () => {
    const c = geminiProvider.parseResponse(response({ content: { role: 'model', parts: [{ text: 'thinking…', thought: true }, { text: 'Hello ' }, { text: 'there' }] } }), ctx, meta);
    expect(c).toEqual({
      id: 'chatcmpl-test1',
      object: 'chat.completion',
      created: 1_700_000_000,
      model: 'gemini-x-001',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
    });
  });

  it('maps every finish reason', () => {
    const cases: [string | undefined, string | null][] = [
      ['STOP', 'stop'],
      ['MAX_TOKENS', 'length'],
      ['SAFETY', 'content_filter'],
      ['RECITATION', 'content_filter'],
      ['BLOCKLIST', 'content_filter'],
      ['PROHIBITED_CONTENT', 'content_filter'],
      ['SPII', 'content_filter'],
      ['OTHER', 'stop'],
      [undefined, null],
    ];
    for (const [reason, finish] of cases) expect(geminiProvider.parseResponse(response({ finishReason: reason }), ctx, meta).choices[0]!.finish_reason).toBe(finish);
  });

  it('maps a blocked prompt (no candidates) to content_filter', () => {
    const c = geminiProvider.parseResponse(JSON.stringify({ promptFeedback: { blockReason: 'SAFETY' }, usageMetadata: { promptTokenCount: 5, totalTokenCount: 5 } }), ctx, meta);
    expect(c.choices[0]).toEqual({ index: 0, message: { role: 'assistant', content: '' }, finish_reason: 'content_filter' });
    expect(c.usage).toEqual({ prompt_tokens: 5, completion_tokens: 0, total_tokens: 5 });
    expect(c.model).toBe('client-model');
  });

  it('turns functionCall parts into tool_calls with generated ids, STOP -> tool_calls', () => {
    const c = geminiProvider.parseResponse(
      response({ content: { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }, { functionCall: { name: 'now', args: {} } }, { functionCall: { id: 'native-id', name: 'x' } }] } }),
      ctx,
      meta,
    );
    expect(c.choices[0]).toEqual({
      index: 0,
      message: {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_test1_0', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          { id: 'call_test1_1', type: 'function', function: { name: 'now', arguments: '{}' } },
          { id: 'native-id', type: 'function', function: { name: 'x', arguments: '{}' } },
        ],
      },
      finish_reason: 'tool_calls',
    });
  });

  it('uses zero usage when usageMetadata is missing', () => {
    expect(geminiProvider.parseResponse(JSON.stringify({ candidates: [{ content: { parts: [{ text: 'x' }] }, finishReason: 'STOP' }] }), ctx, meta).usage).toEqual({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });
  });
});

describe('gemini parseError', () => {
  it('reads {error:{code, message, status}} (object or array)', () => {
    const error = { error: { code: 429, message: 'Resource has been exhausted', status: 'RESOURCE_EXHAUSTED' } };
    expect(geminiProvider.parseError(429, JSON.stringify(error))).toEqual({ message: 'Resource has been exhausted', code: 'RESOURCE_EXHAUSTED' });
    expect(geminiProvider.parseError(429, JSON.stringify([error]))).toEqual({ message: 'Resource has been exhausted', code: 'RESOURCE_EXHAUSTED' });
  });
  it('falls back to the raw text, or the status', () => {
    expect(geminiProvider.parseError(502, 'upstream connect error')).toEqual({ message: 'upstream connect error' });
    expect(geminiProvider.parseError(503, '  ')).toEqual({ message: 'Gemini answered HTTP 503' });
  });
});

/** Gemini SSE framing as Google sends it: `data: {json}` and \r\n\r\n between events. */
function geminiSse(events: unknown[]): Buffer {
  return Buffer.from(events.map((e) => `data: ${JSON.stringify(e)}\r\n\r\n`).join(''), 'utf8');
}

const piece = (text: string, extra: Record<string, unknown> = {}, candidate: Record<string, unknown> = {}) => ({
  candidates: [{ content: { role: 'model', parts: [{ text }] }, index: 0, ...candidate }],
  modelVersion: 'gemini-x-001',
  ...extra,
});
const usageMetadata = { promptTokenCount: 11, candidatesTokenCount: 7, totalTokenCount: 18 };
const textEvents = [piece('Grüße, '), piece('wörld '), piece('👋', { usageMetadata }, { finishReason: 'STOP' })];

describe('gemini stream converter', () => {
  const chunk = (delta: unknown, finish: string | null = null) => ({ id: 'chatcmpl-test1', object: 'chat.completion.chunk', created: 1_700_000_000, model: 'gemini-x-001', choices: [{ index: 0, delta, finish_reason: finish }] });

  it('converts a text stream identically for every byte split (include_usage off)', () => {
    const run = runEverySplit(() => geminiProvider.createStreamConverter(ctx, metaOf(false)), geminiSse(textEvents));
    expect(payloadsOf(run.out)).toEqual([chunk({ role: 'assistant', content: '' }), chunk({ content: 'Grüße, ' }), chunk({ content: 'wörld ' }), chunk({ content: '👋' }), chunk({}, 'stop'), '[DONE]']);
    expect(run.outcome).toEqual({ usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 }, finishReason: 'stop', completionText: 'Grüße, wörld 👋', error: null });
  });

  it('emits the usage chunk before [DONE] when include_usage is on', () => {
    const run = runEverySplit(() => geminiProvider.createStreamConverter(ctx, metaOf(true)), geminiSse(textEvents));
    const payloads = payloadsOf(run.out);
    expect(payloads.slice(-3)).toEqual([chunk({}, 'stop'), { id: 'chatcmpl-test1', object: 'chat.completion.chunk', created: 1_700_000_000, model: 'gemini-x-001', choices: [], usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 } }, '[DONE]']);
  });

  it('maps finish reasons in the stream', () => {
    for (const [reason, finish] of [['MAX_TOKENS', 'length'], ['SAFETY', 'content_filter'], ['RECITATION', 'content_filter'], ['STOP', 'stop']] as const) {
      const converter = geminiProvider.createStreamConverter(ctx, meta);
      converter.push(geminiSse([piece('a'), piece('b', { usageMetadata }, { finishReason: reason })]));
      converter.end();
      expect(converter.outcome().finishReason).toBe(finish);
    }
  });

  it('turns functionCall parts into whole tool_calls deltas and STOP into tool_calls', () => {
    const events = [
      piece('Checking. '),
      {
        candidates: [{ content: { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }, { functionCall: { name: 'now', args: {} } }] }, finishReason: 'STOP', index: 0 }],
        usageMetadata,
        modelVersion: 'gemini-x-001',
      },
    ];
    const run = runEverySplit(() => geminiProvider.createStreamConverter(ctx, meta), geminiSse(events));
    expect(payloadsOf(run.out)).toEqual([
      chunk({ role: 'assistant', content: '' }),
      chunk({ content: 'Checking. ' }),
      chunk({
        tool_calls: [
          { index: 0, id: 'call_test1_0', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          { index: 1, id: 'call_test1_1', type: 'function', function: { name: 'now', arguments: '{}' } },
        ],
      }),
      chunk({}, 'tool_calls'),
      '[DONE]',
    ]);
    expect(run.outcome.finishReason).toBe('tool_calls');
  });

  it('turns an in-stream error into outcome.error and one OpenAI-style error event, then [DONE]', () => {
    const events = [piece('Grüße, '), { error: { code: 503, message: 'The model is overloaded.', status: 'UNAVAILABLE' } }, piece('ignored')];
    const run = runEverySplit(() => geminiProvider.createStreamConverter(ctx, metaOf(true)), geminiSse(events));
    expect(payloadsOf(run.out)).toEqual([
      chunk({ role: 'assistant', content: '' }),
      chunk({ content: 'Grüße, ' }),
      { error: { message: 'The model is overloaded.', type: 'upstream_error', code: 'UNAVAILABLE', param: null } },
      '[DONE]',
    ]);
    expect(run.outcome).toEqual({ usage: null, finishReason: null, completionText: 'Grüße, ', error: { message: 'The model is overloaded.', code: 'UNAVAILABLE' } });
  });

  it('handles \\n framing and a last event without its blank line', () => {
    const converter = geminiProvider.createStreamConverter(ctx, metaOf(true));
    const out = converter.push(Buffer.from(`data: ${JSON.stringify(piece('a'))}\n\ndata: ${JSON.stringify(piece('b', {}, { finishReason: 'STOP' }))}`)) + converter.end();
    expect((payloadsOf(out).slice(0, -1) as ChatCompletionChunk[]).map((c) => c.choices[0]!)).toEqual([
      { index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null },
      { index: 0, delta: { content: 'a' }, finish_reason: null },
      { index: 0, delta: { content: 'b' }, finish_reason: null },
      { index: 0, delta: {}, finish_reason: 'stop' },
    ]);
    expect(converter.outcome().usage).toBeNull();
  });
});
