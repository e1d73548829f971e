/** GET /v1/system/version: what is running, which API versions it speaks, the release lines and the schema. */
import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { schemaVersion } from '../../adapters/sql/migrate.js';
import { API_VERSION_STATUS, API_VERSIONS, BUILD, RELEASES, VERSION } from '../../version.js';
import type { AppContext } from '../context.js';

export const VersionResponse = z.object({
  version: z.string().describe('the running release, e.g. 2.0.0'),
  api_versions: z
    .array(z.object({ version: z.enum(API_VERSIONS), status: z.enum(['legacy', 'current']) }))
    .describe('the API versions a request may name in its API-Version header (docs/api-versions.md)'),
  default_api_version: z.enum(API_VERSIONS).describe('the version of a request that names none (API_VERSION)'),
  build: z.string().describe('commit of the image, "dev" for a checkout'),
  releases: z.array(z.object({ version: z.string(), released: z.string().describe('quarter, e.g. 2024-Q2'), support: z.enum(['Current', 'Maintenance', 'End of Life']) })),
  schema_version: z.string().nullable().describe('the latest applied schema migration (schema_migrations.version)'),
}).meta({ id: 'SystemVersion' });

export function systemRoutes(ctx: AppContext): FastifyPluginAsyncZod {
  return async (app) => {
    app.get('/v1/system/version', { schema: { tags: ['system'], summary: 'Version, API versions, release lines and schema version', response: { 200: VersionResponse } } }, async () => ({
      version: VERSION,
      api_versions: ctx.config.api.supportedVersions.map((version) => ({ version, status: API_VERSION_STATUS[version] })),
      default_api_version: ctx.config.api.version,
      build: BUILD,
      releases: [...RELEASES],
      schema_version: await schemaVersion(ctx.sql.db),
    }));
  };
}
