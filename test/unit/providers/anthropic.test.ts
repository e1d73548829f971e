import { describe, expect, it } from 'vitest';
import { anthropicProvider } from '../../../src/relay/providers/anthropic/index.js';
import type { ChatCompletionChunk, ChatCompletionRequest } from '../../../src/relay/schema.js';
import { badRequest, channelOf, ctxOf, metaOf, payloadsOf, runEverySplit } from './stream-helpers.js';

const ctx = ctxOf(channelOf('anthropic'), 'claude-x');
const meta = metaOf();

function req(extra: Partial<ChatCompletionRequest> = {}): ChatCompletionRequest {
  return { model: 'alias', messages: [{ role: 'user', content: 'Hi' }], ...extra };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
function body(request: ChatCompletionRequest, c = ctx): any {
  return JSON.parse(anthropicProvider.buildRequest(request, c).body!);
}

describe('anthropic buildRequest', () => {
  it('POSTs to {baseUrl}/v1/messages with x-api-key, anthropic-version and a JSON content type', () => {
    const r = anthropicProvider.buildRequest(req(), ctxOf(channelOf('anthropic', {}, 'https://proxy.example/anthropic'), 'claude-x'));
    expect(r.method).toBe('POST');
    expect(r.url).toBe('https://proxy.example/anthropic/v1/messages');
    expect(r.headers['x-api-key']).toBe('test-key');
    expect(r.headers['anthropic-version']).toBe('2023-06-01');
    expect(r.headers['content-type']).toBe('application/json');
    expect(r.headers['authorization']).toBeUndefined();
  });

  it('takes anthropic-version from channel.config.api_version', () => {
    const r = anthropicProvider.buildRequest(req(), ctxOf(channelOf('anthropic', { api_version: '2099-01-01' }), 'claude-x'));
    expect(r.headers['anthropic-version']).toBe('2099-01-01');
  });

  it('replaces the model with ctx.model and carries messages and temperature over', () => {
    const b = body(req({ temperature: 0.3, messages: [{ role: 'user', content: 'Hi' }, { role: 'assistant', content: 'Hello' }, { role: 'user', content: 'Bye' }] }));
    expect(b.model).toBe('claude-x');
    expect(b.temperature).toBe(0.3);
    expect(b.messages).toEqual([
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Hello' },
      { role: 'user', content: 'Bye' },
    ]);
    expect(b.stream).toBeUndefined();
  });

  it('always sends max_tokens: max_completion_tokens ?? max_tokens ?? channel default ?? 4096', () => {
    expect(body(req()).max_tokens).toBe(4096);
    expect(body(req(), ctxOf(channelOf('anthropic', { default_max_tokens: 1000 }), 'claude-x')).max_tokens).toBe(1000);
    expect(body(req({ max_tokens: 50 })).max_tokens).toBe(50);
    expect(body(req({ max_tokens: 50, max_completion_tokens: 70 })).max_tokens).toBe(70);
    expect(body(req({ max_tokens: null })).max_tokens).toBe(4096);
  });

  it('moves system and developer messages to the top-level system, joined with blank lines', () => {
    const b = body(
      req({
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'developer', content: [{ type: 'text', text: 'Use French.' }] },
          { role: 'user', content: 'Hi' },
        ],
      }),
    );
    expect(b.system).toBe('Be brief.\n\nUse French.');
    expect(b.messages).toEqual([{ role: 'user', content: 'Hi' }]);
    expect(body(req()).system).toBeUndefined();
  });

  it('merges consecutive messages of the same role (Anthropic requires alternation)', () => {
    const b = body(
      req({
        messages: [
          { role: 'user', content: 'one' },
          { role: 'user', content: 'two' },
          { role: 'assistant', content: 'a' },
          { role: 'system', content: 'sys' },
          { role: 'assistant', content: 'b' },
        ],
      }),
    );
    expect(b.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'one' }, { type: 'text', text: 'two' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] },
    ]);
  });

  it('maps top_p, stop -> stop_sequences, user -> metadata.user_id, stream -> stream:true', () => {
    expect(body(req({ top_p: 0.9 })).top_p).toBe(0.9);
    expect(body(req({ stop: 'END' })).stop_sequences).toEqual(['END']);
    expect(body(req({ stop: ['a', 'b'] })).stop_sequences).toEqual(['a', 'b']);
    expect(body(req({ user: 'u-1' })).metadata).toEqual({ user_id: 'u-1' });
    expect(body(req({ stream: true })).stream).toBe(true);
    expect(anthropicProvider.buildRequest(req({ stream: true }), ctx).headers['accept']).toBe('text/event-stream');
  });

  it('converts tools to {name, description, input_schema}', () => {
    const params = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
    const b = body(
      req({
        tools: [
          { type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: params } },
          { type: 'function', function: { name: 'now' } },
        ],
      }),
    );
    expect(b.tools).toEqual([
      { name: 'get_weather', description: 'Weather', input_schema: params },
      { name: 'now', input_schema: { type: 'object', properties: {} } },
    ]);
    expect(b.tool_choice).toBeUndefined();
  });

  it('maps tool_choice auto/required/none/{function} to auto/any/none/tool', () => {
    const tools: ChatCompletionRequest['tools'] = [{ type: 'function', function: { name: 'f' } }];
    expect(body(req({ tools, tool_choice: 'auto' })).tool_choice).toEqual({ type: 'auto' });
    expect(body(req({ tools, tool_choice: 'required' })).tool_choice).toEqual({ type: 'any' });
    expect(body(req({ tools, tool_choice: 'none' })).tool_choice).toEqual({ type: 'none' });
    expect(body(req({ tools, tool_choice: { type: 'function', function: { name: 'f' } } })).tool_choice).toEqual({ type: 'tool', name: 'f' });
    expect(body(req({ tools, parallel_tool_calls: false })).tool_choice).toEqual({ type: 'auto', disable_parallel_tool_use: true });
  });

  it('converts assistant tool_calls to tool_use blocks and tool messages to user tool_result blocks', () => {
    const b = body(
      req({
        messages: [
          { role: 'user', content: 'Weather in Paris and Rome?' },
          {
            role: 'assistant',
            content: 'Checking.',
            tool_calls: [
              { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
              { id: 'call_2', type: 'function', function: { name: 'get_weather', arguments: '' } },
            ],
          },
          { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
          { role: 'tool', tool_call_id: 'call_2', content: [{ type: 'text', text: 'rainy' }] },
          { role: 'user', content: 'Thanks' },
        ],
      }),
    );
    expect(b.messages).toEqual([
      { role: 'user', content: 'Weather in Paris and Rome?' },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Checking.' },
          { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } },
          { type: 'tool_use', id: 'call_2', name: 'get_weather', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'call_1', content: 'sunny' },
          { type: 'tool_result', tool_use_id: 'call_2', content: 'rainy' },
          { type: 'text', text: 'Thanks' },
        ],
      },
    ]);
  });

  it('turns an assistant message with only tool calls into tool_use blocks alone', () => {
    const b = body(
      req({
        messages: [
          { role: 'user', content: 'x' },
          { role: 'assistant', content: null, tool_calls: [{ id: 't', type: 'function', function: { name: 'f', arguments: '{}' } }] },
          { role: 'tool', tool_call_id: 't', content: '' },
        ],
      }),
    );
    expect(b.messages[1]).toEqual({ role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'f', input: {} }] });
    expect(b.messages[2]).toEqual({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't' }] });
  });

  it('converts image_url parts: data: URLs to base64 sources, other URLs to url sources', () => {
    const b = body(
      req({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What is this?' },
              { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
              { type: 'image_url', image_url: { url: 'https://img.example/cat.jpg' } },
            ],
          },
        ],
      }),
    );
    expect(b.messages[0].content).toEqual([
      { type: 'text', text: 'What is this?' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
      { type: 'image', source: { type: 'url', url: 'https://img.example/cat.jpg' } },
    ]);
  });

  it('handles response_format by an instruction appended to system', () => {
    const obj = body(req({ messages: [{ role: 'system', content: 'S' }, { role: 'user', content: 'u' }], response_format: { type: 'json_object' } }));
    expect(obj.system).toMatch(/^S\n\nRespond with a single valid JSON object only/);
    const schema = { type: 'object', properties: { a: { type: 'number' } } };
    const sch = body(req({ response_format: { type: 'json_schema', json_schema: { name: 'thing', schema } } }));
    expect(sch.system).toContain('JSON Schema (thing)');
    expect(sch.system).toContain(JSON.stringify(schema));
    expect(body(req({ response_format: { type: 'text' } })).system).toBeUndefined();
  });

  it('refuses values Anthropic cannot take with a 400 naming the field', () => {
    badRequest(() => anthropicProvider.buildRequest(req({ n: 2 }), ctx), 'n');
    badRequest(() => anthropicProvider.buildRequest(req({ logprobs: true }), ctx), 'logprobs');
    badRequest(() => anthropicProvider.buildRequest(req({ top_logprobs: 3 }), ctx), 'top_logprobs');
    badRequest(() => anthropicProvider.buildRequest(req({ logit_bias: { '50256': -100 } }), ctx), 'logit_bias');
    badRequest(() => anthropicProvider.buildRequest(req({ presence_penalty: 0.5 }), ctx), 'presence_penalty');
    badRequest(() => anthropicProvider.buildRequest(req({ frequency_penalty: 0.5 }), ctx), 'frequency_penalty');
    badRequest(() => anthropicProvider.buildRequest(req({ temperature: 1.5 }), ctx), 'temperature');
    badRequest(
      () => anthropicProvider.buildRequest(req({ messages: [{ role: 'system', content: [{ type: 'image_url', image_url: { url: 'https://x/y.png' } }] }, { role: 'user', content: 'x' }] }), ctx),
      'messages[0].content',
    );
    badRequest(
      () => anthropicProvider.buildRequest(req({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/bmp;base64,AAAA' } }] }] }), ctx),
      'messages[0].content',
    );
    badRequest(
      () =>
        anthropicProvider.buildRequest(
          req({ messages: [{ role: 'user', content: 'x' }, { role: 'assistant', tool_calls: [{ id: 't', type: 'function', function: { name: 'f', arguments: '{oops' } }] }] }),
          ctx,
        ),
      'messages[1].tool_calls[0].function.arguments',
    );
    badRequest(() => anthropicProvider.buildRequest(req({ messages: [{ role: 'system', content: 'only system' }] }), ctx), 'messages');
    const e = badRequest(() => anthropicProvider.buildRequest(req({ n: 2 }), ctx), 'n');
    expect(e.code).toBe('unsupported_parameter');
    // Accepted no-ops.
    expect(() => anthropicProvider.buildRequest(req({ n: 1, presence_penalty: 0, seed: 7 }), ctx)).not.toThrow();
  });

  it('probeRequest is a 1-token "ping"', () => {
    const probe = anthropicProvider.probeRequest(ctx);
    expect(probe.url).toBe('https://upstream.example/v1/messages');
    expect(probe.headers['x-api-key']).toBe('test-key');
    expect(JSON.parse(probe.body!)).toEqual({ model: 'claude-x', max_tokens: 1, messages: [{ role: 'user', content: 'ping' }] });
  });
});

describe('anthropic parseResponse', () => {
  const response = (extra: Record<string, unknown>) =>
    JSON.stringify({ id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-x-2025', content: [{ type: 'text', text: 'Hi' }], stop_reason: 'end_turn', usage: { input_tokens: 10, output_tokens: 3 }, ...extra });

  it('joins text blocks, maps usage and reports the upstream model with meta id/created', () => {
    const c = anthropicProvider.parseResponse(response({ content: [{ type: 'thinking', thinking: 'hmm' }, { type: 'text', text: 'Hello ' }, { type: 'text', text: 'there' }] }), ctx, meta);
    expect(c).toEqual({
      id: 'chatcmpl-test1',
      object: 'chat.completion',
      created: 1_700_000_000,
      model: 'claude-x-2025',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 10, completion_tokens: 3, total_tokens: 13 },
    });
  });

  it('maps every stop_reason', () => {
    const cases: [string | null, string | null][] = [
      ['end_turn', 'stop'],
      ['stop_sequence', 'stop'],
      ['max_tokens', 'length'],
      ['tool_use', 'tool_calls'],
      ['refusal', 'content_filter'],
      ['pause_turn', 'stop'],
      [null, null],
    ];
    for (const [stop, finish] of cases) expect(anthropicProvider.parseResponse(response({ stop_reason: stop }), ctx, meta).choices[0]!.finish_reason).toBe(finish);
  });

  it('adds cache creation and cache read tokens to prompt tokens', () => {
    const c = anthropicProvider.parseResponse(response({ usage: { input_tokens: 5, cache_creation_input_tokens: 100, cache_read_input_tokens: 20, output_tokens: 8 } }), ctx, meta);
    expect(c.usage).toEqual({ prompt_tokens: 125, completion_tokens: 8, total_tokens: 133 });
  });

  it('turns tool_use blocks into tool_calls with JSON-string arguments', () => {
    const c = anthropicProvider.parseResponse(
      response({
        stop_reason: 'tool_use',
        content: [
          { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
          { type: 'tool_use', id: 'toolu_2', name: 'now', input: {} },
        ],
      }),
      ctx,
      meta,
    );
    expect(c.choices[0]).toEqual({
      index: 0,
      message: {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          { id: 'toolu_2', type: 'function', function: { name: 'now', arguments: '{}' } },
        ],
      },
      finish_reason: 'tool_calls',
    });
  });

  it('falls back to meta.model and zero usage when the upstream reports neither', () => {
    const c = anthropicProvider.parseResponse(JSON.stringify({ content: [{ type: 'text', text: 'x' }], stop_reason: 'end_turn' }), ctx, meta);
    expect(c.model).toBe('client-model');
    expect(c.usage).toEqual({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });
  });

  it('throws a 502 for a body that is not JSON', () => {
    expect(() => anthropicProvider.parseResponse('<html>', ctx, meta)).toThrow(/not JSON/);
  });
});

describe('anthropic parseError', () => {
  it('reads {type:"error", error:{type, message}}', () => {
    expect(anthropicProvider.parseError(529, JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }))).toEqual({ message: 'Overloaded', code: 'overloaded_error' });
  });
  it('falls back to the raw text, or the status', () => {
    expect(anthropicProvider.parseError(502, 'Bad Gateway')).toEqual({ message: 'Bad Gateway' });
    expect(anthropicProvider.parseError(500, '')).toEqual({ message: 'Anthropic answered HTTP 500' });
  });
});

