/**
 * What a provider is: the conversion between the OpenAI chat format (src/relay/schema.ts) and one
 * upstream's native wire format. Pure functions plus a small stateful stream converter: no I/O
 * here (the relay owns the HTTP pool, retries and timing).
 */
import type { Channel } from '../channel.js';
import type { EmbeddingsRequest, EmbeddingsResponse } from '../embeddings-schema.js';
import type { ChatCompletion, ChatCompletionRequest, FinishReason, Usage } from '../schema.js';

/** Everything a conversion may depend on. */
export interface ProviderContext {
  channel: Channel;
  /** The upstream model name (after aliases and the channel's model_mapping). */
  model: string;
}

export interface UpstreamRequest {
  /** Absolute URL; its origin picks the pooled HTTP client. */
  url: string;
  method: 'POST' | 'GET';
  headers: Record<string, string>;
  body?: string;
}

/** Identity of the response the relay sends to the client. */
export interface ResponseMeta {
  /** "chatcmpl-..." id used when the upstream gives none of its own. */
  id: string;
  /** Unix seconds. */
  created: number;
  /** Model name reported to the client when the upstream does not report one. */
  model: string;
  /** The client asked for a final usage chunk (`stream_options.include_usage`). */
  includeUsage: boolean;
}

export interface StreamOutcome {
  usage: Usage | null;
  finishReason: FinishReason | null;
  /** Text generated so far (used to count tokens when the upstream reports no usage). */
  completionText: string;
  /** An error the upstream reported inside the stream, if any. */
  error: { message: string; code: string } | null;
}

export interface StreamConverter {
  /**
   * Upstream bytes in (any split: mid-line, mid-frame), SSE text for the client out: zero or more
   * complete `data: {chat.completion.chunk}\n\n` events ('' when nothing is complete yet).
   */
  push(bytes: Buffer): string;
  /** The upstream body ended: whatever is left, always ending with `data: [DONE]\n\n`. */
  end(): string;
  outcome(): StreamOutcome;
}

export interface UpstreamError {
  message: string;
  /** The provider's own error type/code when it gives one. */
  code?: string;
}

export interface Provider {
  /**
   * Builds the upstream request. Throws BadRequestError (code `unsupported_parameter`, naming the
   * field) for values this provider cannot take, so the client gets a 400, not an upstream 500.
   * `stream` is the effective streaming flag.
   */
  buildRequest(request: ChatCompletionRequest, ctx: ProviderContext): UpstreamRequest;
  /** Converts a successful non-streaming upstream body (already JSON-parsed, or raw text). */
  parseResponse(body: string, ctx: ProviderContext, meta: ResponseMeta): ChatCompletion;
  /**
   * `maxEventSize` bounds one upstream event (SSE event or line, NDJSON line, event-stream
   * frame): past it `push` throws UpstreamFaultError `upstream_response_too_large`. A stream
   * that is not what the upstream's API sends (a chunk of the wrong shape, no event at all) is a
   * `bad_upstream_response` (thrown, or in-band once chunks have been converted).
   */
  createStreamConverter(ctx: ProviderContext, meta: ResponseMeta, maxEventSize?: number): StreamConverter;
  /** The media type of this upstream's streams (its Content-Type): anything else is refused. */
  readonly streamMediaType: string;
  /** Reads the message out of an upstream error body (any status >= 400). */
  parseError(status: number, body: string): UpstreamError;
  /** The cheapest real request that proves the channel works (channel test, health probes). */
  probeRequest(ctx: ProviderContext): UpstreamRequest;
  /** `POST /v1/embeddings` for this kind (absent: its channels are never routed embeddings). */
  readonly embeddings?: EmbeddingsCodec;
  /** Ingress formats this kind speaks itself: such requests reach it as the client sent them. */
  readonly native?: Partial<Record<NativeFormat, NativeCodec>>;
  /**
   * The image media types this kind's API takes in a user message (absent: COMMON_IMAGE_TYPES).
   * An image from an uploaded file of another type reaches it as the image's recognised text
   * (src/relay/files.ts); images a client sends itself are not checked against it.
   */
  readonly imageTypes?: ReadonlySet<string>;
}

/** The image types the major chat APIs all take (OpenAI, Anthropic, Bedrock). */
export const COMMON_IMAGE_TYPES: ReadonlySet<string> = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

/**
 * The conversion of an OpenAI embeddings request to the upstream's embeddings API and back.
 * Errors are read by the provider's `parseError` (an upstream's error bodies are the same
 * whatever the endpoint).
 */
export interface EmbeddingsCodec {
  /** The upstream request; a 400 (`unsupported_parameter`, naming the field) for what the upstream cannot take. */
  buildRequest(request: EmbeddingsRequest, ctx: ProviderContext): UpstreamRequest;
  /**
   * The upstream's answer in OpenAI's shape, vectors in the encoding the request asked for.
   * `usage` is the upstream's count, or zeros when it gave none (the relay then counts).
   */
  parseResponse(text: string, ctx: ProviderContext, request: EmbeddingsRequest): EmbeddingsResponse;
}

/** Request formats besides chat completions that some upstreams speak natively. */
export type NativeFormat = 'anthropic-messages' | 'openai-responses';

/** A client's request in an ingress's own format, for a channel that takes it as it is. */
export interface NativeRequest {
  readonly format: NativeFormat;
  /** The body as the client sent it (validated); the codec replaces the model. */
  readonly body: Record<string, unknown>;
  /** Headers of the client's that the upstream should see (e.g. anthropic-version, anthropic-beta). */
  readonly headers: Readonly<Record<string, string>>;
}

/** A whole native answer: passed to the client as it is; usage read out of it. */
export interface NativeAnswer {
  body: string;
  usage: Usage | null;
  /** The generated text (tokens are counted from it when the upstream reports no usage). */
  completionText: string;
}

/**
 * A pass-through for one native format: no conversion either way, only what the relay records
 * (usage, errors) is read out of the answer.
 */
export interface NativeCodec {
  /** The upstream request: the client's body with the upstream model, the channel's credentials. */
  buildRequest(request: NativeRequest, ctx: ProviderContext): UpstreamRequest;
  /** A whole answer (throws UpstreamFaultError when it is not what the upstream's API sends). */
  readAnswer(text: string, ctx: ProviderContext): NativeAnswer;
  /** The upstream's events as text, unchanged (whole events); reads usage and errors for `outcome()`; `end()` adds nothing of its own. */
  createStreamConverter(ctx: ProviderContext, maxEventSize?: number): StreamConverter;
  /** An in-stream error event in the format, for a stream cut off after bytes went out. */
  errorEvent(message: string, code: string): string;
  readonly streamMediaType: string;
}
