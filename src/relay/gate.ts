/**
 * The gate every relay request passes, whichever endpoint (ingress) it came in by:
 *
 *   caller -> usage record -> ingress prepare (chat: preset) -> tenant's relay switch ->
 *   ingress parse (validation) -> the API key's rules -> billing admission -> key admission
 *   (rate limits, concurrency, quota) -> the relay (routing, provider, upstream) -> usage
 *
 * The usage record is created once the caller is known and published exactly once, in one
 * `finally`: refused requests included. Errors are thrown for the HTTP server to render, after
 * the usage event is durable (the answer's last bytes are held until then: HeldBackResponse).
 * An endpoint plugs in with an `Ingress`: how its body becomes the relay's request.
 */
import { z } from 'zod';
import { AppError } from '../errors.js';
import type { HttpRequestLike, RelayResponse } from '../http-exchange.js';
import { ownValue } from '../own.js';
import { keyAllowsModel, type ActiveKey } from '../views/keys.js';
import { relayDisabledError, routedModel, type BillingGate } from './access/billing-gate.js';
import type { Callers, RelayCaller, ResolvedCaller } from './access/caller.js';
import type { KeyGate } from './access/key-gate.js';
import { HeldBackResponse } from './held-response.js';
import type { GateBody, Relay, RelayExchange } from './relay.js';
import { RequestUsage } from './request-usage.js';
import type { ChatCompletionRequest, ClientChatRequest } from './schema.js';
import type { UsagePublisher } from './usage-publisher.js';

/** A body an ingress cannot use, and why (recorded as the request's refusal, after the relay switch). */
export class Refused {
  constructor(
    readonly body: unknown,
    readonly error: AppError,
  ) {}
}

/** The body as an ingress prepared it (most requests: the body as sent, no object made). */
export type Prepared = unknown;

/** Which models a preset may pick for this caller (served to its tenant, allowed to its key). */
export type UsableModels = (resolved: ResolvedCaller) => (model: string) => boolean;

export type Parsed<T> = { value: T; error?: undefined } | { value?: undefined; error: AppError };

/**
 * What one endpoint adds to the gate: how its body is prepared and validated, and how the
 * admitted request is relayed (chat: as it is; other formats: converted, or natively).
 */
export interface Ingress<B extends GateBody = ChatCompletionRequest> {
  /** The body before validation (chat: the request's preset applied), or `Refused`; runs for every caller. */
  prepare(body: unknown, resolved: ResolvedCaller, usable: UsableModels): Prepared | Refused | Promise<Prepared | Refused>;
  /** The request, or the 400 naming what is wrong. */
  parse(body: unknown): Parsed<B>;
  /** Relays the admitted request (it fills `exchange.usage`; the gate publishes it). */
  relay(relay: Relay, exchange: RelayExchange<B>): Promise<void>;
}

/** Takes the body as it is (an ingress with nothing to prepare). */
export const asSent = (body: unknown): Prepared => body;

export const ModelList = z.object({
  object: z.literal('list'),
  data: z.array(
    z.object({
      id: z.string(),
      object: z.literal('model'),
      created: z.number(),
      owned_by: z.string(),
      capabilities: z
        .array(z.enum(['chat', 'embeddings']))
        .describe('what the model serves: chat (POST /v1/chat/completions and the other chat formats), embeddings (POST /v1/embeddings); both when channels serve it both ways'),
    }),
  ),
}).meta({ id: 'ModelList' });
export type ModelList = z.infer<typeof ModelList>;
export const ModelObject = ModelList.shape.data.element.meta({ id: 'Model' });
export type ModelObject = z.infer<typeof ModelObject>;

/** Whether a key may use a model (GET /v1/models lists only those). */
export function isModelAllowed(key: ActiveKey, model: string): boolean {
  const resolved = ownValue(key.policy.model_aliases, model) ?? model;
  return keyAllowsModel(key, resolved);
}

/**
 * API v2's deprecated alias `/v1/chat` says so (RFC 9745: deprecated since 2.0.0, 2024-04-01),
 * when it goes (RFC 8594), and names its successor (docs/api-versions.md). API v1 keeps it a plain alias.
 */
