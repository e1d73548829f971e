/**
 * Relay benchmark: what the relay hop costs, measured against a fast fake OpenAI-compatible
 * upstream on the same machine.
 *
 *   npx tsx bench/relay.ts [--seconds N] [--connections C] [--warmup N] [--stream-requests N]
 *                          [--stream-gap-ms N] [--dist] [--dir PATH] [--profile DIR] [--json]
 *
 * Separate processes, so that no two of them share an event loop:
 *   this one     the load generators: autocannon (non-streaming) and a sequential undici client
 *                (streaming first byte)
 *   fake         a bare node:http server (this file again, forked with --role fake) answering
 *                POST /v1/chat/completions with a fixed chat.completion JSON, or, when the body
 *                says "stream": true, a fixed short SSE stream (first event at once, the rest
 *                --stream-gap-ms later, so a relay that buffered would show it in first-byte time)
 *   floor        a bare two-hop proxy (this file again, --role floor): node:http in, one undici
 *                Pool out, JSON parsed and re-serialised both ways, streams piped; no framework,
 *                auth, validation, routing or usage events. What any Node relay pays for the
 *                extra hop on this machine: the practical ceiling for Switchyard's figures.
 *   lean         the same two hops with the least Node can do (this file again, --role lean): a
 *                `net` server with a minimal HTTP/1.1 parser (well-formed requests with
 *                Content-Length only, as autocannon sends) and undici's `Pool.dispatch` with a
 *                plain handler (no response stream object). No product could stop at this
 *                parser; it shows how much of the floor is node:http's and undici's per-request
 *                objects: the ceiling of a Node relay on this machine.
 *   switchyard   `switchyard serve`, embedded (SQLite event log, memory counters, temp DATA_DIR),
 *                one openai channel pointing at the fake. Run from source through tsx's loader
 *                (`node --import tsx src/cli.ts serve`), or with --dist from the build
 *                (`npm run build` first; `node dist/src/cli.js serve`).
 *
 * Phases (non-streaming ones for --seconds each, after a --warmup of every path):
 *   non-streaming, 1 and C connections   autocannon at the fake (direct), at the floor and lean
 *                                        proxies and at Switchyard's /v1/chat/completions
 *                                        (relay), in turn
 *   streaming, sequential                --stream-requests rounds of one request to each path
 *                                        (interleaved, so drift of the machine hits all alike):
 *                                        first body byte and end of body, each from the moment
 *                                        the request is sent
 *
 * CPU ms per request: Switchyard runs in a child process (not in this one: the load generator
 * must not share its event loop), preloaded (node --import of a data: URL, no change to the
 * server) with a tiny IPC handler that answers process.cpuUsage() and the event loop's
 * utilisation. The user+system delta around each relay non-streaming phase, divided by the
 * requests completed in it, is the figure (it includes everything the process did meanwhile:
 * usage events, projections, metrics, GC). Event loop busy > CPU share means the process was
 * blocked in synchronous calls (SQLite fsync) or waiting for a core.
 *
 * Reported against the targets: requests/s relay / direct at C connections (>= 40 %), added p50
 * latency at 1 connection (<= 0.3 ms), added streaming first byte at p50 (<= 1 ms).
 *
 * Latency percentiles come from autocannon's per-response times (float ms); its own histogram
 * has 1 ms resolution, too coarse for sub-millisecond differences. Results print as a markdown
 * table; with --json they are also written to bench/results/. Performance figures belong in
 * docs/benchmarks.md, never in timed tests.
 */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { createRequire } from 'node:module';
import { cpus, loadavg, release, tmpdir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Client, Pool } from 'undici';
import { percentile } from './stats.js';

// ---------------------------------------------------------------------------------------------
// Options
// ---------------------------------------------------------------------------------------------

const { values: args } = parseArgs({
  options: {
    role: { type: 'string', default: 'main' },
    upstream: { type: 'string' },
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '50' },
    warmup: { type: 'string', default: '3' },
    'stream-requests': { type: 'string' },
    'stream-gap-ms': { type: 'string', default: '2' },
    dist: { type: 'boolean', default: false },
    caller: { type: 'string', default: 'token' },
    mode: { type: 'string', default: 'embedded' },
    dir: { type: 'string' },
    profile: { type: 'string' },
    'node-args': { type: 'string', default: '' },
    compare: { type: 'string' },
    rounds: { type: 'string', default: '8' },
    endpoints: { type: 'string', default: 'chat' },
    json: { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
});

if (args.help) {
  console.log(`usage: npx tsx bench/relay.ts [options]
  --seconds N           duration of each non-streaming phase (default 10)
  --connections C       connections of the concurrent phases (default 50; 1 is always measured too)
  --warmup N            seconds of warm-up load on each path before measuring (default 3)
  --stream-requests N   sequential streaming requests per path (default 300; with --compare, none unless given)
  --stream-gap-ms N     the fake's pause between its first SSE event and the rest (default 2)
  --dist                run Switchyard from dist/ (npm run build first) instead of src/ via tsx
  --mode embedded|distributed
                        Switchyard on its embedded stores (default) or on the local NATS JetStream,
                        MariaDB and Redis (a fresh stream, database and key prefix, removed after)
  --caller token|key    how relay requests authenticate: a user's access token (JWT, default) or an
                        API key (sk-..., the key's policy and its counters on every request)
  --dir PATH            where Switchyard's DATA_DIR (SQLite files) goes (default: OS temp dir); the
                        event log fsyncs every commit, so put it on the disk you want to measure
  --profile DIR         run Switchyard with --cpu-prof, writing the .cpuprofile into DIR
  --node-args="..."     extra Node/V8 options for the Switchyard process only (e.g. --node-args=--single-threaded-gc)
  --compare a=DIR,b=DIR builds side by side instead: each DIR is a checkout with its build
                        (DIR/dist/src/cli.js; e.g. a git worktree of another revision, node_modules
                        linked, npm run build); only the relay at C connections is measured, the
                        builds taking turns for --rounds rounds (default 8) of --seconds, each round
                        starting one later (ABBA for two; ABC BCA CAB for three). A side may carry
                        environment overrides: name=DIR:VAR=value[:VAR=value], e.g.
                        --compare lean=.:RELAY_HTTP_SERVER=lean,node=.:RELAY_HTTP_SERVER=node
                        With --stream-requests N, each turn also times N sequential streaming requests.
  --endpoints LIST      with --compare: the ingresses each build is loaded on, each a side of its own
                        (default chat; any of chat,messages,responses,embeddings), e.g. what the
                        Messages ingress's conversion costs next to chat completions on one build
                        Without --compare, --endpoints chat,conversation measures the streaming first
                        byte of a conversation reply (POST /v1/conversations/{id}/messages) against
                        the same request on /v1/chat/completions, interleaved on one Switchyard and
                        one fake (--stream-requests each; a new conversation every 10 turns)
  --json                also write results to bench/results/relay-<date>.json`);
  process.exit(0);
}

function nonNegative(name: string, value: string | undefined): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0) {
    console.error(`--${name} must be a non-negative number`);
    process.exit(1);
  }
  return n;
}

