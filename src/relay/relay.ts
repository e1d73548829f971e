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
import type { Provider, ProviderContext, ResponseMeta } from './providers/provider.js';
import { completionId, usageChunkOf, usageOf } from './providers/shared.js';
import type { Candidate, Router } from './router.js';
import type { Channel } from './channel.js';
import type { ChatCompletion, ChatCompletionRequest, Usage } from './schema.js';
import { SSE_DONE, sseData } from './sse.js';
import { countPromptTokens, countTokens } from './tokens.js';
import type { UpstreamHeaders, UpstreamPools, UpstreamResponse } from './upstream-pool.js';
import type { HeldBackResponse } from './held-response.js';
import type { RequestUsage } from './request-usage.js';
import { ChannelsRateLimited, type ChannelLimits } from './channel-limits.js';
import type { RelaySettings } from '../billing/rating.js';

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
interface Exchange extends RelayExchange {
  readonly meta: ResponseMeta;
  readonly gone: ClientGone;
  /** The tenant's relay_settings.error_logging: false, the details of upstream failures are not logged. */
  readonly logErrors: boolean;
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
      const tenant = this.deps.tenantSettings(exchange.tenantId);
      const candidates = this.deps.router.candidates({ tenantId: exchange.tenantId, model, providers, preferred: preferredProviders(tenant) });
      if (candidates.length === 0) {
        throw new ServiceUnavailableError(`no available channels for model ${model}`, 'no_available_channels');
      }
      const created = Math.floor(usage.startedAt.getTime() / 1000);
      const meta = new LazyResponseMeta(created, input.model, input.stream_options?.include_usage === true);
      await this.attempt({ requestId: exchange.requestId, tenantId: exchange.tenantId, response, body, model, usage, meta, gone, logErrors: tenant.error_logging }, candidates);
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

  /**
   * Retries allowed after an attempt failed on `channel` (its retry_config, else RELAY_MAX_RETRIES;
   * none with the request's retry_strategy "none"), and the backoff multiplier before the next one.
   */
  private retryPolicy(body: ChatCompletionRequest, channel: Channel): { maxRetries: number; multiplier: number } {
    const { settings } = this.deps;
    const own = channel.retryConfig;
    return {
      maxRetries: body.provider_config?.retry_strategy === 'none' ? 0 : (own?.max_retries ?? settings.maxRetries),
      multiplier: own?.backoff_multiplier ?? settings.backoffMultiplier,
    };
  }