export const CHAT_ALIAS_DEPRECATION = '@1711929600';
export const CHAT_ALIAS_SUNSET = 'Wed, 30 Jun 2027 23:59:59 GMT';
const DEPRECATED_CHAT_HEADERS: ReadonlyArray<[string, string]> = [
  ['deprecation', CHAT_ALIAS_DEPRECATION],
  ['sunset', CHAT_ALIAS_SUNSET],
  ['link', '</v1/chat/completions>; rel="successor-version"'],
];

export interface RelayGateDeps {
  callers: Callers;
  keyGate: KeyGate;
  billing: BillingGate;
  relay: Relay;
  usage: Pick<UsagePublisher, 'publish'>;
  /** The endpoints that plug into the gate. */
  ingress: { chatCompletions: Ingress<ClientChatRequest> };
}

export class RelayGate {
  constructor(private readonly deps: RelayGateDeps) {}

  /** GET /v1/models: the models the caller may use (an API key sees only what it may call). */
  async models(request: HttpRequestLike): Promise<ModelList> {
    const { caller, key } = await this.deps.callers.resolve(request);
    if (key) this.deps.billing.assertRelayEnabled(key.tenantId);
    const served = this.deps.relay.capabilities(caller.tenantId);
    const models = [...served.keys()].filter((id) => !key || isModelAllowed(key, id)).sort();
    return { object: 'list', data: models.map((id) => ({ id, object: 'model', created: 0, owned_by: 'switchyard', capabilities: [...served.get(id)!].sort() })) };
  }

  /** GET /v1/models/{model} (the SDKs' models.retrieve): one of those, else 404 model_not_found. */
  async model(request: HttpRequestLike, id: string): Promise<ModelObject> {
    const found = (await this.models(request)).data.find((m) => m.id === id);
    if (!found) throw new AppError(404, 'invalid_request_error', 'model_not_found', `The model '${id}' does not exist or you do not have access to it.`, {}, 'model');
    return found;
  }

  /**
   * The caller of a relay endpoint that relays nothing (stored responses' GET and DELETE): the
   * same authentication and relay switch as a relayed request, no usage event.
   */
  async caller(request: HttpRequestLike): Promise<RelayCaller> {
    const { caller, key } = await this.deps.callers.resolve(request);
    if (key) this.deps.billing.assertRelayEnabled(key.tenantId);
    return caller;
  }

  /** POST /v1/chat/completions (and its aliases; `/v1/chat` is the deprecated one in API v2). */
  chatCompletions(request: HttpRequestLike, response: RelayResponse, body: unknown, options: { deprecatedAlias?: boolean } = {}): Promise<void> {
    if (options.deprecatedAlias) for (const [name, value] of DEPRECATED_CHAT_HEADERS) response.setHeader(name, value);
    return this.pass(this.deps.ingress.chatCompletions, request, response, body);
  }

  /**
   * Answers one request of `ingress`. Errors are thrown (as AppError when they are the client's
   * answer) for the HTTP server to render; the usage event is published either way. The common
   * path (no preset, a cached caller) awaits nothing before the relay.
   */
  async pass<B extends GateBody>(ingress: Ingress<B>, request: HttpRequestLike, response: RelayResponse, rawBody: unknown): Promise<void> {
    const resolving = this.deps.callers.resolve(request);
    const resolved = resolving instanceof Promise ? await resolving : resolving;
    const { caller, key } = resolved;
    const usage = new RequestUsage(request.id, caller);
    const held = new HeldBackResponse(response);
    try {
      const preparing = ingress.prepare(rawBody, resolved, this.usableBy);
      const body = this.validate(ingress, preparing instanceof Promise ? await preparing : preparing, key, usage);
      // The model to route: the key's alias resolved (the client's name is still the one reported).
      const model = key === null ? this.admitSession(caller, body) : await this.admitKey(request, held, caller, key, body, usage);
      await ingress.relay(this.deps.relay, { requestId: request.id, tenantId: caller.tenantId, caller, request, response: held, body, model, usage });
    } catch (error) {
      usage.failed(error);
      throw error;
    } finally {
      await this.deps.usage.publish(usage.settle());
      held.release();
    }
  }

