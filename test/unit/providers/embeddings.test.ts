import { describe, expect, it } from 'vitest';
import { UpstreamFaultError } from '../../../src/errors.js';
import type { EmbeddingsRequest } from '../../../src/relay/embeddings-schema.js';
import { parseEmbeddingsRequest } from '../../../src/relay/ingress/embeddings.js';
import { azureEmbeddings } from '../../../src/relay/providers/azure/embeddings.js';
import { createBedrockEmbeddings } from '../../../src/relay/providers/bedrock/embeddings.js';
import { cohereEmbeddings } from '../../../src/relay/providers/cohere/embeddings.js';
import { base64Float32, float32Base64 } from '../../../src/relay/providers/embeddings.js';
import { geminiEmbeddings } from '../../../src/relay/providers/gemini/embeddings.js';
import { PROVIDERS } from '../../../src/relay/providers/index.js';
import { ollamaEmbeddings } from '../../../src/relay/providers/ollama/embeddings.js';
import { compatEmbeddings } from '../../../src/relay/providers/openai-compatible/embeddings.js';
import type { UpstreamRequest } from '../../../src/relay/providers/provider.js';
import { isEmbeddingModel } from '../../../src/relay/router.js';
import { verifySigV4 } from '../../support/fake-upstreams/bedrock.js';
import { channelOf, ctxOf, expect400 } from './stream-helpers.js';

const req = (partial: Partial<EmbeddingsRequest> = {}): EmbeddingsRequest => ({ model: 'client-model', input: 'hello', ...partial });
const bodyOf = (r: UpstreamRequest) => JSON.parse(r.body!) as Record<string, unknown>;
const FLOATS = [0.5, -0.25, 0.125];

describe('float32 base64', () => {
  it('encodes little-endian float32 as OpenAI does, and decodes back', () => {
    expect(float32Base64([1])).toBe(Buffer.from([0, 0, 0x80, 0x3f]).toString('base64'));
    expect(base64Float32(float32Base64(FLOATS))).toEqual(FLOATS);
    // Values float32 cannot hold exactly come back rounded to float32.
    expect(base64Float32(float32Base64([0.1]))[0]).toBe(Math.fround(0.1));
  });
});

describe('embeddings request validation', () => {
  it('takes a string or a list of strings, with the optional fields', () => {
    expect(parseEmbeddingsRequest({ model: 'm', input: ['a', 'b'], dimensions: 3, encoding_format: 'base64', user: 'u' }).value).toEqual({ model: 'm', input: ['a', 'b'], dimensions: 3, encoding_format: 'base64', user: 'u' });
    expect(parseEmbeddingsRequest({ model: 'm', input: 'a', extra: 1 }).value).toEqual({ model: 'm', input: 'a' });
  });

  it('refuses token arrays by name, and invalid fields with the field named', () => {
    for (const input of [[1, 2, 3], [[1, 2], [3]], ['a', [1]]]) {
      const { error } = parseEmbeddingsRequest({ model: 'm', input });
      expect(error).toMatchObject({ status: 400, code: 'unsupported_parameter', param: 'input' });
    }
    expect(parseEmbeddingsRequest({ model: 'm' }).error).toMatchObject({ code: 'invalid_request', param: 'input' });
    expect(parseEmbeddingsRequest({ model: 'm', input: '' }).error).toMatchObject({ code: 'invalid_request', param: 'input' });
    expect(parseEmbeddingsRequest({ model: 'm', input: [] }).error).toMatchObject({ code: 'invalid_request', param: 'input' });
    expect(parseEmbeddingsRequest({ model: 'm', input: 'a', encoding_format: 'int8' }).error).toMatchObject({ param: 'encoding_format' });
    expect(parseEmbeddingsRequest({ model: 'm', input: 'a', dimensions: 0 }).error).toMatchObject({ param: 'dimensions' });
    expect(parseEmbeddingsRequest({ input: 'a' }).error).toMatchObject({ param: 'model' });
  });
});

