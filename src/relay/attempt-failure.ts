/**
 * What the answer of an upstream attempt means for the request: an HTTP error status or an
 * exception of the exchange becomes the client's answer (written for callers, with a stable code;
 * the exception itself only goes to the log), and whether another channel may do better.
 */
import { errors as undiciErrors } from 'undici';
import { AppError, UpstreamBusyError, UpstreamFaultError } from '../errors.js';
import type { Provider } from './providers/provider.js';
import type { UpstreamHeaders } from './upstream-pool.js';

/** What went wrong with one attempt, and whether another channel may do better. */
export class AttemptFailure extends Error {
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

/** The upstream's request-limit headers the client sees on an upstream 429 (they replace the API key's own). */
const FORWARDED_LIMIT_HEADERS = ['x-ratelimit-limit-requests', 'x-ratelimit-remaining-requests'] as const;

/** `into` plus the upstream's request-limit headers that are present and plain numbers. */
function upstreamLimitHeaders(headers: UpstreamHeaders, into: Record<string, string>): Record<string, string> {
  for (const name of FORWARDED_LIMIT_HEADERS) {
    const value = header(headers, name)?.trim();
    if (value !== undefined && /^\d{1,15}$/.test(value)) into[name] = value;
  }
  return into;
}

export function classifyStatus(provider: Provider, status: number, body: string, headers: UpstreamHeaders): AttemptFailure {
  const { message, code } = provider.parseError(status, body);
  if (status === 429) {
    const wait = retryAfterMs(header(headers, 'retry-after')) ?? RETRY_AFTER_DEFAULT_MS;
    const error = new AppError(429, 'rate_limit_error', 'upstream_rate_limited', `upstream rate limited: ${message}`, upstreamLimitHeaders(headers, { 'retry-after': String(Math.ceil(wait / 1000)) }));
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
  if (CONNECT_ERROR_CODES.has(code)) return new AppError(502, 'upstream_error', 'upstream_unavailable', 'upstream unreachable: the relay could not connect to it');
  return new AppError(502, 'upstream_error', 'upstream_connection_lost', 'the upstream closed the connection before its answer was complete');
}

/**
 * An exception of one attempt. Retried on the next channel when nothing reached the client yet,
 * except a response over the size limits: a channel that sends one is faulty, and asking another
 * would risk the same cost again.
 */
export function classifyException(error: unknown): AttemptFailure {
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
export function streamResponseFault(expected: string, headers: UpstreamHeaders): UpstreamFaultError | null {
  const encoding = header(headers, 'content-encoding');
  if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') {
    return new UpstreamFaultError('the upstream answered the stream with an encoded (compressed) body the relay did not ask for');
  }
  const contentType = header(headers, 'content-type');
  if (contentType === undefined || contentType.trim() === '') return null;
  const mediaType = mediaTypeOf(contentType);
  if (mediaType === expected) return null;
  // The upstream's value is named only when it is a plain media type (nothing else it sent is echoed).
  const named = mediaType.length <= 80 && MEDIA_TYPE.test(mediaType) ? mediaType : 'another media type';
  return new UpstreamFaultError(`the upstream answered the stream with ${named} instead of ${expected}`);
}


/**
 * "0 requests remaining" on a success: how long to cool the channel down (until the window
 * resets), else null.
 */
export function exhaustedWindowMs(headers: UpstreamHeaders): number | null {
  if (header(headers, 'x-ratelimit-remaining-requests') !== '0') return null;
  return resetDurationMs(header(headers, 'x-ratelimit-reset-requests')) ?? retryAfterMs(header(headers, 'retry-after')) ?? RETRY_AFTER_DEFAULT_MS;
}
