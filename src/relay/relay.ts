/**
 * The relay's hot path: one OpenAI chat-completions request in, the same shape out, whatever the
 * provider. Picks channels (router), converts (providers), calls upstream through the pooled
 * undici client, retries what is retryable on the next channel with exponential backoff, streams
 * without buffering, feeds channel health, and fills the request's usage (the gate publishes it).
 */
import type { UsageData } from '../commands/usage/events.js';
import type { Config } from '../config.js';
import { AppError, ServiceUnavailableError, UpstreamFaultError } from '../errors.js';
import type { Logger } from '../logger.js';
import { ownValue } from '../own.js';
import { AttemptFailure, classifyException, classifyStatus, exhaustedWindowMs, streamResponseFault } from './attempt-failure.js';
import type { ChannelHealth } from './channel-health.js';
import { backoff, ClientGone } from './client-gone.js';
import { PROVIDERS } from './providers/index.js';
import type { NativeCodec, NativeFormat, NativeRequest, Provider, ProviderContext, ResponseMeta, UpstreamRequest } from './providers/provider.js';
import { completionId, usageChunkOf, usageOf } from './providers/shared.js';
import type { Candidate, ModelCapability, Router } from './router.js';
import type { ChatCompletion, ChatCompletionRequest, Usage } from './schema.js';
import { SSE_DONE, sseData } from './sse.js';
import { countPromptTokens, countTokens } from './tokens.js';
import type { UpstreamHeaders, UpstreamPools, UpstreamResponse } from './upstream-pool.js';
import type { HeldBackResponse } from './held-response.js';
import type { RequestUsage } from './request-usage.js';
import type { RelayCaller } from './access/caller.js';
import type { HttpRequestLike } from '../http-exchange.js';
import type { AnswerTranslation } from './translation.js';
import { ChannelsRateLimited, type ChannelLimits } from './channel-limits.js';
import type { Channel } from './channel.js';
import type { RelaySettings } from '../billing/rating.js';
import { inputsOf, type EmbeddingsRequest, type EmbeddingsResponse } from './embeddings-schema.js';
import { forProvider, type FileImages } from './files.js';

/** Where the relay writes an answer: the gate's HeldBackResponse, or an ingress's wrapper of it. */
export type AnswerWriter = Pick<HeldBackResponse, 'setHeader' | 'send' | 'start' | 'write' | 'writeLast' | 'drained' | 'end' | 'closed' | 'onClose' | 'offClose'>;

/** What the gate reads of any ingress's request body (chat completions' fields by those names). */
export interface GateBody {
  readonly model: string;
  readonly stream?: boolean | null;
  readonly model_mapping?: ChatCompletionRequest['model_mapping'];
  readonly max_tokens?: number | null;
  readonly max_completion_tokens?: number | null;
  readonly max_output_tokens?: number | null;
  readonly n?: number | null;
}

/** One admitted request, as the gate hands it to its ingress (and the ingress to the relay). */
export interface RelayExchange<B extends GateBody = ChatCompletionRequest> {
  readonly requestId: string;
  readonly tenantId: string;
  readonly caller: RelayCaller;
  /** The client's request (headers). */
  readonly request: HttpRequestLike;
  /** Where the answer goes; its last bytes wait for the usage event (the gate releases them). */
  readonly response: AnswerWriter;
  readonly body: B;
  /** The model to route: the key's alias resolved (the client's own name is still the one reported). */
  readonly model: string;
  /** Filled here: channel, provider, tokens, status, time to first byte. */
  readonly usage: RequestUsage;
}

/** A chat request; from an ingress of another format, with how its answer is translated back. */
export interface ChatExchange extends RelayExchange<ChatCompletionRequest> {
  /** Converted answers are written through it (absent: chat completions as they are). */
  readonly translation?: AnswerTranslation;
  /** The client's own request, for channels whose provider speaks its format natively. */
  readonly native?: NativeRequest;
  /** No chat form could be made of the native request (what only its own API serves): other channels refuse with this. */
  readonly unconvertible?: AppError;
  /** Image parts made from the caller's files: a provider that takes no such image gets their text (src/relay/files.ts). */
  readonly fileImages?: FileImages;
}