describe('openai-compatible embeddings', () => {
  const channel = channelOf('openai', { organization: 'org-1' }, 'https://api.openai.com/v1/');
  const ctx = ctxOf(channel, 'text-embedding-3-small');

  it('posts the request as it is to {base}/embeddings with the upstream model', () => {
    const r = compatEmbeddings.buildRequest(req({ input: ['a', 'b'], dimensions: 3, encoding_format: 'base64', user: 'u' }), ctx);
    expect(r).toMatchObject({ url: 'https://api.openai.com/v1/embeddings', method: 'POST' });
    expect(r.headers).toMatchObject({ authorization: 'Bearer test-key', 'openai-organization': 'org-1' });
    expect(bodyOf(r)).toEqual({ model: 'text-embedding-3-small', input: ['a', 'b'], dimensions: 3, encoding_format: 'base64', user: 'u' });
    expect(bodyOf(compatEmbeddings.buildRequest(req(), ctx))).toEqual({ model: 'text-embedding-3-small', input: 'hello' });
  });

  it('reads the answer in input order, base64 passed through, usage the upstream count', () => {
    const text = JSON.stringify({
      object: 'list',
      data: [
        { object: 'embedding', index: 1, embedding: 'AAAAPw==' },
        { object: 'embedding', index: 0, embedding: 'AACAPw==' },
      ],
      model: 'text-embedding-3-small',
      usage: { prompt_tokens: 4, total_tokens: 4 },
    });
    const answer = compatEmbeddings.parseResponse(text, ctx, req({ input: ['a', 'b'], encoding_format: 'base64' }));
    expect(answer).toEqual({
      object: 'list',
      data: [
        { object: 'embedding', index: 0, embedding: 'AACAPw==' },
        { object: 'embedding', index: 1, embedding: 'AAAAPw==' },
      ],
      model: 'text-embedding-3-small',
      usage: { prompt_tokens: 4, total_tokens: 4 },
    });
  });

  it('encodes floats itself when the upstream ignored base64, and decodes base64 it was not asked for', () => {
    const floats = JSON.stringify({ data: [{ index: 0, embedding: FLOATS }] });
    expect(compatEmbeddings.parseResponse(floats, ctx, req({ encoding_format: 'base64' })).data[0]!.embedding).toBe(float32Base64(FLOATS));
    const encoded = JSON.stringify({ data: [{ index: 0, embedding: float32Base64(FLOATS) }] });
    const answer = compatEmbeddings.parseResponse(encoded, ctx, req());
    expect(answer.data[0]!.embedding).toEqual(FLOATS);
    // No usage and no model reported: zeros (the relay counts) and the request's model.
    expect(answer).toMatchObject({ model: 'client-model', usage: { prompt_tokens: 0, total_tokens: 0 } });
  });

  it('answers a 502 for bodies that are not one vector per input', () => {
    for (const body of ['not json', '{}', JSON.stringify({ data: [{ index: 0, embedding: ['x'] }] }), JSON.stringify({ data: [{ index: 0, embedding: FLOATS }] }), JSON.stringify({ data: [{ index: 5, embedding: FLOATS }, { index: 0, embedding: FLOATS }] })]) {
      expect(() => compatEmbeddings.parseResponse(body, ctx, req({ input: ['a', 'b'] }))).toThrow(UpstreamFaultError);
    }
  });

  it('is the codec of every OpenAI-compatible kind', () => {
    for (const kind of ['openai', 'mistral', 'deepseek', 'groq', 'openrouter', 'xai', 'moonshot', 'zhipu', 'qwen', 'vllm', 'llamacpp', 'lmstudio', 'custom'] as const) {
      expect(PROVIDERS[kind].embeddings).toBe(compatEmbeddings);
    }
    expect(PROVIDERS.anthropic.embeddings).toBeUndefined();
  });
});

describe('azure embeddings', () => {
  it('posts to the deployment with api-key and no model', () => {
    const channel = channelOf('azure', { deployment: 'emb', api_version: '2024-02-01' }, 'https://res.openai.azure.com');
    const r = azureEmbeddings.buildRequest(req({ dimensions: 8 }), ctxOf(channel, 'text-embedding-3-large'));
    expect(r.url).toBe('https://res.openai.azure.com/openai/deployments/emb/embeddings?api-version=2024-02-01');
    expect(r.headers).toMatchObject({ 'api-key': 'test-key' });
    expect(bodyOf(r)).toEqual({ input: 'hello', dimensions: 8 });
    const byModel = azureEmbeddings.buildRequest(req(), ctxOf(channelOf('azure', {}, 'https://res.openai.azure.com'), 'text-embedding-3-large'));
    expect(byModel.url).toMatch(/\/openai\/deployments\/text-embedding-3-large\/embeddings\?api-version=/);
    expect(PROVIDERS.azure.embeddings).toBe(azureEmbeddings);
  });
});

