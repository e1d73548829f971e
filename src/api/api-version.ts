/**
 * The API version of a request (docs/api-versions.md): the one its `API-Version` header names, or
 * the installation's default (API_VERSION). Every ingress reads it here: fastify's onRequest hook
 * and the relay's fronts (src/api/relay-server.ts). Without the header nothing is parsed: the
 * default is the answer.
 */
import { BadRequestError } from '../errors.js';
import { API_VERSIONS, API_VERSION_STATUS, isApiVersion, type ApiVersion } from '../version.js';

/** As clients send it; node:http hands headers over lower-cased. */
export const API_VERSION_HEADER = 'API-Version';
const HEADER_KEY = 'api-version';

/** The 400 of a version this build does not speak (OpenAI-style; `param` names the header). */
export function unsupportedApiVersion(asked: string): BadRequestError {
  const spoken = API_VERSIONS.map((v) => `${v} (${API_VERSION_STATUS[v]})`).join(', ');
  return new BadRequestError(`unsupported API version ${JSON.stringify(asked)} in the ${API_VERSION_HEADER} header: this server speaks ${spoken}`, 'unsupported_api_version', API_VERSION_HEADER);
}

/** The request's API version; throws unsupportedApiVersion for one this build does not speak. */
export function apiVersionOf(headers: Readonly<Record<string, string | string[] | undefined>>, fallback: ApiVersion): ApiVersion {
  const asked = headers[HEADER_KEY];
  if (asked === undefined) return fallback;
  // Twice the header (an array, or node's "v1, v2"): which one was meant is a guess, so refused.
  const text = Array.isArray(asked) ? asked.join(', ') : asked.trim().toLowerCase();
  if (isApiVersion(text)) return text;
  throw unsupportedApiVersion(Array.isArray(asked) ? text : asked);
}