/** Anthropic SSE framing: `event:` + `data:` lines, blank line between events. */
function anthropicSse(events: [string, unknown][], lineEnd = '\n'): Buffer {
  return Buffer.from(events.map(([event, data]) => `event: ${event}${lineEnd}data: ${JSON.stringify(data)}${lineEnd}${lineEnd}`).join(''), 'utf8');
}

const messageStart = ['message_start', { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-x-2025', content: [], stop_reason: null, usage: { input_tokens: 11, cache_read_input_tokens: 4, output_tokens: 1 } } }] as [string, unknown];

const textEvents: [string, unknown][] = [
  messageStart,
  ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }],
  ['ping', { type: 'ping' }],
  ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Grüße, ' } }],
  ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'wörld 👋' } }],
  ['content_block_stop', { type: 'content_block_stop', index: 0 }],
  ['message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 7 } }],
  ['message_stop', { type: 'message_stop' }],
];

describe('anthropic stream converter', () => {
  it('converts a text stream identically for every byte split (include_usage off)', () => {
    const run = runEverySplit(() => anthropicProvider.createStreamConverter(ctx, metaOf(false)), anthropicSse(textEvents));
    const chunk = (delta: unknown, finish: string | null = null) => ({ id: 'chatcmpl-test1', object: 'chat.completion.chunk', created: 1_700_000_000, model: 'claude-x-2025', choices: [{ index: 0, delta, finish_reason: finish }] });
    expect(payloadsOf(run.out)).toEqual([chunk({ role: 'assistant', content: '' }), chunk({ content: 'Grüße, ' }), chunk({ content: 'wörld 👋' }), chunk({}, 'stop'), '[DONE]']);
    expect(run.outcome).toEqual({ usage: { prompt_tokens: 15, completion_tokens: 7, total_tokens: 22 }, finishReason: 'stop', completionText: 'Grüße, wörld 👋', error: null });
  });

  it('emits the usage chunk before [DONE] when include_usage is on (\\r\\n framing too)', () => {
    const run = runEverySplit(() => anthropicProvider.createStreamConverter(ctx, metaOf(true)), anthropicSse(textEvents, '\r\n'));
    const payloads = payloadsOf(run.out) as ChatCompletionChunk[];
    expect(payloads).toHaveLength(6);
    expect(payloads[3]!.choices[0]!.finish_reason).toBe('stop');
    expect(payloads[4]).toEqual({ id: 'chatcmpl-test1', object: 'chat.completion.chunk', created: 1_700_000_000, model: 'claude-x-2025', choices: [], usage: { prompt_tokens: 15, completion_tokens: 7, total_tokens: 22 } });
    expect(payloads[5]).toBe('[DONE]');
  });

  it('maps the stop reasons of message_delta', () => {
    for (const [stop, finish] of [['max_tokens', 'length'], ['tool_use', 'tool_calls'], ['refusal', 'content_filter'], ['stop_sequence', 'stop']] as const) {
      const events = textEvents.map(([e, d]): [string, unknown] => (e === 'message_delta' ? [e, { type: 'message_delta', delta: { stop_reason: stop }, usage: { output_tokens: 2 } }] : [e, d]));
      const converter = anthropicProvider.createStreamConverter(ctx, meta);
      const out = converter.push(anthropicSse(events)) + converter.end();
      expect(converter.outcome().finishReason).toBe(finish);
      expect((payloadsOf(out)[3] as ChatCompletionChunk).choices[0]!.finish_reason).toBe(finish);
    }
  });

  it('turns tool_use blocks into tool_calls deltas with the right index', () => {
    const events: [string, unknown][] = [
      messageStart,
      ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }],
      ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Let me check.' } }],
      ['content_block_stop', { type: 'content_block_stop', index: 0 }],
      ['content_block_start', { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_a', name: 'get_weather', input: {} } }],
      ['content_block_delta', { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '' } }],
      ['content_block_delta', { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"city":' } }],
      ['content_block_delta', { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '"Paris"}' } }],
      ['content_block_stop', { type: 'content_block_stop', index: 1 }],
      ['content_block_start', { type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 'toolu_b', name: 'now', input: {} } }],
      ['content_block_delta', { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '{}' } }],
      ['content_block_stop', { type: 'content_block_stop', index: 2 }],
      ['message_delta', { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 30 } }],
      ['message_stop', { type: 'message_stop' }],
    ];
    const run = runEverySplit(() => anthropicProvider.createStreamConverter(ctx, meta), anthropicSse(events));
    const deltas = (payloadsOf(run.out).slice(0, -1) as ChatCompletionChunk[]).map((c) => c.choices[0]!.delta);
    expect(deltas).toEqual([
      { role: 'assistant', content: '' },
      { content: 'Let me check.' },
      { tool_calls: [{ index: 0, id: 'toolu_a', type: 'function', function: { name: 'get_weather', arguments: '' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] },
      { tool_calls: [{ index: 1, id: 'toolu_b', type: 'function', function: { name: 'now', arguments: '' } }] },
      { tool_calls: [{ index: 1, function: { arguments: '{}' } }] },
      {},
    ]);
    expect(run.outcome.finishReason).toBe('tool_calls');
  });

  it('turns an in-stream error event into outcome.error and one OpenAI-style error event, then [DONE]', () => {
    const events: [string, unknown][] = [
      ...textEvents.slice(0, 4),
      ['error', { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }],
      ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'ignored' } }],
    ];
    const run = runEverySplit(() => anthropicProvider.createStreamConverter(ctx, metaOf(true)), anthropicSse(events));
    const payloads = payloadsOf(run.out);
    expect(payloads).toHaveLength(4);
    expect(payloads[2]).toEqual({ error: { message: 'Overloaded', type: 'upstream_error', code: 'overloaded_error', param: null } });
    expect(payloads[3]).toBe('[DONE]');
    expect(run.outcome.error).toEqual({ message: 'Overloaded', code: 'overloaded_error' });
    expect(run.outcome.finishReason).toBeNull();
    expect(run.outcome.completionText).toBe('Grüße, ');
  });

  it('reports no usage when the stream carries none, and still ends with [DONE] on a cut body', () => {
    const converter = anthropicProvider.createStreamConverter(ctx, metaOf(true));
    const out = converter.push(Buffer.from('event: message_start\ndata: {"type":"message_start","message":{"id":"m","model":"c"}}\n\nevent: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"partial"}}')) + converter.end();
    expect(payloadsOf(out).map((p) => (p === '[DONE]' ? p : (p as ChatCompletionChunk).choices[0]?.delta))).toEqual([{ role: 'assistant', content: '' }, { content: 'partial' }, '[DONE]']);
    expect(converter.outcome()).toEqual({ usage: null, finishReason: null, completionText: 'partial', error: null });
  });
});
