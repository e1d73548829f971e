/**
 * How long `POST /v1/conversations/{id}/stop` takes to end a running generation (decision 0130).
 *
 *   npx tsx bench/conversation-stop.ts [--stops N] [--polls 25,100]
 *
 * A fake upstream streams one chunk every 20 ms for as long as it is read. For each case, N times:
 * a reply is started, its first text read, then the stop is sent; the figure is the time from
 * sending the stop to the upstream request's end (the generation really stopped), and to the
 * reply's final event (`conversation.reply`, stopped: after the partial reply is stored and
 * projected) reaching the client.
 *
 *   embedded, same instance         SQLite + memory counters (one process: the local registry)
 *   distributed, same instance      two Switchyard apps on one NATS stream, MariaDB database and
 *                                   Redis prefix; the stop lands where the generation runs
 *   distributed, other instance     the stop lands on the other app: it reaches the generation
 *                                   through the counters (the poll), once per --polls value
 *   log delivery (the alternative)  an event appended on one NATS event store connection until a
 *                                   subscription from the head on another one has it: what a stop
 *                                   signalled through the log would take at least
 *
 * Both apps run in this process (latency, not CPU, is measured). Figures go to docs/decisions/0130.
 */
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { openEventStore } from '../src/adapters/index.js';
import { createApp, type App } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/logger.js';
import { percentile } from './stats.js';

const { values: args } = parseArgs({ options: { stops: { type: 'string', default: '40' }, polls: { type: 'string', default: '25,100' } } });
const STOPS = Math.max(1, Number(args.stops));
const POLLS = (args.polls ?? '100').split(',').map(Number);
const ADMIN = { email: 'stop-bench@switchyard.bench', password: 'stop-bench-password' };

/** An OpenAI-compatible upstream that streams a chunk every 20 ms until the client goes. */
/** Called when the upstream sees its client (the relay) go: the generation really ended. */
let onUpstreamClosed: (() => void) | null = null;

async function endlessUpstream(): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const chunk = (content: string) => `data: ${JSON.stringify({ id: 'chatcmpl-stop', object: 'chat.completion.chunk', created: 1, model: 'stop-model', choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;
      res.write(chunk('word '));
      const timer = setInterval(() => res.write(chunk('word ')), 20);
      res.on('close', () => {
        clearInterval(timer);
        onUpstreamClosed?.();
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  return { server, url: `http://127.0.0.1:${address.port}/v1` };
}

async function start(env: Record<string, string>): Promise<{ app: App; url: string; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'sy-bench-stop-'));
  const config = loadConfig({ SECRET: 'bench-secret-0123456789-abcdefghij', HOST: '127.0.0.1', SERVER_PORT: '0', METRICS_ENABLED: 'false', LOG_LEVEL: 'silent', DATA_DIR: dir, ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password, HEALTH_CHECK_ENABLED: 'false', ...env });
  const app = await createApp(config, createLogger('silent'));
  const { url } = await app.listen();
  return { app, url, dir };
}

