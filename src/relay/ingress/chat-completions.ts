/**
 * The chat-completions ingress (`POST /v1/chat/completions` and its aliases): how its body becomes
 * the relay's request. The request's preset is applied first (src/relay/presets.ts: it may supply
 * the model), then the body is validated against the schema (src/relay/schema.ts). Everything
 * else a request passes through is the gate's (src/relay/gate.ts), shared by every ingress.
 */
import { BadRequestError, NotFoundError, type AppError } from '../../errors.js';
import type { ReadModelDb } from '../../projections/runtime/projection.js';
import { findVisiblePreset, presetDocument } from '../../queries/presets.js';
import { applyPreset } from '../presets.js';
import { ChatCompletionRequest, ClientChatRequest } from '../schema.js';
import { validationError } from '../../api/errors.js';
import type { ResolvedCaller } from '../access/caller.js';
import { Refused, type Ingress, type Prepared, type UsableModels } from '../gate.js';
import type { FileAttachments } from '../../files/attachments.js';
import { attachAll, hasFileParts, inlineFileRefusal, resolveFileParts } from '../files.js';
import type { ChatExchange, Relay, RelayExchange } from '../relay.js';

/**
 * The shapes nearly every chat request has, checked by hand: parsing a request with zod was a
 * visible share of the relay's CPU time (docs/history/benchmarks-2026-11-21.md). This accepts a STRICT SUBSET of what
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

/**
 * Bodies (zod parsed) whose messages name files: they are resolved before the relay sees them.
 * Marked while parsing, so the common request (no files, the fast path) is never scanned.
 */
const NAMES_FILES = new WeakSet<ClientChatRequest>();

/** The body as the relay takes it, or the 400 naming the first bad field. */
export function parseChatRequest(body: unknown): { value: ChatCompletionRequest; error?: undefined } | { value?: undefined; error: AppError } {
  const parsed = parseClientChatRequest(body);
  if (parsed.value !== undefined && !namesNoFiles(parsed.value)) {
    return { error: new BadRequestError('file parts are not accepted here', 'invalid_request', 'messages') };
  }
  return parsed as { value: ChatCompletionRequest } | { error: AppError };
}

/** The body as a client sent it (file parts allowed), or the 400 naming the first bad field. */
export function parseClientChatRequest(body: unknown): { value: ClientChatRequest; error?: undefined } | { value?: undefined; error: AppError } {
  if (isPlainChatRequest(body)) return { value: body };
  const result = ClientChatRequest.safeParse(body);
  if (result.success) {
    if (hasFileParts(result.data.messages)) NAMES_FILES.add(result.data);
    return { value: result.data };
  }
  const inlineFile = inlineFileRefusal(body);
  if (inlineFile !== null) return { error: inlineFile };
  const validation = result.error.issues.map((issue) => ({ instancePath: `/${issue.path.join('/')}`, message: issue.message }));
  return { error: validationError({ validation, validationContext: 'body' }) };
}

/** A request with no file part is the relay's request as it is. */
const namesNoFiles = (body: ClientChatRequest): body is ChatCompletionRequest => !NAMES_FILES.has(body);

/** The chat-completions ingress; `db` holds the presets read model, `attachments` the caller's files. */
export function chatCompletionsIngress(db: ReadModelDb, attachments: FileAttachments): Ingress<ClientChatRequest> {
  return {
    prepare(body, resolved, usable) {
      // Requests without a preset pass as they are.
      if (!isObject(body) || typeof body.preset_id !== 'string' || !body.preset_id) return body;
      return withPreset(db, body, body.preset_id, resolved, usable);
    },
    parse: parseClientChatRequest,
    relay: (relay, exchange) => {
      const body = exchange.body;
      if (namesNoFiles(body)) return relay.complete(exchange as RelayExchange<typeof body>);
      return relayWithFiles(relay, exchange, body, attachments);
    },
  };
}

/** The request with its file parts replaced by the caller's files (src/relay/files.ts), relayed. */
async function relayWithFiles(relay: Relay, exchange: RelayExchange<ClientChatRequest>, body: ClientChatRequest, attachments: FileAttachments): Promise<void> {
  const { caller } = exchange;
  const { messages, images } = await resolveFileParts(body.messages, (requested) => attachAll(attachments, caller.userId, caller.tenantId, requested));
  const resolved: ChatExchange = { ...exchange, body: { ...body, messages }, fileImages: images.size === 0 ? undefined : images };
  return relay.complete(resolved);
}

/** The body with its preset applied, or the 404 (recorded as the request's refusal). */
async function withPreset(db: ReadModelDb, body: Record<string, unknown>, presetId: string, resolved: ResolvedCaller, usable: UsableModels): Promise<Prepared | Refused> {
  const { caller } = resolved;
  const row = caller.userId === null ? undefined : await findVisiblePreset(db, { tenantId: caller.tenantId, userId: caller.userId }, presetId);
  if (!row) return new Refused(body, new NotFoundError(`preset ${presetId} not found`, 'preset_not_found'));
  return applyPreset(body, presetDocument(row), usable(resolved));
}
