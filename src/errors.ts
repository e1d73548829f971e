/**
 * The one error hierarchy. Every failure that can reach a client is an AppError: it knows its
 * HTTP status and the OpenAI-style `type` and `code` it is rendered with
 * (`{"error":{"message","type","code"}}`, see src/api/errors.ts).
 */
export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    readonly code: string,
    message: string,
    /** Extra response headers (Retry-After, rate-limit headers...). */
    readonly headers: Readonly<Record<string, string>> = {},
    /** Name of the offending request field, when there is one. */
    readonly param: string | null = null,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class BadRequestError extends AppError {
  constructor(message: string, code = 'invalid_request', param: string | null = null) {
    super(400, 'invalid_request_error', code, message, {}, param);
  }
}

export class UnauthorizedError extends AppError {
  constructor(message = 'unauthorized', code = 'unauthorized') {
    super(401, 'authentication_error', code, message);
  }
}

export class ForbiddenError extends AppError {
  constructor(message: string, code = 'forbidden') {
    super(403, 'permission_error', code, message);
  }
}

export class NotFoundError extends AppError {
  constructor(message: string, code = 'not_found') {
    super(404, 'not_found_error', code, message);
  }
}

export class ConflictError extends AppError {
  constructor(message: string, code = 'conflict', param: string | null = null) {
    super(409, 'conflict_error', code, message, {}, param);
  }
}

/** The request body is larger than a limit allows (file_too_large, storage_quota_exceeded). */
export class PayloadTooLargeError extends AppError {
  constructor(message: string, code = 'payload_too_large', param: string | null = null) {
    super(413, 'invalid_request_error', code, message, {}, param);
  }
}

export class ServiceUnavailableError extends AppError {
  constructor(message: string, code = 'service_unavailable', headers: Record<string, string> = {}) {
    super(503, 'service_unavailable', code, message, headers);
  }
}

/**
 * The upstream's answer cannot be relayed: too large, unreadable, or not the shape its API
 * promises. A 502 whose message is written for the caller (the internals go to the log).
 */
export class UpstreamFaultError extends AppError {
  constructor(message: string, code = 'bad_upstream_response') {
    super(502, 'upstream_error', code, message);
  }
}

/**
 * Every connection to the upstream's origin is busy (HTTP_MAX_CONNS_PER_HOST) and the request
 * waited UPSTREAM_QUEUE_TIMEOUT for one: a 503 with Retry-After, instead of a wait without end.
 */
export class UpstreamBusyError extends AppError {
  constructor(waitedMs: number, retryAfterSeconds: number) {
    super(
      503,
      'upstream_error',
      'upstream_busy',
      `every connection to the upstream is in use and none came free within ${formatSeconds(waitedMs)}; retry after ${retryAfterSeconds} s`,
      { 'retry-after': String(retryAfterSeconds) },
    );
  }
}

function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(3).replace(/0+$/, '')} s`;
}

/** Optimistic concurrency: the stream moved on since the caller read it. */
export class WrongExpectedVersionError extends ConflictError {
  constructor(
    readonly stream: string,
    readonly expected: number | 'any',
    readonly actual: number,
  ) {
    super(`stream ${stream} is at version ${actual}, expected ${expected}`, 'concurrency_conflict');
  }
}

/** A command that the current state does not allow (decided by a decider, not by I/O). */
export class DomainError extends AppError {
  constructor(message: string, code = 'invalid_command') {
    super(422, 'invalid_request_error', code, message);
  }
}

/** Startup configuration problem: printed and the process exits. Never reaches HTTP. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** A command line the CLI cannot run (unknown option, a value of the wrong form): one line, no stack. */
export class UsageError extends Error {
  constructor(
    message: string,
    /** The command whose help to point at. */
    readonly command?: string,
  ) {
    super(message);
    this.name = 'UsageError';
  }
}

/**
 * An event store that cannot remove old commits (archival): KurrentDB through this adapter, or a
 * JetStream stream created with deny_purge. Reaches operators through the CLI, never HTTP.
 */
export class ArchivalNotSupportedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ArchivalNotSupportedError';
  }
}

/**
 * The OCR engine itself cannot work (failed to start, its thread died, closed), as against one
 * image it cannot read. Stays inside file processing: the file ends in `file_processing_error`
 * with "OCR not available".
 */
export class OcrUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OcrUnavailableError';
  }
}