  /** The relay switch, the ingress's refusal, then validation; throws the refusal (recorded by `pass`). */
  private validate<B extends GateBody>(ingress: Ingress<B>, prepared: Prepared | Refused, key: ActiveKey | null, usage: RequestUsage): B {
    const refused = prepared instanceof Refused ? prepared : null;
    const preparedBody = refused === null ? prepared : refused.body;
    const asSent = (preparedBody ?? {}) as { model?: unknown; stream?: unknown };
    usage.asked(asSent.model, asSent.stream);
    // The tenant switched its relay API off: API keys are refused; the UI is not.
    if (key && !this.deps.billing.settings(key.tenantId).relay_api_enabled) throw relayDisabledError();
    if (refused !== null) throw refused.error;
    const parsed = ingress.parse(preparedBody);
    if (parsed.error) throw parsed.error;
    const body = parsed.value;
    usage.asked(body.model, body.stream);
    return body;
  }

  /** Session callers (the chat UI): credits / subscription, from memory (429 insufficient_quota). */
  private admitSession(caller: RelayCaller, body: GateBody): string {
    this.deps.billing.admit(caller, routedModel(body.model, body));
    return body.model;
  }

  /**
   * The key's rules, in their documented order (model, source, then credits / subscription
   * coverage from memory, then rate limits, concurrency and quota in one counters round trip).
   * The ticket settles real usage when the request ends.
   */
  private async admitKey(request: HttpRequestLike, response: RelayResponse, caller: RelayCaller, key: ActiveKey, body: GateBody, usage: RequestUsage): Promise<string> {
    const { keyGate, billing } = this.deps;
    const model = keyGate.resolveModel(key, body.model);
    // The request's own model_mapping may point an allowed name at another model: the key's rules
    // apply to where the request really goes, too.
    const mappedTo = ownValue(body.model_mapping, body.model)?.actual_model;
    if (mappedTo !== undefined && mappedTo !== model) keyGate.resolveModel(key, mappedTo);
    keyGate.checkSource(key, request);
    billing.admit(caller, routedModel(model, body));
    const ticket = await keyGate.admit(key, model, body, billing.settings(key.tenantId).relay_settings.rate_limiting);
    // Rate-limit headers go on every answer, streamed ones included.
    for (const [name, value] of Object.entries(ticket.headers)) response.setHeader(name, value);
    usage.onSettle((data) => void ticket.settle(data));
    return model;
  }

  /**
   * For requests that call no model (Messages count_tokens): the caller, the tenant's relay
   * switch, validation, the key's model and source rules, and a channel serving the model (404
   * model_not_found). Nothing is billed or counted, and no usage event is recorded. `answer` gets
   * the relay (for a side call to the serving channel), the validated body and the caller.
   */
  async check<B extends GateBody, T>(
    request: HttpRequestLike,
    rawBody: unknown,
    parse: (body: unknown) => Parsed<B>,
    answer: (relay: Relay, checked: { caller: RelayCaller; body: B; model: string }) => Promise<T>,
  ): Promise<T> {
    const resolving = this.deps.callers.resolve(request);
    const { caller, key } = resolving instanceof Promise ? await resolving : resolving;
    if (key) this.deps.billing.assertRelayEnabled(key.tenantId);
    const parsed = parse(rawBody);
    if (parsed.error) throw parsed.error;
    const body = parsed.value;
    let model = body.model;
    if (key !== null) {
      model = this.deps.keyGate.resolveModel(key, body.model);
      this.deps.keyGate.checkSource(key, request);
    }
    if (!this.deps.relay.models(caller.tenantId).includes(model)) throw this.deps.relay.noChannelFor(caller.tenantId, model);
    return answer(this.deps.relay, { caller, body, model });
  }

  /** Which models a preset may pick for this caller (served to its tenant, allowed to its key). */
  private readonly usableBy: UsableModels = ({ caller, key }) => {
    const served = new Set(this.deps.relay.models(caller.tenantId));
    return (model) => served.has(model) && (!key || isModelAllowed(key, model));
  };

}
