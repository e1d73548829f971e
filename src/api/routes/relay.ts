/**
 * The OpenAI-compatible relay endpoints. `/v1/chat/completions` and `/api/v1/chat/completions`
 * are the same handler; `/v1/chat` is a deprecated alias that says so in a `Deprecation` header.
 */
import { z } from 'zod';
import { validatorCompiler, type FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { FastifyReply, FastifyRequest, FastifySchemaCompiler } from 'fastify';
import { AppError, ForbiddenError, NotFoundError } from '../../errors.js';
import type { ActiveKey } from '../../projections/keys.js';
import { findVisiblePreset, presetDocument } from '../../projections/presets.js';
import { relayDisabledError, routedModel } from '../../relay/access/billing-gate.js';
import { KEY_PREFIX } from '../../relay/access/key-gate.js';
import { applyPreset } from '../../relay/presets.js';
import type { RelayCaller } from '../../relay/relay.js';
import { ChatCompletion, ChatCompletionRequest } from '../../relay/schema.js';
import { requirePrincipal } from '../auth.js';
import { validationError } from '../errors.js';
import type { AppContext } from '../context.js';

export const ModelList = z.object({
  object: z.literal('list'),
  data: z.array(z.object({ id: z.string(), object: z.literal('model'), created: z.number(), owned_by: z.string() })),
});

/**
 * The shapes nearly every chat request has, checked by hand: parsing a request with zod was a
 * visible share of the relay's CPU time (docs/benchmarks.md). This accepts a STRICT SUBSET of what
 * `ChatCompletionRequest` accepts, and only bodies that zod would return unchanged (no nested
 * object with keys zod would strip); anything else (tools, image parts, Switchyard's extensions,
 * a value out of range...) goes through zod, so valid bodies are accepted and invalid ones get the
 * very same 400 as before. If a constraint in src/relay/schema.ts is tightened, tighten it here.
 */
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
  // Resolved (and removed) by the preset hook before validation; still present only when unusable.
  preset_id: (v) => v === undefined,
};

// A field added to (or removed from) the schema must be handled above: refuse to start otherwise.
const schemaFields = Object.keys(ChatCompletionRequest.shape).sort().join(',');
if (schemaFields !== Object.keys(FIELD_CHECKS).sort().join(',')) throw new Error(`relay fast validation is out of date with ChatCompletionRequest (${schemaFields})`);

/** True only if zod would accept `body` and return it as it is (unknown top-level keys pass, as with zod's looseObject). */
export function isPlainChatRequest(body: unknown): body is ChatCompletionRequest {
  if (!isObject(body) || body.model === undefined || body.messages === undefined) return false;
  for (const key in FIELD_CHECKS) {
    if (!FIELD_CHECKS[key]!(body[key])) return false;
  }
  return true;
}

/** zod's validator (as installed app-wide) with the hand check in front of it, for the chat body only. */
function chatValidatorCompiler<T>(route: Parameters<FastifySchemaCompiler<T>>[0]): ReturnType<FastifySchemaCompiler<T>> {
  const viaZod = validatorCompiler(route as unknown as Parameters<typeof validatorCompiler>[0]);
  if (route.httpPart !== 'body') return viaZod;
  return (data: unknown) => (isPlainChatRequest(data) ? { value: data } : viaZod(data));
}

/** Whether a key may use a model (GET /v1/models lists only those). */
function isModelAllowed(key: ActiveKey, model: string): boolean {
  const resolved = key.policy.model_aliases[model] ?? model;
  return !key.blockedModels.has(resolved) && (key.allowedModels.size === 0 || key.allowedModels.has(resolved));
}

