/**
 * The last step of the OpenAPI document, pure: what @fastify/swagger and the zod transform leave
 * to us so that code generators get a good document — an `operationId` and `security` per
 * operation (from OPERATIONS), the streamed answer's event schema as `text/event-stream`, the
 * shared error body on every operation's error responses,
 * `servers`, named wildcards, plain `$ref`s, null in nullable enums, and only the component
 * schemas something references,
 * under their own names (zod names a request body's schema `<id>Input`).
 */
import { ownValue } from '../../own.js';
import type { Access, Operation } from './operations.js';

type Json = Record<string, unknown>;

export interface OpenApiDocument {
  openapi: string;
  paths?: Record<string, Record<string, Json>>;
  components?: { schemas?: Record<string, unknown>; securitySchemes?: Record<string, unknown> };
  servers?: Array<{ url: string; description?: string }>;
  [key: string]: unknown;
}

export interface FinishOptions {
  operations: Readonly<Record<string, Operation>>;
  /** Paths that answer in maintenance mode (no 503 there). */
  maintenanceExempt: (path: string) => boolean;
  servers: Array<{ url: string; description?: string }>;
}

const SCHEMAS = '#/components/schemas/';
const METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

/** The security requirement of each kind of caller (scheme names of `SECURITY_SCHEMES`). */
const SECURITY: Record<Access, Array<Record<string, string[]>>> = {
  public: [],
  optional: [{ bearer: [] }, { session: [] }, {}],
  user: [{ bearer: [] }, { session: [] }],
  key: [{ apiKey: [] }, { bearer: [] }, { session: [] }],
  anthropic: [{ apiKey: [] }, { anthropicApiKey: [] }, { bearer: [] }, { session: [] }],
};

export const SECURITY_SCHEMES = {
  apiKey: { type: 'http', scheme: 'bearer', bearerFormat: 'sk-...', description: 'An API key (POST /v1/keys): `Authorization: Bearer sk-...`' },
  anthropicApiKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: "An API key in Anthropic's header (the Messages API)" },
  bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'An access token from POST /v1/auth/login or /v1/auth/refresh' },
  session: { type: 'apiKey', in: 'cookie', name: 'sy_session', description: 'The session cookie login sets (the web UI)' },
} as const;

/** The error responses an operation may give beyond those its route names, by what it is. */
function commonErrors(path: string, access: Access, exempt: boolean): Record<string, string> {
  const errors: Record<string, string> = {
    400: 'invalid_request (a field; param names it), unknown_field, invalid_json, duplicate_authorization (more than one Authorization header), unsupported_api_version (API-Version header)',
  };
  if (access === 'key' || access === 'anthropic') errors[401] = 'missing_api_key, invalid_authorization_header, invalid_api_key, key_expired, unauthorized (an access token that is not valid)';
  else if (access === 'user') errors[401] = 'unauthorized (no credentials, or not valid)';
  if (path.includes('/admin/')) errors[403] = 'forbidden (the role or permission is missing)';
  if (path.includes('{')) errors[404] = 'not_found (or a code naming what is missing)';
  errors[500] = 'internal_error';
  if (!exempt) errors[503] = 'maintenance (see Retry-After)';
  return errors;
}

const errorResponse = (component: string, description: string) => ({ description, content: { 'application/json': { schema: { $ref: `${SCHEMAS}${component}` } } } });

/** `{ allOf: [{ $ref }] }` (what zod writes for a described named schema) as the `$ref` itself. */
function plainRef(schema: unknown): unknown {
  if (typeof schema !== 'object' || schema === null) return schema;
  const { allOf, description, ...rest } = schema as Json;
  if (Array.isArray(allOf) && allOf.length === 1 && Object.keys(rest).length === 0 && typeof (allOf[0] as Json).$ref === 'string' && (description === undefined || typeof description === 'string')) {
    return { $ref: (allOf[0] as Json).$ref };
  }
  return schema;
}

function finishOperation(path: string, operation: Json, contract: Operation | undefined, options: FinishOptions): Json {
  const access = contract?.access ?? 'user';
  const anthropic = access === 'anthropic';
  const responses = new Map<string, Json>();
  for (const [status, response] of Object.entries((operation.responses as Record<string, Json> | undefined) ?? {})) {
    const content = response.content as Record<string, Json> | undefined;
    responses.set(status, content ? { ...response, content: Object.fromEntries(Object.entries(content).map(([type, media]) => [type, { ...media, schema: plainRef(media.schema) }])) } : response);
  }
  const ok = responses.get('200');
  if (contract?.stream && ok) {
    const content = { ...(ok.content as Record<string, Json> | undefined), 'text/event-stream': { schema: { $ref: `${SCHEMAS}${contract.stream}` } } };
    responses.set('200', { ...ok, content });
  }
  const errorComponent = anthropic ? 'AnthropicError' : 'Error';
  for (const [status, codes] of Object.entries(commonErrors(path, access, options.maintenanceExempt(path)))) {
    if (!responses.has(status)) responses.set(status, errorResponse(errorComponent, `${anthropic ? 'Anthropic-style' : 'OpenAI-style'} error. code: ${codes}`));
  }
  if (!responses.has('default')) responses.set('default', errorResponse(errorComponent, 'Any other error, in the same shape'));
  return {
    ...(contract && { operationId: contract.id }),
    ...operation,
    security: SECURITY[access],
    responses: Object.fromEntries(responses),
  };
}

