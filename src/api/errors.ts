/**
 * Renders every failure as an OpenAI-style body: `{"error":{"message","type","code","param"}}`.
 * Unknown errors become a 500 whose message reveals nothing internal (the details go to the log).
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AppError, BadRequestError } from '../errors.js';

/** The error body of every API answer but the Messages API's: a named schema (`Error`) of the OpenAPI document. */
export const ErrorBody = z
  .object({
    error: z.object({
      message: z.string().describe('what went wrong, for people'),
      type: z.string().describe('invalid_request_error, authentication_error, permission_error, server_error...'),
      code: z.string().describe('what went wrong, for programs: each operation lists its codes'),
      param: z.string().nullable().describe('the request field at fault, if one is'),
    }),
  })
  .meta({ id: 'Error' });
export type ErrorBody = z.infer<typeof ErrorBody>;

/** An error answer in the OpenAPI document; `codes` lists the `code` values it can carry, and when. */
export function errorResponseSchema(codes: string) {
  return ErrorBody.describe(`OpenAI-style error. code: ${codes}`);
}

export function errorBody(message: string, type: string, code: string, param: string | null = null): ErrorBody {
  return { error: { message, type, code, param } };
}

/** An AppError as status, headers and body; null for anything else (an internal error). */
export function appErrorResponse(error: unknown): { status: number; headers: Readonly<Record<string, string>>; body: ErrorBody } | null {
  if (!(error instanceof AppError)) return null;
  return { status: error.status, headers: error.headers, body: errorBody(error.message, error.type, error.code, error.param) };
}

function sendAppError(reply: FastifyReply, error: AppError) {
  const { status, headers, body } = appErrorResponse(error)!;
  return reply.code(status).headers(headers).send(body);
}

/** "body.messages.0.role" style path from a validation error's instancePath ("/messages/0/role"). */
function fieldName(context: string | undefined, instancePath: string): string {
  const path = instancePath.replace(/^\//, '').split('/').filter(Boolean).join('.');
  return path || context || 'body';
}

/** A request-schema validation failure as the 400 clients get: the message names the field. */
export function validationError(error: { validation?: Array<{ instancePath: string; message?: string; keyword?: string; params?: Record<string, unknown> }>; validationContext?: string }): BadRequestError {
  // A field the schema does not know (a strict object): named in `param`, never dropped silently.
  const unknown = error.validation?.find((issue) => issue.keyword === 'unrecognized_keys');
  const names = unknown?.params?.keys;
  if (unknown && Array.isArray(names) && typeof names[0] === 'string') {
    const parent = fieldName(undefined, unknown.instancePath);
    const field = parent === 'body' || parent === '' ? names[0] : `${parent}.${names[0]}`;
    return new BadRequestError(`unknown ${error.validationContext ?? 'request'} field "${field}"`, 'unknown_field', field);
  }
  const first = error.validation?.[0];
  const field = fieldName(error.validationContext, first?.instancePath ?? '');
  return new BadRequestError(`invalid ${error.validationContext ?? 'request'} field "${field}": ${first?.message ?? 'invalid value'}`, 'invalid_request', field);
}

/** The 413 message every ingress gives: the limit and the setting that moves it. */
export function tooLargeMessage(limit: number): string {
  const mib = limit / (1024 * 1024);
  const shown = Number.isInteger(mib) ? `${mib} MiB` : `${limit} bytes`;
  return `request body is larger than the ${shown} limit (MAX_REQUEST_BODY_SIZE)`;
}

export function installErrorHandling(app: FastifyInstance, bodyLimit: number) {
  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    if (error instanceof AppError) {
      // A server-side failure the API answered on purpose (a dependency down, a timeout): the application log's. Maintenance is
      // not news; relay routes' failures are the relay's to log (it honours the tenant's error_logging).
      if (error.status >= 500 && error.code !== 'maintenance' && !request.routeOptions.schema?.tags?.includes('relay')) {
        request.log.warn({ category: 'application', component: 'http', event: 'api_error', status: error.status, code: error.code, route: request.routeOptions.url ?? null, err: error }, `${request.method} ${request.routeOptions.url ?? request.url.split('?')[0]} answered ${error.status} ${error.code}`);
      }
      return sendAppError(reply, error);
    }

    if (hasZodFastifySchemaValidationErrors(error)) return sendAppError(reply, validationError(error));
    if (error.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || error.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' || (error instanceof SyntaxError && error.statusCode === 400)) {
      return reply.code(400).send(errorBody(`request body is not valid JSON: ${error.message}`, 'invalid_request_error', 'invalid_json'));
    }
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      return reply.code(413).send(errorBody(tooLargeMessage(bodyLimit), 'invalid_request_error', 'request_too_large'));
    }
    if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      return reply.code(415).send(errorBody(`unsupported content type: ${request.headers['content-type'] ?? 'none'}`, 'invalid_request_error', 'unsupported_media_type'));
    }
    if (typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) {
      return reply.code(error.statusCode).send(errorBody(error.message, 'invalid_request_error', (error.code ?? 'invalid_request').toLowerCase()));
    }
    request.log.error({ category: 'application', component: 'http', event: 'internal_error', route: request.routeOptions.url ?? null, err: error }, 'unhandled error');
    return reply.code(500).send(errorBody('internal server error', 'server_error', 'internal_error'));
  });

  app.setNotFoundHandler((request, reply) =>
    reply.code(404).send(errorBody(`no route for ${request.method} ${request.url.split('?')[0]}`, 'invalid_request_error', 'not_found')),
  );
}
