/**
 * Fixtures and helpers shared by the provider unit tests: channels, contexts and response meta,
 * the 400 checks for refused request fields, and the stream harness that feeds a converter
 * upstream bytes split at every byte boundary and checks that the client sees the same output
 * each time.
 */
import { expect } from 'vitest';
import { BadRequestError } from '../../../src/errors.js';
import type { Channel } from '../../../src/relay/channel.js';
import type { ProviderContext, ResponseMeta, StreamConverter, StreamOutcome } from '../../../src/relay/providers/provider.js';
import type { ChatCompletionChunk } from '../../../src/relay/schema.js';

/** A channel of `type`; `extra` overrides the rest (key, models...) where a test needs its own. */
export function channelOf(type: Channel['type'], config: Record<string, unknown> = {}, baseUrl = 'https://upstream.example', extra: Partial<Channel> = {}): Channel {
  return { id: 'c1', tenantId: 't', name: 'x', type, baseUrl, apiKey: 'test-key', models: ['m'], modelMapping: {}, priority: 0, weight: 1, enabled: true, config, ...extra };
}

export function metaOf(includeUsage = false, extra: Partial<ResponseMeta> = {}): ResponseMeta {
  return { id: 'chatcmpl-test1', created: 1_700_000_000, model: 'client-model', includeUsage, ...extra };
}

export function ctxOf(channel: Channel, model: string): ProviderContext {
  return { channel, model };
}

/** Runs `fn` expecting a 400 naming `param` (exactly, or matching a RegExp); returns the error. */
export function badRequest(fn: () => unknown, param: string | RegExp): BadRequestError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(BadRequestError);
    const e = error as BadRequestError;
    expect(e.status).toBe(400);
    if (typeof param === 'string') expect(e.param).toBe(param);
    else expect(e.param).toMatch(param);
    return e;
  }
  return expect.fail(`expected a 400 for ${String(param)}`);
}

/** As badRequest, for a value the provider cannot take (code `unsupported_parameter`). */
export function expect400(fn: () => unknown, param: string | RegExp): void {
  expect(badRequest(fn, param).code).toBe('unsupported_parameter');
}

export interface StreamRun {
  out: string;
  outcome: StreamOutcome;
}

export function runStream(create: () => StreamConverter, pieces: Buffer[]): StreamRun {
  const converter = create();
  let out = '';
  for (const piece of pieces) out += converter.push(piece);
  out += converter.end();
  return { out, outcome: converter.outcome() };
}

/**
 * Runs the bytes whole, split in two at every byte boundary (an empty first or last push
 * included), and one byte at a time; asserts all outputs and outcomes are identical and returns
 * the whole-body run.
 */
export function runEverySplit(create: () => StreamConverter, bytes: Buffer): StreamRun {
  const whole = runStream(create, [bytes]);
  for (let i = 0; i <= bytes.length; i++) {
    const split = runStream(create, [bytes.subarray(0, i), bytes.subarray(i)]);
    if (split.out !== whole.out) expect.fail(`output differs when split at byte ${i}:\n${split.out}\n---\n${whole.out}`);
    expect(split.outcome).toEqual(whole.outcome);
  }
  const bytewise = runStream(create, [...bytes].map((b) => Buffer.from([b])));
  expect(bytewise.out).toBe(whole.out);
  expect(bytewise.outcome).toEqual(whole.outcome);
  return whole;
}

/** The client-side SSE output as payloads: parsed JSON, or the string '[DONE]'. */
export function payloadsOf(out: string): unknown[] {
  expect(out.endsWith('data: [DONE]\n\n')).toBe(true);
  return out
    .split('\n\n')
    .filter((event) => event !== '')
    .map((event) => {
      expect(event.startsWith('data: ')).toBe(true);
      const data = event.slice('data: '.length);
      return data === '[DONE]' ? data : (JSON.parse(data) as unknown);
    });
}

/** An in-stream error event as the client sees it. */
export interface StreamError {
  error: { message: string; type: string; code: string; param: null };
}

/** The chunks of a converted stream, apart from in-band error events. */
export function chunksOf(sse: string): { chunks: ChatCompletionChunk[]; errors: StreamError[]; done: boolean } {
  const events = sse.split('\n\n').filter((e) => e !== '');
  const done = events[events.length - 1] === 'data: [DONE]';
  const parsed = events.filter((e) => e !== 'data: [DONE]').map((e) => JSON.parse(e.replace(/^data: /, '')) as ChatCompletionChunk | StreamError);
  const isError = (e: ChatCompletionChunk | StreamError): e is StreamError => 'error' in e;
  return { chunks: parsed.filter((e): e is ChatCompletionChunk => !isError(e)), errors: parsed.filter(isError), done };
}
