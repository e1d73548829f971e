import { describe, expect, it } from 'vitest';
import { messageOf, messagesTranslation, MessagesStreamTranslator, toolInputOf } from '../../../src/relay/ingress/messages/from-chat.js';
import type { ChatCompletion, ChatCompletionChunk } from '../../../src/relay/schema.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const usage = { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 };

function completion(message: ChatCompletion['choices'][number]['message'], finish: ChatCompletion['choices'][number]['finish_reason']): ChatCompletion {
  return { id: 'chatcmpl-abc', object: 'chat.completion', created: 1, model: 'up-model', choices: [{ index: 0, message, finish_reason: finish }], usage };
}

describe('chat completion -> Messages answer', () => {
  it('text, end_turn, usage, msg_ id', () => {
    expect(messageOf(completion({ role: 'assistant', content: 'Hello' }, 'stop'))).toEqual({
      id: 'msg_abc',
      type: 'message',
      role: 'assistant',
      model: 'up-model',
      content: [{ type: 'text', text: 'Hello' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: 11, output_tokens: 7, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    });
  });

  it('tool calls become tool_use blocks after the text; finish reasons map', () => {
    const answer = messageOf(
      completion(
        {
          role: 'assistant',
          content: 'Checking.',
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            { id: 'call_2', type: 'function', function: { name: 'noop', arguments: '' } },
          ],
        },
        'tool_calls',
      ),
    );
    expect(answer.content).toEqual([
      { type: 'text', text: 'Checking.' },
      { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } },
      { type: 'tool_use', id: 'call_2', name: 'noop', input: {} },
    ]);
    expect(answer.stop_reason).toBe('tool_use');
    expect(messageOf(completion({ role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }] }, 'tool_calls')).content).toHaveLength(1);
    expect(messageOf(completion({ role: 'assistant', content: 'x' }, 'length')).stop_reason).toBe('max_tokens');
    expect(messageOf(completion({ role: 'assistant', content: 'x' }, 'content_filter')).stop_reason).toBe('refusal');
    expect(messageOf(completion({ role: 'assistant', content: '' }, null)).content).toEqual([{ type: 'text', text: '' }]);
  });

  it('tool arguments that are not a JSON object are kept as text', () => {
    expect(toolInputOf('[1,2]')).toEqual({ arguments: '[1,2]' });
    expect(toolInputOf('{bad')).toEqual({ arguments: '{bad' });
  });

  it('the translation writes the answer as JSON text', () => {
    expect(JSON.parse(messagesTranslation('client-model').completion(completion({ role: 'assistant', content: 'Hi' }, 'stop'))).content).toEqual([{ type: 'text', text: 'Hi' }]);
  });
});

/** The relay's SSE for `chunks` then `[DONE]`. */
function relaySse(chunks: Array<Partial<ChatCompletionChunk> & { choices: ChatCompletionChunk['choices'] }>): string {
  return chunks.map((c) => `data: ${JSON.stringify({ id: 'chatcmpl-s1', object: 'chat.completion.chunk', created: 1, model: 'up-model', ...c })}\n\n`).join('') + 'data: [DONE]\n\n';
}

const delta = (d: ChatCompletionChunk['choices'][number]['delta'], finish: ChatCompletionChunk['choices'][number]['finish_reason'] = null) => ({ choices: [{ index: 0, delta: d, finish_reason: finish }] });

/** Parsed Anthropic events: [event name, data]; checks each event line names its data's type. */
function eventsOf(text: string): Array<[string, Json]> {
  expect(text.endsWith('\n\n')).toBe(true);
  return text
    .slice(0, -2)
    .split('\n\n')
    .map((block) => {
      const [eventLine, dataLine, ...rest] = block.split('\n');
      expect(rest).toEqual([]);
      const name = eventLine!.replace(/^event: /, '');
      const data = JSON.parse(dataLine!.replace(/^data: /, ''));
      expect(data.type).toBe(name);
      return [name, data] as [string, Json];
    });
}

/** The translator fed the relay's events one by one (as the relay writes them), and split at every character. */
function translate(sse: string): string {
  const events = sse.split(/(?<=\n\n)/);
  const t = new MessagesStreamTranslator('client-model');
  const whole = events.map((e) => t.push(e)).join('');
  for (let i = 0; i <= sse.length; i += 7) {
    const split = new MessagesStreamTranslator('client-model');
    expect(split.push(sse.slice(0, i)) + split.push(sse.slice(i))).toBe(whole);
  }
  return whole;
}

