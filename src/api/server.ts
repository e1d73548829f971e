/**
 * The HTTP server: fastify with zod schemas (validation, serialization and the OpenAPI document
 * at /openapi.json all come from the same schemas). Each area of the API is a plugin.
 */
import Fastify, { LogController, errorCodes, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { BadRequestError, ServiceUnavailableError } from '../errors.js';
import { requestIdOf } from '../http-exchange.js';
import type { Config } from '../config.js';
import { apiVersionOf } from './api-version.js';
import { principalOrNull } from './auth.js';
import type { AppContext } from './context.js';
import { installErrorHandling } from './errors.js';
import { parseJsonBody } from './json-body.js';
import { registerApiReference } from './openapi/index.js';
import { alertRoutes } from './routes/alerts.js';
import { authRoutes } from './routes/auth.js';
import { billingRoutes } from './routes/billing.js';
import { healthRoutes } from './routes/health.js';
import { channelRoutes } from './routes/channels.js';
import { maintenanceRoutes } from './routes/maintenance.js';
import { presetRoutes } from './routes/presets.js';
import { conversationRoutes } from './routes/conversations.js';
import { conversationMessageRoutes } from './routes/conversation-messages.js';
import { fileRoutes } from './routes/files.js';
import { keyRoutes } from './routes/keys.js';
import { logRoutes } from './routes/logs.js';
import { relayRoutes } from './routes/relay.js';
import { messagesRoutes } from './routes/messages.js';
import { responseRoutes } from './routes/responses.js';
import { subscriptionRoutes } from './routes/subscriptions.js';
import { systemRoutes } from './routes/system.js';
import { tenantRoutes } from './routes/tenants.js';
import { userRoutes } from './routes/users.js';
import { usageRoutes } from './routes/usage.js';
import { auditRoutes } from './routes/audit.js';
import { projectionRoutes } from './routes/projections.js';
import { logSlowApiRequests } from '../logs/process-logs.js';
import { webhookRoutes } from './routes/webhooks.js';
import { webRoutes } from './routes/web.js';

const duplicateAuthorizationError = () => new BadRequestError('the request has more than one Authorization header; send one', 'duplicate_authorization');

/** Paths that answer even in maintenance mode: probes, the API reference (/openapi.json, /docs), the way for admins to log in, and the web UI's files (its page shows the message). */
const MAINTENANCE_EXEMPT = [/^\/health(\/|$)/, /^\/openapi\.json$/, /^\/v1\/system\/version$/, /^\/v1\/auth\//, /^\/(?!v1\/|api\/)/];

/**
 * Largest request body read whole (JSON: chat requests carry base64 images). File uploads are not
 * bound by it: multipart bodies (/v1/files) are streamed to storage and limited by MAX_FILE_SIZE.
 */
export const bodyLimitOf = (config: Config) => config.server.maxBodySize;

/** Whether a raw header list (name, value, name, value...) has more than one Authorization field. */
export function hasDuplicateAuthorization(rawHeaders: readonly string[]): boolean {
  let seen = false;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    if (name.length === 13 && name.toLowerCase() === 'authorization') {
      if (seen) return true;
      seen = true;
    }
  }
  return false;
}

export async function buildServer(ctx: AppContext): Promise<FastifyInstance> {
  const app = Fastify({
    // pino's Logger is a FastifyBaseLogger; the cast only bridges the two packages' typings.
    loggerInstance: ctx.logger as unknown as FastifyBaseLogger,
    bodyLimit: bodyLimitOf(ctx.config),
    // Honour a well-formed incoming X-Request-Id so a request can be traced across services;
    // generated ids are time-ordered (see requestIdOf).
    genReqId: (req) => requestIdOf(req.headers['x-request-id']),
    // Per-request access lines only at debug: a gateway's info log should not grow with traffic.
    logController: new LogController({ disableRequestLogging: ctx.config.server.logLevel !== 'debug' && ctx.config.server.logLevel !== 'trace' }),
  }).withTypeProvider<ZodTypeProvider>();

  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  installErrorHandling(app, bodyLimitOf(ctx.config));
  // The same parser as the relay's own server: bounded nesting, prototype poisoning refused.
  const maxJsonDepth = ctx.config.server.maxJsonDepth;
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    if (body === '') return done(new errorCodes.FST_ERR_CTP_EMPTY_JSON_BODY(), undefined); // as fastify's default parser
    try {
      done(null, parseJsonBody(body as string, maxJsonDepth));
    } catch (error) {
      done(error as Error, undefined);
    }
  });
  ctx.metrics.instrument(app);
  logSlowApiRequests(app, ctx.logger, ctx.config.logs.slowRequestMs);

  // A callback hook rather than an async one: every request runs it, and outside maintenance it
  // finishes synchronously, without a promise.
  const defaultApiVersion = ctx.config.api.version;
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    // node:http keeps the first of several Authorization fields; which one the client meant is a
    // guess, so refuse them (the relay's own server does the same).
    if (hasDuplicateAuthorization(request.raw.rawHeaders)) return done(duplicateAuthorizationError());
    // An API-Version this build does not speak is refused on every route (docs/api-versions.md).
    if (request.headers['api-version'] !== undefined) {
      try {
        apiVersionOf(request.headers, defaultApiVersion);
      } catch (error) {
        return done(error as Error);
      }
    }
    const maintenance = ctx.views.maintenance.state;
    if (!maintenance.enabled) return done();
    const path = request.url.split('?')[0]!;
    if (MAINTENANCE_EXEMPT.some((re) => re.test(path))) return done();
    void principalOrNull(request, ctx.tokens).then((principal) =>
      done(principal?.role === 'admin' ? undefined : new ServiceUnavailableError(maintenance.message, 'maintenance', { 'retry-after': '60' })),
    );
  });

  await registerApiReference(app, (path) => MAINTENANCE_EXEMPT.some((re) => re.test(path)));

  await app.register(healthRoutes(ctx));
  await app.register(systemRoutes(ctx));
  await app.register(maintenanceRoutes(ctx));
  await app.register(authRoutes(ctx));
  await app.register(tenantRoutes(ctx));
  await app.register(userRoutes(ctx));
  await app.register(channelRoutes(ctx));
  await app.register(relayRoutes(ctx.gate, ctx.config.api.version));
  await app.register(messagesRoutes(ctx.gate));
  await app.register(responseRoutes(ctx));
  await app.register(keyRoutes(ctx));
  await app.register(billingRoutes(ctx));
  await app.register(subscriptionRoutes(ctx));
  await app.register(usageRoutes(ctx));
  await app.register(auditRoutes(ctx));
  await app.register(projectionRoutes(ctx));
  await app.register(webhookRoutes(ctx));
  await app.register(presetRoutes(ctx));
  await app.register(conversationRoutes(ctx));
  await app.register(conversationMessageRoutes(ctx));
  await app.register(fileRoutes(ctx));
  await app.register(alertRoutes(ctx));
  await app.register(logRoutes(ctx));
  await app.register(webRoutes(ctx.config));
  return app;
}