/** Every `$ref` string under a value. */
function refsIn(value: unknown, found: Set<string>): Set<string> {
  if (Array.isArray(value)) for (const item of value) refsIn(item, found);
  else if (typeof value === 'object' && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      if (key === '$ref' && typeof item === 'string') found.add(item);
      else refsIn(item, found);
    }
  }
  return found;
}

/** Component schemas reachable from the paths, by name. */
function reachableSchemas(paths: unknown, schemas: Record<string, unknown>): Set<string> {
  const reached = new Set<string>();
  const pending = [...refsIn(paths, new Set())];
  while (pending.length > 0) {
    const ref = pending.pop()!;
    if (!ref.startsWith(SCHEMAS)) continue;
    const name = ref.slice(SCHEMAS.length);
    if (reached.has(name) || !Object.hasOwn(schemas, name)) continue;
    reached.add(name);
    pending.push(...refsIn(ownValue(schemas, name), new Set()));
  }
  return reached;
}

/**
 * `nullable: true` beside an `enum` without null: OpenAPI 3.0.3 says the enum still decides, so
 * null must be one of its values (validators refuse it otherwise, and zod leaves it out).
 */
function nullInNullableEnums<T>(value: T): T {
  if (Array.isArray(value)) return value.map((item: unknown) => nullInNullableEnums(item)) as T;
  if (typeof value !== 'object' || value === null) return value;
  const object = Object.fromEntries(Object.entries(value).map(([key, item]) => [key, nullInNullableEnums(item)])) as Json;
  if (object.nullable === true && Array.isArray(object.enum) && !object.enum.includes(null)) object.enum = [...(object.enum as unknown[]), null];
  return object as T;
}

/** Rewrites `$ref`s by a map of old to new component names. */
function renameRefs<T>(value: T, names: ReadonlyMap<string, string>): T {
  if (Array.isArray(value)) return value.map((item: unknown) => renameRefs(item, names)) as T;
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => {
      if (key === '$ref' && typeof item === 'string' && item.startsWith(SCHEMAS)) return [key, SCHEMAS + (names.get(item.slice(SCHEMAS.length)) ?? item.slice(SCHEMAS.length))];
      return [key, renameRefs(item, names)];
    }),
  ) as T;
}

export function finishDocument(document: OpenApiDocument, options: FinishOptions): OpenApiDocument {
  const paths = new Map<string, Record<string, Json>>();
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    const finished = new Map<string, Json>();
    let documentedPath = path;
    for (const [method, operation] of Object.entries(item)) {
      if (!METHODS.has(method)) {
        finished.set(method, operation);
        continue;
      }
      const contract = ownValue(options.operations, `${method.toUpperCase()} ${path}`);
      let done = finishOperation(path, operation, contract, options);
      const wildcard = contract?.wildcard;
      if (wildcard !== undefined) {
        documentedPath = path.replace('{*}', `{${wildcard}}`);
        done = { ...done, parameters: (done.parameters as Json[] | undefined)?.map((p) => (p.in === 'path' && p.name === '*' ? { ...p, name: wildcard } : p)) };
      }
      finished.set(method, done);
    }
    paths.set(documentedPath, Object.fromEntries(finished));
  }

  // Only what the operations use, under the name a generator should give it.
  const schemas = document.components?.schemas ?? {};
  const kept = reachableSchemas([...paths.values()], schemas);
  const names = new Map<string, string>();
  for (const name of kept) {
    const plain = name.endsWith('Input') ? name.slice(0, -'Input'.length) : name;
    names.set(name, plain !== name && !kept.has(plain) ? plain : name);
  }
  const finishedSchemas = [...kept].map((name) => [names.get(name)!, nullInNullableEnums(renameRefs(ownValue(schemas, name), names))] as const);
  return {
    ...document,
    servers: options.servers,
    components: { ...document.components, schemas: Object.fromEntries(finishedSchemas.sort(([a], [b]) => a.localeCompare(b))) },
    paths: nullInNullableEnums(renameRefs(Object.fromEntries(paths), names)),
  };
}
