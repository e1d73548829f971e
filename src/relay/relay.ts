/**
 * The relay's hot path: one OpenAI chat-completions request in, the same shape out, whatever the
 * provider. Picks channels (router), converts (providers), calls upstream through the pooled
 * undici client, retries what is retryable on the next channel with exponential backoff, streams
 * without buffering, feeds channel health, and fills the request's usage (the gate publishes it).
 */
import { errors as undiciErrors } from 'undici';
import type { UsageData } from '../commands/usage/events.js';
import type { Config } from '../config.js';
import { AppError, ServiceUnavailableError, UpstreamBusyError, UpstreamFaultError } from '../errors.js';
import type { Logger } from '../logger.js';
import { ownValue } from '../own.js';
import type { ChannelHealth } from './channel-health.js';
import { PROVIDERS } from './providers/index.js';
import type { Provider, ProviderContext, ResponseMeta } from './providers/provider.js';
import { completionId, usageChunkOf, usageOf } from './providers/shared.js';
import type { Candidate, Router } from './router.js';
import type { ChatCompletion, ChatCompletionRequest, Usage } from './schema.js';
import { SSE_DONE, sseData } from './sse.js';
import { countPromptTokens, countTokens } from './tokens.js';
import type { UpstreamHeaders, UpstreamPools, UpstreamResponse } from './upstream-pool.js';
import type { HeldBackResponse } from './held-response.js';
import type { RequestUsage } from './request-usage.js';

/** One admitted request, as the gate hands it to the relay. */
export interface RelayExchange {
  readonly requestId: string;
  readonly tenantId: string;
  /** Where the answer goes; its last bytes wait for the usage event (the gate releases them). */
  readonly response: HeldBackResponse;
  readonly body: ChatCompletionRequest;
  /** The model to route: the key's alias resolved (the client's own name is still the one reported). */
  readonly model: string;
  /** Filled here: channel, provider, tokens, status, time to first byte. */
  readonly usage: RequestUsage;
}

export interface RelayDeps {
  router: Router;
  pools: UpstreamPools;
  health: ChannelHealth;
  settings: Config['relay'];
  logger: Logger;
}

/** What went wrong with one attempt, and whether another channel may do better. */
class AttemptFailure extends Error {
  constructor(
    readonly error: AppError,
    readonly retryable: boolean,
    /** Counts against the channel's health (not for 429s or the client's own mistakes). */
    readonly channelFault: boolean,
    readonly retryAfterMs: number | null = null,
  ) {
    super(error.message);
  }
}

const RETRY_AFTER_DEFAULT_MS = 5_000;

const NO_PROVIDERS: readonly string[] = Object.freeze([]);

/** The headers of a completion (the HTTP servers only read them, so one object serves every answer). */
const JSON_CONTENT = Object.freeze({ 'content-type': 'application/json; charset=utf-8' });
const SSE_HEADERS = Object.freeze({ 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' });

/**
 * "The client went away", in the form UpstreamPools.request accepts as a signal (an AbortEmitter:
 * `aborted`, `reason`, and 'abort' listeners added with `once` and removed with `off`). An
 * AbortController is an EventTarget, and creating one per request was a visible share of the
 * relay's CPU time; a Node EventEmitter (its listener table, a bound wrapper per `once`) also
 * showed, for what is at most two listeners that fire at most once.
 */
export class ClientGone {
  aborted = false;
  reason: Error | undefined;
  private listeners: Array<() => void> | null = null;

  abort(reason: Error): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const listeners = this.listeners;
    this.listeners = null;
    if (listeners !== null) for (const listener of listeners) listener();
  }

  /** Listeners are called once, on abort, in the order they were added. */
  once(_event: 'abort', listener: () => void): this {
    if (!this.aborted) (this.listeners ??= []).push(listener);
    return this;
  }

  off(_event: 'abort', listener: () => void): this {
    const listeners = this.listeners;
    if (listeners === null) return this;
    const i = listeners.indexOf(listener);
    if (i !== -1) listeners.splice(i, 1);
    return this;
  }

  listenerCount(_event: 'abort'): number {
    return this.listeners?.length ?? 0;
  }
}

/** Waits `ms`, or less if the client goes away meanwhile. */
function backoff(ms: number, gone: ClientGone): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      gone.off('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    gone.once('abort', done);
  });
}

function header(headers: UpstreamHeaders, name: string): string | undefined {
// eslint-disable-next-line switchyard/no-string-index-lookup -- names are the code's own (retry-after...)
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** Retry-After is seconds or an HTTP date. */
export function retryAfterMs(value: string | undefined): number | null {
  if (!value) return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - Date.now());
}