describe('gemini embeddings', () => {
  const ctx = ctxOf(channelOf('gemini', {}, 'https://generativelanguage.googleapis.com'), 'models/gemini-embedding-001');

  it('sends one batchEmbedContents request per input, outputDimensionality for dimensions', () => {
    const r = geminiEmbeddings.buildRequest(req({ input: ['a', 'b'], dimensions: 4, user: 'dropped' }), ctx);
    expect(r.url).toBe('https://generativelanguage.googleapis.com/v1beta/models/gemini-embedding-001:batchEmbedContents');
    expect(r.headers).toMatchObject({ 'x-goog-api-key': 'test-key' });
    expect(bodyOf(r)).toEqual({
      requests: [
        { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'a' }] }, outputDimensionality: 4 },
        { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'b' }] }, outputDimensionality: 4 },
      ],
    });
  });

  it('reads embeddings[].values; no token count (zeros); base64 on request', () => {
    const text = JSON.stringify({ embeddings: [{ values: FLOATS }, { values: [1, 2] }] });
    expect(geminiEmbeddings.parseResponse(text, ctx, req({ input: ['a', 'b'] }))).toEqual({
      object: 'list',
      data: [
        { object: 'embedding', index: 0, embedding: FLOATS },
        { object: 'embedding', index: 1, embedding: [1, 2] },
      ],
      model: 'client-model',
      usage: { prompt_tokens: 0, total_tokens: 0 },
    });
    expect(geminiEmbeddings.parseResponse(text, ctx, req({ input: ['a', 'b'], encoding_format: 'base64' })).data[1]!.embedding).toBe(float32Base64([1, 2]));
    expect(() => geminiEmbeddings.parseResponse(JSON.stringify({ embeddings: [{ values: FLOATS }] }), ctx, req({ input: ['a', 'b'] }))).toThrow(UpstreamFaultError);
  });
});

describe('cohere embeddings', () => {
  const ctx = ctxOf(channelOf('cohere', {}, 'https://api.cohere.com'), 'embed-v4.0');

  it('posts texts to /v2/embed as search documents, float, output_dimension for dimensions', () => {
    const r = cohereEmbeddings.buildRequest(req({ input: ['a', 'b'], dimensions: 256 }), ctx);
    expect(r).toMatchObject({ url: 'https://api.cohere.com/v2/embed', headers: { authorization: 'Bearer test-key' } });
    expect(bodyOf(r)).toEqual({ model: 'embed-v4.0', texts: ['a', 'b'], input_type: 'search_document', embedding_types: ['float'], output_dimension: 256 });
    expect(bodyOf(cohereEmbeddings.buildRequest(req(), ctx))).toEqual({ model: 'embed-v4.0', texts: ['hello'], input_type: 'search_document', embedding_types: ['float'] });
  });

  it('reads embeddings.float and the billed input tokens', () => {
    const text = JSON.stringify({ id: 'x', embeddings: { float: [FLOATS] }, texts: ['hello'], meta: { billed_units: { input_tokens: 3 } }, response_type: 'embeddings_by_type' });
    expect(cohereEmbeddings.parseResponse(text, ctx, req())).toEqual({ object: 'list', data: [{ object: 'embedding', index: 0, embedding: FLOATS }], model: 'client-model', usage: { prompt_tokens: 3, total_tokens: 3 } });
    expect(() => cohereEmbeddings.parseResponse(JSON.stringify({ embeddings: { int8: [[1]] } }), ctx, req())).toThrow(UpstreamFaultError);
  });
});

describe('ollama embeddings', () => {
  const ctx = ctxOf(channelOf('ollama', {}, 'http://127.0.0.1:11434', { apiKey: '' }), 'nomic-embed-text');

  it('posts {model, input, dimensions} to /api/embed and reads embeddings and prompt_eval_count', () => {
    const r = ollamaEmbeddings.buildRequest(req({ input: ['a', 'b'], dimensions: 2, user: 'dropped' }), ctx);
    expect(r.url).toBe('http://127.0.0.1:11434/api/embed');
    expect(r.headers.authorization).toBeUndefined();
    expect(bodyOf(r)).toEqual({ model: 'nomic-embed-text', input: ['a', 'b'], dimensions: 2 });
    const text = JSON.stringify({ model: 'nomic-embed-text', embeddings: [FLOATS, FLOATS], prompt_eval_count: 6 });
    expect(ollamaEmbeddings.parseResponse(text, ctx, req({ input: ['a', 'b'] })).usage).toEqual({ prompt_tokens: 6, total_tokens: 6 });
    expect(() => ollamaEmbeddings.parseResponse(JSON.stringify({ embeddings: [[Number.NaN]] }), ctx, req())).toThrow(UpstreamFaultError);
  });
});

