/** A Responses request in the relay's chat form, and the refusals before validation. */
import { describe, expect, it } from 'vitest';
import { historyItems, nativeBody, parseResponsesRequest } from '../../../src/relay/ingress/responses/index.js';
import { ResponsesRequest, type InputItem } from '../../../src/relay/ingress/responses/schema.js';
import { toChatRequest } from '../../../src/relay/ingress/responses/to-chat.js';
import { badRequest } from '../providers/stream-helpers.js';

const request = (body: Record<string, unknown>) => ResponsesRequest.parse({ model: 'm', ...body });

describe('toChatRequest', () => {
  it('makes a string input one user message, after the instructions', () => {
    expect(toChatRequest(request({ input: 'hi', instructions: 'Be brief.' }))).toEqual({
      model: 'm',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'hi' },
      ],
    });
  });

  it('maps message items and their parts: text, images, assistant output text, developer turns', () => {
    const chat = toChatRequest(
      request({
        input: [
          { role: 'developer', content: 'Rules.' },
          { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'What is this?' }, { type: 'input_image', image_url: 'data:image/png;base64,AAAA', detail: 'low' }] },
          { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'A cat.', annotations: [] }] },
          { role: 'user', content: 'Sure?' },
        ],
      }),
    );
    expect(chat.messages).toEqual([
      { role: 'developer', content: 'Rules.' },
      { role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA', detail: 'low' } }] },
      { role: 'assistant', content: 'A cat.' },
      { role: 'user', content: 'Sure?' },
    ]);
  });

  it('joins consecutive function calls into one assistant turn, and outputs become tool messages', () => {
    const chat = toChatRequest(
      request({
        input: [
          { role: 'user', content: 'Weather in Paris and Rome?' },
          { type: 'function_call', call_id: 'c1', name: 'weather', arguments: '{"city":"Paris"}' },
          { type: 'function_call', call_id: 'c2', name: 'weather', arguments: '{"city":"Rome"}' },
          { type: 'function_call_output', call_id: 'c1', output: '21' },
          { type: 'function_call_output', call_id: 'c2', output: [{ type: 'input_text', text: '2' }, { type: 'input_text', text: '5' }] },
        ],
      }),
    );
    expect(chat.messages.slice(1)).toEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
          { id: 'c2', type: 'function', function: { name: 'weather', arguments: '{"city":"Rome"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'c1', content: '21' },
      { role: 'tool', tool_call_id: 'c2', content: '25' },
    ]);
  });

  it('puts a call after assistant text into that same turn', () => {
    const chat = toChatRequest(request({ input: [{ role: 'assistant', content: 'Let me look.' }, { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' }] }));
    expect(chat.messages).toEqual([{ role: 'assistant', content: 'Let me look.', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] }]);
  });

  it('prepends the stored conversation, not its instructions', () => {
    const history: InputItem[] = [
      { type: 'message', role: 'user', content: 'one' },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'ONE' }] },
    ];
    const chat = toChatRequest(request({ input: 'two', instructions: 'Now.' }), history);
    expect(chat.messages).toEqual([
      { role: 'system', content: 'Now.' },
      { role: 'user', content: 'one' },
      { role: 'assistant', content: 'ONE' },
      { role: 'user', content: 'two' },
    ]);
  });

  it('maps settings: tools, tool_choice, text.format, max_output_tokens, sampling, user, stream', () => {
    const chat = toChatRequest(
      request({
        input: 'x',
        tools: [{ type: 'function', name: 'f', description: 'does f', parameters: { type: 'object' }, strict: true }],
        tool_choice: { type: 'function', name: 'f' },
        parallel_tool_calls: false,
        text: { format: { type: 'json_schema', name: 'out', schema: { type: 'object' }, strict: true } },
        max_output_tokens: 99,
        temperature: 0.2,
        top_p: 0.5,
        user: 'u',
        stream: true,
      }),
    );
    expect(chat).toMatchObject({
      tools: [{ type: 'function', function: { name: 'f', description: 'does f', parameters: { type: 'object' }, strict: true } }],
      tool_choice: { type: 'function', function: { name: 'f' } },
      parallel_tool_calls: false,
      response_format: { type: 'json_schema', json_schema: { name: 'out', schema: { type: 'object' }, strict: true } },
      max_tokens: 99,
      temperature: 0.2,
      top_p: 0.5,
      user: 'u',
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(toChatRequest(request({ input: 'x', text: { format: { type: 'json_object' } }, tool_choice: 'required' }))).toMatchObject({ response_format: { type: 'json_object' }, tool_choice: 'required' });
    expect(toChatRequest(request({ input: 'x', text: { format: { type: 'text' } } })).response_format).toBeUndefined();
  });

  it('refuses an empty conversation and images in assistant turns', () => {
    badRequest(() => toChatRequest(request({ input: [] })), 'input');
    badRequest(() => toChatRequest(request({ input: [{ role: 'assistant', content: [{ type: 'input_image', image_url: 'https://x/y.png' }] }] })), 'input[0].content');
  });
});

describe('parseResponsesRequest', () => {
  const refusal = (body: unknown) => parseResponsesRequest(body).error;

  it('names built-in tools, unknown tool choices, item kinds and parts as unsupported', () => {
    expect(refusal({ model: 'm', input: 'x', tools: [{ type: 'function', name: 'f' }, { type: 'file_search' }] })).toMatchObject({ status: 400, code: 'unsupported_parameter', param: 'tools[1].type' });
    expect(refusal({ model: 'm', input: 'x', tool_choice: { type: 'web_search_preview' } })).toMatchObject({ code: 'unsupported_parameter', param: 'tool_choice' });
    expect(refusal({ model: 'm', input: [{ type: 'reasoning', summary: [] }] })).toMatchObject({ code: 'unsupported_parameter', param: 'input[0].type' });
    expect(refusal({ model: 'm', input: [{ role: 'user', content: [{ type: 'input_audio', input_audio: {} }] }] })).toMatchObject({ code: 'unsupported_parameter', param: 'input[0].content[0].type' });
    // Files by id are the caller's uploads (resolved by the ingress); inline file data is not.
    expect(refusal({ model: 'm', input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'f' }] }] })).toBeUndefined();
    expect(refusal({ model: 'm', input: [{ role: 'user', content: [{ type: 'input_image', file_id: 'f' }] }] })).toBeUndefined();
    expect(refusal({ model: 'm', input: [{ role: 'user', content: [{ type: 'input_file', file_url: 'https://example.com/a.pdf' }] }] })).toMatchObject({ code: 'unsupported_parameter', param: 'input[0].content[0].file_id' });
    expect(refusal({ model: 'm', input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'data:image/png;base64,AA', file_id: 'f' }] }] })).toMatchObject({ code: 'invalid_request' });
  });

  it('answers invalid values with invalid_request naming the field', () => {
    expect(refusal({ input: 'x' })).toMatchObject({ code: 'invalid_request', param: 'model' });
    expect(refusal({ model: 'm', input: 'x', max_output_tokens: 0 })).toMatchObject({ code: 'invalid_request', param: 'max_output_tokens' });
    expect(refusal({ model: 'm', input: [{ type: 'function_call', name: 'f', arguments: '{}' }] })?.code).toBe('invalid_request');
    expect(parseResponsesRequest({ model: 'm', input: 'x', reasoning: { effort: 'low' } }).value).toMatchObject({ reasoning: { effort: 'low' } });
  });
});

