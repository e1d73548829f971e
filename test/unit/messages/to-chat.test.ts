import { describe, expect, it } from 'vitest';
import { parseCountTokensRequest, parseMessagesRequest } from '../../../src/relay/ingress/messages/index.js';
import { countMessagesTokens } from '../../../src/relay/ingress/messages/count-tokens.js';
import type { MessagesRequest } from '../../../src/relay/ingress/messages/schema.js';
import { toChatRequest } from '../../../src/relay/ingress/messages/to-chat.js';
import { badRequest } from '../providers/stream-helpers.js';

const PNG = 'iVBORw0KGgo=';

function req(extra: Partial<MessagesRequest> = {}): MessagesRequest {
  const parsed = parseMessagesRequest({ model: 'm', max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }], ...extra });
  if (parsed.error) throw parsed.error;
  return parsed.value;
}

describe('Messages request validation', () => {
  it('returns the body as sent (the object itself: an anthropic channel gets it unchanged)', () => {
    const body = { model: 'm', max_tokens: 5, messages: [{ role: 'user', content: [{ type: 'text', text: 'x', some_new_field: 1 }] }] };
    expect(parseMessagesRequest(body).value).toBe(body);
  });

  it('refuses unknown top-level fields as Anthropic does, naming them', () => {
    const error = parseMessagesRequest({ model: 'm', max_tokens: 5, messages: [], stop: ['x'] }).error!;
    expect(error.status).toBe(400);
    expect(error.message).toBe('stop: Extra inputs are not permitted');
    expect(error.param).toBe('stop');
  });

  it('requires model, max_tokens and messages; names the path of a bad value', () => {
    expect(parseMessagesRequest({ model: 'm', messages: [] }).error!.message).toMatch(/^max_tokens: /);
    expect(parseMessagesRequest({ max_tokens: 1, messages: [] }).error!.message).toMatch(/^model: /);
    expect(parseMessagesRequest({ model: 'm', max_tokens: 1, messages: [{ role: 'tool', content: 'x' }] }).error!.message).toMatch(/^messages\.0\.role: /);
    expect(parseMessagesRequest({ model: 'm', max_tokens: 1, messages: [], temperature: 1.5 }).error!.message).toMatch(/^temperature: /);
    expect(parseMessagesRequest({ model: 'm', max_tokens: 1, messages: [], tool_choice: { type: 'sometimes' } }).error!.param).toBe('tool_choice.type');
  });

  it('refuses a block of a known type without its fields (here, and inside a tool result)', () => {
    expect(parseMessagesRequest({ model: 'm', max_tokens: 1, messages: [{ role: 'user', content: [{ type: 'text' }] }] }).error!.param).toMatch(/^messages\.0\.content\.0/);
    const inResult = parseMessagesRequest({ model: 'm', max_tokens: 1, messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: [{ type: 'text', txt: 'x' }] }] }] });
    expect(inResult.error!.status).toBe(400);
    expect(parseMessagesRequest({ model: 'm', max_tokens: 1, messages: [{ role: 'user', content: [{ type: 'search_result', source: 's', title: 't', content: [] }] }] }).error).toBeUndefined();
  });

  it('accepts what Claude Code sends (cache_control, metadata, thinking, output_config, context_management)', () => {
    const parsed = parseMessagesRequest({
      model: 'm',
      max_tokens: 32000,
      stream: true,
      system: [{ type: 'text', text: 'a', cache_control: { type: 'ephemeral' } }],
      tools: [{ name: 't', description: 'd', input_schema: { type: 'object' }, cache_control: { type: 'ephemeral', ttl: '1h' } }],
      metadata: { user_id: 'u' },
      thinking: { type: 'enabled', budget_tokens: 1024 },
      output_config: { effort: 'high' },
      context_management: { edits: [] },
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi', cache_control: { type: 'ephemeral' } }] }],
    });
    expect(parsed.error).toBeUndefined();
  });

  it('count_tokens takes the conversation only (max_tokens is not one of its fields)', () => {
    expect(parseCountTokensRequest({ model: 'm', messages: [{ role: 'user', content: 'x' }] }).error).toBeUndefined();
    expect(parseCountTokensRequest({ model: 'm', max_tokens: 1, messages: [] }).error!.message).toBe('max_tokens: Extra inputs are not permitted');
  });
});

