/**
 * `POST /v1/chat/completions` (and its aliases) from the parsed JSON body to the relay's answer,
 * and `GET /v1/models`,
 * whichever HTTP server carried the request: fastify's route (src/api/routes/relay.ts) or the
 * relay's own HTTP/1.1 server (src/api/relay-server.ts). One implementation, so both answer
 * every request the same way: who is calling, the tenant's relay switch, the request's preset,
 * validation, the API key's rules and billing admission, then the relay.
 *
 * Every request that gets as far as a known caller publishes exactly one usage event, refused
 * ones included (`relay.reject` records, then throws the error for the server to render).
 */
import { z } from 'zod';
import { AppError, ForbiddenError, NotFoundError, UnauthorizedError } from '../errors.js';
import type { Principal } from '../auth/tokens.js';
import type { HttpRequestLike, RelayResponse } from '../http-exchange.js';
import type { ActiveKey } from '../views/keys.js';
import { findVisiblePreset, presetDocument } from '../queries/presets.js';
import { relayDisabledError, routedModel } from '../relay/access/billing-gate.js';
import { KEY_PREFIX } from '../relay/access/key-gate.js';
import { applyPreset } from '../relay/presets.js';
import type { RelayCaller } from '../relay/relay.js';
import { ChatCompletionRequest } from '../relay/schema.js';
import { principalNow, requirePrincipal } from './auth.js';
import type { AppContext } from './context.js';
import { validationError } from './errors.js';
import { ownValue } from '../own.js';

/**
 * The shapes nearly every chat request has, checked by hand: parsing a request with zod was a
 * visible share of the relay's CPU time (docs/history/benchmarks-2026-11-21.md). This accepts a STRICT SUBSET of what
 * `ChatCompletionRequest` accepts, and only bodies that zod would return unchanged (no nested
 * object with keys zod would strip); anything else (tools, image parts, Switchyard's extensions,
 * a value out of range...) goes through zod, so valid bodies are accepted and invalid ones get the
 * very same 400 as before. If a constraint in src/relay/schema.ts is tightened, tighten it here.
 */
const BEARER_KEY = `Bearer ${KEY_PREFIX}`;

const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool']);
const MESSAGE_KEYS = new Set(['role', 'content', 'name', 'tool_call_id']);

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const optionalNumberIn = (v: unknown, min: number, max: number) => v === undefined || v === null || (typeof v === 'number' && v >= min && v <= max);
const optionalIntIn = (v: unknown, min: number, max: number) => v === undefined || v === null || (Number.isSafeInteger(v) && (v as number) >= min && (v as number) <= max);
const optionalString = (v: unknown) => v === undefined || typeof v === 'string';

/** Every top-level field of the schema, with the check of its common forms (false: ask zod). */
const FIELD_CHECKS: Record<string, (v: unknown) => boolean> = {
  model: (v) => typeof v === 'string' && v.length > 0,
  messages: (v) => {
    if (!Array.isArray(v) || v.length === 0) return false;
    for (const m of v) {
      if (!isObject(m) || !ROLES.has(m.role as string)) return false;
      for (const key in m) if (!MESSAGE_KEYS.has(key)) return false;
      if (!(m.content === undefined || m.content === null || typeof m.content === 'string')) return false;
      if (!optionalString(m.name) || !optionalString(m.tool_call_id)) return false;
    }
    return true;
  },
  temperature: (v) => optionalNumberIn(v, 0, 2),
  top_p: (v) => optionalNumberIn(v, 0, 1),
  max_tokens: (v) => optionalIntIn(v, 1, Number.MAX_SAFE_INTEGER),
  max_completion_tokens: (v) => optionalIntIn(v, 1, Number.MAX_SAFE_INTEGER),
  stop: (v) => v === undefined || v === null || typeof v === 'string' || (Array.isArray(v) && v.length <= 4 && v.every((s) => typeof s === 'string')),
  stream: (v) => v === undefined || v === null || typeof v === 'boolean',
  stream_options: (v) => v === undefined || v === null || (isObject(v) && Object.keys(v).every((k) => k === 'include_usage') && (v.include_usage === undefined || typeof v.include_usage === 'boolean')),
  n: (v) => optionalIntIn(v, 1, 128),
  presence_penalty: (v) => optionalNumberIn(v, -2, 2),
  frequency_penalty: (v) => optionalNumberIn(v, -2, 2),
  seed: (v) => optionalIntIn(v, Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER),
  user: optionalString,
  parallel_tool_calls: (v) => v === undefined || typeof v === 'boolean',
  // Rarer and deeper: always zod.
  tools: (v) => v === undefined,
  tool_choice: (v) => v === undefined,
  response_format: (v) => v === undefined,
  provider_config: (v) => v === undefined,
  model_mapping: (v) => v === undefined,
  // Resolved (and removed) by the preset step before validation; still present only when unusable.
  preset_id: (v) => v === undefined,
};

