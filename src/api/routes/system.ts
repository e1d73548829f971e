/** GET /v1/system/version: what is running and which API versions it speaks. */
import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { BUILD, VERSION } from '../../version.js';
import type { AppContext } from '../context.js';

export const VersionResponse = z.object({
  version: z.string(),
  api_versions: z.array(z.string()),
  default_api_version: z.string(),
  build: z.string(),
});

export function systemRoutes(ctx: AppContext): FastifyPluginAsyncZod {
  return async (app) => {
    app.get('/v1/system/version', { schema: { tags: ['system'], summary: 'Version and supported API versions', response: { 200: VersionResponse } } }, async () => ({
      version: VERSION,
      api_versions: ctx.config.api.supportedVersions,
      default_api_version: ctx.config.api.version,
      build: BUILD,
    }));
  };
}
