/**
 * The Responses API ingress (`POST /v1/responses`): validation, then `previous_response_id`
 * expanded from the caller's stored responses, then the relay — natively for channels whose
 * provider speaks the Responses API (openai, azure: the client's request with the conversation
 * in `input` and `store: false`), through the chat form everywhere else (to-chat.ts, from-chat.ts).
 * With `store` (the default), the answer is kept as a `response` aggregate before its last bytes
 * go out, so that a client can chain on it at once (read-your-writes).
 */
import type { CommandBus } from '../../../commands/bus.js';
import { responses } from '../../../commands/responses/decider.js';
import type { ResponseStoredData } from '../../../commands/responses/events.js';
import { validationError } from '../../../api/errors.js';
import type { Logger } from '../../../logger.js';
import type { ReadModelDb } from '../../../projections/runtime/projection.js';
import type { Projectors } from '../../../projections/runtime/projectors.js';
import { conversationItems, type ResponseOwner } from '../../../queries/responses.js';
import type { RelayCaller } from '../../access/caller.js';
import { asSent, type Ingress, type Parsed } from '../../gate.js';
import type { NativeRequest } from '../../providers/provider.js';
import type { RelayExchange } from '../../relay.js';
import type { AnswerTranslation } from '../../translation.js';
import { responseId, responseOfCompletion, ResponsesStreamWriter, type ResponseEcho } from './from-chat.js';
import { AnswerRecorder } from './recorder.js';
import { InputItem, refuseUnsupported, ResponsesRequest } from './schema.js';
import { inputItemsOf, toChatRequest } from './to-chat.js';
import type { FileAttachments } from '../../../files/attachments.js';
import type { FileImages } from '../../files.js';
import { namesFiles, resolveInputFiles, withNativeImages } from './files.js';

export interface ResponsesIngressDeps {
  /** The read models (stored responses). */
  db: ReadModelDb;
  commands: CommandBus;
  runner: Pick<Projectors, 'waitFor'>;
  logger: Logger;
  /** The caller's files, for `input_file` and `input_image` parts by `file_id` (files.ts). */
  attachments: FileAttachments;
}

/** The body as the ingress takes it, or the 400 naming the first bad (or unsupported) field. */
export function parseResponsesRequest(body: unknown): Parsed<ResponsesRequest> {
  const refused = refuseUnsupported(body);
  if (refused !== null) return { error: refused };
  const result = ResponsesRequest.safeParse(body);
  if (result.success) return { value: result.data };
  const validation = result.error.issues.map((issue) => ({ instancePath: `/${issue.path.join('/')}`, message: issue.message }));
  return { error: validationError({ validation, validationContext: 'body' }) };
}

/** Whose stored responses these are: the user (an API key acts for its user). */
export function responseOwnerOf(caller: RelayCaller): ResponseOwner {
  return { tenantId: caller.tenantId, ownerId: caller.userId ?? `key:${caller.keyId ?? ''}` };
}

/**
 * Stored items as the next request's input: messages, function calls and their outputs, without
 * the ids and statuses of the turn that made them (an upstream with `store: false` knows no such
 * ids); other item kinds (reasoning...) are left out.
 */
export function historyItems(stored: ReadonlyArray<Record<string, unknown>>): InputItem[] {
  const items: InputItem[] = [];
  for (const raw of stored) {
    const { id: _id, status: _status, ...item } = raw;
    const parsed = InputItem.safeParse(item);
    if (parsed.success) items.push(parsed.data);
  }
  return items;
}

/** The client's request for a native upstream: the conversation in `input`, nothing stored there. */
export function nativeBody(request: ResponsesRequest, history: readonly InputItem[]): Record<string, unknown> {
  const { previous_response_id: _previous, store: _store, ...rest } = request;
  return history.length === 0 ? rest : { ...rest, input: [...history, ...inputItemsOf(request)] };
}

const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

