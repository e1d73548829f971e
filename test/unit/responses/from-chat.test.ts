/**
 * Chat answers in the Responses form: whole completions, and streams checked against the official
 * SDK's own accumulator (what `responses.stream()` builds from the events must be the response
 * that `response.completed` carries).
 */
import { accumulateResponse } from 'openai/lib/responses/ResponseAccumulator';
import type { Response, ResponseStreamEvent } from 'openai/resources/responses/responses';
import { describe, expect, it } from 'vitest';
import { responseOfCompletion, ResponsesStreamWriter, type ResponseEcho } from '../../../src/relay/ingress/responses/from-chat.js';
import { ResponseObject, ResponsesRequest } from '../../../src/relay/ingress/responses/schema.js';
import type { ChatCompletion, ChatCompletionChunk } from '../../../src/relay/schema.js';

const echo = (body: Record<string, unknown> = {}): ResponseEcho => ({
  id: 'resp_test',
  createdAt: 1_700_000_000,
  request: ResponsesRequest.parse({ model: 'client-model', input: 'x', ...body }),
  store: true,
});

const usage = { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 };

const completion = (message: ChatCompletion['choices'][number]['message'], finish: ChatCompletion['choices'][number]['finish_reason'] = 'stop'): ChatCompletion => ({
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1,
  model: 'upstream-model',
  choices: [{ index: 0, message, finish_reason: finish }],
  usage,
});

describe('responseOfCompletion', () => {
  it('answers text as one message item, with usage and the request echoed', () => {
    const response = responseOfCompletion(echo({ instructions: 'I', metadata: { a: 'b' }, temperature: 0.3, tools: [{ type: 'function', name: 'f' }] }), completion({ role: 'assistant', content: 'Hello' }));
    expect(ResponseObject.safeParse(response).success).toBe(true);
    expect(response).toMatchObject({
      id: 'resp_test',
      object: 'response',
      created_at: 1_700_000_000,
      status: 'completed',
      model: 'upstream-model',
      instructions: 'I',
      metadata: { a: 'b' },
      temperature: 0.3,
      store: true,
      tools: [{ type: 'function', name: 'f', description: null, parameters: null, strict: null }],
      output: [{ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Hello', annotations: [] }] }],
      usage: { input_tokens: 11, output_tokens: 7, total_tokens: 18, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } },
    });
    expect(response.output[0]!.id).toMatch(/^msg_/);
  });

  it('answers tool calls as function_call items, and a cut-off answer as incomplete', () => {
    const calls = responseOfCompletion(echo(), completion({ role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }] }, 'tool_calls'));
    expect(calls.output).toEqual([{ id: expect.stringMatching(/^fc_/), type: 'function_call', call_id: 'call_1', name: 'f', arguments: '{"a":1}', status: 'completed' }]);
    const cut = responseOfCompletion(echo(), completion({ role: 'assistant', content: 'Hel' }, 'length'));
    expect(cut).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, output: [{ status: 'incomplete' }] });
  });
});