/** OpenAI's reset headers look like "1s", "6m0s", "20ms". */
function resetDurationMs(value: string | undefined): number | null {
  if (!value) return null;
  let total = 0;
  let matched = false;
  for (const m of value.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)) {
    matched = true;
    total += Number(m[1]) * ({ ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const)[m[2] as 'ms' | 's' | 'm' | 'h'];
  }
  return matched ? total : null;
}

function classifyStatus(provider: Provider, status: number, body: string, headers: UpstreamHeaders): AttemptFailure {
  const { message, code } = provider.parseError(status, body);
  if (status === 429) {
    const wait = retryAfterMs(header(headers, 'retry-after')) ?? RETRY_AFTER_DEFAULT_MS;
    const error = new AppError(429, 'rate_limit_error', 'upstream_rate_limited', `upstream rate limited: ${message}`, { 'retry-after': String(Math.ceil(wait / 1000)) });
    return new AttemptFailure(error, true, false, wait);
  }
  if (status >= 500 || status === 408) return new AttemptFailure(new AppError(502, 'upstream_error', 'upstream_error', `upstream error ${status}: ${message}`), true, true);
  if (status === 401 || status === 403) {
    // The channel's key is refused: that channel is broken, another may work.
    return new AttemptFailure(new AppError(502, 'upstream_error', 'upstream_auth_failed', `upstream refused the channel's credentials (${status}): ${message}`), true, true);
  }
  const type = status === 404 ? 'not_found_error' : 'invalid_request_error';
  return new AttemptFailure(new AppError(status, type, code && /^[a-z_]+$/.test(code) ? code : 'upstream_invalid_request', message), false, false);
}

/** Error codes of a connection that could not be made (as opposed to one that was lost). */
const CONNECT_ERROR_CODES: ReadonlySet<string | undefined> = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EHOSTDOWN', 'UND_ERR_CLOSED', 'UND_ERR_DESTROYED']);

/**
 * What the caller is told about an exception of the upstream exchange (the HTTP client's errors:
 * timeouts, refused or lost connections). Written for callers with a stable code; the exception
 * itself only goes to the log. An UpstreamFaultError already is such an answer.
 */
export function upstreamFailureOf(error: unknown): AppError {
  if (error instanceof UpstreamFaultError || error instanceof UpstreamBusyError) return error;
  if (error instanceof undiciErrors.HeadersTimeoutError) return new AppError(504, 'upstream_error', 'upstream_timeout', 'the upstream did not answer in time');
  if (error instanceof undiciErrors.BodyTimeoutError) return new AppError(504, 'upstream_error', 'upstream_timeout', 'the upstream stopped sending before its answer was complete');
  if (error instanceof undiciErrors.ConnectTimeoutError) return new AppError(504, 'upstream_error', 'upstream_timeout', 'the relay could not connect to the upstream in time');
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (CONNECT_ERROR_CODES.has(code)) return new AppError(502, 'upstream_error', 'upstream_unavailable', 'the relay could not connect to the upstream');
  return new AppError(502, 'upstream_error', 'upstream_connection_lost', 'the upstream closed the connection before its answer was complete');
}

/**
 * An exception of one attempt. Retried on the next channel when nothing reached the client yet,
 * except a response over the size limits: a channel that sends one is faulty, and asking another
 * would risk the same cost again.
 */
function classifyException(error: unknown): AttemptFailure {
  const answer = upstreamFailureOf(error);
  // Busy: the caller already waited UPSTREAM_QUEUE_TIMEOUT; it gets the 503 and its Retry-After
  // now (another attempt would wait as long again), and a full queue is not the channel's fault.
  if (answer instanceof UpstreamBusyError) return new AttemptFailure(answer, false, false);
  return new AttemptFailure(answer, answer.code !== 'upstream_response_too_large', true);
}

const MEDIA_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*$/;

