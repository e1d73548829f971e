/**
 * The web UI (web/, built to dist/web by `npm ci`): hashed assets with a year's cache, index.html
 * never cached, and every other GET outside the API answered with index.html so client routes
 * (/chat/..., /admin/...) load the app. API paths keep their JSON 404.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import type { Config } from '../../config.js';
import { packageRoot } from '../../package-root.js';

/** Paths that are never the UI's: a miss there is the API's 404, not the app. */
const NOT_UI = /^\/(v1|api|health|openapi\.json|docs|metrics)(\/|$)/;

/** What the UI's page may load: only this origin (the API is same-origin), images also as data:/blob: URLs. */
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "img-src 'self' data: blob:",
  "style-src 'self' 'unsafe-inline'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** dist/web of this package. */
const defaultWebDir = (): string => join(packageRoot(), 'dist', 'web');

/** Whether a path is a client route of the UI (not the API, not a file). */
const isUiRoute = (path: string): boolean => !NOT_UI.test(path);

export function webRoutes(config: Config): FastifyPluginAsync {
  return async (app) => {
    if (!config.web.enabled) return;
    const dir = config.web.dir ?? defaultWebDir();
    const indexFile = join(dir, 'index.html');
    const index = existsSync(indexFile) ? readFileSync(indexFile) : null;
    if (index) {
      await app.register(fastifyStatic, {
        root: dir,
        prefix: '/',
        wildcard: false, // a route per built file, found at startup
        index: false,
        preCompressed: true, // the build's .br / .gz beside each asset, chosen by Accept-Encoding
        cacheControl: false,
        setHeaders(res, path) {
          const hashed = path.startsWith(join(dir, 'assets'));
          res.header('cache-control', hashed ? 'public, max-age=31536000, immutable' : 'no-cache');
          res.header('x-content-type-options', 'nosniff');
        },
      });
    }
    const page = (reply: FastifyReply) => {
      reply.header('content-security-policy', CONTENT_SECURITY_POLICY).header('x-content-type-options', 'nosniff').header('cache-control', 'no-cache');
      if (index) return reply.type('text/html; charset=utf-8').send(index);
      return reply
        .code(404)
        .type('text/html; charset=utf-8')
        .send('<!doctype html><title>Switchyard</title><p>The web UI is not built here: run <code>npm run build:web</code> (npm ci does it), or set WEB_DIR.</p>');
    };
    app.get('/', { schema: { hide: true } }, (_request, reply) => page(reply));
    app.get('/*', { schema: { hide: true } }, (request, reply) => {
      const path = request.url.split('?')[0]!;
      // An asset that is not there (an old hash after an upgrade) is a 404, not the page.
      if (!isUiRoute(path) || path.startsWith('/assets/')) return reply.callNotFound();
      return page(reply);
    });
  };
}