describe('the native request and the stored conversation', () => {
  it('sends the chain in input, without previous_response_id or store', () => {
    const body = request({ input: 'two', previous_response_id: 'resp_1', store: true, instructions: 'I' });
    const history: InputItem[] = [{ type: 'message', role: 'user', content: 'one' }];
    expect(nativeBody(body, history)).toEqual({ model: 'm', instructions: 'I', input: [{ type: 'message', role: 'user', content: 'one' }, { type: 'message', role: 'user', content: 'two' }] });
    expect(nativeBody(request({ input: 'alone' }), [])).toEqual({ model: 'm', input: 'alone' });
  });

  it('keeps messages, calls and outputs of stored items, without their ids and statuses', () => {
    expect(
      historyItems([
        { type: 'message', role: 'user', content: 'q' },
        { type: 'reasoning', id: 'rs_1', summary: [] },
        { id: 'msg_1', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'a', annotations: [] }] },
        { id: 'fc_1', type: 'function_call', status: 'completed', call_id: 'c', name: 'f', arguments: '{}' },
        { type: 'function_call_output', call_id: 'c', output: '1' },
      ]),
    ).toEqual([
      { type: 'message', role: 'user', content: 'q' },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'a', annotations: [] }] },
      { type: 'function_call', call_id: 'c', name: 'f', arguments: '{}' },
      { type: 'function_call_output', call_id: 'c', output: '1' },
    ]);
  });
});
