import { describe, expect, it } from 'vitest';
import type { Channel } from '../../../src/relay/channel.js';
import { crc32, encodeMessage, EventStreamDecoder, headerString } from '../../../src/relay/providers/bedrock/eventstream.js';
import { bedrockProvider, createBedrockProvider } from '../../../src/relay/providers/bedrock/index.js';
import { toConverseRequest } from '../../../src/relay/providers/bedrock/request.js';
import { canonicalUri, signRequest } from '../../../src/relay/providers/bedrock/sigv4.js';
import type { ChatCompletionRequest } from '../../../src/relay/schema.js';
import { channelOf, chunksOf, ctxOf, expect400, metaOf, runEverySplit } from './stream-helpers.js';

const MODEL = 'anthropic.claude-3-haiku-20240307-v1:0';
const channel = channelOf('bedrock', { region: 'us-east-1' }, 'https://bedrock-runtime.us-east-1.amazonaws.com', {
  apiKey: 'AKIDEXAMPLE:wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
  models: [MODEL],
});
const ctx = ctxOf(channel, MODEL);
const meta = metaOf(true, { id: 'chatcmpl-test', model: MODEL });
const FIXED = new Date('2024-05-01T10:20:30Z');
const pinned = createBedrockProvider({ now: () => FIXED });

function req(partial: Partial<ChatCompletionRequest>): ChatCompletionRequest {
  return { model: 'claude', messages: [{ role: 'user', content: 'hi' }], ...partial };
}

function bodyOf(request: ChatCompletionRequest): Record<string, unknown> {
  return JSON.parse(pinned.buildRequest(request, ctx).body!) as Record<string, unknown>;
}

const event = (type: string, payload: Record<string, unknown>) =>
  encodeMessage({ ':event-type': type, ':content-type': 'application/json', ':message-type': 'event' }, JSON.stringify({ ...payload, p: 'abcd' }));