/** The media type of a Content-Type value ('text/event-stream; charset=utf-8' -> 'text/event-stream'). */
function mediaTypeOf(contentType: string): string {
  const semicolon = contentType.indexOf(';');
  return (semicolon === -1 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase();
}

/**
 * Why a successful answer to `stream: true` is not a stream the provider's converter can read:
 * a body encoding the relay did not ask for (it sends no Accept-Encoding), or another media type
 * (a JSON body, an HTML page). Null when it is one (or says nothing of its type).
 */
export function streamResponseFault(provider: Provider, headers: UpstreamHeaders): UpstreamFaultError | null {
  const encoding = header(headers, 'content-encoding');
  if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') {
    return new UpstreamFaultError('the upstream answered the stream with an encoded (compressed) body the relay did not ask for');
  }
  const contentType = header(headers, 'content-type');
  if (contentType === undefined || contentType.trim() === '') return null;
  const mediaType = mediaTypeOf(contentType);
  if (mediaType === provider.streamMediaType) return null;
  // The upstream's value is named only when it is a plain media type (nothing else it sent is echoed).
  const named = mediaType.length <= 80 && MEDIA_TYPE.test(mediaType) ? mediaType : 'another media type';
  return new UpstreamFaultError(`the upstream answered the stream with ${named} instead of ${provider.streamMediaType}`);
}

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
interface Exchange extends RelayExchange {
  readonly meta: ResponseMeta;
  readonly gone: ClientGone;
}

/** One try at one channel. */
interface Attempt {
  readonly candidate: Candidate;
  readonly provider: Provider;
  readonly ctx: ProviderContext;
  readonly upstream: UpstreamResponse;
}

export class Relay {
  constructor(private readonly deps: RelayDeps) {}

  /** The models the tenant's channels serve (GET /v1/models). */
  models(tenantId: string): string[] {
    return this.deps.router.models(tenantId);
  }

  /** Routes, calls upstream (retrying on the next channel), answers, and fills the usage. */
  async complete(exchange: RelayExchange): Promise<void> {
    const { body: input, usage, response } = exchange;
    // Client gone: stop the upstream request too.
    const gone = new ClientGone();
    const onClose = () => gone.abort(new Error('client disconnected'));
    response.onClose(onClose);
    try {
      const { body, model, providers } = this.applyRequestMapping(exchange.model === input.model ? input : { ...input, model: exchange.model });
      usage.data.model_routed = model; // billing prices the request by it
      const candidates = this.deps.router.candidates({ tenantId: exchange.tenantId, model, providers });
      if (candidates.length === 0) {
        throw new ServiceUnavailableError(`no available channels for model ${model}`, 'no_available_channels');
      }
      const created = Math.floor(usage.startedAt.getTime() / 1000);
      const meta = new LazyResponseMeta(created, input.model, input.stream_options?.include_usage === true);
      await this.attempt({ ...exchange, body, meta, gone }, candidates);
    } finally {
      response.offClose(onClose);
      if (gone.aborted && usage.data.error_code === null) {
        usage.data.status = 499;
        usage.data.error_code = 'client_disconnected';
      }
    }
  }

