/**
 * What every stream converter does with an upstream that misbehaves: an event over the size limit
 * (refused while it arrives, for each framing: SSE, NDJSON, AWS event-stream), a chunk of the
 * wrong shape, a body that is no stream at all; and the event-stream decoder joins a frame's
 * bytes once, however finely they are split.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { UpstreamFaultError } from '../../../src/errors.js';
import { encodeMessage, EventStreamDecoder } from '../../../src/relay/providers/bedrock/eventstream.js';
import { PROVIDERS } from '../../../src/relay/providers/index.js';
import { createCompatStreamConverter } from '../../../src/relay/providers/openai-compatible/stream.js';
import type { StreamConverter } from '../../../src/relay/providers/provider.js';
import { channelOf, chunksOf, ctxOf, metaOf } from './stream-helpers.js';

function fault(fn: () => unknown, code: string): UpstreamFaultError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(UpstreamFaultError);
    expect((error as UpstreamFaultError).code).toBe(code);
    expect((error as UpstreamFaultError).status).toBe(502);
    return error as UpstreamFaultError;
  }
  return expect.fail(`expected ${code}`);
}

const LIMIT = 4_096;
const big = 'x'.repeat(LIMIT);

/** For each stream framing, the first bytes of one event that never ends within the limit. */
const OVERSIZED: Array<[string, () => StreamConverter, Buffer]> = [
  ['openai (SSE)', () => PROVIDERS.openai.createStreamConverter(ctxOf(channelOf('openai'), 'm'), metaOf(), LIMIT), Buffer.from(`data: {"choices":[{"delta":{"content":"${big}`)],
  ['anthropic (SSE)', () => PROVIDERS.anthropic.createStreamConverter(ctxOf(channelOf('anthropic'), 'm'), metaOf(), LIMIT), Buffer.from(`event: content_block_delta\ndata: {"delta":{"text":"${big}`)],
  ['gemini (SSE)', () => PROVIDERS.gemini.createStreamConverter(ctxOf(channelOf('gemini'), 'm'), metaOf(), LIMIT), Buffer.from(`data: {"candidates":[{"content":{"parts":[{"text":"${big}`)],
  ['cohere (SSE)', () => PROVIDERS.cohere.createStreamConverter(ctxOf(channelOf('cohere'), 'm'), metaOf(), LIMIT), Buffer.from(`data: {"type":"content-delta","delta":{"message":{"content":{"text":"${big}`)],
  ['ollama (NDJSON)', () => PROVIDERS.ollama.createStreamConverter(ctxOf(channelOf('ollama'), 'm'), metaOf(), LIMIT), Buffer.from(`{"message":{"content":"${big}`)],
  [
    'bedrock (event-stream)',
    () => PROVIDERS.bedrock.createStreamConverter(ctxOf(channelOf('bedrock', { region: 'us-east-1' }), 'm'), metaOf(), LIMIT),
    // Only the frame's prelude and a little: its length alone is over the limit.
    encodeMessage({ ':message-type': 'event', ':event-type': 'contentBlockDelta' }, JSON.stringify({ delta: { text: big } })).subarray(0, 64),
  ],
];

describe('stream converters and misbehaving upstreams', () => {
  afterEach(() => vi.restoreAllMocks());

  it.each(OVERSIZED)('%s: an event over the limit is refused while it arrives', (_name, create, bytes) => {
    fault(() => create().push(bytes), 'upstream_response_too_large');
  });

  it('openai-compatible: a chunk of the wrong shape is a bad_upstream_response, not forwarded', () => {
    for (const chunk of ['{"choices":[{"delta":{"content":5}}]}', '{"choices":{"0":{}}}', '{"choices":[7]}', '{"choices":[{"delta":"hi"}]}', '{"choices":[{"delta":{},"finish_reason":1}]}', '{"id":"x"}', '{"choices":[],"usage":3}']) {
      fault(() => createCompatStreamConverter(metaOf()).push(Buffer.from(`data: ${chunk}\n\n`)), 'bad_upstream_response');
    }
  });

  it('openai-compatible: chunks before a malformed one still go out, the fault comes with the next call', () => {
    const converter = createCompatStreamConverter(metaOf());
    const good = '{"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}';
    const out = converter.push(Buffer.from(`data: ${good}\n\ndata: {"choices":[{"delta":{"content":5}}]}\n\n`));
    expect(out).toBe(`data: ${good}\n\n`);
    fault(() => converter.end(), 'bad_upstream_response');
  });

  it('openai-compatible: a usage-only chunk and an in-stream error are fine', () => {
    const converter = createCompatStreamConverter(metaOf(true));
    converter.push(Buffer.from('data: {"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}\n\n'));
    expect(converter.outcome().usage).toEqual({ prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 });
    const failing = createCompatStreamConverter(metaOf());
    expect(chunksOf(failing.push(Buffer.from('data: {"error":{"message":"overloaded","code":"server_busy"}}\n\n')) + failing.end()).errors).toHaveLength(1);
    expect(failing.outcome().error).toEqual({ message: 'overloaded', code: 'server_busy' });
  });

  const NOT_STREAMS: Array<[string, string]> = [
    ['a JSON completion', '{"id":"c","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"hi"}}]}'],
    ['only [DONE]', 'data: [DONE]\n\n'],
    ['an empty body', ''],
  ];
  const CONVERTERS: Array<[string, () => StreamConverter]> = (['openai', 'anthropic', 'gemini', 'cohere', 'ollama'] as const).map((type) => [type, () => PROVIDERS[type].createStreamConverter(ctxOf(channelOf(type), 'm'), metaOf())]);

  for (const [converterName, create] of CONVERTERS) {
    it.each(NOT_STREAMS)(`${converterName}: %s is no stream (bad_upstream_response)`, (_what, body) => {
      const converter = create();
      fault(() => converter.push(Buffer.from(body)) + converter.end(), 'bad_upstream_response');
    });
  }

  it('bedrock: a body that is no event stream at all is a bad_upstream_response', () => {
    const converter = PROVIDERS.bedrock.createStreamConverter(ctxOf(channelOf('bedrock', { region: 'us-east-1' }), 'm'), metaOf());
    fault(() => converter.end(), 'bad_upstream_response');
  });

  it('event-stream decoder: a frame split into single bytes is joined once (linear, not quadratic)', () => {
    const frame = encodeMessage({ ':message-type': 'event', ':event-type': 'contentBlockDelta' }, JSON.stringify({ delta: { text: 'y'.repeat(20_000) } }));
    const decoder = new EventStreamDecoder();
    const concat = Buffer.concat;
    let bytesJoined = 0;
    vi.spyOn(Buffer, 'concat').mockImplementation((list: readonly Uint8Array[], totalLength?: number) => {
      const joined = concat(list, totalLength);
      bytesJoined += joined.length;
      return joined;
    });
    const messages = [];
    for (let i = 0; i < frame.length; i++) messages.push(...decoder.push(frame.subarray(i, i + 1)));
    vi.restoreAllMocks();
    expect(messages).toHaveLength(1);
    expect(JSON.parse(messages[0]!.payload.toString('utf8'))).toEqual({ delta: { text: 'y'.repeat(20_000) } });
    // Joining all that is buffered on every push would copy ~frame²/2 bytes (200 million).
    expect(bytesJoined).toBeLessThan(2 * frame.length);
  });
});
