/**
 * The public port: a front server that answers the relay's own routes itself and hands every
 * other request to fastify. Two fronts, chosen by RELAY_HTTP_SERVER (docs/decisions/0100):
 *  - `lean`: the relay's own HTTP/1.1 server (src/api/http1/); every other request goes to
 *    fastify's node:http server untouched, with its connection (a keep-alive connection is handed
 *    over at its first other request and stays with fastify).
 *  - `node`: a plain node:http server; every other request is given to fastify's request handler.
 * (`fastify`: no front, fastify listens itself and answers everything.) The lean front is the
 * default: per relayed request it costs the process less CPU than the node:http one (decision 0100
 * has the figures, and says when to measure again).
 *
 * Chat-completion requests are the traffic of a gateway, and fastify's request lifecycle is a
 * visible share of what the serving thread spends on each one. So a front answers
 * `POST /v1/chat/completions` (and its aliases), `POST /v1/responses`, `POST /v1/embeddings` and `GET /v1/models` — what an API client calls —
 * itself, through the same relay gate (src/relay/gate.ts) as fastify's routes. Requests that need fastify's extras
 * go to fastify: maintenance mode (admins still get through there) and bodies that are not JSON
 * (415).
 *
 * What a client sees is the same on every path: status, headers (x-request-id, rate limits,
 * Deprecation and Sunset), the error bodies (an unsupported API-Version header: 400), and the same
 * metrics and debug access log lines.
 */
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import type { Server as NetServer } from 'node:net';
import { requestIdOf, type HttpRequestLike, type RelayResponse } from '../http-exchange.js';
import type { AppContext } from './context.js';
import { appErrorResponse, errorBody, tooLargeMessage } from './errors.js';
import { parseJsonBody } from './json-body.js';
import { createHttp1Server, type Http1Server } from './http1/server.js';
import { nodeRelayResponse, type NodeRelayResponse } from './node-relay-response.js';
import { hasDuplicateAuthorization } from './server.js';
import { apiVersionOf } from './api-version.js';
import { responsesIngress } from '../relay/ingress/responses/index.js';
import { embeddingsIngress } from '../relay/ingress/embeddings.js';

/** A front server, as app.ts starts and stops it. */
export type FrontServer = NetServer & { closeIdleConnections(): void };

/** The chat paths a front answers itself; `/v1/chat` is the alias API v2 deprecates. */
const CHAT_PATHS = new Set(['/v1/chat/completions', '/api/v1/chat/completions', '/v1/chat']);
const MODELS_PATH = '/v1/models';
/** The Responses API's create (its stored responses' GET and DELETE are fastify's). */
const RESPONSES_PATH = '/v1/responses';
const EMBEDDINGS_PATH = '/v1/embeddings';

/** The exact strings clients send are compared first: cheaper than the pattern on every request. */
const isJson = (contentType: string | undefined) =>
  contentType === 'application/json' || contentType === 'application/json; charset=utf-8' || (contentType !== undefined && /^application\/json\s*(;|$)/i.test(contentType));

/**
 * Whether a front answers this request itself (false: fastify does). The one place that decides,
 * for both fronts; called with the request head, before its body is read.
 */
function answersItself(ctx: AppContext, method: string, path: string, contentType: string | undefined): boolean {
  return ((method === 'POST' && (CHAT_PATHS.has(path) || path === RESPONSES_PATH || path === EMBEDDINGS_PATH) && isJson(contentType)) || (method === 'GET' && path === MODELS_PATH)) && !ctx.views.maintenance.state.enabled;
}

const CHAT_OPTIONS = Object.freeze({ deprecatedAlias: false });
const DEPRECATED_CHAT_OPTIONS = Object.freeze({ deprecatedAlias: true });

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8' };

/** One request a front answers, as the gate and the access checks read it. */
class RelayRequest implements HttpRequestLike {
  constructor(
    readonly method: string,
    readonly id: string,
    readonly headers: Readonly<Record<string, string | string[] | undefined>>,
    readonly socket: { remoteAddress?: string },
  ) {}
}

/** What a front gives the shared answer: the request's parts, its body once read, a response. */
interface FrontExchange {
  method: string;
  url: string;
  headers: Readonly<Record<string, string | string[] | undefined>>;
  socket: { remoteAddress?: string };
  /** The whole body as text (not called for GET /v1/models). */
  body(): string;
}

type FrontResponse = RelayResponse & { readonly statusCode: number; readonly headersSent: boolean };

type RequestLabels = Readonly<{ method: string; route: string; status_code: string }>;

/**
 * Answers one request a front took (`answersItself`), with the metrics and debug access log line
 * fastify's routes get. Rejects only when the answer failed after its head was sent: the front
 * then ends the connection.
 */