async function json(url: string, token: string | null, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(url, { method: body === undefined ? 'GET' : 'POST', headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

/** Logs in, adds the channel, waits until `others` route it too. */
async function prepare(url: string, upstream: string, others: string[]): Promise<string> {
  const token = (await json(`${url}/v1/auth/login`, null, ADMIN)).json.access_token as string;
  const channel = await json(`${url}/v1/admin/channels`, token, { name: 'endless', type: 'openai', base_url: upstream, key: 'k', models: ['stop-model'] });
  if (channel.status !== 201) throw new Error(`channel: ${channel.status} ${JSON.stringify(channel.json)}`);
  for (const base of [url, ...others]) {
    for (;;) {
      const models = (await json(`${base}/v1/models`, token)).json.data as Array<{ id: string }> | undefined;
      if (models?.some((m) => m.id === 'stop-model')) break;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return token;
}

/** One stop: ms from sending it to the upstream request's end, and to the final event. */
async function oneStop(generating: string, stopping: string, token: string): Promise<[number, number]> {
  const created = await json(`${generating}/v1/conversations`, token, { model: 'stop-model', title: 'bench' });
  const id = created.json.id as string;
  const res = await fetch(`${generating}/v1/conversations/${id}/messages`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ content: 'go on forever' }) });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  while (!text.includes('word')) text += decoder.decode((await reader.read()).value, { stream: true });
  let upstreamGone = NaN;
  const sent = performance.now();
  onUpstreamClosed = () => (upstreamGone = performance.now() - sent);
  const stop = await json(`${stopping}/v1/conversations/${id}/stop`, token, {});
  if (stop.json.stopped !== true) throw new Error(`the stop found nothing running: ${JSON.stringify(stop.json)}`);
  while (!text.includes('"conversation.reply"')) {
    const { value, done } = await reader.read();
    if (done) throw new Error('the stream ended without its final event');
    text += decoder.decode(value, { stream: true });
  }
  const took = performance.now() - sent;
  while (!(await reader.read()).done);
  onUpstreamClosed = null;
  return [upstreamGone, took];
}

async function measure(name: string, generating: string, stopping: string, token: string): Promise<void> {
  for (let i = 0; i < 3; i++) await oneStop(generating, stopping, token); // warm-up
  const upstream: number[] = [];
  const final: number[] = [];
  for (let i = 0; i < STOPS; i++) {
    const [gone, took] = await oneStop(generating, stopping, token);
    upstream.push(gone);
    final.push(took);
  }
  upstream.sort((a, b) => a - b);
  final.sort((a, b) => a - b);
  const cell = (xs: number[]) => `${percentile(xs, 50).toFixed(1)} | ${percentile(xs, 95).toFixed(1)} | ${xs.at(-1)!.toFixed(1)}`;
  console.log(`| ${name} | ${STOPS} | ${cell(upstream)} | ${cell(final)} |`);
}

async function distributedEnv(): Promise<{ env: Record<string, string>; cleanup: () => Promise<void> }> {
  const suffix = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  const env = {
    NATS_URL: 'nats://127.0.0.1:4222',
    NATS_STREAM: `SYSTOP_${suffix}`,
    SQLDB_HOST: '127.0.0.1',
    SQLDB_PORT: '3306',
    SQLDB_USER: 'root',
    SQLDB_NAME: `sy_stop_${suffix}`,
    CACHE_HOST: '127.0.0.1',
    CACHE_PORT: '6379',
    CACHE_PREFIX: `systop:${suffix}:`,
  };
  return {
    env,
    async cleanup() {
      const { connect } = await import('@nats-io/transport-node');
      const { jetstreamManager } = await import('@nats-io/jetstream');
      const nc = await connect({ servers: env.NATS_URL });
      await (await jetstreamManager(nc)).streams.delete(env.NATS_STREAM).catch(() => undefined);
      await nc.close();
      const mysql = await import('mysql2/promise');
      const conn = await mysql.createConnection({ host: env.SQLDB_HOST, port: Number(env.SQLDB_PORT), user: env.SQLDB_USER });
      await conn.query(`DROP DATABASE IF EXISTS \`${env.SQLDB_NAME}\``);
      await conn.end();
    },
  };
}

/** The alternative: an event appended on one connection, seen by a subscription from the head on another. */
async function logDelivery(stream: string): Promise<void> {
  const config = { kind: 'nats' as const, url: 'nats://127.0.0.1:4222', stream };
  const [writer, reader] = await Promise.all([openEventStore(config), openEventStore(config)]);
  const seen = new Map<string, () => void>();
  const subscription = reader.subscribe({
    after: await reader.headPosition(),
    onCommit: async (commit) => {
      for (const event of commit.events) seen.get(event.stream)?.();
    },
  });
  const samples: number[] = [];
  for (let i = 0; i < STOPS + 3; i++) {
    const name = `stopbench-${i}`;
    const arrived = new Promise<void>((resolve) => seen.set(name, resolve));
    const sent = performance.now();
    await writer.append(name, [{ type: 'GenerationStopRequested', data: {} }], { expectedVersion: 'any', tenantId: 'bench' });
    await arrived;
    if (i >= 3) samples.push(performance.now() - sent);
  }
  await subscription.close();
  await Promise.all([writer.close(), reader.close()]);
  samples.sort((a, b) => a - b);
  console.log(`| log delivery on NATS (append, then a subscription from the head has it) | ${STOPS} | ${percentile(samples, 50).toFixed(1)} | ${percentile(samples, 95).toFixed(1)} | ${samples.at(-1)!.toFixed(1)} | – | – | – |`);
}

async function main() {
  const upstream = await endlessUpstream();
  console.log(`| case | stops | upstream ended p50 ms | p95 | max | final event p50 ms | p95 | max |\n|---|---:|---:|---:|---:|---:|---:|---:|`);
  const embedded = await start({});
  try {
    const token = await prepare(embedded.url, upstream.url, []);
    await measure('embedded, same instance', embedded.url, embedded.url, token);
  } finally {
    await embedded.app.close();
    rmSync(embedded.dir, { recursive: true, force: true });
  }
  for (const poll of POLLS) {
    const stores = await distributedEnv();
    const apps = [await start({ ...stores.env, CONVERSATION_STOP_POLL: `${poll}ms` })];
    apps.push(await start({ ...stores.env, CONVERSATION_STOP_POLL: `${poll}ms` }));
    try {
      const token = await prepare(apps[0]!.url, upstream.url, [apps[1]!.url]);
      if (poll === POLLS[0]) await measure('distributed, same instance', apps[0]!.url, apps[0]!.url, token);
      await measure(`distributed, other instance, CONVERSATION_STOP_POLL=${poll}ms`, apps[0]!.url, apps[1]!.url, token);
      if (poll === POLLS[0]) await logDelivery(stores.env.NATS_STREAM!);
    } finally {
      for (const s of apps) await s.app.close();
      for (const s of apps) rmSync(s.dir, { recursive: true, force: true });
      await stores.cleanup();
    }
  }
  upstream.server.close();
}

void main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