/** The same checks by name, for lookups by a body's own keys (no inherited `constructor` & co). */
const FIELD_CHECK_BY_NAME: ReadonlyMap<string, (v: unknown) => boolean> = new Map(Object.entries(FIELD_CHECKS));

// A field added to (or removed from) the schema must be handled above: refuse to start otherwise.
const schemaFields = Object.keys(ChatCompletionRequest.shape).sort().join(',');
if (schemaFields !== Object.keys(FIELD_CHECKS).sort().join(',')) throw new Error(`relay fast validation is out of date with ChatCompletionRequest (${schemaFields})`);

/** True only if zod would accept `body` and return it as it is (unknown top-level keys pass, as with zod's looseObject). */
export function isPlainChatRequest(body: unknown): body is ChatCompletionRequest {
  if (!isObject(body) || body.model === undefined || body.messages === undefined) return false;
  // Only the fields the body has: every check passes an absent (undefined) field, and a body has
  // a few of the schema's twenty-odd fields.
  for (const key in body) {
    const check = FIELD_CHECK_BY_NAME.get(key);
// eslint-disable-next-line switchyard/no-string-index-lookup -- an own key of the parsed body (for-in), and one of the schema's fields
    if (check !== undefined && !check(body[key])) return false;
  }
  return true;
}

/** The body as the relay takes it, or the 400 naming the first bad field. */
export function parseChatRequest(body: unknown): { value: ChatCompletionRequest; error?: undefined } | { value?: undefined; error: AppError } {
  if (isPlainChatRequest(body)) return { value: body };
  const result = ChatCompletionRequest.safeParse(body);
  if (result.success) return { value: result.data };
  const validation = result.error.issues.map((issue) => ({ instancePath: `/${issue.path.join('/')}`, message: issue.message }));
  return { error: validationError({ validation, validationContext: 'body' }) };
}

/** Whether a key may use a model (GET /v1/models lists only those). */
export function isModelAllowed(key: ActiveKey, model: string): boolean {
  const resolved = ownValue(key.policy.model_aliases, model) ?? model;
  return !key.blockedModels.has(resolved) && (key.allowedModels.size === 0 || key.allowedModels.has(resolved));
}

export const ModelList = z.object({
  object: z.literal('list'),
  data: z.array(z.object({ id: z.string(), object: z.literal('model'), created: z.number(), owned_by: z.string() })),
});
export type ModelList = z.infer<typeof ModelList>;

export interface ResolvedCaller {
  caller: RelayCaller;
  key: ActiveKey | null;
}

export class ChatEndpoint {
  constructor(private readonly ctx: AppContext) {}

  /**
   * API clients present an API key (`Bearer sk-...`): authenticated from the in-memory key
   * directory (401 unauthorized / key_expired). The web UI and users with a session use their
   * access token.
   */
  async caller(request: HttpRequestLike): Promise<ResolvedCaller> {
    return this.callerNow(request) ?? (await this.verifiedCaller(request));
  }

  /** The caller once its access token is verified (the signature check not cached yet, or a cookie). */
  private async verifiedCaller(request: HttpRequestLike): Promise<ResolvedCaller> {
    return this.sessionCaller(await requirePrincipal(request, this.ctx.tokens));
  }

  /**
   * The caller when it is known without waiting (an API key, or an access token whose signature
   * check is cached), else undefined. Throws what `caller` would reject with.
   */
  private callerNow(request: HttpRequestLike): ResolvedCaller | undefined {
    const header = request.headers.authorization;
    if (typeof header === 'string' && header.startsWith(BEARER_KEY)) {
      const key = this.ctx.keyGate.authenticate(header.slice(7).trim(), this.ctx.views.keys.state);
      return { caller: { tenantId: key.tenantId, userId: key.userId, keyId: key.id }, key };
    }
    const principal = principalNow(request, this.ctx.tokens);
    if (principal === undefined) return undefined;
    if (principal === null) throw new UnauthorizedError();
    return this.sessionCaller(principal);
  }

  private sessionCaller(principal: Principal): ResolvedCaller {
    if (!this.ctx.rbac.allows(principal.role, 'chat:use')) throw new ForbiddenError('this account may not use the relay (permission chat:use)', 'forbidden');
    return { caller: { tenantId: principal.tenantId, userId: principal.userId, keyId: null }, key: null };
  }

