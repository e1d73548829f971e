/**
 * The API's reference: the OpenAPI document at /openapi.json, built by @fastify/swagger from the
 * routes' zod schemas (schemas registered with an id, `.meta({ id })`, become named components),
 * finished for code generators (document.ts), and the interactive page at /docs (@fastify/swagger-ui,
 * its assets served from the package: nothing from another origin). Both are built once, on the
 * first request; the routes' validation and the relay are untouched by any of it.
 */
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { createJsonSchemaTransformObject, jsonSchemaTransform } from 'fastify-type-provider-zod';
import { VERSION } from '../../version.js';
import { finishDocument, SECURITY_SCHEMES, type OpenApiDocument } from './document.js';
import { OPERATIONS } from './operations.js';

/** Where the page is. */
export const DOCS_PATH = '/docs';

/** What the page may load: only this origin; Swagger UI sets inline styles and draws icons as data: URLs. */
const DOCS_CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "img-src 'self' data:",
  "style-src 'self' 'unsafe-inline'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** The named schemas as OpenAPI 3.0 writes them (the package's default is JSON Schema 2020-12, as 3.1 does; the routes' schemas follow the document's version). */
const namedSchemas = createJsonSchemaTransformObject({ zodToJsonConfig: { target: 'openapi-3.0' } });

export async function registerApiReference(app: FastifyInstance, maintenanceExempt: (path: string) => boolean): Promise<void> {
  await app.register(swagger, {
    openapi: {
      info: {
        title: 'Switchyard API',
        version: VERSION,
        description:
          'OpenAI-compatible relay and admin API. Errors: {"error":{"message","type","code","param"}} (the Messages API: Anthropic\'s error shape). Interactive reference: /docs.',
      },
      components: { securitySchemes: SECURITY_SCHEMES },
      security: [{ bearer: [] }, { session: [] }],
    },
    transform: jsonSchemaTransform,
    transformObject: (input) =>
      finishDocument(namedSchemas(input) as OpenApiDocument, {
        operations: OPERATIONS,
        maintenanceExempt,
        // The document is served by the API it describes: relative to where it was fetched.
        servers: [{ url: '/', description: 'this server' }],
      }) as ReturnType<typeof namedSchemas>,
  });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  await app.register(swaggerUi, {
    routePrefix: DOCS_PATH,
    staticCSP: DOCS_CONTENT_SECURITY_POLICY,
    theme: { title: 'Switchyard API reference' },
    uiConfig: { displayOperationId: true, deepLinking: true, tryItOutEnabled: false },
  });
}