export function relayRoutes(ctx: AppContext): FastifyPluginAsyncZod {
  /**
   * API clients present an API key (`Bearer sk-...`): authenticated from the in-memory key
   * directory (401 unauthorized / key_expired). The web UI and users with a session use their
   * access token.
   */
  const callers = new WeakMap<FastifyRequest, Promise<{ caller: RelayCaller; key: ActiveKey | null }>>();
  /** Once per request (the preset hook needs the caller before the handler does). */
  const callerOf = (request: FastifyRequest): Promise<{ caller: RelayCaller; key: ActiveKey | null }> => {
    let resolved = callers.get(request);
    if (!resolved) callers.set(request, (resolved = resolveCaller(request)));
    return resolved;
  };
  const resolveCaller = async (request: FastifyRequest): Promise<{ caller: RelayCaller; key: ActiveKey | null }> => {
    const header = request.headers.authorization;
    if (header !== undefined && header.startsWith(`Bearer ${KEY_PREFIX}`)) {
      const key = ctx.keyGate.authenticate(header.slice(7).trim(), ctx.views.keys.state);
      return { caller: { tenantId: key.tenantId, userId: key.userId, keyId: key.id }, key };
    }
    const principal = await requirePrincipal(request, ctx.tokens);
    if (!ctx.rbac.allows(principal.role, 'chat:use')) throw new ForbiddenError('this account may not use the relay (permission chat:use)', 'forbidden');
    return { caller: { tenantId: principal.tenantId, userId: principal.userId, keyId: null }, key: null };
  };

  /**
   * The key's rules, in their documented order (model, source, then credits / subscription
   * coverage from memory, then rate limits, concurrency and quota in one counters round trip).
   * The ticket settles real usage when the request ends.
   */
  const applyKey = async (request: FastifyRequest, reply: FastifyReply, caller: RelayCaller, key: ActiveKey, body: ChatCompletionRequest) => {
    const model = ctx.keyGate.resolveModel(key, body.model);
    // The request's own model_mapping may point an allowed name at another model: the key's rules
    // apply to where the request really goes, too.
    const mappedTo = body.model_mapping?.[body.model]?.actual_model;
    if (mappedTo !== undefined && mappedTo !== model) ctx.keyGate.resolveModel(key, mappedTo);
    ctx.keyGate.checkSource(key, request);
    ctx.billing.admit(caller, routedModel(model, body));
    const ticket = await ctx.keyGate.admit(key, model, body);
    // Set on the raw response so they also reach streamed answers (written with writeHead).
    for (const [name, value] of Object.entries(ticket.headers)) reply.raw.setHeader(name, value);
    caller.model = model === body.model ? undefined : model;
    caller.onFinish = (usage) => void ticket.settle(usage);
  };

  /** A `preset_id` that cannot be applied: answered (and recorded) by the handler. */
  const presetFailures = new WeakMap<FastifyRequest, AppError>();

  /**
   * preValidation: applies the request's preset (src/relay/presets.ts) before the body is
   * validated, so that a preset can supply the model. Requests without `preset_id` pass at once.
   */
  const resolvePreset = (request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void) => {
    // A callback hook: requests without a preset (nearly all) pass synchronously, with no promise.
    const body = request.body;
    if (!isObject(body) || typeof body.preset_id !== 'string' || !body.preset_id) return done(); // absent, or the schema's 400
    applyRequestPreset(request, body, body.preset_id).then(() => done(), done);
  };
  const applyRequestPreset = async (request: FastifyRequest, body: Record<string, unknown>, presetId: string) => {
    const { caller, key } = await callerOf(request);
    const row = caller.userId === null ? undefined : await findVisiblePreset(ctx.sql.db, { tenantId: caller.tenantId, userId: caller.userId }, presetId);
    if (!row) {
      presetFailures.set(request, new NotFoundError(`preset ${presetId} not found`, 'preset_not_found'));
      return;
    }
    const served = new Set(ctx.relay.models(caller));
    request.body = applyPreset(body, presetDocument(row), (model) => served.has(model) && (!key || isModelAllowed(key, model))) as ChatCompletionRequest;
  };

  return async (app) => {
    const schema = {
      tags: ['relay'],
      summary: 'Create a chat completion (OpenAI-compatible; `stream: true` answers text/event-stream)',
      body: ChatCompletionRequest,
      response: { 200: ChatCompletion.describe('with stream: true, a text/event-stream of chat.completion.chunk objects ending in data: [DONE]') },
    };
    for (const url of ['/v1/chat/completions', '/api/v1/chat/completions', '/v1/chat']) {
      // attachValidation: an invalid body still reaches the handler, so that it too is answered
      // with a 400 naming the field AND recorded as a usage event like every relay request.
      const options = {
        schema: url === '/v1/chat' ? { ...schema, deprecated: true, summary: 'Deprecated alias of /v1/chat/completions' } : schema,
        attachValidation: true,
        validatorCompiler: chatValidatorCompiler,
        preValidation: resolvePreset,
      };
      app.post(url, options, async (request, reply) => {
        if (url === '/v1/chat') {
          reply.header('deprecation', 'true');
          reply.header('link', '</v1/chat/completions>; rel="successor-version"');
        }
        const { caller, key } = await callerOf(request);
        // The tenant switched its relay API off: API keys are refused (recorded); the UI is not.
        if (key && !ctx.billing.settings(key.tenantId).relay_api_enabled) ctx.relay.reject(request, caller, relayDisabledError(), request.body);
        const presetFailure = presetFailures.get(request);
        if (presetFailure) ctx.relay.reject(request, caller, presetFailure, request.body);
        if (request.validationError) ctx.relay.reject(request, caller, validationError(request.validationError), request.body);
        try {
          if (key) await applyKey(request, reply, caller, key, request.body);
          // Session callers (the chat UI): credits / subscription, from memory (429 insufficient_quota).
          else ctx.billing.admit(caller, routedModel(request.body.model, request.body));
        } catch (error) {
          // Refused by the key's rules or by billing: still one usage event, then the documented answer.
          if (error instanceof AppError) ctx.relay.reject(request, caller, error, request.body);
          throw error;
        }
        await ctx.relay.chatCompletions(request, reply, request.body, caller);
        return reply;
      });
    }

    app.get('/v1/models', { schema: { tags: ['relay'], summary: 'Models the caller may use', response: { 200: ModelList } } }, async (request) => {
      const { caller, key } = await callerOf(request);
      if (key) ctx.billing.assertRelayEnabled(key.tenantId);
      const models = ctx.relay.models(caller).filter((id) => !key || isModelAllowed(key, id));
      return { object: 'list' as const, data: models.map((id) => ({ id, object: 'model' as const, created: 0, owned_by: 'switchyard' })) };
    });
  };
}