describe('SigV4 signer', () => {
  const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' };
  const when = new Date('2015-08-30T12:36:00Z');

  it('matches the AWS SigV4 test suite vector get-vanilla', () => {
    const signed = signRequest({ method: 'GET', url: 'https://example.amazonaws.com/', region: 'us-east-1', service: 'service', credentials, now: when, contentSha256Header: false });
    expect(signed.canonicalRequest).toBe(
      'GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    );
    expect(signed.stringToSign).toBe('AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\nbb579772317eb040ac9ed261061d46c1f17a8133879d6129b6e1c25292927e63');
    expect(signed.headers.authorization).toBe(
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31',
    );
    expect(signed.headers['x-amz-date']).toBe('20150830T123600Z');
  });

  it('matches the AWS SigV4 test suite vector post-vanilla', () => {
    const signed = signRequest({ method: 'POST', url: 'https://example.amazonaws.com/', region: 'us-east-1', service: 'service', credentials, now: when, contentSha256Header: false });
    expect(signed.signature).toBe('5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b');
  });

  it('encodes each path segment once more (AWS non-S3 rule): the model id colon is signed as %253A', () => {
    expect(canonicalUri('/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse')).toBe('/model/anthropic.claude-3-haiku-20240307-v1%253A0/converse');
    expect(canonicalUri('/')).toBe('/');
    const signed = signRequest({
      method: 'POST',
      url: 'https://bedrock-runtime.us-east-1.amazonaws.com/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse',
      body: '{}',
      region: 'us-east-1',
      service: 'bedrock',
      credentials: { ...credentials, sessionToken: 'TOKEN' },
      now: when,
    });
    expect(signed.canonicalRequest.split('\n')[1]).toBe('/model/anthropic.claude-3-haiku-20240307-v1%253A0/converse');
    expect(signed.headers['x-amz-security-token']).toBe('TOKEN');
    expect(signed.headers['x-amz-content-sha256']).toBe('44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a');
    expect(signed.headers.authorization).toContain('SignedHeaders=host;x-amz-content-sha256;x-amz-date;x-amz-security-token,');
    expect(signed.headers.host).toBeUndefined();
  });
});

describe('event-stream framing', () => {
  it('computes the IEEE CRC32', () => {
    expect(crc32(Buffer.from('123456789'))).toBe(0xcbf43926);
    expect(crc32(Buffer.alloc(0))).toBe(0);
  });

  // The AWS SDK's event-stream test vectors (aws-sdk-js-v3 eventstream-marshaller TestVectors.fixture.ts).
  const BODY = [123, 39, 102, 111, 111, 39, 58, 39, 98, 97, 114, 39, 125]; // {'foo':'bar'}
  const vectors = {
    empty_message: [0, 0, 0, 16, 0, 0, 0, 0, 5, 194, 72, 235, 125, 152, 200, 255],
    int32_header: [0, 0, 0, 43, 0, 0, 0, 14, 52, 139, 236, 123, 8, 101, 118, 101, 110, 116, 45, 105, 100, 4, 0, 0, 160, 12, ...BODY, 211, 137, 2, 133],
    payload_no_headers: [0, 0, 0, 29, 0, 0, 0, 0, 253, 82, 140, 90, ...BODY, 195, 101, 57, 54],
    payload_one_str_header: [
      0, 0, 0, 61, 0, 0, 0, 32, 7, 253, 131, 150, 12, 99, 111, 110, 116, 101, 110, 116, 45, 116, 121, 112, 101, 7, 0, 16, 97, 112, 112, 108, 105, 99, 97, 116, 105, 111, 110, 47, 106, 115, 111, 110, ...BODY, 141, 156, 8, 177,
    ],
    corrupted_headers: [
      0, 0, 0, 61, 0, 0, 0, 32, 7, 253, 131, 150, 12, 99, 111, 110, 116, 101, 110, 116, 43, 116, 121, 112, 101, 7, 0, 16, 97, 112, 112, 108, 105, 99, 97, 116, 105, 111, 110, 47, 106, 115, 111, 110, ...BODY, 141, 156, 8, 177,
    ],
    corrupted_header_len: [
      0, 0, 0, 61, 0, 0, 1, 32, 7, 253, 131, 150, 12, 99, 111, 110, 116, 101, 110, 116, 45, 116, 121, 112, 101, 7, 0, 16, 97, 112, 112, 108, 105, 99, 97, 116, 105, 111, 110, 47, 106, 115, 111, 110, ...BODY, 141, 156, 8, 177,
    ],
    corrupted_length: [1, 0, 0, 29, 0, 0, 0, 0, 253, 82, 140, 90, ...BODY, 195, 101, 57, 54],
    corrupted_payload: [0, 0, 0, 29, 0, 0, 0, 0, 253, 82, 140, 90, 123, 39, 102, 111, 111, 39, 58, 39, 98, 97, 114, 39, 141, 195, 101, 57, 54],
  };

  it('encodes and decodes the AWS event-stream test vectors', () => {
    const cases: Array<[keyof typeof vectors, Record<string, string | { type: 'integer'; value: number }>, number[]]> = [
      ['empty_message', {}, []],
      ['int32_header', { 'event-id': { type: 'integer', value: 0xa00c } }, BODY],
      ['payload_no_headers', {}, BODY],
      ['payload_one_str_header', { 'content-type': 'application/json' }, BODY],
    ];
    for (const [name, headers, body] of cases) {
      const encoded = Buffer.from(vectors[name]);
      expect(encodeMessage(headers, Buffer.from(body)), name).toEqual(encoded);
      const decoded = new EventStreamDecoder().push(encoded);
      expect(decoded, name).toHaveLength(1);
      expect([...decoded[0]!.payload], name).toEqual(body);
      expect(Object.keys(decoded[0]!.headers), name).toEqual(Object.keys(headers));
    }
    expect(new EventStreamDecoder().push(Buffer.from(vectors.int32_header))[0]!.headers['event-id']).toEqual({ type: 'integer', value: 40972 });
  });

  it.each(['corrupted_headers', 'corrupted_header_len', 'corrupted_length', 'corrupted_payload'] as const)('rejects the AWS vector %s', (name) => {
    const d = new EventStreamDecoder();
    expect(d.push(Buffer.from(vectors[name]))).toEqual([]);
    expect(d.error).not.toBeNull();
  });

  it('round-trips a message with every header type', () => {
    const frame = encodeMessage(
      {
        ':event-type': 'contentBlockDelta',
        t: { type: 'boolean', value: true },
        f: { type: 'boolean', value: false },
        b: { type: 'byte', value: -3 },
        s: { type: 'short', value: 1234 },
        i: { type: 'integer', value: -123456 },
        l: { type: 'long', value: 1234567890123n },
        bin: { type: 'binary', value: Buffer.from([1, 2, 3]) },
        ts: { type: 'timestamp', value: new Date(1_700_000_000_123) },
        u: { type: 'uuid', value: '01234567-89ab-cdef-0123-456789abcdef' },
      },
      '{"x":"é"}',
    );
    expect(frame.readUInt32BE(0)).toBe(frame.length);
    const [message, ...rest] = new EventStreamDecoder().push(frame);
    expect(rest).toEqual([]);
    expect(headerString(message!, ':event-type')).toBe('contentBlockDelta');
    expect(message!.headers).toMatchObject({
      t: { type: 'boolean', value: true },
      f: { type: 'boolean', value: false },
      b: { type: 'byte', value: -3 },
      s: { type: 'short', value: 1234 },
      i: { type: 'integer', value: -123456 },
      l: { type: 'long', value: 1234567890123n },
      ts: { type: 'timestamp', value: new Date(1_700_000_000_123) },
      u: { type: 'uuid', value: '01234567-89ab-cdef-0123-456789abcdef' },
    });
    expect(message!.payload.toString('utf8')).toBe('{"x":"é"}');
  });

  it('decodes frames split at any byte boundary', () => {
    const bytes = Buffer.concat([event('a', { n: 1 }), event('b', { n: 2 }), event('c', { n: 3 })]);
    for (let i = 0; i <= bytes.length; i++) {
      for (const j of [i, Math.min(bytes.length, i + 7)]) {
        const d = new EventStreamDecoder();
        const got = [...d.push(bytes.subarray(0, i)), ...d.push(bytes.subarray(i, j)), ...d.push(bytes.subarray(j))];
        expect(got.map((m) => headerString(m, ':event-type'))).toEqual(['a', 'b', 'c']);
        expect(d.pending).toBe(0);
      }
    }
  });

  it('rejects a bad message CRC and a bad prelude CRC, keeping the frames before', () => {
    const good = event('a', { n: 1 });
    const badMessage = Buffer.from(event('b', { n: 2 }));
    badMessage[badMessage.length - 6]! ^= 0xff; // flip a payload byte
    const d1 = new EventStreamDecoder();
    expect(d1.push(Buffer.concat([good, badMessage])).map((m) => headerString(m, ':event-type'))).toEqual(['a']);
    expect(d1.error?.message).toMatch(/message CRC/);
    expect(d1.push(good)).toEqual([]);

    const badPrelude = Buffer.from(event('c', { n: 3 }));
    badPrelude[9]! ^= 0x01;
    const d2 = new EventStreamDecoder();
    expect(d2.push(badPrelude)).toEqual([]);
    expect(d2.error?.message).toMatch(/prelude CRC/);
  });
});

describe('bedrock request', () => {
  it('posts to /model/{encoded id}/converse(-stream), signed for service bedrock', () => {
    const r = pinned.buildRequest(req({}), ctx);
    expect(r.method).toBe('POST');
    expect(r.url).toBe('https://bedrock-runtime.us-east-1.amazonaws.com/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse');
    expect(r.headers['x-amz-date']).toBe('20240501T102030Z');
    expect(r.headers['content-type']).toBe('application/json');
    expect(r.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/20240501\/us-east-1\/bedrock\/aws4_request, SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature=[0-9a-f]{64}$/);
    expect(r.headers['x-amz-security-token']).toBeUndefined();
    const s = pinned.buildRequest(req({ stream: true }), ctx);
    expect(s.url).toMatch(/\/converse-stream$/);
    expect(s.headers.accept).toBe('application/vnd.amazon.eventstream');
  });

  it('uses the channel region and base URL and signs the session token', () => {
    const c: Channel = { ...channel, baseUrl: 'http://127.0.0.1:9999/', apiKey: 'AKID:SECRET:SESSION', config: { region: 'eu-west-3' } };
    const r = pinned.buildRequest(req({}), { channel: c, model: 'meta.llama3-8b-instruct-v1:0' });
    expect(r.url).toBe('http://127.0.0.1:9999/model/meta.llama3-8b-instruct-v1%3A0/converse');
    expect(r.headers.authorization).toContain('Credential=AKID/20240501/eu-west-3/bedrock/aws4_request');
    expect(r.headers.authorization).toContain('x-amz-security-token');
    expect(r.headers['x-amz-security-token']).toBe('SESSION');
    const noRegion = pinned.buildRequest(req({}), { channel: { ...channel, config: {} }, model: MODEL });
    expect(noRegion.headers.authorization).toContain('/us-east-1/bedrock/');
  });

  it('refuses a key that is not ACCESS:SECRET', () => {
    expect(() => pinned.buildRequest(req({}), { channel: { ...channel, apiKey: 'just-a-key' }, model: MODEL })).toThrow(/ACCESS_KEY_ID:SECRET_ACCESS_KEY/);
  });

  it('signs with the real clock by default', () => {
    const before = Date.now();
    const r = bedrockProvider.buildRequest(req({}), ctx);
    const d = r.headers['x-amz-date']!;
    const at = Date.UTC(+d.slice(0, 4), +d.slice(4, 6) - 1, +d.slice(6, 8), +d.slice(9, 11), +d.slice(11, 13), +d.slice(13, 15));
    expect(Math.abs(at - before)).toBeLessThan(5000);
  });

  it('maps system/developer to system, merges same-role turns, and converts tools both ways', () => {
    const body = toConverseRequest(
      req({
        messages: [
          { role: 'system', content: 'be brief' },
          { role: 'developer', content: [{ type: 'text', text: 'and kind' }] },
          { role: 'user', content: 'hello' },
          { role: 'user', content: [{ type: 'text', text: 'look' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } }] },
          { role: 'assistant', content: 'calling', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
          { role: 'tool', tool_call_id: 'call_1', content: '{"temp":21}' },
          { role: 'tool', tool_call_id: 'call_1', content: 'plain words' },
          { role: 'assistant', content: 'It is 21.' },
        ],
      }),
    );
    expect(body.system).toEqual([{ text: 'be brief' }, { text: 'and kind' }]);
    expect(body.messages).toEqual([
      { role: 'user', content: [{ text: 'hello' }, { text: 'look' }, { image: { format: 'png', source: { bytes: 'iVBORw0KGgo=' } } }] },
      { role: 'assistant', content: [{ text: 'calling' }, { toolUse: { toolUseId: 'call_1', name: 'get_weather', input: { city: 'Paris' } } }] },
      {
        role: 'user',
        content: [{ toolResult: { toolUseId: 'call_1', content: [{ json: { temp: 21 } }] } }, { toolResult: { toolUseId: 'call_1', content: [{ text: 'plain words' }] } }],
      },
      { role: 'assistant', content: [{ text: 'It is 21.' }] },
    ]);
  });

  it('maps sampling parameters to inferenceConfig', () => {
    expect(bodyOf(req({ max_tokens: 100, temperature: 0.5, top_p: 0.9, stop: 'END' })).inferenceConfig).toEqual({ maxTokens: 100, temperature: 0.5, topP: 0.9, stopSequences: ['END'] });
    expect(bodyOf(req({ max_completion_tokens: 7, max_tokens: 100, stop: ['a', 'b'] })).inferenceConfig).toEqual({ maxTokens: 7, stopSequences: ['a', 'b'] });
    expect(bodyOf(req({})).inferenceConfig).toBeUndefined();
  });

  it('maps tools and every tool_choice', () => {
    const tools: ChatCompletionRequest['tools'] = [
      { type: 'function', function: { name: 'get_weather', description: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } },
      { type: 'function', function: { name: 'noop' } },
    ];
    const plain = toConverseRequest(req({ tools }));
    expect(plain.toolConfig).toEqual({
      tools: [
        { toolSpec: { name: 'get_weather', description: 'weather', inputSchema: { json: { type: 'object', properties: { city: { type: 'string' } } } } } },
        { toolSpec: { name: 'noop', inputSchema: { json: { type: 'object', properties: {} } } } },
      ],
    });
    expect(toConverseRequest(req({ tools, tool_choice: 'auto' })).toolConfig?.toolChoice).toEqual({ auto: {} });
    expect(toConverseRequest(req({ tools, tool_choice: 'required' })).toolConfig?.toolChoice).toEqual({ any: {} });
    expect(toConverseRequest(req({ tools, tool_choice: { type: 'function', function: { name: 'noop' } } })).toolConfig?.toolChoice).toEqual({ tool: { name: 'noop' } });
    expect(toConverseRequest(req({ tools, tool_choice: 'none' })).toolConfig).toBeUndefined();
    expect400(() => toConverseRequest(req({ tools, tool_choice: { type: 'function', function: { name: 'other' } } })), /^tool_choice$/);
    expect400(
      () =>
        toConverseRequest(
          req({
            tools,
            tool_choice: 'none',
            messages: [
              { role: 'user', content: 'x' },
              { role: 'assistant', tool_calls: [{ id: 'a', type: 'function', function: { name: 'noop', arguments: '{}' } }] },
              { role: 'tool', tool_call_id: 'a', content: 'ok' },
            ],
          }),
        ),
      /^tool_choice$/,
    );
  });

  it('answers 400 for values Bedrock cannot take', () => {
    expect400(() => pinned.buildRequest(req({ n: 2 }), ctx), /^n$/);
    expect400(() => pinned.buildRequest(req({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/cat.png' } }] }] }), ctx), /^messages\[0\]\.content\[0\]\.image_url$/);
    expect400(() => pinned.buildRequest(req({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/tiff;base64,AAAA' } }] }] }), ctx), /image_url/);
    // A media type named like an Object.prototype property is no image type either.
    for (const type of ['constructor', '__proto__', 'valueof']) {
      expect400(() => pinned.buildRequest(req({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: `data:${type};base64,AAAA` } }] }] }), ctx), /image_url/);
    }
    expect400(() => pinned.buildRequest(req({ response_format: { type: 'json_object' } }), ctx), /^response_format$/);
    expect400(() => pinned.buildRequest(req({ messages: [{ role: 'system', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,AA==' } }] }, { role: 'user', content: 'x' }] }), ctx), /messages\[0\]/);
    expect400(() => pinned.buildRequest(req({ messages: [{ role: 'assistant', tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: 'not json' } }] }] }), ctx), /arguments$/);
    expect400(() => pinned.buildRequest(req({ messages: [{ role: 'tool', content: 'x' }] }), ctx), /tool_call_id/);
    expect(() => pinned.buildRequest(req({ n: 1, seed: 3, presence_penalty: 0.5 }), ctx)).not.toThrow();
  });

  it('probes with a 1-token "ping" converse', () => {
    const probe = pinned.probeRequest(ctx);
    expect(probe.url).toMatch(/\/converse$/);
    expect(JSON.parse(probe.body!)).toEqual({ messages: [{ role: 'user', content: [{ text: 'ping' }] }], inferenceConfig: { maxTokens: 1 } });
    expect(probe.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 /);
  });
});

describe('bedrock response', () => {
  const response = (stopReason: string, content: unknown[] = [{ text: 'Hi' }], usage: unknown = { inputTokens: 11, outputTokens: 7, totalTokens: 18 }) =>
    JSON.stringify({ output: { message: { role: 'assistant', content } }, stopReason, usage, metrics: { latencyMs: 1 } });

  it.each([
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['max_tokens', 'length'],
    ['tool_use', 'tool_calls'],
    ['content_filtered', 'content_filter'],
    ['guardrail_intervened', 'content_filter'],
  ])('maps stopReason %s to %s', (stop, finish) => {
    expect(bedrockProvider.parseResponse(response(stop), ctx, meta).choices[0]!.finish_reason).toBe(finish);
  });

  it('joins text, maps usage and identity', () => {
    const c = bedrockProvider.parseResponse(response('end_turn', [{ text: 'Hel' }, { text: 'lo' }]), ctx, meta);
    expect(c).toEqual({
      id: 'chatcmpl-test',
      object: 'chat.completion',
      created: 1_700_000_000,
      model: MODEL,
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hello' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 },
    });
    expect(bedrockProvider.parseResponse(response('end_turn', [{ text: 'x' }], null), ctx, meta).usage).toEqual({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });
  });

  it('maps toolUse blocks to tool_calls', () => {
    const c = bedrockProvider.parseResponse(response('tool_use', [{ toolUse: { toolUseId: 'tu_1', name: 'get_weather', input: { city: 'Paris' } } }]), ctx, meta);
    expect(c.choices[0]!.message).toEqual({ role: 'assistant', content: null, tool_calls: [{ id: 'tu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] });
    expect(c.choices[0]!.finish_reason).toBe('tool_calls');
  });

  it('reads error bodies', () => {
    expect(bedrockProvider.parseError(400, '{"message":"Malformed input request"}')).toEqual({ message: 'Malformed input request' });
    expect(bedrockProvider.parseError(403, '{"Message":"User is not authorized"}')).toEqual({ message: 'User is not authorized' });
    expect(bedrockProvider.parseError(429, '{"__type":"com.amazon.coral.availability#ThrottlingException","message":"Too many requests"}')).toEqual({
      message: 'Too many requests',
      code: 'ThrottlingException',
    });
    expect(bedrockProvider.parseError(502, 'Bad Gateway')).toEqual({ message: 'Bad Gateway' });
    expect(bedrockProvider.parseError(500, '')).toEqual({ message: 'bedrock returned HTTP 500' });
  });
});

describe('bedrock stream', () => {
  const usage = { inputTokens: 11, outputTokens: 7, totalTokens: 18 };
  const textStream = Buffer.concat([
    event('messageStart', { role: 'assistant' }),
    event('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Héllo ' } }),
    event('contentBlockDelta', { contentBlockIndex: 0, delta: { text: '世界 🎉' } }),
    event('contentBlockStop', { contentBlockIndex: 0 }),
    event('messageStop', { stopReason: 'end_turn' }),
    event('metadata', { usage, metrics: { latencyMs: 5 } }),
  ]);

  it('converts text, identical for every split; role first, finish last, usage before [DONE]', () => {
    const { out: sse, outcome } = runEverySplit(() => bedrockProvider.createStreamConverter(ctx, meta), textStream);
    const { chunks, done } = chunksOf(sse);
    expect(done).toBe(true);
    expect(chunks.map((c) => c.choices[0]?.delta)).toEqual([{ role: 'assistant', content: '' }, { content: 'Héllo ' }, { content: '世界 🎉' }, {}, undefined]);
    expect(chunks[3]!.choices[0]!.finish_reason).toBe('stop');
    expect(chunks[4]).toEqual({ id: 'chatcmpl-test', object: 'chat.completion.chunk', created: 1_700_000_000, model: MODEL, choices: [], usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 } });
    expect(outcome).toEqual({ usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 }, finishReason: 'stop', completionText: 'Héllo 世界 🎉', error: null });
  });

  it('leaves the usage chunk out unless asked', () => {
    const c = bedrockProvider.createStreamConverter(ctx, { ...meta, includeUsage: false });
    const { chunks } = chunksOf(c.push(textStream) + c.end());
    expect(chunks.every((ch) => ch.choices.length === 1)).toBe(true);
    expect(c.outcome().usage).toEqual({ prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 });
  });

  it.each([
    ['max_tokens', 'length'],
    ['tool_use', 'tool_calls'],
    ['stop_sequence', 'stop'],
    ['guardrail_intervened', 'content_filter'],
  ])('maps stopReason %s to %s', (stopReason, finish) => {
    const c = bedrockProvider.createStreamConverter(ctx, meta);
    const { chunks } = chunksOf(c.push(Buffer.concat([event('messageStart', { role: 'assistant' }), event('messageStop', { stopReason })])) + c.end());
    expect(chunks[chunks.length - 1]!.choices[0]!.finish_reason).toBe(finish);
    expect(c.outcome().finishReason).toBe(finish);
  });

  it('streams tool calls (start + input pieces) for every split', () => {
    const bytes = Buffer.concat([
      event('messageStart', { role: 'assistant' }),
      event('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Let me check.' } }),
      event('contentBlockStop', { contentBlockIndex: 0 }),
      event('contentBlockStart', { contentBlockIndex: 1, start: { toolUse: { toolUseId: 'tu_1', name: 'get_weather' } } }),
      event('contentBlockDelta', { contentBlockIndex: 1, delta: { toolUse: { input: '{"city":' } } }),
      event('contentBlockDelta', { contentBlockIndex: 1, delta: { toolUse: { input: '"Paris"}' } } }),
      event('contentBlockStop', { contentBlockIndex: 1 }),
      event('contentBlockStart', { contentBlockIndex: 2, start: { toolUse: { toolUseId: 'tu_2', name: 'noop' } } }),
      event('contentBlockDelta', { contentBlockIndex: 2, delta: { toolUse: { input: '{}' } } }),
      event('messageStop', { stopReason: 'tool_use' }),
      event('metadata', { usage }),
    ]);
    const { out: sse, outcome } = runEverySplit(() => bedrockProvider.createStreamConverter(ctx, meta), bytes);
    const deltas = chunksOf(sse).chunks.map((c) => c.choices[0]?.delta);
    expect(deltas).toEqual([
      { role: 'assistant', content: '' },
      { content: 'Let me check.' },
      { tool_calls: [{ index: 0, id: 'tu_1', type: 'function', function: { name: 'get_weather', arguments: '' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] },
      { tool_calls: [{ index: 1, id: 'tu_2', type: 'function', function: { name: 'noop', arguments: '' } }] },
      { tool_calls: [{ index: 1, function: { arguments: '{}' } }] },
      {},
      undefined,
    ]);
    expect(outcome.finishReason).toBe('tool_calls');
  });

  it('turns an exception frame into outcome.error, identical for every split', () => {
    const bytes = Buffer.concat([
      event('messageStart', { role: 'assistant' }),
      event('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Hel' } }),
      encodeMessage({ ':exception-type': 'throttlingException', ':content-type': 'application/json', ':message-type': 'exception' }, '{"message":"Too many tokens"}'),
      event('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'ignored' } }),
    ]);
    const { out: sse, outcome } = runEverySplit(() => bedrockProvider.createStreamConverter(ctx, meta), bytes);
    expect(outcome.error).toEqual({ message: 'Too many tokens', code: 'throttlingException' });
    expect(outcome.completionText).toBe('Hel');
    expect(outcome.finishReason).toBeNull();
    const { chunks, errors, done } = chunksOf(sse);
    expect(done).toBe(true);
    expect(chunks).toHaveLength(2);
    expect(errors).toEqual([{ error: { message: 'Too many tokens', type: 'upstream_error', code: 'throttlingException', param: null } }]);
  });

  it('turns an error frame (:error-code) into outcome.error', () => {
    const c = bedrockProvider.createStreamConverter(ctx, meta);
    expect(chunksOf(c.push(encodeMessage({ ':message-type': 'error', ':error-code': 'InternalFailure', ':error-message': 'boom' }, ''))).errors).toHaveLength(1);
    expect(c.outcome().error).toEqual({ message: 'boom', code: 'InternalFailure' });
  });

  it('fails on a bad CRC, for every split', () => {
    const bad = Buffer.from(event('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'lo' } }));
    bad[bad.length - 1]! ^= 0xff;
    const bytes = Buffer.concat([event('messageStart', { role: 'assistant' }), event('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Hel' } }), bad, event('messageStop', { stopReason: 'end_turn' })]);
    const { out: sse, outcome } = runEverySplit(() => bedrockProvider.createStreamConverter(ctx, meta), bytes);
    expect(chunksOf(sse).errors).toHaveLength(1);
    expect(outcome.error?.code).toBe('invalid_event_stream');
    expect(outcome.error?.message).toMatch(/CRC/);
    expect(outcome.completionText).toBe('Hel');
  });

  it('flags a stream cut in the middle of a frame', () => {
    const c = bedrockProvider.createStreamConverter(ctx, meta);
    const frame = event('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'x' } });
    c.push(frame.subarray(0, frame.length - 3));
    const { chunks, errors, done } = chunksOf(c.end());
    expect(done).toBe(true);
    expect(chunks).toEqual([]);
    expect(errors[0]!.error.code).toBe('truncated_event_stream');
    expect(c.outcome().error?.code).toBe('truncated_event_stream');
  });
});