// ---------------------------------------------------------------------------------------------
// The fake upstream (runs in its own process: `--role fake`)
// ---------------------------------------------------------------------------------------------

const MODEL = 'bench-model';
const CREATED = 1_700_000_000;

/** Everything the fake answers is built once: it must cost as little as possible per request. */
const COMPLETION = Buffer.from(
  JSON.stringify({
    id: 'chatcmpl-bench000000000000',
    object: 'chat.completion',
    created: CREATED,
    model: MODEL,
    choices: [{ index: 0, message: { role: 'assistant', content: 'Hello! This is a fixed answer from the benchmark upstream.' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 14, completion_tokens: 12, total_tokens: 26 },
  }),
);

function sseEvent(delta: Record<string, unknown>, finish: string | null, usage?: Record<string, number>): string {
  const chunk: Record<string, unknown> = { id: 'chatcmpl-bench000000000000', object: 'chat.completion.chunk', created: CREATED, model: MODEL, choices: usage ? [] : [{ index: 0, delta, finish_reason: finish }] };
  if (usage) chunk.usage = usage;
  return `data: ${JSON.stringify(chunk)}\n\n`;
}

const STREAM_HEAD = Buffer.from(sseEvent({ role: 'assistant', content: '' }, null));
const STREAM_REST = Buffer.from(
  sseEvent({ content: 'Hello! ' }, null) +
    sseEvent({ content: 'This is a fixed ' }, null) +
    sseEvent({ content: 'streamed answer.' }, null) +
    sseEvent({}, 'stop') +
    sseEvent({}, null, { prompt_tokens: 14, completion_tokens: 9, total_tokens: 23 }) +
    'data: [DONE]\n\n',
);
const STREAM_MARKER = Buffer.from('"stream":true');

/** The embeddings answer: 256 dimensions of one input, as OpenAI sends them. */
const EMBEDDING = Buffer.from(
  JSON.stringify({
    object: 'list',
    data: [{ object: 'embedding', index: 0, embedding: Array.from({ length: 256 }, (_, i) => Math.sin(i) / 16) }],
    model: MODEL,
    usage: { prompt_tokens: 8, total_tokens: 8 },
  }),
);

/** A Responses API answer (the openai channel serves /v1/responses natively). */
const RESPONSE_OBJECT = {
  id: 'resp_bench000000000000',
  object: 'response',
  created_at: CREATED,
  status: 'completed',
  model: MODEL,
  output: [{ id: 'msg_bench0000', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Hello! This is a fixed answer from the benchmark upstream.', annotations: [] }] }],
  usage: { input_tokens: 14, output_tokens: 12, total_tokens: 26, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } },
};
const RESPONSE = Buffer.from(JSON.stringify(RESPONSE_OBJECT));
const RESPONSE_STREAM = Buffer.from(
  [
    { type: 'response.created', sequence_number: 0, response: { ...RESPONSE_OBJECT, status: 'in_progress', output: [], usage: null } },
    { type: 'response.output_text.delta', sequence_number: 1, item_id: 'msg_bench0000', output_index: 0, content_index: 0, delta: 'Hello! ' },
    { type: 'response.output_text.delta', sequence_number: 2, item_id: 'msg_bench0000', output_index: 0, content_index: 0, delta: 'This is a fixed streamed answer.' },
    { type: 'response.completed', sequence_number: 3, response: RESPONSE_OBJECT },
  ]
    .map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`)
    .join(''),
);

async function runFake(gapMs: number) {
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => {
      const body = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
      if (req.method === 'POST' && req.url === '/v1/embeddings') {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': EMBEDDING.length }).end(EMBEDDING);
        return;
      }
      if (req.method === 'POST' && req.url === '/v1/responses') {
        if (!body.includes(STREAM_MARKER)) res.writeHead(200, { 'content-type': 'application/json', 'content-length': RESPONSE.length }).end(RESPONSE);
        else res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' }).end(RESPONSE_STREAM);
        return;
      }
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found"}}');
        return;
      }
      if (!body.includes(STREAM_MARKER)) {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': COMPLETION.length }).end(COMPLETION);
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.write(STREAM_HEAD);
      setTimeout(() => res.end(STREAM_REST), gapMs);
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as AddressInfo).port }));
  process.on('disconnect', () => process.exit(0));
}

// ---------------------------------------------------------------------------------------------
// The floor: a bare two-hop proxy (runs in its own process: `--role floor`)
// ---------------------------------------------------------------------------------------------

async function runFloor(upstream: string) {
  const pool = new Pool(upstream, { connections: 256 });
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(parts).toString('utf8')) as { stream?: boolean };
      const headers = { 'content-type': 'application/json', authorization: 'Bearer bench-key', ...(body.stream ? { accept: 'text/event-stream' } : {}) };
      pool.request({ method: 'POST', path: '/v1/chat/completions', headers, body: JSON.stringify(body) }).then(
        async (upstreamResponse) => {
          if (body.stream) {
            res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
            for await (const chunk of upstreamResponse.body) res.write(chunk as Buffer);
            res.end();
            return;
          }
          const completion = JSON.parse(await upstreamResponse.body.text()) as unknown;
          res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(completion));
        },
        () => res.writeHead(502).end(),
      );
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as AddressInfo).port }));
  process.on('disconnect', () => process.exit(0));
}

// ---------------------------------------------------------------------------------------------
// The lean floor: two hops with the least per-request work (runs in its own process: `--role lean`)
// ---------------------------------------------------------------------------------------------

const HEAD_END = Buffer.from('\r\n\r\n');
const CONTENT_LENGTH = /\r\ncontent-length: *(\d+)/i;

async function runLean(upstream: string) {
  const pool = new Pool(upstream, { connections: 256 });
  const server = createNetServer((socket) => {
    socket.setNoDelay(true);
    socket.on('error', () => socket.destroy());
    let pending: Buffer | null = null;
    socket.on('data', (data: Buffer) => {
      let buffer: Buffer = pending ? Buffer.concat([pending, data]) : data;
      pending = null;
      for (;;) {
        const headEnd: number = buffer.indexOf(HEAD_END);
        if (headEnd < 0) break;
        const length = Number(CONTENT_LENGTH.exec(buffer.toString('latin1', 0, headEnd))?.[1] ?? 0);
        const end: number = headEnd + 4 + length;
        if (buffer.length < end) break;
        relayLean(pool, socket, JSON.parse(buffer.toString('utf8', headEnd + 4, end)) as { stream?: boolean });
        if (buffer.length === end) return;
        buffer = buffer.subarray(end);
      }
      pending = buffer;
    });
  });
  server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as AddressInfo).port }));
  process.on('disconnect', () => process.exit(0));
}

function relayLean(pool: Pool, socket: Socket, body: { stream?: boolean }) {
  const chunks: Buffer[] = [];
  const headers = { 'content-type': 'application/json', authorization: 'Bearer bench-key', ...(body.stream ? { accept: 'text/event-stream' } : {}) };
  pool.dispatch(
    { method: 'POST', path: '/v1/chat/completions', headers, body: JSON.stringify(body) },
    {
      onRequestStart() {},
      onResponseStart() {
        if (body.stream) socket.write('HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\ncache-control: no-cache\r\ntransfer-encoding: chunked\r\n\r\n');
      },
      onResponseData(_controller, chunk: Buffer) {
        if (body.stream) socket.write(`${chunk.length.toString(16)}\r\n${chunk.toString('latin1')}\r\n`, 'latin1');
        else chunks.push(chunk);
      },
      onResponseEnd() {
        if (body.stream) {
          socket.write('0\r\n\r\n');
          return;
        }
        const text = JSON.stringify(JSON.parse(Buffer.concat(chunks).toString('utf8')));
        socket.write(`HTTP/1.1 200 OK\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(text)}\r\n\r\n${text}`);
      },
      onResponseError() {
        socket.destroy();
      },
    },
  );
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/** autocannon ships no types; only what this script uses. */
interface AutocannonResult {
  duration: number;
  '2xx': number;
  non2xx: number;
  errors: number;
  timeouts: number;
}
interface AutocannonInstance extends PromiseLike<AutocannonResult> {
  on(event: 'response', listener: (client: unknown, statusCode: number, resBytes: number, responseTime: number) => void): void;
}
type Autocannon = (options: Record<string, unknown>) => AutocannonInstance;
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

const ROOT = resolve(import.meta.dirname, '..');
const SECRET = 'bench-secret-0123456789-abcdefghij';
/** The root admin every benchmarked installation bootstraps, and the user the relay phases run as. */
const BENCH_ADMIN = { email: 'bench-admin@switchyard.bench', password: 'bench-admin-password' };
const BENCH_USER = { email: 'bench-user@switchyard.bench', password: 'bench-user-password' };

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

interface Distribution {
  p50: number;
  p99: number;
  max: number;
}

function distribution(samples: number[]): Distribution {
  const sorted = Float64Array.from(samples).sort();
  return { p50: percentile(Array.from(sorted), 50), p99: percentile(Array.from(sorted), 99), max: sorted.at(-1) ?? NaN };
}

function fmt(ms: number, digits = 3): string {
  if (!Number.isFinite(ms)) return '-';
  return ms >= 100 ? ms.toFixed(0) : ms >= 10 ? ms.toFixed(1) : ms.toFixed(digits);
}

function signed(ms: number): string {
  return `${ms >= 0 ? '+' : ''}${fmt(ms)}`;
}

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

// ---------------------------------------------------------------------------------------------
// Processes
// ---------------------------------------------------------------------------------------------

/** This file again in a child process, as the fake upstream or the floor proxy. */
async function startHelper(role: 'fake' | 'floor' | 'lean', options: string[]): Promise<{ child: ChildProcess; url: string }> {
  const child = fork(import.meta.filename, ['--role', role, ...options], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const [message] = (await once(child, 'message')) as [{ port: number }];
  return { child, url: `http://127.0.0.1:${message.port}` };
}

/**
 * Preloaded into the Switchyard process: answers 'cpu' over IPC with process.cpuUsage() and the
 * event loop's utilisation so far (busy time, including time blocked in synchronous calls such as
 * SQLite's fsync, which CPU time does not count). The channel is unref'd so it never keeps the
 * server alive on its own.
 */
/**
 * Preloaded into Switchyard: answers 'cpu' with the process's CPU time, its event loop utilisation
 * and, on Linux, the serving (main) thread's own scheduler figures from /proc (schedstat: ns on a
 * CPU, ns runnable but waiting for one), which tell the serving thread's share apart from the log
 * writer's, the projectors' and V8's helper threads.
 */
const CPU_PROBE = `import { readFileSync } from 'node:fs';
const thread = () => { try { const [run, wait] = readFileSync('/proc/self/task/' + process.pid + '/schedstat', 'utf8').split(' ').map(Number); return { run, wait }; } catch { return null; } };
process.on('message', (m) => { if (m === 'cpu') process.send({ cpu: process.cpuUsage(), elu: performance.eventLoopUtilization(), thread: thread() }); }); process.channel?.unref();`;

interface ProcessSample {
  /** CPU time so far, ms. */
  user: number;
  system: number;
  /** Event loop utilisation so far (performance.eventLoopUtilization()). */
  elu: EventLoopUtilization;
  /** The serving thread's time on a CPU and waiting for one so far, ms (Linux only). */
  thread: { run: number; wait: number } | null;
}

interface Switchyard {
  child: ChildProcess;
  url: string;
  dataDir: string;
  sample(): Promise<ProcessSample>;
  stop(): Promise<void>;
}

/**
 * The many-machines mode on this machine's services: a JetStream stream, a MariaDB database and a
 * Redis key prefix of the run's own, removed when it ends.
 */
async function distributedStores(): Promise<{ env: Record<string, string>; cleanup: () => Promise<void> }> {
  const suffix = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  const stream = `SYBENCH_${suffix}`;
  const database = `sy_bench_${suffix}`;
  const natsUrl = process.env.BENCH_NATS_URL ?? 'nats://127.0.0.1:4222';
  const mysqlUrl = new URL(process.env.BENCH_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test');
  const redisUrl = new URL(process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379');
  const env = {
    NATS_URL: natsUrl,
    NATS_STREAM: stream,
    SQLDB_HOST: mysqlUrl.hostname,
    SQLDB_PORT: mysqlUrl.port || '3306',
    SQLDB_USER: decodeURIComponent(mysqlUrl.username || 'root'),
    SQLDB_PASSWORD: decodeURIComponent(mysqlUrl.password),
    SQLDB_NAME: database,
    CACHE_HOST: redisUrl.hostname,
    CACHE_PORT: redisUrl.port || '6379',
    CACHE_PREFIX: `sybench:${suffix}:`,
  };
  return {
    env,
    async cleanup() {
      const { connect } = await import('@nats-io/transport-node');
      const { jetstreamManager } = await import('@nats-io/jetstream');
      const nc = await connect({ servers: natsUrl });
      await (await jetstreamManager(nc)).streams.delete(stream).catch(() => undefined);
      await nc.close();
      const mysql = await import('mysql2/promise');
      const conn = await mysql.createConnection({ host: env.SQLDB_HOST, port: Number(env.SQLDB_PORT), user: env.SQLDB_USER, password: env.SQLDB_PASSWORD });
      await conn.query(`DROP DATABASE IF EXISTS \`${database}\``);
      await conn.end();
      const { Redis } = await import('ioredis');
      const redis = new Redis({ host: env.CACHE_HOST, port: Number(env.CACHE_PORT), lazyConnect: true });
      await redis.connect();
      const keys = await redis.keys(`${env.CACHE_PREFIX}*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
    },
  };
}

/** `cli`: a built dist/src/cli.js, or null for the sources through tsx. */
async function startSwitchyard(cli: string | null, dir: string | undefined, profileDir: string | undefined, stores: Record<string, string>): Promise<Switchyard> {
  const dataDir = mkdtempSync(join(dir ?? tmpdir(), 'sy-bench-relay-'));
  const port = await freePort();
  const metricsPort = await freePort();
  const nodeArgs = [`--import=data:text/javascript,${encodeURIComponent(CPU_PROBE)}`];
  if (profileDir) nodeArgs.push('--cpu-prof', `--cpu-prof-dir=${resolve(profileDir)}`);
  nodeArgs.push(...(args['node-args'] ?? '').split(' ').filter(Boolean));
  if (cli) {
    if (!existsSync(cli)) throw new Error(`${cli} is missing: run \`npm run build\` first (or drop --dist)`);
    nodeArgs.push(cli);
  } else {
    nodeArgs.push('--import', 'tsx', join(ROOT, 'src/cli.ts'));
  }
  const child = spawn(process.execPath, [...nodeArgs, 'serve'], {
    cwd: ROOT,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: {
      ...process.env,
      SECRET,
      HOST: '127.0.0.1',
      SERVER_PORT: String(port),
      METRICS_PORT: String(metricsPort),
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      HEALTH_CHECK_ENABLED: 'false',
      // Otherwise a generated root-admin password is logged at startup.
      ADMIN_EMAIL: BENCH_ADMIN.email,
      ADMIN_PASSWORD: BENCH_ADMIN.password,
      // Embedded mode whatever the caller's shell says (empty = unset), unless --mode distributed.
      NATS_URL: '',
      EVENTSTORE_URL: '',
      SQLDB_HOST: '',
      CACHE_HOST: '',
      ...stores,
    },
  });
  const exited = once(child, 'exit');
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`switchyard exited with code ${child.exitCode} during startup`);
    try {
      if ((await fetch(`${url}/health`)).status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error('switchyard did not become ready within 60 s');
    await sleep(100);
  }
  return {
    child,
    url,
    dataDir,
    async sample() {
      child.send('cpu');
      const [message] = (await once(child, 'message')) as [{ cpu: NodeJS.CpuUsage; elu: EventLoopUtilization; thread: { run: number; wait: number } | null }];
      const thread = message.thread && { run: message.thread.run / 1e6, wait: message.thread.wait / 1e6 };
      return { user: message.cpu.user / 1000, system: message.cpu.system / 1000, elu: message.elu, thread };
    },
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function api(url: string, token: string, body?: unknown): Promise<{ status: number; json: unknown }> {
  const res = await fetch(url, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, json: await res.json() };
}

async function loginAs(sy: Switchyard, account: { email: string; password: string }): Promise<string> {
  const res = await fetch(`${sy.url}/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(account) });
  if (res.status !== 200) throw new Error(`login as ${account.email} failed: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { access_token: string }).access_token;
}

/** Access tokens of the root admin and of a user made for the run (a token must name a real user and session). */
async function benchTokens(sy: Switchyard): Promise<{ adminToken: string; userToken: string }> {
  const adminToken = await loginAs(sy, BENCH_ADMIN);
  const user = await api(`${sy.url}/v1/admin/users`, adminToken, BENCH_USER);
  if (user.status !== 201) throw new Error(`user create failed: ${user.status} ${JSON.stringify(user.json)}`);
  return { adminToken, userToken: await loginAs(sy, BENCH_USER) };
}

/** One openai channel pointing at the fake, through the admin API; waits until it routes. */
async function createChannel(sy: Switchyard, fakeUrl: string, adminToken: string, userToken: string) {
  const created = await api(`${sy.url}/v1/admin/channels`, adminToken, { name: 'bench', type: 'openai', base_url: `${fakeUrl}/v1`, key: 'bench-key', models: [MODEL] });
  if (created.status !== 201) throw new Error(`channel create failed: ${created.status} ${JSON.stringify(created.json)}`);
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const models = (await api(`${sy.url}/v1/models`, userToken)).json as { data?: Array<{ id: string }> };
    if (models.data?.some((m) => m.id === MODEL)) return;
    await sleep(50);
  }
  throw new Error('the channel never became routable');
}

/** A real user with an API key (no limits set: every request still runs the key's checks and counters). */
async function createApiKey(sy: Switchyard, adminToken: string): Promise<string> {
  const user = await api(`${sy.url}/v1/admin/users`, adminToken, { email: 'bench-key-user@switchyard.bench', password: 'bench-key-user-password' });
  if (user.status !== 201) throw new Error(`user create failed: ${user.status} ${JSON.stringify(user.json)}`);
  const key = await api(`${sy.url}/api/admin/keys`, adminToken, { name: 'bench', user_id: (user.json as { id: string }).id });
  if (key.status !== 201) throw new Error(`key create failed: ${key.status} ${JSON.stringify(key.json)}`);
  const secret = (key.json as { key: string }).key;
  // The key directory is a live view: wait until the key is known.
  const deadline = Date.now() + 10_000;
  while ((await api(`${sy.url}/v1/models`, secret)).status !== 200) {
    if (Date.now() > deadline) throw new Error('the API key never became usable');
    await sleep(50);
  }
  return secret;
}

// ---------------------------------------------------------------------------------------------
// Measurements
// ---------------------------------------------------------------------------------------------

const REQUEST_BODY = JSON.stringify({
  model: MODEL,
  messages: [
    { role: 'system', content: 'You are a helpful assistant.' },
    { role: 'user', content: 'Say hello in one short sentence.' },
  ],
  temperature: 0.2,
  max_tokens: 64,
});
const STREAM_BODY = JSON.stringify({ ...(JSON.parse(REQUEST_BODY) as object), stream: true });

interface Target {
  name: 'direct' | 'floor' | 'lean' | 'relay';
  url: string;
  headers: Record<string, string>;
  /** The request body (default: the chat completion request). */
  body?: string;
  /** The streaming request's body, and how its answer ends (none: the endpoint does not stream). */
  stream?: { body: string; endsWith: string } | null;
}

/** What each ingress is loaded with in `--compare --endpoints`: the same conversation, in its format. */
const ENDPOINTS: Record<string, { path: string; body: string; stream: { body: string; endsWith: string } | null }> = {
  chat: { path: '/v1/chat/completions', body: REQUEST_BODY, stream: { body: STREAM_BODY, endsWith: 'data: [DONE]\n\n' } },
  messages: {
    path: '/v1/messages',
    body: JSON.stringify({ model: MODEL, system: 'You are a helpful assistant.', messages: [{ role: 'user', content: 'Say hello in one short sentence.' }], temperature: 0.2, max_tokens: 64 }),
    stream: {
      body: JSON.stringify({ model: MODEL, system: 'You are a helpful assistant.', messages: [{ role: 'user', content: 'Say hello in one short sentence.' }], temperature: 0.2, max_tokens: 64, stream: true }),
      endsWith: 'event: message_stop\ndata: {"type":"message_stop"}\n\n',
    },
  },
  responses: {
    path: '/v1/responses',
    body: JSON.stringify({ model: MODEL, instructions: 'You are a helpful assistant.', input: 'Say hello in one short sentence.', temperature: 0.2, max_output_tokens: 64, store: false }),
    stream: { body: JSON.stringify({ model: MODEL, instructions: 'You are a helpful assistant.', input: 'Say hello in one short sentence.', temperature: 0.2, max_output_tokens: 64, store: false, stream: true }), endsWith: '\n\n' },
  },
  embeddings: { path: '/v1/embeddings', body: JSON.stringify({ model: MODEL, input: 'Say hello in one short sentence.' }), stream: null },
};

interface LoadResult {
  target: Target['name'];
  connections: number;
  seconds: number;
  requests: number;
  rps: number;
  latency: Distribution;
  /** Switchyard CPU ms per request, user + system (relay phases only). */
  cpuMsPerRequest: number | null;
  /** The system (kernel) part of it. */
  cpuSystemMsPerRequest: number | null;
  /** Share of the phase Switchyard's event loop was busy (CPU or blocked in a synchronous call). */
  eventLoopUtilisation: number | null;
  /** Of cpuMsPerRequest, the serving thread's own (the rest: log writer, projectors, V8 helpers); Linux only. */
  servingCpuMsPerRequest: number | null;
  /** Share of the phase the serving thread was runnable but waiting for a CPU (the machine's cores were busy); Linux only. */
  servingWaitShare: number | null;
}

async function load(target: Target, connections: number, seconds: number): Promise<{ requests: number; seconds: number; latency: Distribution }> {
  const latencies: number[] = [];
  const instance = autocannon({
    url: target.url,
    method: 'POST',
    headers: { 'content-type': 'application/json', ...target.headers },
    body: target.body ?? REQUEST_BODY,
    connections,
    pipelining: 1,
    duration: seconds,
  });
  instance.on('response', (_client, statusCode, _bytes, responseTime) => {
    if (statusCode === 200) latencies.push(responseTime);
  });
  const result = await instance;
  const failed = result.non2xx + result.errors + result.timeouts;
  if (failed > 0) throw new Error(`${target.name}: ${failed} failed requests (non-2xx ${result.non2xx}, errors ${result.errors}, timeouts ${result.timeouts})`);
  return { requests: result['2xx'], seconds: result.duration, latency: distribution(latencies) };
}

async function loadPhase(target: Target, connections: number, seconds: number, sy: Switchyard): Promise<LoadResult> {
  // CPU of the Switchyard process only: the fake and the floor are references, not the subject.
  const relay = target.name === 'relay';
  const before = relay ? await sy.sample() : null;
  const run = await load(target, connections, seconds);
  const after = relay ? await sy.sample() : null;
  const row: LoadResult = {
    target: target.name,
    connections,
    seconds: run.seconds,
    requests: run.requests,
    rps: run.requests / run.seconds,
    latency: run.latency,
    cpuMsPerRequest: before && after ? (after.user + after.system - before.user - before.system) / run.requests : null,
    cpuSystemMsPerRequest: before && after ? (after.system - before.system) / run.requests : null,
    eventLoopUtilisation: before && after ? performance.eventLoopUtilization(after.elu, before.elu).utilization : null,
    servingCpuMsPerRequest: before?.thread && after?.thread ? (after.thread.run - before.thread.run) / run.requests : null,
    servingWaitShare: before?.thread && after?.thread ? (after.thread.wait - before.thread.wait) / (run.seconds * 1000) : null,
  };
  console.log(
    `${row.target.padEnd(6)} non-streaming, ${String(connections).padStart(3)} conn: ${Math.round(row.rps)} req/s  p50 ${fmt(row.latency.p50)} p99 ${fmt(row.latency.p99)} ms` +
      (row.cpuMsPerRequest === null
        ? ''
        : `  switchyard CPU ${fmt(row.cpuMsPerRequest)} ms/req (system ${fmt(row.cpuSystemMsPerRequest!)}), event loop busy ${(row.eventLoopUtilisation! * 100).toFixed(0)} %` +
          (row.servingCpuMsPerRequest === null ? '' : `; serving thread ${fmt(row.servingCpuMsPerRequest)} ms/req, waiting for a CPU ${(row.servingWaitShare! * 100).toFixed(0)} % of the time`)),
  );
  return row;
}

interface StreamSample {
  firstByte: number;
  total: number;
}

/** One streaming request: ms from sending it to the first body byte, and to the end of the body. */
async function streamOnce(client: Client, path: string, headers: Record<string, string>, request = { body: STREAM_BODY, endsWith: 'data: [DONE]\n\n' }): Promise<StreamSample> {
  const started = performance.now();
  const { statusCode, body } = await client.request({ method: 'POST', path, headers: { 'content-type': 'application/json', ...headers }, body: request.body });
  let firstByte = NaN;
  let text = '';
  for await (const chunk of body) {
    if (Number.isNaN(firstByte)) firstByte = performance.now() - started;
    text += (chunk as Buffer).toString();
  }
  const total = performance.now() - started;
  if (statusCode !== 200 || !text.endsWith(request.endsWith)) throw new Error(`stream request to ${path} failed: ${statusCode} ${text.slice(0, 200)}`);
  return { firstByte, total };
}

type Path = Target['name'];
const PATHS: readonly Path[] = ['direct', 'floor', 'lean', 'relay'];

interface StreamResult {
  requests: number;
  paths: Record<Path, { firstByte: Distribution; total: Distribution }>;
}

/** One request to each path in turn, so drift of the machine hits all of them alike. */
async function streaming(targets: Record<Path, Target>, requests: number): Promise<StreamResult> {
  const clients = PATHS.map((path) => ({ path, client: new Client(new URL(targets[path].url).origin, { pipelining: 1 }), headers: targets[path].headers }));
  try {
    const run = async (n: number) => {
      const samples: Record<Path, StreamSample[]> = { direct: [], floor: [], lean: [], relay: [] };
      for (let i = 0; i < n; i++) {
        for (const { path, client, headers } of clients) samples[path].push(await streamOnce(client, '/v1/chat/completions', headers));
      }
      return samples;
    };
    await run(Math.min(50, requests)); // warm-up: connections open, JIT warm
    const samples = await run(requests);
    const result = { requests, paths: {} } as StreamResult;
    for (const path of PATHS) result.paths[path] = { firstByte: distribution(samples[path].map((s) => s.firstByte)), total: distribution(samples[path].map((s) => s.total)) };
    for (const path of PATHS) {
      const r = result.paths[path];
      console.log(`${path.padEnd(6)} streaming, sequential, ${requests}: first byte p50 ${fmt(r.firstByte.p50)} p99 ${fmt(r.firstByte.p99)} ms, total p50 ${fmt(r.total.p50)} p99 ${fmt(r.total.p99)} ms`);
    }
    return result;
  } finally {
    await Promise.all(clients.map((c) => c.client.close()));
  }
}

// ---------------------------------------------------------------------------------------------
// Report
// ---------------------------------------------------------------------------------------------

interface Summary {
  load: LoadResult[];
  stream: StreamResult;
  targets: Array<{ target: string; value: string; met: boolean }>;
}

function summarise(loadRows: LoadResult[], stream: StreamResult, connections: number): Summary {
  const find = (target: Path, c: number) => loadRows.find((r) => r.target === target && r.connections === c)!;
  const ratio = find('relay', connections).rps / find('direct', connections).rps;
  const added1 = find('relay', 1).latency.p50 - find('direct', 1).latency.p50;
  const addedFirstByte = stream.paths.relay.firstByte.p50 - stream.paths.direct.firstByte.p50;
  return {
    load: loadRows,
    stream,
    targets: [
      { target: `relay throughput >= 40% of direct (${connections} connections)`, value: `${(ratio * 100).toFixed(1)} %`, met: ratio >= 0.4 },
      { target: 'added p50 latency <= 0.3 ms (1 connection)', value: `${fmt(added1)} ms`, met: added1 <= 0.3 },
      { target: 'streaming first byte added <= 1 ms (p50)', value: `${fmt(addedFirstByte)} ms`, met: addedFirstByte <= 1 },
    ],
  };
}

function table(summary: Summary, connectionsList: number[]): string {
  const find = (target: Path, c: number) => summary.load.find((r) => r.target === target && r.connections === c)!;
  const lines = [
    '| measure | direct | floor (node:http proxy) | lean (net + dispatch) | relay | relay vs direct | floor vs direct | lean vs direct |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
  ];
  const percent = (a: number, b: number) => `${((a / b) * 100).toFixed(1)} %`;
  for (const c of connectionsList) {
    const [d, f, l, r] = [find('direct', c), find('floor', c), find('lean', c), find('relay', c)];
    lines.push(`| non-streaming, ${c} conn: requests/s | ${Math.round(d.rps)} | ${Math.round(f.rps)} | ${Math.round(l.rps)} | ${Math.round(r.rps)} | ${percent(r.rps, d.rps)} | ${percent(f.rps, d.rps)} | ${percent(l.rps, d.rps)} |`);
    for (const q of ['p50', 'p99'] as const) {
      const added = (x: LoadResult) => signed(x.latency[q] - d.latency[q]);
      lines.push(`| non-streaming, ${c} conn: ${q} ms | ${fmt(d.latency[q])} | ${fmt(f.latency[q])} | ${fmt(l.latency[q])} | ${fmt(r.latency[q])} | ${added(r)} | ${added(f)} | ${added(l)} |`);
    }
  }
  const s = summary.stream.paths;
  for (const [label, key] of [['first byte', 'firstByte'], ['total', 'total']] as const) {
    for (const q of ['p50', 'p99'] as const) {
      const [d, f, l, r] = [s.direct[key][q], s.floor[key][q], s.lean[key][q], s.relay[key][q]];
      lines.push(`| streaming, ${label} ${q} ms | ${fmt(d)} | ${fmt(f)} | ${fmt(l)} | ${fmt(r)} | ${signed(r - d)} | ${signed(f - d)} | ${signed(l - d)} |`);
    }
  }
  for (const c of connectionsList) {
    const r = find('relay', c);
    lines.push(`| Switchyard CPU ms/request, ${c} conn (of which system) | - | - | - | ${fmt(r.cpuMsPerRequest ?? NaN)} (${fmt(r.cpuSystemMsPerRequest ?? NaN)}) | - | - | - |`);
    lines.push(`| Switchyard event loop busy, ${c} conn | - | - | - | ${((r.eventLoopUtilisation ?? NaN) * 100).toFixed(0)} % | - | - | - |`);
    if (r.servingCpuMsPerRequest !== null) {
      lines.push(`| Switchyard serving thread CPU ms/request, ${c} conn | - | - | - | ${fmt(r.servingCpuMsPerRequest)} | - | - | - |`);
      lines.push(`| Switchyard serving thread waiting for a CPU, ${c} conn | - | - | - | ${(r.servingWaitShare! * 100).toFixed(0)} % | - | - | - |`);
    }
  }
  lines.push('', '| target | measured | met |', '|---|---:|---|');
  for (const t of summary.targets) lines.push(`| ${t.target} | ${t.value} | ${t.met ? 'yes' : 'NO'} |`);
  return lines.join('\n');
}

// ---------------------------------------------------------------------------------------------
// Main
// ---------------------------------------------------------------------------------------------

async function main() {
  if (args.caller !== 'token' && args.caller !== 'key') {
    console.error('--caller must be token or key');
    process.exit(1);
  }
  if (args.mode !== 'embedded' && args.mode !== 'distributed') {
    console.error('--mode must be embedded or distributed');
    process.exit(1);
  }
  const seconds = nonNegative('seconds', args.seconds);
  const connections = Math.max(1, Math.round(nonNegative('connections', args.connections)));
  const warmup = nonNegative('warmup', args.warmup);
  const streamRequests = Math.max(1, Math.round(nonNegative('stream-requests', args['stream-requests'] ?? '300')));
  const gapMs = nonNegative('stream-gap-ms', args['stream-gap-ms']);
  const connectionsList = connections === 1 ? [1] : [1, connections];

  const machine = {
    date: new Date().toISOString(),
    node: process.version,
    os: `${process.platform} ${release()}`,
    cpu: `${cpus().length} x ${cpus()[0]?.model ?? 'unknown'}`,
    memory_gb: Math.round(totalmem() / 1024 ** 3),
    loadavg_at_start: loadavg().map((l) => Number(l.toFixed(2))),
    switchyard: args.dist ? 'node dist/src/cli.js serve' : 'node --import tsx src/cli.ts serve',
    caller: args.caller,
    mode: args.mode,
    data_dir: args.dir ?? tmpdir(),
    options: { seconds, connections, warmup, streamRequests, streamGapMs: gapMs, nodeArgs: args['node-args'] },
  };
  console.log(`Switchyard relay benchmark  ${JSON.stringify(machine)}`);

  const fake = await startHelper('fake', ['--stream-gap-ms', String(gapMs)]);
  const floor = await startHelper('floor', ['--upstream', fake.url]);
  const lean = await startHelper('lean', ['--upstream', fake.url]);
  let sy: Switchyard | null = null;
  const distributed = args.mode === 'distributed' ? await distributedStores() : null;
  try {
    sy = await startSwitchyard(args.dist ? join(ROOT, 'dist/src/cli.js') : null, args.dir, args.profile, distributed?.env ?? {});
    const { adminToken, userToken } = await benchTokens(sy);
    await createChannel(sy, fake.url, adminToken, userToken);
    const relayCredential = args.caller === 'key' ? await createApiKey(sy, adminToken) : userToken;

    const targets: Record<Path, Target> = {
      direct: { name: 'direct', url: `${fake.url}/v1/chat/completions`, headers: { authorization: 'Bearer bench-key' } },
      floor: { name: 'floor', url: `${floor.url}/v1/chat/completions`, headers: {} },
      lean: { name: 'lean', url: `${lean.url}/v1/chat/completions`, headers: {} },
      relay: { name: 'relay', url: `${sy.url}/v1/chat/completions`, headers: { authorization: `Bearer ${relayCredential}` } },
    };

    if (warmup > 0) {
      console.log(`warming up ${warmup} s per path...`);
      for (const path of PATHS) await load(targets[path], connections, warmup);
    }
    const rows: LoadResult[] = [];
    for (const c of connectionsList) {
      for (const path of PATHS) rows.push(await loadPhase(targets[path], c, seconds, sy));
    }
    const stream = await streaming(targets, streamRequests);
    const summary = summarise(rows, stream, connectionsList.at(-1)!);

    console.log(`\n${table(summary, connectionsList)}\n`);
    if (args.json) {
      const dir = join(import.meta.dirname, 'results');
      mkdirSync(dir, { recursive: true });
      const file = join(dir, `relay-${machine.date.replace(/[:.]/g, '-')}.json`);
      writeFileSync(file, JSON.stringify({ machine, ...summary }, null, 2));
      console.log(`results written to ${file}`);
    }
  } finally {
    await sy?.stop();
    await distributed?.cleanup();
    floor.child.kill();
    lean.child.kill();
    fake.child.kill();
    if (args.profile) console.log(`CPU profile written to ${resolve(args.profile)}`);
  }
}

/**
 * `--compare`: two or more builds (or configurations) of Switchyard side by side on one fake
 * upstream, taking turns at the relay phase, each round starting one later than the one before
 * (ABBA for two, ABC BCA CAB for three), so every side takes every position equally often. On a
 * machine whose speed drifts from minute to minute, the medians of such turns compare builds where
 * two separate runs of the whole benchmark cannot.
 */
async function compare(spec: string) {
  const seconds = nonNegative('seconds', args.seconds);
  const connections = Math.max(1, Math.round(nonNegative('connections', args.connections)));
  const rounds = Math.max(1, Math.round(nonNegative('rounds', args.rounds)));
  const streamRequests = args['stream-requests'] === undefined ? 0 : Math.round(nonNegative('stream-requests', args['stream-requests']));
  const builds = spec.split(',').map(parseSide);
  const endpoints = (args.endpoints ?? 'chat').split(',').map((name) => {
    const endpoint = ENDPOINTS[name];
    if (endpoint === undefined || !Object.hasOwn(ENDPOINTS, name)) throw new Error(`--endpoints: unknown endpoint ${name} (${Object.keys(ENDPOINTS).join(', ')})`);
    return { name, ...endpoint };
  });
  const fake = await startHelper('fake', ['--stream-gap-ms', args['stream-gap-ms'] ?? '2']);
  const running: Array<{ name: string; sy: Switchyard; target: Target; serving: number[]; total: number[]; rps: number[]; firstByte: number[] }> = [];
  const started: Switchyard[] = [];
  try {
    for (const { name, cli, env } of builds) {
      const sy = await startSwitchyard(cli, args.dir, undefined, env);
      started.push(sy);
      const { adminToken, userToken } = await benchTokens(sy);
      for (const endpoint of endpoints) {
        const side = endpoints.length === 1 ? name : `${name} ${endpoint.name}`;
        const target: Target = { name: 'relay', url: `${sy.url}${endpoint.path}`, headers: { authorization: `Bearer ${userToken}` }, body: endpoint.body, stream: endpoint.stream };
        running.push({ name: side, sy, target, serving: [], total: [], rps: [], firstByte: [] });
      }
      await createChannel(sy, fake.url, adminToken, userToken);
    }
    for (const build of running) await load(build.target, connections, nonNegative('warmup', args.warmup));
    const clients = new Map(running.map((build) => [build, new Client(new URL(build.target.url).origin, { pipelining: 1 })]));
    for (let round = 0; round < rounds; round++) {
      const start = round % running.length;
      for (const build of [...running.slice(start), ...running.slice(0, start)]) {
        await sleep(1500); // the previous build's projector catches up before this one is loaded
        process.stdout.write(`round ${round + 1}, ${build.name}: `);
        const row = await loadPhase(build.target, connections, seconds, build.sy);
        build.serving.push(row.servingCpuMsPerRequest! * 1000);
        build.total.push(row.cpuMsPerRequest! * 1000);
        build.rps.push(row.rps);
        const streamRequest = build.target.stream;
        if (streamRequests > 0 && streamRequest) {
          const samples: number[] = [];
          const path = new URL(build.target.url).pathname;
          for (let i = 0; i < streamRequests; i++) samples.push((await streamOnce(clients.get(build)!, path, build.target.headers, streamRequest)).firstByte);
          build.firstByte.push(distribution(samples).p50);
          console.log(`round ${round + 1}, ${build.name}: streaming, sequential, ${streamRequests}: first byte p50 ${fmt(build.firstByte.at(-1)!)} ms`);
        }
      }
    }
    await Promise.all([...clients.values()].map((client) => client.close()));
    const median = (xs: number[]) => {
      const sorted = [...xs].sort((a, b) => a - b);
      const mid = Math.floor(sorted.length / 2);
      return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
    };
    const stream = streamRequests > 0;
    console.log(
      `\n| build (${rounds} rounds of ${seconds} s, ${connections} connections) | relay req/s, median (min–max) | Switchyard CPU µs/request, median (min) | serving thread µs/request, median (min) |${stream ? ' streaming first byte p50 ms, median |' : ''}\n|---|---:|---:|---:|${stream ? '---:|' : ''}`,
    );
    for (const b of running) {
      console.log(
        `| ${b.name} | ${Math.round(median(b.rps))} (${Math.round(Math.min(...b.rps))}–${Math.round(Math.max(...b.rps))}) | ${median(b.total).toFixed(0)} (${Math.min(...b.total).toFixed(0)}) | ${median(b.serving).toFixed(0)} (${Math.min(...b.serving).toFixed(0)}) |${stream ? ` ${b.firstByte.length > 0 ? fmt(median(b.firstByte)) : '–'} |` : ''}`,
      );
    }
    if (args.json) {
      const dir = join(import.meta.dirname, 'results');
      mkdirSync(dir, { recursive: true });
      const date = new Date().toISOString();
      const file = join(dir, `relay-compare-${date.replace(/[:.]/g, '-')}.json`);
      const sides = running.map((b) => ({ name: b.name, rps: b.rps, cpuUsPerRequest: b.total, servingUsPerRequest: b.serving, streamFirstByteP50Ms: b.firstByte }));
      writeFileSync(file, JSON.stringify({ date, spec, rounds, seconds, connections, streamRequests, loadavg: loadavg(), sides }, null, 2));
      console.log(`results written to ${file}`);
    }
  } finally {
    for (const sy of started) await sy.stop();
    fake.child.kill();
  }
}

/** One `--compare` side: name=DIR[:VAR=value...] (the build in DIR, run with those variables set). */
function parseSide(entry: string): { name: string; cli: string; env: Record<string, string> } {
  const [name, rest] = entry.split(/=(.*)/s, 2);
  const [dir, ...overrides] = (rest ?? '').split(':');
  if (!name || !dir) throw new Error(`--compare takes name=DIR[:VAR=value...],... (got "${entry}")`);
  const env: Record<string, string> = {};
  for (const override of overrides) {
    const [variable, value] = override.split(/=(.*)/s, 2);
    if (!variable || value === undefined) throw new Error(`--compare: "${override}" in "${entry}" is not VAR=value`);
    env[variable] = value;
  }
  return { name, cli: resolve(dir, 'dist/src/cli.js'), env };
}

/**
 * `--endpoints chat,conversation` (no --compare): what a conversation reply adds to the first
 * streamed byte over the same request on /v1/chat/completions. One Switchyard, one fake; the two
 * requests take turns (drift hits both alike). The conversation holds the same system prompt,
 * model, temperature and max_tokens, so its upstream request is the chat one plus the history of
 * its earlier turns (a new conversation every TURNS_PER_CONVERSATION requests, made between
 * timed requests).
 */
async function conversationFirstByte() {
  const requests = Math.max(1, Math.round(nonNegative('stream-requests', args['stream-requests'] ?? '300')));
  const TURNS_PER_CONVERSATION = 10;
  const fake = await startHelper('fake', ['--stream-gap-ms', args['stream-gap-ms'] ?? '2']);
  const distributed = args.mode === 'distributed' ? await distributedStores() : null;
  let sy: Switchyard | null = null;
  try {
    sy = await startSwitchyard(args.dist ? join(ROOT, 'dist/src/cli.js') : null, args.dir, args.profile, distributed?.env ?? {});
    const { adminToken, userToken } = await benchTokens(sy);
    await createChannel(sy, fake.url, adminToken, userToken);
    const headers = { authorization: `Bearer ${userToken}` };
    const client = new Client(sy.url, { pipelining: 1 });
    const conversationBody = JSON.stringify({ content: 'Say hello in one short sentence.' });
    let conversation = '';
    let turns = TURNS_PER_CONVERSATION;
    const nextPath = async () => {
      if (turns === TURNS_PER_CONVERSATION) {
        const created = await api(`${sy!.url}/v1/conversations`, userToken, { model: MODEL, system_prompt: 'You are a helpful assistant.', temperature: 0.2, max_tokens: 64 });
        if (created.status !== 201) throw new Error(`conversation create failed: ${created.status} ${JSON.stringify(created.json)}`);
        conversation = (created.json as { id: string }).id;
        turns = 0;
      }
      turns += 1;
      return `/v1/conversations/${conversation}/messages`;
    };
    const run = async (n: number) => {
      const chat: StreamSample[] = [];
      const conv: StreamSample[] = [];
      for (let i = 0; i < n; i++) {
        chat.push(await streamOnce(client, '/v1/chat/completions', headers));
        conv.push(await streamOnce(client, await nextPath(), headers, { body: conversationBody, endsWith: 'data: [DONE]\n\n' }));
      }
      return { chat, conv };
    };
    await run(Math.min(50, requests));
    const { chat, conv } = await run(requests);
    const rows = [
      ['chat completions', chat],
      ['conversation reply', conv],
    ] as const;
    console.log(`\n| endpoint (${args.mode}, ${requests} sequential streaming requests each, interleaved) | first byte p50 ms | p99 ms | end p50 ms | p99 ms |\n|---|---:|---:|---:|---:|`);
    const figures = rows.map(([name, samples]) => {
      const first = distribution(samples.map((x) => x.firstByte));
      const total = distribution(samples.map((x) => x.total));
      console.log(`| ${name} | ${fmt(first.p50)} | ${fmt(first.p99)} | ${fmt(total.p50)} | ${fmt(total.p99)} |`);
      return { name, firstByte: first, total };
    });
    console.log(`\nconversation reply adds ${fmt(figures[1]!.firstByte.p50 - figures[0]!.firstByte.p50)} ms to the first byte at p50 (target <= 2 ms)`);
    await client.close();
    if (args.json) {
      const dir = join(import.meta.dirname, 'results');
      mkdirSync(dir, { recursive: true });
      const date = new Date().toISOString();
      const file = join(dir, `relay-conversation-${date.replace(/[:.]/g, '-')}.json`);
      writeFileSync(file, JSON.stringify({ date, mode: args.mode, requests, loadavg: loadavg(), figures }, null, 2));
      console.log(`results written to ${file}`);
    }
  } finally {
    await sy?.stop();
    await distributed?.cleanup();
    fake.child.kill();
  }
}

const measuresConversation = !args.compare && (args.endpoints ?? '').split(',').includes('conversation');

if (args.role === 'fake') {
  void runFake(nonNegative('stream-gap-ms', args['stream-gap-ms']));
} else if (args.role === 'lean') {
  void runLean(args.upstream ?? '');
} else if (args.role === 'floor') {
  void runFloor(args.upstream ?? '');
} else {
  void (args.compare ? compare(args.compare) : measuresConversation ? conversationFirstByte() : main()).then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
