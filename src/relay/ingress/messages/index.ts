/**
 * The Anthropic Messages ingress (`POST /v1/messages`): the body is validated against Anthropic's
 * request schema (./schema.ts), then relayed through the chat relay with both forms of the
 * request: the client's own body for channels that speak Anthropic's API natively (anthropic:
 * passed through, the answer untouched), and the chat form (./to-chat.ts) for every other kind,
 * whose answers are translated back (./from-chat.ts). Everything else (caller, key rules,
 * billing, admission, usage event) is the gate's.
 */
import type { z } from 'zod';
import { BadRequestError } from '../../../errors.js';
import { headerOf, type HttpRequestLike } from '../../../http-exchange.js';
import type { RelayCaller } from '../../access/caller.js';
import { asSent, type Ingress, type Parsed } from '../../gate.js';
import type { Relay } from '../../relay.js';
import { countedTokensOf, countTokensRequest, FORWARDED_HEADERS } from '../../providers/anthropic/native.js';
import type { NativeRequest } from '../../providers/provider.js';
import type { ChatCompletionRequest } from '../../schema.js';
import { countMessagesTokens } from './count-tokens.js';
import { messagesTranslation } from './from-chat.js';
import { CountTokensRequest, MessagesRequest } from './schema.js';
import { toChatRequest } from './to-chat.js';

/** Zod's first issue as Anthropic words it: `path: message` (an unknown field: "Extra inputs are not permitted"). */
function validationMessage(error: z.ZodError): BadRequestError {
  const issue = error.issues[0]!;
  if (issue.code === 'unrecognized_keys') {
    const at = [...issue.path, issue.keys[0]].join('.');
    return new BadRequestError(`${at}: Extra inputs are not permitted`, 'invalid_request', at);
  }
  const at = issue.path.join('.');
  return new BadRequestError(at ? `${at}: ${issue.message}` : issue.message, 'invalid_request', at || null);
}

/**
 * Validates `body` and returns it as it was sent (nothing in the schemas transforms a value, so
 * the checked body is the client's own, which an anthropic channel gets).
 */
function parseWith<S extends z.ZodType>(schema: S, body: unknown): Parsed<z.infer<S>> {
  const result = schema.safeParse(body);
  return result.success ? { value: body as z.infer<S> } : { error: validationMessage(result.error) };
}

export const parseMessagesRequest = (body: unknown): Parsed<MessagesRequest> => parseWith(MessagesRequest, body);
export const parseCountTokensRequest = (body: unknown): Parsed<CountTokensRequest> => parseWith(CountTokensRequest, body);

/** The client's anthropic-version and anthropic-beta, for an anthropic channel. */
export function forwardedHeaders(request: HttpRequestLike): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const name of FORWARDED_HEADERS) {
    const value = headerOf(request, name);
    if (value !== undefined) headers[name] = value;
  }
  return headers;
}

/**
 * The chat form, or (for what only Anthropic can serve: server tools, PDFs...) a stand-in with the
 * refusal, which channels of other kinds answer with (a 400) while an anthropic channel serves
 * the request natively.
 */
function chatFormOf(body: MessagesRequest): { chat: ChatCompletionRequest; unconvertible?: BadRequestError } {
  try {
    return { chat: toChatRequest(body) };
  } catch (error) {
    if (!(error instanceof BadRequestError)) throw error;
    const chat: ChatCompletionRequest = { model: body.model, messages: [], max_tokens: body.max_tokens };
    if (body.stream === true) chat.stream = true;
    return { chat, unconvertible: error };
  }
}

export const messagesIngress: Ingress<MessagesRequest> = {
  prepare: asSent,
  parse: parseMessagesRequest,
  relay(relay, exchange) {
    const { chat, unconvertible } = chatFormOf(exchange.body);
    const native: NativeRequest = { format: 'anthropic-messages', body: exchange.body as Record<string, unknown>, headers: forwardedHeaders(exchange.request) };
    return relay.complete({ ...exchange, body: chat, translation: messagesTranslation(exchange.body.model), native, unconvertible });
  },
};

/** A count_tokens answer, and who counted: the serving anthropic channel, or the relay's tokenizer. */
export interface TokenCount {
  input_tokens: number;
  source: 'upstream' | 'tokenizer';
}

/**
 * count_tokens: when the channel that would serve the model first is an anthropic one, it counts
 * (the request as sent, model replaced, to its /v1/messages/count_tokens: Claude's own count);
 * otherwise, or when that call does not answer 200 with a count, the relay's tokenizer does.
 */
export async function countTokens(relay: Relay, checked: { caller: RelayCaller; body: CountTokensRequest; model: string }, request: HttpRequestLike): Promise<TokenCount> {
  const native: NativeRequest = { format: 'anthropic-messages', body: checked.body as Record<string, unknown>, headers: forwardedHeaders(request) };
  const answer = await relay.nativeSideCall(checked.caller.tenantId, checked.model, 'anthropic-messages', (ctx) => countTokensRequest(native, ctx));
  const counted = answer?.status === 200 ? countedTokensOf(answer.text) : null;
  return counted === null ? { input_tokens: countMessagesTokens(checked.body), source: 'tokenizer' } : { input_tokens: counted, source: 'upstream' };
}