  /** The request's own aliases and provider order (Switchyard extensions). */
  private applyRequestMapping(input: ChatCompletionRequest): { body: ChatCompletionRequest; model: string; providers: readonly string[] } {
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

  private maxAttempts(body: ChatCompletionRequest): number {
    return body.provider_config?.retry_strategy === 'none' ? 1 : 1 + this.deps.settings.maxRetries;
  }

  /** Tries the candidates in turn (with backoff) until one answers or a failure is final. */
  private async attempt(exchange: Exchange, candidates: Candidate[]): Promise<void> {
    const { settings, health } = this.deps;
    const { body, gone, requestId } = exchange;
    const usage = exchange.usage.data;
    const attempts = this.maxAttempts(body);
    let last: AttemptFailure | null = null;
    for (let i = 0; i < attempts; i++) {
      if (i > 0) await backoff(settings.backoffBaseMs * settings.backoffMultiplier ** (i - 1), gone);
      if (gone.aborted) throw clientDisconnected();
      const candidate = candidates[i % candidates.length]!;
      const provider = PROVIDERS[candidate.channel.type];
      const ctx: ProviderContext = { channel: candidate.channel, model: candidate.upstreamModel };
      usage.attempts = i + 1;
      usage.channel_id = candidate.channel.id;
      usage.provider = candidate.channel.type;
      usage.model_served = candidate.upstreamModel;

      // A value this provider cannot take is the client's to fix: 400, no retry.
      const upstreamRequest = provider.buildRequest(body, ctx);
      let upstream: UpstreamResponse;
      try {
        upstream = await this.deps.pools.request(upstreamRequest, gone);
      } catch (error) {
        if (gone.aborted) throw clientDisconnected();
        last = classifyException(error);
        this.logUpstreamFailure(error, candidate, requestId);
        if (last.channelFault) health.failure(candidate.channel, last.message, requestId);
        if (!last.retryable) throw last.error;
        continue;
      }

      if (upstream.statusCode >= 400) {
        const text = await upstream.body.text().catch(() => '');
        last = classifyStatus(provider, upstream.statusCode, text, upstream.headers);
        if (last.retryAfterMs !== null) health.rateLimited(candidate.channel, last.retryAfterMs, requestId);
        if (last.channelFault) health.failure(candidate.channel, last.message, requestId);
        if (!last.retryable) throw last.error;
        continue;
      }

      this.noteRateLimitHeaders(candidate, upstream.headers, requestId);
      const notAStream = body.stream === true ? streamResponseFault(provider, upstream.headers) : null;
      try {
        if (notAStream !== null) {
          upstream.body.destroy();
          this.deps.logger.warn({ request_id: requestId, channel: candidate.channel.id, headers: { 'content-type': upstream.headers['content-type'], 'content-encoding': upstream.headers['content-encoding'] } }, 'upstream answered a stream request with no stream');
          throw new AttemptFailure(notAStream, true, true);
        }
        health.success(candidate.channel, requestId);
        const attempt: Attempt = { candidate, provider, ctx, upstream };
        if (body.stream === true) await this.pipeStream(exchange, attempt);
        else await this.sendCompletion(exchange, attempt);
        return;
      } catch (error) {
        // Failures of the answer before any byte reached the client: like a failed call.
        if (!(error instanceof AttemptFailure)) throw error;
        if (gone.aborted) throw clientDisconnected();
        last = error;
        if (last.channelFault) health.failure(candidate.channel, last.message, requestId);
        if (!last.retryable) throw last.error;
      }
    }
    throw last!.error;
  }

  /** The internals of an upstream failure, for operators (callers get upstreamFailureOf's answer). */
  private logUpstreamFailure(error: unknown, candidate: Candidate, requestId: string): void {
    this.deps.logger.warn({ err: error, request_id: requestId, channel: candidate.channel.id }, 'upstream request failed');
  }

  /** "0 requests remaining" on a success: cool the channel down until the window resets. */
  private noteRateLimitHeaders(candidate: Candidate, headers: UpstreamHeaders, requestId: string) {
    if (header(headers, 'x-ratelimit-remaining-requests') !== '0') return;
    const wait = resetDurationMs(header(headers, 'x-ratelimit-reset-requests')) ?? retryAfterMs(header(headers, 'retry-after')) ?? RETRY_AFTER_DEFAULT_MS;
    this.deps.health.rateLimited(candidate.channel, wait, requestId);
  }

  private async sendCompletion({ response, body, meta, usage, requestId }: Exchange, { upstream, provider, ctx }: Attempt) {
    let text: string;
    try {
      text = await upstream.body.text();
    } catch (error) {
      this.deps.logger.warn({ err: error, request_id: requestId, channel: ctx.channel.id }, 'upstream body could not be read');
      throw classifyException(error);
    }
    let completion: ChatCompletion;
    try {
      completion = provider.parseResponse(text, ctx, meta);
    } catch (error) {
      // A provider's own 502 is written for callers; anything else (a conversion that met a shape
      // it did not expect) is logged and answered in general terms.
      if (error instanceof UpstreamFaultError) throw new AttemptFailure(error, true, true);
      this.deps.logger.warn({ err: error, request_id: requestId, channel: ctx.channel.id }, 'upstream response could not be converted');
      throw new AttemptFailure(new UpstreamFaultError('the upstream sent a response that could not be read'), true, true);
    }
    completion.usage = fillUsage(usage.data, completion.usage, body, () => completion.choices.map((c) => c.message.content ?? '').join(''));
    response.send(200, JSON_CONTENT, JSON.stringify(completion));
  }

  private async pipeStream({ response, body, meta, usage: record, requestId }: Exchange, { upstream, provider, ctx }: Attempt) {
    const usage = record.data;
    const converter = provider.createStreamConverter(ctx, meta, this.deps.settings.maxEventBytes);
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
    const write = async (text: string) => {
      if (!text || response.closed) return;
      begin();
      if (!response.write(text)) await response.drained();
    };
    // The final text (with its [DONE]) is held until the usage event is durable.
    const writeLast = (text: string) => {
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
      this.deps.logger.warn({ err: error, request_id: requestId, channel: ctx.channel.id }, 'upstream stream failed');
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
      writeLast(sseData({ error: { message, type: 'upstream_error', code, param: null } }) + SSE_DONE);
    } finally {
      if (started && !response.closed) response.end();
    }
  }
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
