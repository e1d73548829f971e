/**
 * Errors in Anthropic's shape: `{"type":"error","error":{"type","message"},"request_id"}` with the
 * HTTP status the relay chose (its headers too: Retry-After, rate limits). The relay's own error
 * code has no field there; it is kept at the start of the message (`model_not_allowed: ...`,
 * unless it is a generic one such as `invalid_request`), so a client still sees which refusal it met.
 */
import { AppError } from '../../../errors.js';
import type { AnthropicErrorBody, AnthropicErrorType } from './schema.js';

/** Codes Anthropic's own types name better than the status does. */
const TYPE_BY_CODE: ReadonlyMap<string, AnthropicErrorType> = new Map([
  ['insufficient_quota', 'billing_error'],
  ['upstream_timeout', 'timeout_error'],
  ['upstream_busy', 'overloaded_error'],
  ['overloaded_error', 'overloaded_error'],
  ['rate_limit_error', 'rate_limit_error'],
  ['api_error', 'api_error'],
]);

/** The Anthropic error type of a status (and the relay's code, when it says more). */
export function anthropicErrorType(status: number, code = ''): AnthropicErrorType {
  const byCode = TYPE_BY_CODE.get(code);
  if (byCode !== undefined) return byCode;
  switch (status) {
    case 400:
    case 422:
      return 'invalid_request_error';
    case 401:
      return 'authentication_error';
    case 402:
      return 'billing_error';
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 413:
      return 'request_too_large';
    case 429:
      return 'rate_limit_error';
    case 503:
    case 529:
      return 'overloaded_error';
    case 504:
      return 'timeout_error';
    default:
      return status < 500 ? 'invalid_request_error' : 'api_error';
  }
}

export function anthropicErrorBody(type: AnthropicErrorType, message: string, requestId?: string): AnthropicErrorBody {
  return requestId === undefined ? { type: 'error', error: { type, message } } : { type: 'error', error: { type, message }, request_id: requestId };
}

export interface AnthropicErrorAnswer {
  status: number;
  headers: Readonly<Record<string, string>>;
  body: AnthropicErrorBody;
}

/** Codes that say no more than the error type: not repeated in the message. */
const GENERIC_CODES: ReadonlySet<string> = new Set(['invalid_request', 'unauthorized', 'forbidden', 'not_found']);

/** An error as Anthropic's API would answer it; anything that is no AppError is a 500 that reveals nothing. */
export function anthropicErrorAnswer(error: unknown, requestId: string): AnthropicErrorAnswer {
  if (!(error instanceof AppError)) return { status: 500, headers: {}, body: anthropicErrorBody('api_error', 'internal server error', requestId) };
  const type = anthropicErrorType(error.status, error.code);
  // An anthropic upstream's own refusal carries its type as the code: nothing to add then.
  const named = GENERIC_CODES.has(error.code) || error.code === type || error.message.startsWith(error.code);
  const message = named ? error.message : `${error.code}: ${error.message}`;
  return { status: error.status, headers: error.headers, body: anthropicErrorBody(type, message, requestId) };
}
