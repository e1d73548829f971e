/**
 * The public port: the relay's own HTTP/1.1 server (src/api/http1/) in front of fastify.
 *
 * Chat-completion requests are the traffic of a gateway, and node:http's per-request objects plus
 * fastify's request lifecycle were about a third of what the serving thread spent on each one
 * (docs/history/benchmarks-2026-11-21.md). So the listening socket belongs to a lean server that answers
 * `POST /v1/chat/completions` (and its aliases) and `GET /v1/models` — what an API client calls —
 * itself, through the same relay gate (src/relay/gate.ts) as fastify's routes; every other request goes to fastify's
 * node:http server untouched, with its connection (a keep-alive connection is handed over at its
 * first other request and stays with fastify). Requests that need fastify's extras are handed over too:
 * maintenance mode (admins still get through there) and bodies that are not JSON (415).
 *
 * What a client sees is the same on both paths: status, headers (x-request-id, rate limits,
 * Deprecation), the error bodies, and the same metrics and debug access log lines.
 */
import type { Server as HttpServer } from 'node:http';
import { requestIdOf, type HttpRequestLike, type RelayResponse } from '../http-exchange.js';
import type { AppContext } from './context.js';
import { appErrorResponse, errorBody } from './errors.js';
import { parseJsonBody } from './json-body.js';
import { createHttp1Server, type Http1Request, type Http1Response, type Http1Server } from './http1/server.js';

/** The chat paths this server answers itself; `/v1/chat` is the deprecated alias. */
const CHAT_PATHS = new Set(['/v1/chat/completions', '/api/v1/chat/completions', '/v1/chat']);
const MODELS_PATH = '/v1/models';

/** The exact strings clients send are compared first: cheaper than the pattern on every request. */
const isJson = (contentType: string | undefined) =>
  contentType === 'application/json' || contentType === 'application/json; charset=utf-8' || (contentType !== undefined && /^application\/json\s*(;|$)/i.test(contentType));

const CHAT_OPTIONS = Object.freeze({ deprecatedAlias: false });
const DEPRECATED_CHAT_OPTIONS = Object.freeze({ deprecatedAlias: true });

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8' };

/** One request on the lean server, as the gate and the access checks read it. */
class RelayRequest implements HttpRequestLike {
  constructor(
    readonly method: string,
    readonly id: string,
    readonly headers: Record<string, string>,
    readonly socket: { remoteAddress?: string },
  ) {}
}

type RequestLabels = Readonly<{ method: string; route: string; status_code: string }>;

export function createRelayServer(ctx: AppContext, fallback: HttpServer, bodyLimit: number): Http1Server {
  const { logger, metrics } = ctx;
  const debug = logger.isLevelEnabled('debug');
  const maxJsonDepth = ctx.config.server.maxJsonDepth;
  /**
   * The metrics' label set of each (method, route, status) answered, made once: an object and a
   * status string fewer per request. Found by status, then by a scan of that status's few sets
   * (no key string to build and hash). Bounded: `accepts` admits four paths and two methods.
   */
  const labelSetsByStatus = new Map<number, RequestLabels[]>();
  const labelsOf = (method: string, route: string, status: number): RequestLabels => {
    let sets = labelSetsByStatus.get(status);
    if (sets === undefined) labelSetsByStatus.set(status, (sets = []));
    for (const labels of sets) if (labels.route === route && labels.method === method) return labels;
    const labels = Object.freeze({ method, route, status_code: String(status) });
    sets.push(labels);
    return labels;
  };

  const handle = async (req: Http1Request, res: Http1Response) => {
    const t0 = performance.now();
    const path = pathOf(req.url);
    const request = new RelayRequest(req.method, requestIdOf(req.headers['x-request-id']), req.headers, req.socket);
    // An Http1Response is a RelayResponse as it is.
    const response: RelayResponse & { statusCode: number } = res;
    response.setHeader('x-request-id', request.id);
    try {
      if (path === MODELS_PATH) {
        response.send(200, JSON_HEADERS, JSON.stringify(await ctx.gate.models(request)));
        return;
      }
      const body = parseJsonBody(req.body.toString('utf8'), maxJsonDepth);
      await ctx.gate.chatCompletions(request, response, body, path === '/v1/chat' ? DEPRECATED_CHAT_OPTIONS : CHAT_OPTIONS);
    } catch (error) {
      if (res.headersSent) throw error; // mid-stream: the server ends the connection
      const answer = appErrorResponse(error);
      if (!answer) logger.error({ err: error, reqId: request.id }, 'unhandled error');
      const { status, headers, body } = answer ?? { status: 500, headers: {}, body: errorBody('internal server error', 'server_error', 'internal_error') };
      response.send(status, { ...headers, ...JSON_HEADERS }, JSON.stringify(body));
    } finally {
      const seconds = (performance.now() - t0) / 1000;
      const status = response.statusCode || 500;
      const labels = labelsOf(req.method, path, status);
      metrics.httpRequests.inc(labels);
      metrics.httpDuration.observe(labels, seconds);
      if (response.statusCode >= 400) metrics.httpErrors.inc(labels);
      if (debug) logger.debug({ reqId: request.id, req: { method: req.method, url: req.url }, res: { statusCode: response.statusCode }, responseTime: seconds * 1000 }, 'request completed');
    }
  };

  return createHttp1Server({
    accepts: (method, path, headers) =>
      ((method === 'POST' && CHAT_PATHS.has(path) && isJson(headers['content-type'])) || (method === 'GET' && path === MODELS_PATH)) && !ctx.views.maintenance.state.enabled,
    handle,
    fallback,
    maxBodySize: bodyLimit,
    onError: (error) => logger.warn({ err: error }, 'relay connection error'),
  });
}

function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}