describe('bedrock embeddings', () => {
  const FIXED = new Date('2024-05-01T10:20:30Z');
  const codec = createBedrockEmbeddings({ now: () => FIXED });
  const channel = channelOf('bedrock', { region: 'us-east-1' }, 'https://bedrock-runtime.us-east-1.amazonaws.com', { apiKey: 'AKIDEXAMPLE:wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' });
  const titan = ctxOf(channel, 'amazon.titan-embed-text-v2:0');
  const cohere = ctxOf(channel, 'cohere.embed-english-v3');
  const signatureProblem = (r: UpstreamRequest) => {
    const url = new URL(r.url);
    const headers = Object.fromEntries(Object.entries(r.headers).map(([k, v]) => [k.toLowerCase(), v]));
    return verifySigV4({ method: r.method, path: url.pathname + url.search, headers: { host: url.host, ...headers }, body: r.body!, json: undefined }, FIXED);
  };

  it('invokes titan with {inputText, dimensions}, signed, and reads its token count', () => {
    const r = codec.buildRequest(req({ dimensions: 256, user: 'dropped' }), titan);
    expect(r.url).toBe('https://bedrock-runtime.us-east-1.amazonaws.com/model/amazon.titan-embed-text-v2%3A0/invoke');
    expect(bodyOf(r)).toEqual({ inputText: 'hello', dimensions: 256 });
    expect(signatureProblem(r)).toBeNull();
    const answer = codec.parseResponse(JSON.stringify({ embedding: FLOATS, inputTextTokenCount: 2, embeddingsByType: { float: FLOATS } }), titan, req());
    expect(answer).toEqual({ object: 'list', data: [{ object: 'embedding', index: 0, embedding: FLOATS }], model: 'client-model', usage: { prompt_tokens: 2, total_tokens: 2 } });
  });

  it('refuses several inputs for titan (one text per call), and models of other families', () => {
    expect400(() => codec.buildRequest(req({ input: ['a', 'b'] }), titan), 'input');
    expect400(() => codec.buildRequest(req(), ctxOf(channel, 'anthropic.claude-3-haiku-20240307-v1:0')), 'model');
    // One input as a list is one input.
    expect(bodyOf(codec.buildRequest(req({ input: ['only'] }), titan))).toEqual({ inputText: 'only' });
  });

  it('invokes cohere.embed with Cohere\'s body (no model) and reads either embeddings shape', () => {
    const r = codec.buildRequest(req({ input: ['a', 'b'] }), cohere);
    expect(r.url).toBe('https://bedrock-runtime.us-east-1.amazonaws.com/model/cohere.embed-english-v3/invoke');
    expect(bodyOf(r)).toEqual({ texts: ['a', 'b'], input_type: 'search_document', embedding_types: ['float'] });
    expect(signatureProblem(r)).toBeNull();
    const byType = codec.parseResponse(JSON.stringify({ id: 'x', embeddings: { float: [FLOATS, FLOATS] }, response_type: 'embeddings_by_type' }), cohere, req({ input: ['a', 'b'] }));
    expect(byType.data.map((d) => d.embedding)).toEqual([FLOATS, FLOATS]);
    expect(byType.usage).toEqual({ prompt_tokens: 0, total_tokens: 0 });
    const floats = codec.parseResponse(JSON.stringify({ id: 'x', embeddings: [FLOATS], response_type: 'embeddings_floats' }), cohere, req());
    expect(floats.data[0]!.embedding).toEqual(FLOATS);
    expect(PROVIDERS.bedrock.embeddings).toBeDefined();
  });
});

describe('which models are embedding models', () => {
  it('config.embedding_models when the channel sets it, else names containing "embed"; never on kinds without a codec', () => {
    const openai = channelOf('openai');
    expect(isEmbeddingModel(openai, 'text-embedding-3-small')).toBe(true);
    expect(isEmbeddingModel(openai, 'gpt-4o')).toBe(false);
    expect(isEmbeddingModel(openai, 'vectors', 'text-embedding-3-small')).toBe(true);
    const declared = channelOf('ollama', { embedding_models: ['bge-m3'] });
    expect(isEmbeddingModel(declared, 'bge-m3')).toBe(true);
    expect(isEmbeddingModel(declared, 'nomic-embed-text')).toBe(false);
    expect(isEmbeddingModel(channelOf('anthropic', { embedding_models: ['x'] }), 'x')).toBe(false);
  });
});
