/** The 'openai-responses' native codec: OpenAI's and Azure's request, answers and streams read on the way through. */
import { describe, expect, it } from 'vitest';
import { UpstreamFaultError } from '../../../src/errors.js';
import { PROVIDERS } from '../../../src/relay/providers/index.js';
import { azureResponsesCodec, createResponsesStreamReader, openAiResponsesCodec } from '../../../src/relay/providers/openai-compatible/native.js';
import type { NativeRequest } from '../../../src/relay/providers/provider.js';
import { channelOf, ctxOf, runEverySplit } from '../providers/stream-helpers.js';

const native = (body: Record<string, unknown>): NativeRequest => ({ format: 'openai-responses', body: { model: 'client-model', ...body }, headers: {} });

describe('the Responses codec', () => {
  it('is offered by the openai and azure kinds only', () => {
    expect(PROVIDERS.openai.native?.['openai-responses']).toBe(openAiResponsesCodec);
    expect(PROVIDERS.azure.native?.['openai-responses']).toBe(azureResponsesCodec);
    for (const kind of ['mistral', 'openrouter', 'anthropic', 'ollama', 'custom'] as const) expect(PROVIDERS[kind].native?.['openai-responses']).toBeUndefined();
  });

  it('posts to {base}/responses with the upstream model, store false and no previous_response_id', () => {
    const request = openAiResponsesCodec.buildRequest(native({ input: 'hi', store: true, previous_response_id: 'resp_1', stream: true }), ctxOf(channelOf('openai', { organization: 'org-1' }, 'https://api.openai.com/v1'), 'gpt-x'));
    expect(request).toMatchObject({ url: 'https://api.openai.com/v1/responses', method: 'POST', headers: { authorization: 'Bearer test-key', 'openai-organization': 'org-1', accept: 'text/event-stream' } });
    expect(JSON.parse(request.body!)).toEqual({ model: 'gpt-x', input: 'hi', stream: true, store: false });
  });

  it("posts to Azure's v1 responses route with the deployment as the model", () => {
    const request = azureResponsesCodec.buildRequest(native({ input: 'hi' }), ctxOf(channelOf('azure', { deployment: 'dep' }, 'https://res.openai.azure.com'), 'gpt-x'));
    expect(request).toMatchObject({ url: 'https://res.openai.azure.com/openai/v1/responses', headers: { 'api-key': 'test-key' } });
    expect(JSON.parse(request.body!)).toMatchObject({ model: 'dep', store: false });
  });

  it('passes a whole answer through as it is and reads its usage and text', () => {
    const body = JSON.stringify({ id: 'resp_1', object: 'response', status: 'completed', output: [{ type: 'message', content: [{ type: 'output_text', text: 'Hi', annotations: [] }] }], usage: { input_tokens: 3, output_tokens: 2, total_tokens: 5 } });
    const ctx = ctxOf(channelOf('openai'), 'm');
    expect(openAiResponsesCodec.readAnswer(body, ctx)).toEqual({ body, usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 }, completionText: 'Hi' });
    expect(() => openAiResponsesCodec.readAnswer('{"choices":[]}', ctx)).toThrow(UpstreamFaultError);
  });

  const event = (type: string, fields: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, ...fields })}\n\n`;

  it('passes the events through unchanged, whatever the split, reading text and usage', () => {
    const stream =
      event('response.created', { sequence_number: 0, response: { id: 'r', status: 'in_progress', output: [] } }) +
      ': keep-alive\n\n' +
      event('response.output_text.delta', { sequence_number: 1, delta: 'Hé' }) +
      event('response.output_text.delta', { sequence_number: 2, delta: 'llo' }) +
      event('response.completed', { sequence_number: 3, response: { id: 'r', status: 'completed', usage: { input_tokens: 4, output_tokens: 2, total_tokens: 6 } } });
    const run = runEverySplit(() => createResponsesStreamReader(), Buffer.from(stream));
    expect(run.out).toBe(stream.replace(': keep-alive\n\n', ''));
    expect(run.outcome).toEqual({ usage: { prompt_tokens: 4, completion_tokens: 2, total_tokens: 6 }, finishReason: null, completionText: 'Héllo', error: null });
  });

  it('reads in-band failures, and refuses a body with no event at all', () => {
    const failed = runEverySplit(() => createResponsesStreamReader(), Buffer.from(event('response.failed', { response: { status: 'failed', error: { code: 'server_error', message: 'boom' } } })));
    expect(failed.outcome.error).toEqual({ code: 'server_error', message: 'boom' });
    const errored = runEverySplit(() => createResponsesStreamReader(), Buffer.from(event('error', { code: 'rate_limit_exceeded', message: 'slow down' })));
    expect(errored.outcome.error).toEqual({ code: 'rate_limit_exceeded', message: 'slow down' });
    const reader = createResponsesStreamReader();
    reader.push(Buffer.from('{"not":"a stream"}'));
    expect(() => reader.end()).toThrow(UpstreamFaultError);
    expect(openAiResponsesCodec.errorEvent('cut', 'upstream_stream_interrupted')).toBe('event: error\ndata: {"type":"error","code":"upstream_stream_interrupted","message":"cut","param":null}\n\n');
  });
});
