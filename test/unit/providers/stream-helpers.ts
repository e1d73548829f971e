/**
 * Helpers for the provider stream tests: feed a converter upstream bytes split at every byte
 * boundary and check that the client sees the same output each time.
 */
import { expect } from 'vitest';
import type { Channel } from '../../../src/relay/channel.js';
import type { ProviderContext, ResponseMeta, StreamConverter, StreamOutcome } from '../../../src/relay/providers/provider.js';

export function channelOf(type: Channel['type'], config: Record<string, unknown> = {}, baseUrl = 'https://upstream.example'): Channel {
  return { id: 'c1', tenantId: 't', name: 'x', type, baseUrl, apiKey: 'test-key', models: ['m'], modelMapping: {}, priority: 0, weight: 1, enabled: true, config };
}

export function metaOf(includeUsage = false): ResponseMeta {
  return { id: 'chatcmpl-test1', created: 1_700_000_000, model: 'client-model', includeUsage };
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
 * Runs the bytes whole, split in two at every byte boundary, and one byte at a time; asserts all
 * outputs and outcomes are identical and returns the whole-body run.
 */
export function runEverySplit(create: () => StreamConverter, bytes: Buffer): StreamRun {
  const whole = runStream(create, [bytes]);
  for (let i = 1; i < bytes.length; i++) {
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

export function ctxOf(channel: Channel, model: string): ProviderContext {
  return { channel, model };
}
