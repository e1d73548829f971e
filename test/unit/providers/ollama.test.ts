import { describe, expect, it } from 'vitest';
import { AppError } from '../../../src/errors.js';
import { ollamaProvider } from '../../../src/relay/providers/ollama/index.js';
import type { ChatCompletionRequest } from '../../../src/relay/schema.js';
import { channelOf, chunksOf, ctxOf, expect400, metaOf, runEverySplit } from './stream-helpers.js';

const channel = channelOf('ollama', {}, 'http://127.0.0.1:11434', { apiKey: '', models: ['llama3.2'] });
const ctx = ctxOf(channel, 'llama3.2');
const meta = metaOf(true, { id: 'chatcmpl-test', model: 'alias' });

function req(partial: Partial<ChatCompletionRequest>): ChatCompletionRequest {
  return { model: 'alias', messages: [{ role: 'user', content: 'hi' }], ...partial };
}

function bodyOf(request: ChatCompletionRequest): Record<string, unknown> {
  return JSON.parse(ollamaProvider.buildRequest(request, ctx).body!) as Record<string, unknown>;
}

const line = (payload: Record<string, unknown>) => `${JSON.stringify({ model: 'llama3.2', created_at: '2024-07-01T12:00:00Z', ...payload })}\n`;

describe('ollama request', () => {
  it('posts to /api/chat, auth only with a key, stream always explicit', () => {
    const r = ollamaProvider.buildRequest(req({}), ctx);
    expect(r).toMatchObject({ url: 'http://127.0.0.1:11434/api/chat', method: 'POST' });
    expect(r.headers.authorization).toBeUndefined();
    expect(bodyOf(req({}))).toEqual({ model: 'llama3.2', messages: [{ role: 'user', content: 'hi' }], stream: false });
    expect(bodyOf(req({ stream: true })).stream).toBe(true);
    const keyed = ollamaProvider.buildRequest(req({}), { channel: { ...channel, apiKey: 'secret', baseUrl: 'https://ollama.example.com/' }, model: 'm' });
    expect(keyed.headers.authorization).toBe('Bearer secret');
    expect(keyed.url).toBe('https://ollama.example.com/api/chat');
  });

  it('maps messages, images, tool calls and tool results', () => {
    const body = bodyOf(
      req({
        messages: [
          { role: 'system', content: 'be brief' },
          { role: 'developer', content: 'dev' },
          { role: 'user', content: [{ type: 'text', text: 'what is ' }, { type: 'text', text: 'this?' }, { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,/9j/4AAQ' } }] },
          { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
          { role: 'tool', tool_call_id: 'call_1', content: '{"temp":21}' },
          { role: 'assistant', content: 'It is 21.' },
        ],
      }),
    );
    expect(body.messages).toEqual([
      { role: 'system', content: 'be brief' },
      { role: 'system', content: 'dev' },
      { role: 'user', content: 'what is this?', images: ['/9j/4AAQ'] },
      { role: 'assistant', content: '', tool_calls: [{ function: { name: 'get_weather', arguments: { city: 'Paris' } } }] },
      { role: 'tool', content: '{"temp":21}', tool_name: 'get_weather' },
      { role: 'assistant', content: 'It is 21.' },
    ]);
  });

  it('maps options, format and tools', () => {
    expect(bodyOf(req({ temperature: 0.2, top_p: 0.9, max_tokens: 64, stop: ['END'], seed: 1, frequency_penalty: 0.5, presence_penalty: 0.4 })).options).toEqual({
      temperature: 0.2,
      top_p: 0.9,
      num_predict: 64,
      stop: ['END'],
      seed: 1,
      frequency_penalty: 0.5,
      presence_penalty: 0.4,
    });
    expect(bodyOf(req({ max_completion_tokens: 5, max_tokens: 64 })).options).toEqual({ num_predict: 5 });
    expect(bodyOf(req({})).options).toBeUndefined();
    expect(bodyOf(req({ response_format: { type: 'json_object' } })).format).toBe('json');
    expect(bodyOf(req({ response_format: { type: 'json_schema', json_schema: { name: 's', schema: { type: 'object', properties: { a: { type: 'string' } } } } } })).format).toEqual({
      type: 'object',
      properties: { a: { type: 'string' } },
    });
    expect(bodyOf(req({ response_format: { type: 'text' } })).format).toBeUndefined();
    const tools: ChatCompletionRequest['tools'] = [{ type: 'function', function: { name: 'get_weather', description: 'w', parameters: { type: 'object' } } }];
    expect(bodyOf(req({ tools })).tools).toEqual([{ type: 'function', function: { name: 'get_weather', description: 'w', parameters: { type: 'object' } } }]);
    expect(bodyOf(req({ tools, tool_choice: 'auto' })).tools).toHaveLength(1);
    expect(bodyOf(req({ tools, tool_choice: 'none' })).tools).toBeUndefined();
  });

  it('answers 400 for values Ollama cannot take', () => {
    expect400(() => bodyOf(req({ n: 2 })), /^n$/);
    expect400(() => bodyOf(req({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/a.png' } }] }] })), /^messages\[0\]\.content\[0\]\.image_url$/);
    const tools: ChatCompletionRequest['tools'] = [{ type: 'function', function: { name: 'f' } }];
    expect400(() => bodyOf(req({ tools, tool_choice: 'required' })), /^tool_choice$/);
    expect400(() => bodyOf(req({ tools, tool_choice: { type: 'function', function: { name: 'f' } } })), /^tool_choice$/);
    expect400(() => bodyOf(req({ messages: [{ role: 'assistant', tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: '[1]' } }] }] })), /arguments$/);
  });

  it('probes with "ping", num_predict 1, stream false', () => {
    expect(JSON.parse(ollamaProvider.probeRequest(ctx).body!)).toEqual({ model: 'llama3.2', messages: [{ role: 'user', content: 'ping' }], stream: false, options: { num_predict: 1 } });
  });
});

describe('ollama response', () => {
  const body = (extra: Record<string, unknown>) =>
    JSON.stringify({ model: 'llama3.2', created_at: 'x', message: { role: 'assistant', content: 'Hi' }, done: true, done_reason: 'stop', prompt_eval_count: 11, eval_count: 7, ...extra });

  it('converts text, usage and the reported model', () => {
    expect(ollamaProvider.parseResponse(body({}), ctx, meta)).toEqual({
      id: 'chatcmpl-test',
      object: 'chat.completion',
      created: 1_700_000_000,
      model: 'llama3.2',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hi' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 },
    });
    expect(ollamaProvider.parseResponse(body({ prompt_eval_count: undefined, eval_count: undefined }), ctx, meta).usage).toEqual({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });
  });

  it.each([
    ['stop', false, 'stop'],
    ['length', false, 'length'],
    ['load', false, 'stop'],
    ['stop', true, 'tool_calls'],
  ])('maps done_reason %s (tool calls: %s) to %s', (doneReason, tools, finish) => {
    const message = tools ? { role: 'assistant', content: '', tool_calls: [{ function: { name: 'f', arguments: {} } }] } : { role: 'assistant', content: 'x' };
    expect(ollamaProvider.parseResponse(body({ done_reason: doneReason, message }), ctx, meta).choices[0]!.finish_reason).toBe(finish);
  });

  it('maps tool calls with deterministic ids', () => {
    const c = ollamaProvider.parseResponse(
      body({ message: { role: 'assistant', content: '', tool_calls: [{ function: { name: 'get_weather', arguments: { city: 'Paris' } } }, { function: { name: 'noop', arguments: {} } }] } }),
      ctx,
      meta,
    );
    expect(c.choices[0]!.message).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'call_test_0', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
        { id: 'call_test_1', type: 'function', function: { name: 'noop', arguments: '{}' } },
      ],
    });
  });

  it('reads error bodies', () => {
    expect(ollamaProvider.parseError(404, '{"error":"model \\"x\\" not found, try pulling it first"}')).toEqual({ message: 'model "x" not found, try pulling it first' });
    expect(ollamaProvider.parseError(500, 'boom')).toEqual({ message: 'boom' });
    expect(() => ollamaProvider.parseResponse('{"error":"bad"}', ctx, meta)).toThrow(AppError);
  });
});

describe('ollama stream', () => {
  it('converts NDJSON identically for every split (mid UTF-8 included)', () => {
    const bytes = Buffer.from(
      line({ message: { role: 'assistant', content: 'Héllo ' }, done: false }) +
        line({ message: { role: 'assistant', content: '世界 🎉' }, done: false }) +
        '\n' +
        line({ message: { role: 'assistant', content: '' }, done: true, done_reason: 'stop', prompt_eval_count: 11, eval_count: 7 }),
      'utf8',
    );
    const { out: sse, outcome } = runEverySplit(() => ollamaProvider.createStreamConverter(ctx, meta), bytes);
    const { chunks, done } = chunksOf(sse);
    expect(done).toBe(true);
    expect(chunks.map((c) => c.choices[0]?.delta)).toEqual([{ role: 'assistant', content: 'Héllo ' }, { content: '世界 🎉' }, {}, undefined]);
    expect(chunks.every((c) => c.model === 'llama3.2')).toBe(true);
    expect(chunks[2]!.choices[0]!.finish_reason).toBe('stop');
    expect(chunks[3]!.usage).toEqual({ prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 });
    expect(outcome).toEqual({ usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 }, finishReason: 'stop', completionText: 'Héllo 世界 🎉', error: null });
  });

  it('handles a last line without newline and a length stop', () => {
    const bytes = Buffer.from(line({ message: { content: 'Hello! You' }, done: false }) + line({ message: { content: '' }, done: true, done_reason: 'length' }).trimEnd());
    const { out: sse, outcome } = runEverySplit(() => ollamaProvider.createStreamConverter(ctx, meta), bytes);
    expect(outcome.finishReason).toBe('length');
    expect(outcome.usage).toBeNull();
    expect(chunksOf(sse).chunks).toHaveLength(2); // no usage chunk without usage
  });

  it('streams tool calls with finish tool_calls', () => {
    const bytes = Buffer.from(
      line({ message: { role: 'assistant', content: '', tool_calls: [{ function: { name: 'get_weather', arguments: { city: 'Paris' } } }] }, done: false }) +
        line({ message: { role: 'assistant', content: '' }, done: true, done_reason: 'stop', prompt_eval_count: 11, eval_count: 7 }),
    );
    const { out: sse, outcome } = runEverySplit(() => ollamaProvider.createStreamConverter(ctx, meta), bytes);
    expect(chunksOf(sse).chunks.map((c) => c.choices[0]?.delta)).toEqual([
      { role: 'assistant', content: '' },
      { tool_calls: [{ index: 0, id: 'call_test_0', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
      {},
      undefined,
    ]);
    expect(outcome.finishReason).toBe('tool_calls');
  });

  it('turns an {error} line into outcome.error and one in-band error event', () => {
    const bytes = Buffer.from(line({ message: { content: 'Hel' }, done: false }) + '{"error":"out of memory"}\n' + line({ message: { content: 'x' }, done: false }));
    const { out: sse, outcome } = runEverySplit(() => ollamaProvider.createStreamConverter(ctx, meta), bytes);
    expect(outcome.error).toEqual({ message: 'out of memory', code: 'stream_error' });
    expect(outcome.completionText).toBe('Hel');
    const { chunks, errors, done } = chunksOf(sse);
    expect(chunks).toHaveLength(1);
    expect(errors).toEqual([{ error: { message: 'out of memory', type: 'upstream_error', code: 'stream_error', param: null } }]);
    expect(done).toBe(true);
  });

  it('fails on a line that is not JSON', () => {
    const { outcome } = runEverySplit(() => ollamaProvider.createStreamConverter(ctx, meta), Buffer.from(line({ message: { content: 'a' }, done: false }) + 'garbage\n'));
    expect(outcome.error?.code).toBe('bad_upstream_response');
  });
});