describe('Messages request -> chat form', () => {
  it('carries model, max_tokens, sampling, stop sequences, stream and the user id', () => {
    const chat = toChatRequest(req({ temperature: 0.2, top_p: 0.9, top_k: 3, stop_sequences: ['END'], stream: true, metadata: { user_id: 'u-1' } }));
    expect(chat).toEqual({ model: 'm', max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }], temperature: 0.2, top_p: 0.9, stop: ['END'], stream: true, user: 'u-1' });
  });

  it('makes one system message of a string or of text blocks (blank lines between), cache_control dropped', () => {
    expect(toChatRequest(req({ system: 'Be brief.' })).messages[0]).toEqual({ role: 'system', content: 'Be brief.' });
    const blocks = toChatRequest(req({ system: [{ type: 'text', text: 'One.', cache_control: { type: 'ephemeral' } }, { type: 'text', text: 'Two.' }] }));
    expect(blocks.messages[0]).toEqual({ role: 'system', content: 'One.\n\nTwo.' });
    expect(JSON.stringify(blocks)).not.toContain('cache_control');
  });

  it('keeps a system turn inside the conversation in its place', () => {
    const chat = toChatRequest(req({ messages: [{ role: 'user', content: 'a' }, { role: 'system', content: [{ type: 'text', text: 'Now be formal.' }] }, { role: 'user', content: 'b' }] }));
    expect(chat.messages).toEqual([
      { role: 'user', content: 'a' },
      { role: 'system', content: 'Now be formal.' },
      { role: 'user', content: 'b' },
    ]);
    badRequest(() => toChatRequest(req({ messages: [{ role: 'system', content: [{ type: 'image', source: { type: 'url', url: 'https://x.example/a.png' } }] }] })), 'messages[0].content[0]');
  });

  it('converts images (base64 -> data URL, url as is) and keeps text parts in order', () => {
    const chat = toChatRequest(
      req({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'look' },
              { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
              { type: 'image', source: { type: 'url', url: 'https://x.example/a.jpg' } },
            ],
          },
        ],
      }),
    );
    expect(chat.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'look' },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
          { type: 'image_url', image_url: { url: 'https://x.example/a.jpg' } },
        ],
      },
    ]);
  });

  it('converts assistant text + tool_use to content + tool_calls, leaving thinking out', () => {
    const chat = toChatRequest(
      req({
        messages: [
          { role: 'user', content: 'weather?' },
          {
            role: 'assistant',
            content: [
              { type: 'thinking', thinking: 'hmm', signature: 'sig' },
              { type: 'redacted_thinking', data: 'xxx' },
              { type: 'text', text: 'Checking.' },
              { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
              { type: 'tool_use', id: 'toolu_2', name: 'get_time', input: {} },
            ],
          },
        ],
      }),
    );
    expect(chat.messages[1]).toEqual({
      role: 'assistant',
      content: 'Checking.',
      tool_calls: [
        { id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
        { id: 'toolu_2', type: 'function', function: { name: 'get_time', arguments: '{}' } },
      ],
    });
    const onlyCall = toChatRequest(req({ messages: [{ role: 'user', content: 'x' }, { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'n', input: {} }] }] }));
    expect(onlyCall.messages[1]).toMatchObject({ role: 'assistant', content: null });
  });

  it('turns tool_result blocks into tool messages first, then the turn’s other content; is_error prefixes the text; result images follow in a user message', () => {
    const chat = toChatRequest(
      req({
        messages: [
          { role: 'user', content: 'go' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'a', name: 'f', input: {} }, { type: 'tool_use', id: 'b', name: 'g', input: {} }] },
          {
            role: 'user',
            content: [
              { type: 'tool_result', tool_use_id: 'a', content: 'plain' },
              { type: 'tool_result', tool_use_id: 'b', is_error: true, content: [{ type: 'text', text: 'boom' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } }] },
              { type: 'text', text: 'continue' },
            ],
          },
        ],
      }),
    );
    expect(chat.messages.slice(2)).toEqual([
      { role: 'tool', tool_call_id: 'a', content: 'plain' },
      { role: 'tool', tool_call_id: 'b', content: 'Error: boom' },
      { role: 'user', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } }, { type: 'text', text: 'continue' }] },
    ]);
    const empty = toChatRequest(req({ messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'a' }] }] }));
    expect(empty.messages).toEqual([{ role: 'tool', tool_call_id: 'a', content: '' }]);
  });

  it('reads text documents; refuses PDFs, file images and server-tool blocks with a 400 naming the block', () => {
    const doc = toChatRequest(req({ messages: [{ role: 'user', content: [{ type: 'document', title: 'Notes', source: { type: 'text', media_type: 'text/plain', data: 'abc' } }] }] }));
    expect(doc.messages[0]).toEqual({ role: 'user', content: 'Notes\n\nabc' });
    badRequest(() => toChatRequest(req({ messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBER' } }] }] })), 'messages[0].content[0].source');
    badRequest(() => toChatRequest(req({ messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'file', file_id: 'f' } }] }] })), 'messages[0].content[0].source');
    badRequest(() => toChatRequest(req({ messages: [{ role: 'assistant', content: [{ type: 'server_tool_use', id: 'x', name: 'web_search', input: {} } as never] }] })), 'messages[0].content[0]');
  });

  it('converts tools and every tool_choice; disable_parallel_tool_use -> parallel_tool_calls false', () => {
    const tools = [{ name: 'get_weather', description: 'Weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } }, cache_control: { type: 'ephemeral' as const } }];
    const chat = toChatRequest(req({ tools, tool_choice: { type: 'any', disable_parallel_tool_use: true } }));
    expect(chat.tools).toEqual([{ type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }]);
    expect(chat.tool_choice).toBe('required');
    expect(chat.parallel_tool_calls).toBe(false);
    expect(toChatRequest(req({ tools, tool_choice: { type: 'auto' } })).tool_choice).toBe('auto');
    expect(toChatRequest(req({ tools, tool_choice: { type: 'none' } })).tool_choice).toBe('none');
    expect(toChatRequest(req({ tools, tool_choice: { type: 'tool', name: 'get_weather' } })).tool_choice).toEqual({ type: 'function', function: { name: 'get_weather' } });
    expect(toChatRequest(req({ tools, tool_choice: { type: 'auto' } })).parallel_tool_calls).toBeUndefined();
  });

  it('refuses server tools, MCP servers and containers (only Anthropic runs them)', () => {
    const e = badRequest(() => toChatRequest(req({ tools: [{ type: 'web_search_20250305', name: 'web_search' }] })), 'tools[0]');
    expect(e.message).toContain('web_search_20250305');
    expect(toChatRequest(req({ tools: [{ type: 'custom', name: 'x', input_schema: { type: 'object' } }] })).tools).toHaveLength(1);
    badRequest(() => toChatRequest(req({ mcp_servers: [{ type: 'url', url: 'https://mcp.example', name: 'm' }] })), 'mcp_servers');
    badRequest(() => toChatRequest(req({ container: 'c1' })), 'container');
  });

  it('maps output_config.format to a json_schema response_format; ignores thinking and effort', () => {
    const chat = toChatRequest(req({ output_config: { effort: 'low', format: { type: 'json_schema', schema: { type: 'object' } } }, thinking: { type: 'enabled', budget_tokens: 2000 } }));
    expect(chat.response_format).toEqual({ type: 'json_schema', json_schema: { name: 'output', schema: { type: 'object' } } });
    expect(chat).not.toHaveProperty('thinking');
  });
});

describe('count_tokens (relay tokenizer)', () => {
  const count = (body: unknown) => {
    const parsed = parseCountTokensRequest(body);
    if (parsed.error) throw parsed.error;
    return countMessagesTokens(parsed.value);
  };

  it('grows with the system prompt, the messages, tool calls and results, and tool definitions', () => {
    const base = count({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
    expect(base).toBeGreaterThan(0);
    expect(count({ model: 'm', system: 'You are helpful and precise.', messages: [{ role: 'user', content: 'hi' }] })).toBeGreaterThan(base);
    expect(count({ model: 'm', tools: [{ name: 'get_weather', description: 'The weather', input_schema: { type: 'object' } }], messages: [{ role: 'user', content: 'hi' }] })).toBeGreaterThan(base);
    const withTools = count({
      model: 'm',
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'get_weather', input: { city: 'Paris' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: [{ type: 'text', text: 'sunny and warm' }] }] },
      ],
    });
    expect(withTools).toBeGreaterThan(base + 10);
  });
});