export interface RelayDeps {
  router: Router;
  pools: UpstreamPools;
  health: ChannelHealth;
  settings: Config['relay'];
  logger: Logger;
  /** Channels' own rate limits (src/relay/channel-limits.ts). */
  limits: ChannelLimits;
  /** The tenant's relay settings (default provider order, error logging), from memory. */
  tenantSettings: (tenantId: string) => RelaySettings;
}

const NO_PROVIDERS: readonly string[] = Object.freeze([]);

/** The headers of a completion (the HTTP servers only read them, so one object serves every answer). */
const JSON_CONTENT = Object.freeze({ 'content-type': 'application/json; charset=utf-8' });
const SSE_HEADERS = Object.freeze({ 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' });

/**
 * The response identity, with the fallback id made only when something reads it: OpenAI-compatible
 * upstreams send their own, and each id costs a randomBytes call (a system call). A class (a
 * getter on its prototype) rather than an object literal with a getter, which V8 builds slowly.
 * Being a prototype getter, `id` is not copied by a spread: copy a meta field by field.
 */
class LazyResponseMeta implements ResponseMeta {
  private fallbackId: string | undefined;

  constructor(
    readonly created: number,
    readonly model: string,
    readonly includeUsage: boolean,
  ) {}

  get id(): string {
    return (this.fallbackId ??= completionId());
  }
}

/** One request inside the relay: the exchange, and what every attempt at it shares. */
export interface Exchange<B extends GateBody = ChatCompletionRequest> extends RelayExchange<B> {
  readonly meta: ResponseMeta;
  readonly gone: ClientGone;
}

type ChatAttemptExchange = Exchange & Pick<ChatExchange, 'translation' | 'native' | 'unconvertible' | 'fileImages'>;

/** One try at one channel. */
export interface Attempt {
  readonly candidate: Candidate;
  readonly provider: Provider;
  readonly ctx: ProviderContext;
  readonly upstream: UpstreamResponse;
}

/**
 * The answer when nothing can serve `model`: 404 model_not_found for a model no channel of the
 * tenant lists (SDKs retry 503s: a typo would be tried three times over), naming the models
 * served; 503 no_available_channels with Retry-After when channels list it but none is usable now.
 */
function noCandidate(router: Router, tenantId: string, model: string): AppError {
  const why = router.whyNoCandidate(tenantId, model);
  if (why.kind === 'unavailable') return new ServiceUnavailableError(`no available channels for model ${model}`, 'no_available_channels', { 'retry-after': String(why.retryAfterSeconds) });
  const served = router.models(tenantId);
  const shown = served.length > 20 ? `${served.slice(0, 20).join(', ')} and ${served.length - 20} more (GET /v1/models)` : served.join(', ');
  return new AppError(404, 'invalid_request_error', 'model_not_found', `no available channels for model ${model}: no channel serves it. Models served: ${shown || 'none (add a channel)'}`, {}, 'model');
}

/**
 * What one kind of request (chat, embeddings) does at each attempt; the attempt loop (routing
 * order, retries, backoff, health) is shared. Made once per relay: no per-request closure.
 */
export interface Operation<E extends Exchange<GateBody>, X extends RelayExchange<E['body']> = RelayExchange<E['body']>> {
  /** The request as every attempt shares it: `body` routed to `model` (a literal, field by field: the hot path builds one per request). */
  exchange(outer: X, body: E['body'], model: string, gone: ClientGone): E;
  /** The upstream request for this channel (throws BadRequestError for a value it cannot take). */
  request(exchange: E, provider: Provider, ctx: ProviderContext): UpstreamRequest;
  /** The media type the upstream's answer must have when it streams; null when it answers whole. */
  streamMediaType(exchange: E, provider: Provider): string | null;
  /** Answers the client from a successful upstream response (throws AttemptFailure while nothing went out). */
  answer(exchange: E, attempt: Attempt): Promise<void>;
}

export class Relay {
  /** Chat completions, and the ingresses that relay through the chat format. */
  private readonly chat: Operation<ChatAttemptExchange, ChatExchange> = {
    exchange: (outer, body, model, gone) => ({
      requestId: outer.requestId,
      tenantId: outer.tenantId,
      caller: outer.caller,
      request: outer.request,
      response: outer.response,
      body,
      model,
      usage: outer.usage,
      meta: new LazyResponseMeta(Math.floor(outer.usage.startedAt.getTime() / 1000), outer.body.model, body.stream_options?.include_usage === true),
      gone,
      translation: outer.translation,
      native: outer.native,
      unconvertible: outer.unconvertible,
      fileImages: outer.fileImages,
    }),
    request: (exchange, provider, ctx) => {
      const native = nativeCodec(exchange, provider);
      if (native !== undefined) return native.buildRequest(exchange.native!, ctx);
      if (exchange.unconvertible !== undefined) throw exchange.unconvertible;
      return provider.buildRequest(exchange.fileImages === undefined ? exchange.body : forProvider(exchange.body, exchange.fileImages, provider), ctx);
    },
    streamMediaType: (exchange, provider) => (exchange.body.stream === true ? (nativeCodec(exchange, provider) ?? provider).streamMediaType : null),
    answer: (exchange, attempt) => (exchange.body.stream === true ? this.pipeStream(exchange, attempt) : this.sendCompletion(exchange, attempt)),
  };

  /** Embeddings: one whole JSON answer, only from channels whose provider has an embeddings codec. */
  private readonly embeddings: Operation<Exchange<EmbeddingsRequest>> = {
    exchange: (outer, body, model, gone) => ({
      requestId: outer.requestId,
      tenantId: outer.tenantId,
      caller: outer.caller,
      request: outer.request,
      response: outer.response,
      body,
      model,
      usage: outer.usage,
      // The client's model name is the one the answer reports; an embedding has no id or stream.
      meta: new LazyResponseMeta(Math.floor(outer.usage.startedAt.getTime() / 1000), outer.body.model, false),
      gone,
    }),
    request: (exchange, provider, ctx) => provider.embeddings!.buildRequest(exchange.body, ctx),
    streamMediaType: () => null,
    answer: (exchange, attempt) => this.sendEmbeddings(exchange, attempt),
  };

  constructor(private readonly deps: RelayDeps) {}

  /** The models the tenant's channels serve (GET /v1/models). */
  models(tenantId: string): string[] {
    return this.deps.router.models(tenantId);
  }

  /** The refusal for a model nothing can serve now: 404 model_not_found, or 503 no_available_channels (noCandidate). */
  noChannelFor(tenantId: string, model: string): AppError {
    return noCandidate(this.deps.router, tenantId, model);
  }

  /** Each model the tenant's channels serve, with what it serves (GET /v1/models). */
  capabilities(tenantId: string): Map<string, Set<ModelCapability>> {
    return this.deps.router.capabilities(tenantId);
  }

  /** POST /v1/embeddings: routed like chat (retries, fallback, health), to channels that can embed. */
  embed(exchange: RelayExchange<EmbeddingsRequest>): Promise<void> {
    return this.run(exchange, exchange.body, this.embeddings, canEmbed);
  }

  /** Routes, calls upstream (retrying on the next channel), answers, and fills the usage. */
  complete(exchange: ChatExchange): Promise<void> {
    const input = exchange.body;
    // A translated stream needs the usage in its last chunk (Anthropic's message_delta, Responses' response.completed).
    const body = exchange.translation !== undefined && input.stream === true && input.stream_options?.include_usage !== true ? { ...input, stream_options: { include_usage: true } } : input;
    return this.run(exchange, body, this.chat);
  }

  /**
   * The steps every operation shares: request mapping, routing, the attempt loop, and the
   * client-gone bookkeeping. `meta` makes the answer's identity once the request is routable.
   */
  private async run<E extends Exchange<GateBody>, X extends RelayExchange<E['body']>>(exchange: X, input: E['body'], operation: Operation<E, X>, serves?: (provider: Provider) => boolean): Promise<void> {
    const { usage, response } = exchange;
    // Client gone: stop the upstream request too.
    const gone = new ClientGone();
    const onClose = () => gone.abort(new Error('client disconnected'));
    response.onClose(onClose);
    try {
      const { body, model, providers } = applyRequestMapping(exchange.model === input.model ? input : { ...input, model: exchange.model });
      usage.data.model_routed = model; // billing prices the request by it
      const preferred = preferredProviders(this.deps.tenantSettings(exchange.tenantId));
      let candidates = this.deps.router.candidates({ tenantId: exchange.tenantId, model, providers, preferred });
      if (serves !== undefined) candidates = candidates.filter((c) => serves(PROVIDERS[c.channel.type]));
      if (candidates.length === 0) throw noCandidate(this.deps.router, exchange.tenantId, model);
      await this.attempt(operation.exchange(exchange, body, model, gone), candidates, operation);
    } finally {
      response.offClose(onClose);
      if (gone.aborted && usage.data.error_code === null) {
        usage.data.status = 499;
        usage.data.error_code = 'client_disconnected';
      }
    }
  }

  /**
   * Whether another attempt may follow the `retry`-th one (0 = the first try), which failed on
   * `channel`: the failure is retryable and the channel's retry_config max_retries (else
   * RELAY_MAX_RETRIES; none with the request's retry_strategy "none") is not used up.
   */
  private mayRetry(failure: AttemptFailure, body: GateBody & { provider_config?: ChatCompletionRequest['provider_config'] }, channel: Channel, retry: number): boolean {
    if (!failure.retryable || body.provider_config?.retry_strategy === 'none') return false;
    return retry < (channel.retryConfig?.max_retries ?? this.deps.settings.maxRetries);
  }

  /**
   * Tries the candidates in turn (with backoff) until one answers or a failure is final. A
   * candidate over its own rate limits is skipped without an attempt (channel-limits.ts).
   */
  private async attempt<E extends Exchange<GateBody>, X extends RelayExchange<E['body']>>(exchange: E, candidates: Candidate[], operation: Operation<E, X>): Promise<void> {
    const { settings, health } = this.deps;
    const { body, gone, requestId } = exchange;
    const usage = exchange.usage.data;
    let last: AttemptFailure | null = null;
    /** The channel the last attempt failed on: its retry_config sets the backoff before the next. */
    let failedOn: Channel | null = null;
    let cursor = 0;
    for (let i = 0; ; i++) {
      if (failedOn !== null) await backoff(settings.backoffBaseMs * (failedOn.retryConfig?.backoff_multiplier ?? settings.backoffMultiplier) ** (i - 1), gone);
      if (gone.aborted) throw clientDisconnected();
      // The next candidate whose own rate limits admit the request (no counters call for channels without).
      const picking = this.deps.limits.pick(candidates, cursor);
      const picked = typeof picking === 'number' ? picking : await picking;
      if (picked instanceof ChannelsRateLimited) throw last?.error ?? picked.error();
      const candidate = candidates[picked % candidates.length]!;
      cursor = picked + 1;
      failedOn = candidate.channel;
      const provider = PROVIDERS[candidate.channel.type];
      const ctx: ProviderContext = { channel: candidate.channel, model: candidate.upstreamModel };
      usage.attempts = i + 1;
      usage.channel_id = candidate.channel.id;
      usage.provider = candidate.channel.type;
      usage.model_served = candidate.upstreamModel;

      // A value this provider cannot take is the client's to fix: 400, no retry.
      const upstreamRequest = operation.request(exchange, provider, ctx);
      let upstream: UpstreamResponse;
      const sentAt = performance.now();
      try {
        upstream = await this.deps.pools.request(upstreamRequest, gone);
        usage.upstream_ms = Math.round((performance.now() - sentAt) * 100) / 100;
      } catch (error) {
        if (gone.aborted) throw clientDisconnected();
        last = classifyException(error);
        this.logUpstreamFailure(error, candidate, requestId);
        if (last.channelFault) health.failure(candidate.channel, last.message, requestId);
        if (!this.mayRetry(last, body, candidate.channel, i)) throw exchange.caller.seesChannels === true ? namingChannel(last.error, candidate.channel) : last.error;
        continue;
      }

      if (upstream.statusCode >= 400) {
        const text = await upstream.body.text().catch(() => '');
        last = classifyStatus(provider, upstream.statusCode, text, upstream.headers);
        // The channel's own failures (its key refused, the provider down) are the operators' news; a client's mistake is noted at info.
        const log = this.failureLog(candidate.channel);
        log?.[last.channelFault ? 'warn' : 'info']({ request_id: requestId, channel: candidate.channel.id, status: upstream.statusCode, code: last.error.code, reason: last.message.slice(0, 500) }, `upstream answered ${upstream.statusCode}`);
        if (last.retryAfterMs !== null) health.rateLimited(candidate.channel, last.retryAfterMs, requestId);
        if (last.channelFault) health.failure(candidate.channel, last.message, requestId);
        if (!this.mayRetry(last, body, candidate.channel, i)) throw last.error;
        continue;
      }

      this.noteRateLimitHeaders(candidate, upstream.headers, requestId);
      const mediaType = operation.streamMediaType(exchange, provider);
      const notAStream = mediaType === null ? null : streamResponseFault(mediaType, upstream.headers);
      try {
        if (notAStream !== null) {
          upstream.body.destroy();
          this.failureLog(candidate.channel)?.warn({ request_id: requestId, channel: candidate.channel.id, headers: { 'content-type': upstream.headers['content-type'], 'content-encoding': upstream.headers['content-encoding'] } }, 'upstream answered a stream request with no stream');
          throw new AttemptFailure(notAStream, true, true);
        }
        health.success(candidate.channel, requestId);
        await operation.answer(exchange, { candidate, provider, ctx, upstream });
        const settling = this.deps.limits.settle(candidate.channel, usage.total_tokens);
        if (settling !== null) await settling.catch((error: unknown) => this.deps.logger.warn({ err: error, channel: candidate.channel.id }, 'could not count tokens against the channel rate limit'));
        return;
      } catch (error) {
        // Failures of the answer before any byte reached the client: like a failed call.
        if (!(error instanceof AttemptFailure)) throw error;
        if (gone.aborted) throw clientDisconnected();
        last = error;
        if (last.channelFault) health.failure(candidate.channel, last.message, requestId);
        if (!this.mayRetry(last, body, candidate.channel, i)) throw last.error;
      }
    }
  }

  /** Where the details of an upstream failure go: the log, unless the channel's tenant turned error_logging off. */
  private failureLog(channel: Channel): Logger | null {
    if (!this.deps.tenantSettings(channel.tenantId).error_logging) return null;
    let log = this.providerLogs.get(channel.type);
    if (!log) {
      log = this.deps.logger.child({ category: 'application', component: `provider:${channel.type}`, event: 'upstream_failed' });
      this.providerLogs.set(channel.type, log);
    }
    return log;
  }

  /** One child logger per provider kind (made on a first failure, not per request). */
  private readonly providerLogs = new Map<string, Logger>();

  /** The internals of an upstream failure, for operators (callers get upstreamFailureOf's answer). */
  private logUpstreamFailure(error: unknown, candidate: Candidate, requestId: string): void {
    this.failureLog(candidate.channel)?.warn({ err: error, request_id: requestId, channel: candidate.channel.id }, 'upstream request failed');
  }

  /** "0 requests remaining" on a success: cool the channel down until the window resets. */
  private noteRateLimitHeaders(candidate: Candidate, headers: UpstreamHeaders, requestId: string) {
    const wait = exhaustedWindowMs(headers);
    if (wait !== null) this.deps.health.rateLimited(candidate.channel, wait, requestId);
  }

  /** The upstream's whole body as text (a failure to read it is the attempt's). */
  private async readBody({ requestId }: Exchange<GateBody>, { upstream, ctx }: Attempt): Promise<string> {
    try {
      return await upstream.body.text();
    } catch (error) {
      this.failureLog(ctx.channel)?.warn({ err: error, request_id: requestId, channel: ctx.channel.id }, 'upstream body could not be read');
      throw classifyException(error);
    }
  }

  /**
   * Runs a conversion of the upstream's answer: a provider's own 502 is written for callers;
   * anything else (a conversion that met a shape it did not expect) is logged and answered in
   * general terms. Either way the attempt failed (another channel may answer).
   */
  private convert<T>({ requestId }: Exchange<GateBody>, { ctx }: Attempt, conversion: () => T): T {
    try {
      return conversion();
    } catch (error) {
      if (error instanceof UpstreamFaultError) throw new AttemptFailure(error, true, true);
      this.failureLog(ctx.channel)?.warn({ err: error, request_id: requestId, channel: ctx.channel.id }, 'upstream response could not be converted');
      throw new AttemptFailure(new UpstreamFaultError('the upstream sent a response that could not be read'), true, true);
    }
  }

  private async sendEmbeddings(exchange: Exchange<EmbeddingsRequest>, attempt: Attempt) {
    const { response, body, meta, usage } = exchange;
    const text = await this.readBody(exchange, attempt);
    // The answer names the model as the client did (an upstream that reports its own keeps it).
    const asked = body.model === meta.model ? body : { ...body, model: meta.model };
    const answer = this.convert(exchange, attempt, () => attempt.provider.embeddings!.parseResponse(text, attempt.ctx, asked));
    answer.usage = fillEmbeddingsUsage(usage.data, answer, body);
    response.send(200, JSON_CONTENT, JSON.stringify(answer));
  }

  private async sendCompletion(exchange: ChatAttemptExchange, attempt: Attempt) {
    const { response, body, meta, usage, translation } = exchange;
    const { provider, ctx } = attempt;
    const text = await this.readBody(exchange, attempt);
    const native = nativeCodec(exchange, provider);
    if (native !== undefined) {
      const answer = this.convert(exchange, attempt, () => native.readAnswer(text, ctx));
      fillUsage(usage.data, answer.usage, body, answer.completionText);
      response.send(200, JSON_CONTENT, answer.body);
      return;
    }
    const completion: ChatCompletion = this.convert(exchange, attempt, () => provider.parseResponse(text, ctx, meta));
    completion.usage = fillUsage(usage.data, completion.usage, body, () => completion.choices.map((c) => c.message.content ?? '').join(''));
    response.send(200, JSON_CONTENT, translation === undefined ? JSON.stringify(completion) : translation.completion(completion));
  }

  private async pipeStream(exchange: ChatAttemptExchange, { upstream, provider, ctx }: Attempt) {
    const { response, body, meta, usage: record, requestId } = exchange;
    const usage = record.data;
    const native = nativeCodec(exchange, provider);
    const converter = native === undefined ? provider.createStreamConverter(ctx, meta, this.deps.settings.maxEventBytes) : native.createStreamConverter(ctx, this.deps.settings.maxEventBytes);
    const translator = native === undefined && exchange.translation !== undefined ? exchange.translation.stream() : null;
    // The response starts with the first converted bytes: until then a failure can still be a
    // plain JSON error (and another channel may be tried).
    let started = false;
    const begin = () => {
      if (!started) {
        started = true;
        response.start(200, SSE_HEADERS);
      }
      if (usage.ttft_ms === null) usage.ttft_ms = record.elapsedMs();
    };
    const write = async (converted: string) => {
      const text = translator === null || !converted ? converted : translator.push(converted);
      if (!text || response.closed) return;
      begin();
      if (!response.write(text)) await response.drained();
    };
    // The final text (with its [DONE]) is held until the usage event is durable.
    const writeLast = (converted: string) => {
      const text = translator === null || !converted ? converted : translator.push(converted);
      if (!text || response.closed) return;
      begin();
      response.writeLast(text);
    };
    try {
      for await (const chunk of upstream.body) await write(converter.push(chunk));
      let tail = converter.end();
      const outcome = converter.outcome();
      const filled = fillUsage(usage, outcome.usage, body, outcome.completionText);
      if (meta.includeUsage && !outcome.usage && tail.endsWith(SSE_DONE)) {
        // The upstream reported no usage: the client still gets the chunk it asked for.
        tail = tail.slice(0, -SSE_DONE.length) + sseData(usageChunkOf(meta, filled)) + SSE_DONE;
      }
      if (outcome.error) {
        // The stream ended in an error the upstream reported in it: the request failed.
        usage.status = 502;
        usage.error_code = outcome.error.code || 'upstream_stream_error';
        this.deps.health.failure(ctx.channel, outcome.error.message, requestId);
      }
      writeLast(tail);
    } catch (error) {
      if (response.closed) {
        const outcome = converter.outcome();
        fillUsage(usage, outcome.usage, body, outcome.completionText);
        usage.status = 499;
        usage.error_code = 'client_disconnected';
        return;
      }
      this.failureLog(ctx.channel)?.warn({ err: error, request_id: requestId, channel: ctx.channel.id }, 'upstream stream failed');
      // Nothing went out yet: a plain error answer, maybe from another channel (the attempt loop decides).
      if (!started) throw classifyException(error);
      // Bytes already went out: no retry. Tell the client in-band and end the stream.
      const outcome = converter.outcome();
      fillUsage(usage, outcome.usage, body, outcome.completionText);
      const fault = error instanceof UpstreamFaultError ? error : null;
      const code = fault?.code ?? 'upstream_stream_interrupted';
      usage.status = 502;
      usage.error_code = code;
      this.deps.health.failure(ctx.channel, fault?.message ?? 'upstream stream interrupted', requestId);
      const message = fault?.message ?? 'the upstream stream was interrupted';
      if (native !== undefined) writeLast(native.errorEvent(message, code));
      else writeLast(sseData({ error: { message, type: 'upstream_error', code, param: null } }) + SSE_DONE);
    } finally {
      if (started && !response.closed) response.end();
    }
  }

  /**
   * A side request in a native format (Messages count_tokens) to the channel that would serve
   * `model` first, when its provider speaks `format`: one call, no retry, no health, no usage.
   * Null when that channel speaks another format, or the call failed (logged): the caller then
   * answers by itself.
   */
  async nativeSideCall(tenantId: string, model: string, format: NativeFormat, build: (ctx: ProviderContext) => UpstreamRequest): Promise<{ status: number; text: string } | null> {
    const first = this.deps.router.candidates({ tenantId, model, providers: NO_PROVIDERS })[0];
    if (first === undefined || PROVIDERS[first.channel.type].native?.[format] === undefined) return null;
    try {
      const upstream = await this.deps.pools.request(build({ channel: first.channel, model: first.upstreamModel }));
      return { status: upstream.statusCode, text: await upstream.body.text() };
    } catch (error) {
      this.deps.logger.warn({ err: error, channel: first.channel.id }, 'native side request failed');
      return null;
    }
  }
}

const canEmbed = (provider: Provider) => provider.embeddings !== undefined;

/** The codec of the provider for the request's native format, when it speaks it. */
function nativeCodec(exchange: Pick<ChatExchange, 'native'>, provider: Provider): NativeCodec | undefined {
  return exchange.native === undefined ? undefined : provider.native?.[exchange.native.format];
}

/** The request's own aliases and provider order (Switchyard extensions). */
function applyRequestMapping<B extends GateBody & { provider_config?: ChatCompletionRequest['provider_config']; temperature?: number | null }>(input: B): { body: B; model: string; providers: readonly string[] } {
  // Most requests use neither extension: nothing to build.
  if (input.model_mapping === undefined && input.provider_config === undefined) return { body: input, model: input.model, providers: NO_PROVIDERS };
  let body = input;
  let model = input.model;
  const providers: string[] = [];
  const alias = ownValue(input.model_mapping, input.model);
  if (alias) {
    model = alias.actual_model;
    if (alias.provider) providers.push(alias.provider);
    // The alias's parameters fill what the request itself left unset.
    const temperature = alias.parameters?.temperature;
    if (temperature !== undefined && (input.temperature === undefined || input.temperature === null)) body = { ...body, temperature };
  }
  const config = input.provider_config;
  if (config) {
    if (config.primary) providers.push(config.primary);
    providers.push(...(config.fallback ?? []));
  }
  return { body, model, providers };
}

/** The tenant's provider order for requests that name none: default_provider, then fallback_providers. */
function preferredProviders(settings: RelaySettings): readonly string[] {
  if (settings.default_provider === null) return settings.fallback_providers;
  return settings.fallback_providers.length === 0 ? [settings.default_provider] : [settings.default_provider, ...settings.fallback_providers];
}

const clientDisconnected = () => new AppError(499, 'invalid_request_error', 'client_disconnected', 'client disconnected');

/**
 * The request's token counts: the upstream's when it reported them, else counted with the
 * tokenizer. `completionText` is only read (and so, for a completion, only joined) when counting.
 */
function fillUsage(usage: UsageData, reported: Usage | null, body: ChatCompletionRequest, completionText: string | (() => string)): Usage {
  if (reported && reported.total_tokens > 0) {
    usage.usage_source = 'upstream';
    usage.prompt_tokens = reported.prompt_tokens;
    usage.completion_tokens = reported.completion_tokens;
    usage.total_tokens = reported.total_tokens;
    return reported;
  }
  const counted = usageOf(countPromptTokens(body.messages), countTokens(typeof completionText === 'string' ? completionText : completionText()));
  usage.usage_source = 'tokenizer';
  Object.assign(usage, counted);
  return counted;
}

/**
 * An embeddings request's token counts: the upstream's when it reported them, else the inputs
 * counted with the tokenizer. Prompt tokens only: an embedding has no completion.
 */
function fillEmbeddingsUsage(usage: UsageData, answer: EmbeddingsResponse, body: EmbeddingsRequest): EmbeddingsResponse['usage'] {
  let tokens = answer.usage.total_tokens > 0 ? answer.usage.prompt_tokens || answer.usage.total_tokens : 0;
  usage.usage_source = tokens > 0 ? 'upstream' : 'tokenizer';
  if (tokens === 0) for (const input of inputsOf(body)) tokens += countTokens(input);
  usage.prompt_tokens = tokens;
  usage.completion_tokens = 0;
  usage.total_tokens = tokens;
  return { prompt_tokens: tokens, total_tokens: tokens };
}

/** The failure of a connection to an upstream as an admin is told it: with the channel's name (never its address). */
function namingChannel(error: AppError, channel: Channel): AppError {
  return new AppError(error.status, error.type, error.code, `${error.message} (channel "${channel.name}")`, error.headers, error.param);
}
