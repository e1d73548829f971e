/**
 * Azure OpenAI streams carry content filter annotations that are not chunks (`object: ""`): the
 * relay drops those that carry nothing else and sends the others as chunks; everything else is
 * forwarded as it came. Non-streamed answers keep their filter results.
 */
import { describe, expect, it } from 'vitest';
import { azureProvider } from '../../../src/relay/providers/azure/index.js';
import { PROVIDERS } from '../../../src/relay/providers/index.js';
import { channelOf, chunksOf, ctxOf, metaOf, runEverySplit } from './stream-helpers.js';

const ctx = ctxOf(channelOf('azure', { deployment: 'dep' }), 'gpt-4o');
const SAFE = { filtered: false, severity: 'safe' };
const FILTERS = { hate: SAFE, self_harm: SAFE, sexual: SAFE, violence: SAFE };
const PROMPT_FILTERS = '{"choices":[],"created":0,"id":"","model":"","object":"","prompt_filter_results":[{"prompt_index":0,"content_filter_results":{"hate":{"filtered":false,"severity":"safe"}}}]}';
const chunk = (choice: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ id: 'chatcmpl-az', object: 'chat.completion.chunk', created: 1_720_000_000, model: 'gpt-4o-2024-08-06', choices: [{ index: 0, finish_reason: null, ...choice }], ...extra });
const annotation = (finishReason: string | null) =>
  JSON.stringify({ choices: [{ index: 0, finish_reason: finishReason, content_filter_results: FILTERS, content_filter_offsets: { check_offset: 0, start_offset: 0, end_offset: 9 } }], created: 0, id: '', model: '', object: '' });
const sse = (events: string[]) => Buffer.from(events.map((e) => `data: ${e}\n\n`).join('') + 'data: [DONE]\n\n');
const USAGE = '{"choices":[],"created":1720000000,"id":"chatcmpl-az","model":"gpt-4o-2024-08-06","object":"chat.completion.chunk","usage":{"prompt_tokens":4,"completion_tokens":3,"total_tokens":7}}';

describe('azure stream', () => {
  const text = [chunk({ delta: { role: 'assistant', content: '' } }), chunk({ delta: { content: 'Hello ' }, content_filter_results: FILTERS }), chunk({ delta: { content: 'there' }, content_filter_results: FILTERS })];

  it('drops the prompt filter results and filter-only annotations, forwarding the chunks as they came', () => {
    const events = [PROMPT_FILTERS, ...text, annotation(null), chunk({ delta: {}, finish_reason: 'stop' }), USAGE];
    const run = runEverySplit(() => azureProvider.createStreamConverter(ctx, metaOf(true), 1 << 16), sse(events));
    expect(run.out).toBe([...text, chunk({ delta: {}, finish_reason: 'stop' }), USAGE].map((e) => `data: ${e}\n\n`).join('') + 'data: [DONE]\n\n');
    expect(run.outcome).toEqual({ usage: { prompt_tokens: 4, completion_tokens: 3, total_tokens: 7 }, finishReason: 'stop', completionText: 'Hello there', error: null });
  });

  it('sends an annotation that carries the finish reason as a chunk of the stream', () => {
    const run = runEverySplit(() => azureProvider.createStreamConverter(ctx, metaOf(false), 1 << 16), sse([PROMPT_FILTERS, ...text, annotation('content_filter'), USAGE]));
    const { chunks, errors, done } = chunksOf(run.out);
    expect(errors).toEqual([]);
    expect(done).toBe(true);
    expect(chunks.map((c) => c.object)).toEqual(Array(4).fill('chat.completion.chunk'));
    expect(chunks.at(-1)).toEqual({
      id: 'chatcmpl-az',
      object: 'chat.completion.chunk',
      created: 1_720_000_000,
      model: 'gpt-4o-2024-08-06',
      choices: [{ index: 0, finish_reason: 'content_filter', delta: {}, content_filter_results: FILTERS, content_filter_offsets: { check_offset: 0, start_offset: 0, end_offset: 9 } }],
    });
    expect(run.outcome.finishReason).toBe('content_filter');
  });

  it('takes the response meta as the identity of an annotation before any chunk', () => {
    const meta = metaOf(false, { id: 'chatcmpl-meta', created: 5, model: 'client-model' });
    const { chunks } = chunksOf(runEverySplit(() => azureProvider.createStreamConverter(ctx, meta), sse([PROMPT_FILTERS, annotation('stop')])).out);
    expect(chunks).toHaveLength(1);
    expect(chunks[0]).toMatchObject({ id: 'chatcmpl-meta', object: 'chat.completion.chunk', created: 5, model: 'client-model', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] });
  });

  it('leaves the OpenAI kind as it was: every event goes out as it came', () => {
    const events = [PROMPT_FILTERS, ...text];
    const run = runEverySplit(() => PROVIDERS.openai.createStreamConverter(ctxOf(channelOf('openai'), 'm'), metaOf()), sse(events));
    expect(run.out).toBe(events.map((e) => `data: ${e}\n\n`).join('') + 'data: [DONE]\n\n');
  });
});

describe('azure response', () => {
  it('keeps prompt and content filter results of a non-streamed answer', () => {
    const body = {
      id: 'chatcmpl-az',
      object: 'chat.completion',
      created: 1_720_000_000,
      model: 'gpt-4o-2024-08-06',
      prompt_filter_results: [{ prompt_index: 0, content_filter_results: FILTERS }],
      choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'Hi' }, content_filter_results: FILTERS }],
      usage: { prompt_tokens: 4, completion_tokens: 1, total_tokens: 5 },
    };
    const completion = azureProvider.parseResponse(JSON.stringify(body), ctx, metaOf());
    expect(JSON.parse(JSON.stringify(completion))).toEqual(body);
  });
});