/** The fields of a response object that ResponseStored carries by name (the rest goes to `details`). */
const NAMED_FIELDS = new Set(['id', 'object', 'created_at', 'status', 'model', 'instructions', 'output', 'output_text', 'usage', 'previous_response_id', 'store']);

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** What ResponseStored says of an answered response (null: not one to keep, e.g. failed). */
export function storedResponseOf(final: Record<string, unknown>, request: ResponsesRequest, caller: RelayCaller): ResponseStoredData | null {
  const { id, status, model, created_at: createdAt, output, usage } = final;
  if (typeof id !== 'string' || id === '' || (status !== 'completed' && status !== 'incomplete') || !Array.isArray(output)) return null;
  // fromEntries defines own properties (a `__proto__` key stays a plain field).
  const details = Object.fromEntries(Object.entries(final).filter(([key]) => !NAMED_FIELDS.has(key)));
  return {
    response_id: id,
    owner_id: responseOwnerOf(caller).ownerId,
    user_id: caller.userId,
    key_id: caller.keyId,
    model: typeof model === 'string' ? model : request.model,
    status,
    created_at: typeof createdAt === 'number' && Number.isSafeInteger(createdAt) ? createdAt : Math.floor(Date.now() / 1000),
    previous_response_id: request.previous_response_id ?? null,
    instructions: request.instructions ?? null,
    input: inputItemsOf(request) as Array<Record<string, unknown>>,
    output: output.filter(isRecord),
    usage: isRecord(usage) ? usage : null,
    details,
  };
}

function translationOf(echo: ResponseEcho): AnswerTranslation {
  return {
    completion: (completion) => JSON.stringify(responseOfCompletion(echo, completion)),
    stream: () => new ResponsesStreamWriter(echo),
  };
}

export function responsesIngress(deps: ResponsesIngressDeps): Ingress<ResponsesRequest> {
  const keep = async (exchange: RelayExchange<ResponsesRequest>, recorder: AnswerRecorder): Promise<void> => {
    const data = recorder.final === null ? null : storedResponseOf(recorder.final, exchange.body, exchange.caller);
    if (data === null) return;
    try {
      const { position } = await deps.commands.execute(responses, data.response_id, { type: 'StoreResponse', response: data }, { tenantId: exchange.tenantId, causationId: exchange.requestId });
      // Read-your-writes: the answer's last bytes (held by the gate) go once a chain on it works.
      if (position !== null) await deps.runner.waitFor(position, { projections: ['responses'] });
    } catch (error) {
      // The client has its answer already (held, not lost): not keeping it is logged, not answered.
      deps.logger.error({ err: error, request_id: exchange.requestId, response_id: data.response_id }, 'the response could not be stored');
    }
  };

  return {
    prepare: asSent,
    parse: parseResponsesRequest,
    async relay(relay, exchange) {
      const { body, caller, usage } = exchange;
      const stored = body.previous_response_id ? await conversationItems(deps.db, responseOwnerOf(caller), body.previous_response_id) : [];
      let history = historyItems(stored);
      // Parts naming files are replaced (files.ts); the stored input keeps the ids, not the texts.
      let request = body;
      let fileImages: FileImages | undefined;
      let nativeRequest = body;
      let nativeHistory = history;
      if (namesFiles(history) || (typeof body.input !== 'string' && namesFiles(body.input))) {
        const resolved = await resolveInputFiles(deps.attachments, caller, inputItemsOf(body), history);
        request = { ...body, input: resolved.input };
        history = resolved.history;
        fileImages = resolved.images.size === 0 ? undefined : resolved.images;
        nativeRequest = fileImages === undefined ? request : { ...body, input: withNativeImages(resolved.input, resolved.images) };
        nativeHistory = fileImages === undefined ? history : withNativeImages(history, resolved.images);
      }
      const store = body.store !== false;
      const echo: ResponseEcho = { id: responseId(), createdAt: Math.floor(usage.startedAt.getTime() / 1000), request: body, store };
      const native: NativeRequest = { format: 'openai-responses', body: nativeBody(nativeRequest, nativeHistory), headers: NO_HEADERS };
      const recorder = store ? new AnswerRecorder(exchange.response) : null;
      await relay.complete({ ...exchange, body: toChatRequest(request, history), response: recorder ?? exchange.response, translation: translationOf(echo), native, fileImages });
      if (recorder !== null) await keep(exchange, recorder);
    },
  };
}