function relayAnswerer(ctx: AppContext): (exchange: FrontExchange, response: FrontResponse) => Promise<void> {
  const { logger, metrics } = ctx;
  const debug = logger.isLevelEnabled('debug');
  const maxJsonDepth = ctx.config.server.maxJsonDepth;
  const defaultApiVersion = ctx.config.api.version;
  // Stateless: the same as fastify's route builds (src/api/routes/responses.ts).
  const responses = responsesIngress({ db: ctx.sql.db, commands: ctx.commands, runner: ctx.runner, logger: ctx.logger, attachments: ctx.files.attachments });
  /**
   * The metrics' label set of each (method, route, status) answered, made once: an object and a
   * status string fewer per request. Found by status, then by a scan of that status's few sets
   * (no key string to build and hash). Bounded: `answersItself` admits six paths and two methods.
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

  return async (exchange, response) => {
    const t0 = performance.now();
    const { method, url } = exchange;
    const path = pathOf(url);
    const request = new RelayRequest(method, requestIdOf(exchange.headers['x-request-id']), exchange.headers, exchange.socket);
    response.setHeader('x-request-id', request.id);
    try {
      // Without an API-Version header: one property read, the default.
      const apiVersion = apiVersionOf(exchange.headers, defaultApiVersion);
      if (path === MODELS_PATH) {
        response.send(200, JSON_HEADERS, JSON.stringify(await ctx.gate.models(request)));
        return;
      }
      const body = parseJsonBody(exchange.body(), maxJsonDepth);
      if (path === RESPONSES_PATH) {
        await ctx.gate.pass(responses, request, response, body);
        return;
      }
      if (path === EMBEDDINGS_PATH) {
        await ctx.gate.pass(embeddingsIngress, request, response, body);
        return;
      }
      await ctx.gate.chatCompletions(request, response, body, path === '/v1/chat' && apiVersion === 'v2' ? DEPRECATED_CHAT_OPTIONS : CHAT_OPTIONS);
    } catch (error) {
      if (response.headersSent) throw error; // mid-stream: the front ends the connection
      const answer = appErrorResponse(error);
      if (!answer) logger.error({ err: error, reqId: request.id }, 'unhandled error');
      const { status, headers, body } = answer ?? { status: 500, headers: {}, body: errorBody('internal server error', 'server_error', 'internal_error') };
      response.send(status, { ...headers, ...JSON_HEADERS }, JSON.stringify(body));
    } finally {
      const seconds = (performance.now() - t0) / 1000;
      const status = response.statusCode || 500;
      const labels = labelsOf(method, path, status);
      metrics.httpRequests.inc(labels);
      metrics.httpDuration.observe(labels, seconds);
      if (response.statusCode >= 400) metrics.httpErrors.inc(labels);
      if (debug) logger.debug({ reqId: request.id, req: { method, url }, res: { statusCode: response.statusCode }, responseTime: seconds * 1000 }, 'request completed');
    }
  };
}

/** The lean front: the relay's own HTTP/1.1 server, fastify's node:http server behind it. */
export function createLeanRelayServer(ctx: AppContext, fallback: HttpServer, bodyLimit: number): Http1Server {
  const answer = relayAnswerer(ctx);
  return createHttp1Server({
    accepts: (method, path, headers) => answersItself(ctx, method, path, headers['content-type']),
    // An Http1Response is a front's response as it is.
    handle: (req, res) => answer({ method: req.method, url: req.url, headers: req.headers, socket: req.socket, body: () => req.body.toString('utf8') }, res),
    fallback,
    maxBodySize: bodyLimit,
    bodyTooLargeMessage: tooLargeMessage(bodyLimit),
    onError: (error) => ctx.logger.warn({ err: error }, 'relay connection error'),
  });
}

/**
 * The node:http front: one node:http server on the public port with fastify's own settings
 * (timeouts, client-error answers); the relay's routes are answered here, every other request
 * goes to fastify's request handler on `fastifyServer` (which itself never listens).
 */
export function createNodeRelayServer(ctx: AppContext, fastifyServer: HttpServer, bodyLimit: number): HttpServer {
  const answer = relayAnswerer(ctx);
  const handOver = (req: IncomingMessage, res: ServerResponse) => fastifyServer.emit('request', req, res);
  const server = createServer({ noDelay: true }, (req, res) => {
    const method = req.method!;
    const url = req.url!;
    // Two Authorization fields are fastify's to refuse (its onRequest hook).
    if (!answersItself(ctx, method, pathOf(url), req.headers['content-type']) || hasDuplicateAuthorization(req.rawHeaders)) {
      handOver(req, res);
      return;
    }
    const response = nodeRelayResponse(res);
    const respond = (body: string) =>
      answer({ method, url, headers: req.headers, socket: req.socket, body: () => body }, response).catch((error: unknown) => {
        ctx.logger.warn({ err: error }, 'relay connection error');
        res.destroy();
      });
    if (method === 'GET') {
      void respond('');
      return;
    }
    readBody(req, bodyLimit).then(
      (body) => (body === null ? refuseTooLarge(response, bodyLimit) : void respond(body)),
      () => res.destroy(), // the client went away mid-body
    );
  });
  server.keepAliveTimeout = fastifyServer.keepAliveTimeout;
  server.headersTimeout = fastifyServer.headersTimeout;
  server.requestTimeout = fastifyServer.requestTimeout;
  server.maxRequestsPerSocket = fastifyServer.maxRequestsPerSocket;
  server.setTimeout(fastifyServer.timeout);
  // Requests node:http cannot parse get fastify's answer to them.
  server.on('clientError', (error, socket) => fastifyServer.emit('clientError', error, socket));
  return server;
}

/** The body as text; null once it exceeds `limit` (from its Content-Length, before reading). */
function readBody(req: IncomingMessage, limit: number): Promise<string | null> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) return Promise.resolve(null);
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    const onData = (part: Buffer) => {
      size += part.length;
      if (size > limit) {
        req.off('data', onData);
        resolve(null);
        return;
      }
      parts.push(part);
    };
    req.on('data', onData);
    req.once('end', () => resolve(parts.length === 1 ? parts[0]!.toString('utf8') : Buffer.concat(parts, size).toString('utf8')));
    req.once('error', reject);
  });
}

/** 413 as fastify answers it; the connection closes (the rest of the body is not read). */
function refuseTooLarge(response: NodeRelayResponse, limit: number): void {
  response.send(413, { ...JSON_HEADERS, connection: 'close' }, JSON.stringify(errorBody(tooLargeMessage(limit), 'invalid_request_error', 'request_too_large')));
}

function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}