describe('chat stream -> Messages events', () => {
  it('text: message_start, ping, block start/deltas/stop, message_delta with stop reason and usage, message_stop', () => {
    const out = translate(relaySse([delta({ role: 'assistant', content: '' }), delta({ content: 'Hel' }), delta({ content: 'lo' }), delta({}, 'stop'), { choices: [], usage }]));
    const events = eventsOf(out);
    expect(events.map(([name]) => name)).toEqual(['message_start', 'ping', 'content_block_start', 'content_block_delta', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop']);
    expect(events[0]![1].message).toMatchObject({ id: 'msg_s1', type: 'message', role: 'assistant', model: 'up-model', content: [], stop_reason: null, usage: { input_tokens: 0, output_tokens: 0 } });
    expect(events[2]![1]).toEqual({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
    expect(events[3]![1]).toEqual({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hel' } });
    expect(events[5]![1]).toEqual({ type: 'content_block_stop', index: 0 });
    expect(events[6]![1]).toEqual({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { input_tokens: 11, output_tokens: 7, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 } });
  });

  it('tool calls: one tool_use block per call, arguments split over chunks as input_json_delta', () => {
    const out = translate(
      relaySse([
        delta({ role: 'assistant', content: 'Let me check.' }),
        delta({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '' } }] }),
        delta({ tool_calls: [{ index: 0, function: { arguments: '{"ci' } }] }),
        delta({ tool_calls: [{ index: 0, function: { arguments: 'ty":"Paris"}' } }] }),
        delta({ tool_calls: [{ index: 1, id: 'call_2', type: 'function', function: { name: 'get_time', arguments: '{}' } }] }),
        delta({}, 'tool_calls'),
        { choices: [], usage },
      ]),
    );
    const events = eventsOf(out).map(([, data]) => data);
    expect(events.slice(2)).toEqual([
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Let me check.' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'call_1', name: 'get_weather', input: {} } },
      { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"ci' } },
      { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: 'ty":"Paris"}' } },
      { type: 'content_block_stop', index: 1 },
      { type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 'call_2', name: 'get_time', input: {} } },
      { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '{}' } },
      { type: 'content_block_stop', index: 2 },
      { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: expect.objectContaining({ output_tokens: 7 }) },
      { type: 'message_stop' },
    ]);
  });

  it('reasoning deltas (reasoning_content) become a thinking block before the text', () => {
    const out = translate(relaySse([delta({ role: 'assistant', reasoning_content: 'hmm' } as never), delta({ content: 'ok' }), delta({}, 'length')]));
    const events = eventsOf(out).map(([, data]) => data);
    expect(events[2]).toEqual({ type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } });
    expect(events[3]).toEqual({ type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'hmm' } });
    expect(events[5]).toMatchObject({ type: 'content_block_start', index: 1, content_block: { type: 'text' } });
    expect(events.at(-2)).toMatchObject({ type: 'message_delta', delta: { stop_reason: 'max_tokens' } });
  });

  it('an error mid-stream becomes an error event and nothing follows it', () => {
    const sse = relaySse([delta({ role: 'assistant', content: 'Hel' })]).replace('data: [DONE]\n\n', '') + `data: ${JSON.stringify({ error: { message: 'the upstream stream was interrupted', type: 'upstream_error', code: 'upstream_stream_interrupted', param: null } })}\n\ndata: [DONE]\n\n`;
    const events = eventsOf(translate(sse));
    expect(events.map(([name]) => name)).toEqual(['message_start', 'ping', 'content_block_start', 'content_block_delta', 'error']);
    expect(events.at(-1)![1]).toEqual({ type: 'error', error: { type: 'api_error', message: 'the upstream stream was interrupted' } });
  });

  it('an upstream overload reported in-band keeps its Anthropic type', () => {
    const sse = relaySse([delta({ content: 'x' })]).replace('data: [DONE]\n\n', '') + `data: ${JSON.stringify({ error: { message: 'Overloaded', type: 'upstream_error', code: 'overloaded_error', param: null } })}\n\n`;
    expect(eventsOf(translate(sse)).at(-1)![1].error).toEqual({ type: 'overloaded_error', message: 'Overloaded' });
  });

  it('an answer with no content still opens and closes the message', () => {
    const events = eventsOf(translate('data: [DONE]\n\n'));
    expect(events.map(([name]) => name)).toEqual(['message_start', 'ping', 'message_delta', 'message_stop']);
    expect(events[0]![1].message.model).toBe('client-model');
  });
});