  /**
   * Tries the candidates in turn (with backoff) until one answers or a failure is final. A
   * candidate over its own rate limits is skipped without an attempt (channel-limits.ts).
   */
  private async attempt(exchange: Exchange, candidates: Candidate[]): Promise<void> {
    const { settings, health } = this.deps;
    const { body, gone, requestId } = exchange;
    const usage = exchange.usage.data;
    let last: AttemptFailure | null = null;
    let multiplier = settings.backoffMultiplier;
    let cursor = 0;
    for (let i = 0; ; i++) {
      if (i > 0) await backoff(settings.backoffBaseMs * multiplier ** (i - 1), gone);
      if (gone.aborted) throw clientDisconnected();
      const picking = this.deps.limits.pick(candidates, cursor);
      const picked = picking instanceof Promise ? await picking : picking;
      if (picked instanceof ChannelsRateLimited) throw last?.error ?? picked.error();
      cursor = picked.next;
      const candidate = picked.candidate;
      // After a failure on this channel: may another attempt follow, and after how long.
      const retries = (failure: AttemptFailure) => {
        const policy = this.retryPolicy(body, candidate.channel);
        multiplier = policy.multiplier;
        return failure.retryable && i < policy.maxRetries;
      };
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
        if (exchange.logErrors) this.logUpstreamFailure(error, candidate, requestId);
        if (last.channelFault) health.failure(candidate.channel, last.message, requestId);
        if (!retries(last)) throw last.error;
        continue;
      }

      if (upstream.statusCode >= 400) {
        const text = await upstream.body.text().catch(() => '');
        last = classifyStatus(provider, upstream.statusCode, text, upstream.headers);
        if (last.retryAfterMs !== null) health.rateLimited(candidate.channel, last.retryAfterMs, requestId);
        if (last.channelFault) health.failure(candidate.channel, last.message, requestId);
        if (!retries(last)) throw last.error;
        continue;
      }

      this.noteRateLimitHeaders(candidate, upstream.headers, requestId);
      const notAStream = body.stream === true ? streamResponseFault(provider, upstream.headers) : null;
      try {
        if (notAStream !== null) {
          upstream.body.destroy();
          if (exchange.logErrors) this.deps.logger.warn({ request_id: requestId, channel: candidate.channel.id, headers: { 'content-type': upstream.headers['content-type'], 'content-encoding': upstream.headers['content-encoding'] } }, 'upstream answered a stream request with no stream');
          throw new AttemptFailure(notAStream, true, true);
        }
        health.success(candidate.channel, requestId);
        const attempt: Attempt = { candidate, provider, ctx, upstream };
        if (body.stream === true) await this.pipeStream(exchange, attempt);
        else await this.sendCompletion(exchange, attempt);
        const settling = this.deps.limits.settle(candidate.channel, usage.total_tokens);
        if (settling !== null) await settling.catch((error: unknown) => this.deps.logger.warn({ err: error, channel: candidate.channel.id }, 'could not count tokens against the channel rate limit'));
        return;
      } catch (error) {
        // Failures of the answer before any byte reached the client: like a failed call.
        if (!(error instanceof AttemptFailure)) throw error;
        if (gone.aborted) throw clientDisconnected();
        last = error;
        if (last.channelFault) health.failure(candidate.channel, last.message, requestId);
        if (!retries(last)) throw last.error;
      }
    }
  }

  /** The internals of an upstream failure, for operators (callers get upstreamFailureOf's answer). */
  private logUpstreamFailure(error: unknown, candidate: Candidate, requestId: string): void {
    this.deps.logger.warn({ err: error, request_id: requestId, channel: candidate.channel.id }, 'upstream request failed');
  }

  /** "0 requests remaining" on a success: cool the channel down until the window resets. */
  private noteRateLimitHeaders(candidate: Candidate, headers: UpstreamHeaders, requestId: string) {
    const wait = exhaustedWindowMs(headers);
    if (wait !== null) this.deps.health.rateLimited(candidate.channel, wait, requestId);
  }

  private async sendCompletion({ response, body, meta, usage, requestId, logErrors }: Exchange, { upstream, provider, ctx }: Attempt) {
    let text: string;
    try {
      text = await upstream.body.text();
    } catch (error) {
      if (logErrors) this.deps.logger.warn({ err: error, request_id: requestId, channel: ctx.channel.id }, 'upstream body could not be read');
      throw classifyException(error);
    }
    let completion: ChatCompletion;
    try {
      completion = provider.parseResponse(text, ctx, meta);
    } catch (error) {
      // A provider's own 502 is written for callers; anything else (a conversion that met a shape
      // it did not expect) is logged and answered in general terms.
      if (error instanceof UpstreamFaultError) throw new AttemptFailure(error, true, true);
      if (logErrors) this.deps.logger.warn({ err: error, request_id: requestId, channel: ctx.channel.id }, 'upstream response could not be converted');
      throw new AttemptFailure(new UpstreamFaultError('the upstream sent a response that could not be read'), true, true);
    }
    completion.usage = fillUsage(usage.data, completion.usage, body, () => completion.choices.map((c) => c.message.content ?? '').join(''));
    response.send(200, JSON_CONTENT, JSON.stringify(completion));
  }

  private async pipeStream({ response, body, meta, usage: record, requestId, logErrors }: Exchange, { upstream, provider, ctx }: Attempt) {
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
      if (logErrors) this.deps.logger.warn({ err: error, request_id: requestId, channel: ctx.channel.id }, 'upstream stream failed');
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