  /** GET /v1/models: the models the caller may use (an API key sees only what it may call). */
  async models(request: HttpRequestLike): Promise<ModelList> {
    const { caller, key } = await this.caller(request);
    if (key) this.ctx.billing.assertRelayEnabled(key.tenantId);
    const models = this.ctx.relay.models(caller).filter((id) => !key || isModelAllowed(key, id));
    return { object: 'list', data: models.map((id) => ({ id, object: 'model', created: 0, owned_by: 'switchyard' })) };
  }

  /**
   * Answers one chat request. Errors are thrown (as AppError when they are the client's answer)
   * for the HTTP server to render; the usage event is published either way.
   */
  async handle(request: HttpRequestLike, response: RelayResponse, rawBody: unknown, options: { deprecatedAlias?: boolean } = {}): Promise<void> {
    const { ctx } = this;
    if (options.deprecatedAlias) {
      response.setHeader('deprecation', 'true');
      response.setHeader('link', '</v1/chat/completions>; rel="successor-version"');
    }
    // Without an await when nothing needs one: each is a promise and a microtask per request.
    const { caller, key } = this.callerNow(request) ?? (await this.verifiedCaller(request));
    let body = rawBody;
    let presetFailure: AppError | null = null;
    // The preset goes first, so that it can supply the model; requests without one pass at once.
    if (isObject(body) && typeof body.preset_id === 'string' && body.preset_id) {
      const applied = await this.applyRequestPreset(caller, key, body, body.preset_id);
      if (applied instanceof AppError) presetFailure = applied;
      else body = applied;
    }
    // The tenant switched its relay API off: API keys are refused (recorded); the UI is not.
    if (key && !ctx.billing.settings(key.tenantId).relay_api_enabled) await ctx.relay.reject(request, caller, relayDisabledError(), body);
    if (presetFailure) await ctx.relay.reject(request, caller, presetFailure, body);
    const parsed = parseChatRequest(body);
    if (parsed.error) await ctx.relay.reject(request, caller, parsed.error, body);
    const input = parsed.value!;
    try {
      if (key) await this.applyKey(request, response, caller, key, input);
      // Session callers (the chat UI): credits / subscription, from memory (429 insufficient_quota).
      else ctx.billing.admit(caller, routedModel(input.model, input));
    } catch (error) {
      // Refused by the key's rules or by billing: still one usage event, then the documented answer.
      if (error instanceof AppError) await ctx.relay.reject(request, caller, error, input);
      throw error;
    }
    await ctx.relay.chatCompletions(request, response, input, caller);
  }

  /**
   * The key's rules, in their documented order (model, source, then credits / subscription
   * coverage from memory, then rate limits, concurrency and quota in one counters round trip).
   * The ticket settles real usage when the request ends.
   */
  private async applyKey(request: HttpRequestLike, response: RelayResponse, caller: RelayCaller, key: ActiveKey, body: ChatCompletionRequest) {
    const { keyGate, billing } = this.ctx;
    const model = keyGate.resolveModel(key, body.model);
    // The request's own model_mapping may point an allowed name at another model: the key's rules
    // apply to where the request really goes, too.
    const mappedTo = ownValue(body.model_mapping, body.model)?.actual_model;
    if (mappedTo !== undefined && mappedTo !== model) keyGate.resolveModel(key, mappedTo);
    keyGate.checkSource(key, request);
    billing.admit(caller, routedModel(model, body));
    const ticket = await keyGate.admit(key, model, body);
    // Rate-limit headers go on every answer, streamed ones included.
    for (const [name, value] of Object.entries(ticket.headers)) response.setHeader(name, value);
    caller.model = model === body.model ? undefined : model;
    caller.onFinish = (usage) => void ticket.settle(usage);
  }

  /** The body with the preset applied (src/relay/presets.ts), or the 404 to answer. */
  private async applyRequestPreset(caller: RelayCaller, key: ActiveKey | null, body: Record<string, unknown>, presetId: string): Promise<Record<string, unknown> | AppError> {
    const row = caller.userId === null ? undefined : await findVisiblePreset(this.ctx.sql.db, { tenantId: caller.tenantId, userId: caller.userId }, presetId);
    if (!row) return new NotFoundError(`preset ${presetId} not found`, 'preset_not_found');
    const served = new Set(this.ctx.relay.models(caller));
    return applyPreset(body, presetDocument(row), (model) => served.has(model) && (!key || isModelAllowed(key, model)));
  }
}