const chunk = (delta: ChatCompletionChunk['choices'][number]['delta'], finish: ChatCompletionChunk['choices'][number]['finish_reason'] = null): string =>
  `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'upstream-model', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const usageChunk = `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'upstream-model', choices: [], usage })}\n\n`;
const DONE = 'data: [DONE]\n\n';

/** The SSE text as its events (each `event:` line matching its data's type). */
function eventsOf(sse: string): ResponseStreamEvent[] {
  return sse
    .split('\n\n')
    .filter((e) => e !== '')
    .map((text) => {
      const [eventLine, dataLine, ...rest] = text.split('\n');
      expect(rest).toEqual([]);
      const event = JSON.parse(dataLine!.replace(/^data: /, '')) as ResponseStreamEvent;
      expect(eventLine).toBe(`event: ${event.type}`);
      return event;
    });
}

/** Runs the chat stream through a writer, whole and split between every pair of characters. */
function translate(input: string, body: Record<string, unknown> = {}): ResponseStreamEvent[] {
  const whole = new ResponsesStreamWriter(echo(body)).push(input);
  // Ids are random: compare shapes with them masked.
  const masked = (s: string) => s.replace(/(msg|fc)_[0-9a-f]{48}/g, '$1_x');
  for (let i = 0; i <= input.length; i += 7) {
    const writer = new ResponsesStreamWriter(echo(body));
    expect(masked(writer.push(input.slice(0, i)) + writer.push(input.slice(i)))).toBe(masked(whole));
  }
  return eventsOf(whole);
}

/** What the SDK builds from the events. */
function accumulated(events: ResponseStreamEvent[]): Response {
  let snapshot: Response | undefined;
  for (const event of events) snapshot = accumulateResponse(event, snapshot);
  return snapshot!;
}

describe('ResponsesStreamWriter', () => {
  it('streams text in the order OpenAI sends it, numbered from 0, ending with response.completed', () => {
    const events = translate(chunk({ role: 'assistant', content: '' }) + chunk({ content: 'Hel' }) + chunk({ content: 'lo' }) + chunk({}, 'stop') + usageChunk + DONE);
    expect(events.map((e) => e.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    const completed = events.at(-1) as Extract<ResponseStreamEvent, { type: 'response.completed' }>;
    expect(completed.response).toMatchObject({ id: 'resp_test', status: 'completed', model: 'upstream-model', usage: { input_tokens: 11, output_tokens: 7, total_tokens: 18 } });
    expect(completed.response.output).toEqual([{ id: expect.stringMatching(/^msg_/), type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Hello', annotations: [] }] }]);
    expect((events[0] as Extract<ResponseStreamEvent, { type: 'response.created' }>).response).toMatchObject({ status: 'in_progress', output: [], usage: null });
    expect(accumulated(events).output).toEqual(completed.response.output);
  });

  it('streams tool calls (text first, then each call) as function_call_arguments events', () => {
    const events = translate(
      chunk({ content: 'Checking.' }) +
        chunk({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'weather', arguments: '' } }] }) +
        chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }) +
        chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }) +
        chunk({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'time', arguments: '{}' } }] }) +
        chunk({}, 'tool_calls') +
        usageChunk +
        DONE,
      { tools: [{ type: 'function', name: 'weather' }, { type: 'function', name: 'time' }] },
    );
    const completed = events.at(-1) as Extract<ResponseStreamEvent, { type: 'response.completed' }>;
    expect(completed.type).toBe('response.completed');
    expect(completed.response.output.map((item) => item.type)).toEqual(['message', 'function_call', 'function_call']);
    expect(completed.response.output.slice(1)).toMatchObject([
      { type: 'function_call', call_id: 'call_a', name: 'weather', arguments: '{"city":"Paris"}', status: 'completed' },
      { type: 'function_call', call_id: 'call_b', name: 'time', arguments: '{}', status: 'completed' },
    ]);
    const done = events.filter((e) => e.type === 'response.function_call_arguments.done');
    expect(done).toMatchObject([
      { output_index: 1, name: 'weather', arguments: '{"city":"Paris"}' },
      { output_index: 2, name: 'time', arguments: '{}' },
    ]);
    expect(accumulated(events).output).toEqual(completed.response.output);
  });

  it('ends a cut-off answer with response.incomplete, and an empty one with an empty message', () => {
    const cut = translate(chunk({ content: 'Hel' }) + chunk({}, 'length') + DONE);
    expect(cut.at(-1)).toMatchObject({ type: 'response.incomplete', response: { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, usage: null } });
    const empty = translate(chunk({}, 'stop') + DONE);
    expect(empty.at(-1)).toMatchObject({ type: 'response.completed', response: { output: [{ type: 'message', content: [{ type: 'output_text', text: '' }] }] } });
    expect(accumulated(empty).output).toEqual((empty.at(-1) as Extract<ResponseStreamEvent, { type: 'response.completed' }>).response.output);
  });

  it('turns an in-band error into error and response.failed, and writes nothing after it', () => {
    const events = translate(chunk({ content: 'Hel' }) + `data: ${JSON.stringify({ error: { message: 'upstream went away', type: 'upstream_error', code: 'upstream_stream_interrupted', param: null } })}\n\n` + DONE);
    expect(events.slice(-2)).toMatchObject([
      { type: 'error', code: 'upstream_stream_interrupted', message: 'upstream went away', param: null },
      { type: 'response.failed', response: { status: 'failed', error: { code: 'server_error', message: 'upstream went away' } } },
    ]);
    expect(events.filter((e) => e.type === 'response.output_item.done')).toMatchObject([{ item: { status: 'incomplete', content: [{ text: 'Hel' }] } }]);
  });
});
