/**
 * Files (issue 18): upload throughput and server memory, extraction and OCR time, and the serving
 * thread's event-loop delay while files are processed.
 *
 *   npx tsx bench/files.ts [--phases upload,pdf,ocr,eld] [--dist] [--size-mb 500] [--storage local,s3]
 *
 * Switchyard runs as a child process (`--role server`: this script, `createApp` from src/ or, with
 * --dist, from dist/), embedded, so that its RSS and event loop are its own. The child samples its
 * RSS every 10 ms and runs `perf_hooks.monitorEventLoopDelay` on its serving thread, on request
 * over IPC; it also times its FileProcessor's `process` calls (the worker pool's own time, copied
 * bytes to answer) by wrapping the processor it was given: nothing is added to the product.
 *
 *   upload  a multipart `POST /v1/files` of --size-mb MB, written from a generator (one 1 MiB random
 *           buffer reused; the client never holds the file), for each --storage (s3: s3rver in a
 *           child of its own, on disk); then the same bytes to the floor: a bare node:http server
 *           streaming the request into a file through SHA-256 (no multipart parsing).
 *           Reports MB/s and RSS peak - baseline.
 *   pdf     a --pages page PDF (test/support/file-fixtures.ts), upload to `processed` (polling
 *           GET /v1/files/{id} every 5 ms) and the processor's own time, --runs times.
 *   ocr     one A4 150 dpi PNG (test/support/ocr-fixtures.ts), the same; the first run includes
 *           the OCR engine's start in the worker.
 *   eld     event-loop delay (p50/p99/max) while light API traffic runs (GET /v1/files/{id} and
 *           GET /v1/files, one request at a time, --gap-ms apart): with nothing processed for
 *           --seconds, then while 4 files are processed (--eld-files pdf|ocr|mixed).
 *
 * --gc-probe-ms N (diagnosis): N ms into each upload, the server reports its Buffers before and
 * after a full GC (garbage not yet collected, or bytes held).
 * --profile DIR runs the server child with --cpu-prof (one .cpuprofile per thread, written at its end).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, request as httpRequest } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type * as AppModule from '../src/app.js';
import type * as ConfigModule from '../src/config.js';
import type { FileProcessor } from '../src/files/processing/processor.js';
import type * as LoggerModule from '../src/logger.js';

const { values: args } = parseArgs({
  options: {
    role: { type: 'string', default: 'main' },
    phases: { type: 'string', default: 'upload,pdf,ocr,eld' },
    dist: { type: 'boolean', default: false },
    'size-mb': { type: 'string', default: '500' },
    storage: { type: 'string', default: 'local,s3' },
    pages: { type: 'string', default: '100' },
    runs: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '10' },
    'gap-ms': { type: 'string', default: '20' },
    'eld-files': { type: 'string', default: 'pdf' },
    workers: { type: 'string', default: '' },
    dir: { type: 'string', default: '' },
    profile: { type: 'string', default: '' },
    'gc-probe-ms': { type: 'string', default: '' },
  },
});

const SCRIPT = fileURLToPath(import.meta.url);
const ROOT = join(SCRIPT, '..', '..');
const ADMIN = { email: 'files-bench@switchyard.bench', password: 'files-bench-password' };
const MB = 1_000_000;
type Message = { id: number; op: string; [key: string]: unknown };

// ---------------------------------------------------------------- child roles

/** Answers the parent's IPC requests `{ id, op }` with `{ id, ...result }`. */
function serveIpc(handlers: Record<string, (message: Message) => unknown>): void {
  process.on('message', (message: Message) => {
    void Promise.resolve()
      .then(() => handlers[message.op]!(message))
      .then((result) => process.send!({ id: message.id, ...(result as object) }));
  });
}

/**
 * RSS sampled every 10 ms between `rss-start` and `rss-stop` (after a GC for the baseline), with
 * the peak of ArrayBuffer memory (Buffers) and, after a GC at the end, what is still held: memory
 * that a GC gives back was garbage not yet collected, not bytes kept.
 */
function rssProbe() {
  let timer: NodeJS.Timeout | null = null;
  let baseline = 0;
  let peak = 0;
  let buffersBaseline = 0;
  let buffersPeak = 0;
  const gc = () => (globalThis as { gc?: () => void }).gc?.();
  const sample = () => {
    const usage = process.memoryUsage();
    peak = Math.max(peak, usage.rss);
    buffersPeak = Math.max(buffersPeak, usage.arrayBuffers);
  };
  return {
    'rss-start': () => {
      gc();
      const usage = process.memoryUsage();
      [baseline, peak, buffersBaseline, buffersPeak] = [usage.rss, usage.rss, usage.arrayBuffers, usage.arrayBuffers];
      timer = setInterval(sample, 10);
      return { baseline };
    },
    // Diagnosis (--gc-probe-ms): Buffers held before and after a full GC in the middle of an upload.
    gc: () => {
      const before = process.memoryUsage().arrayBuffers - buffersBaseline;
      gc();
      return { before, after: process.memoryUsage().arrayBuffers - buffersBaseline };
    },
    'rss-stop': () => {
      clearInterval(timer!);
      sample();
      gc();
      const after = process.memoryUsage();
      return { baseline, peak, buffersBaseline, buffersPeak, rssAfterGc: after.rss, buffersAfterGc: after.arrayBuffers };
    },
  };
}

async function serverRole(): Promise<void> {
  const from = args.dist ? join(ROOT, 'dist', 'src') : join(ROOT, 'src');
  const ext = args.dist ? 'js' : 'ts';
  const { createApp } = (await import(pathToFileURL(join(from, `app.${ext}`)).href)) as typeof AppModule;
  const { loadConfig } = (await import(pathToFileURL(join(from, `config.${ext}`)).href)) as typeof ConfigModule;
  const { createLogger } = (await import(pathToFileURL(join(from, `logger.${ext}`)).href)) as typeof LoggerModule;
  const config = loadConfig(process.env);
  const app = await createApp(config, createLogger('silent'));
  // The processor's own time per file: the runner's processor, wrapped (bench only).
  const times: Array<{ ms: number; mimeType: string; ok: boolean }> = [];
  const runner = app.ctx.files.processing as unknown as { deps: { processor: FileProcessor } } | null;
  if (runner) {
    const processor = runner.deps.processor;
    const process_ = processor.process.bind(processor);
    processor.process = async (input) => {
      const start = performance.now();
      const result = await process_(input);
      times.push({ ms: performance.now() - start, mimeType: input.mimeType, ok: result.ok });
      return result;
    };
  }
  // Each storage put timed by its key's first segment (tmp/: the upload as received; uploads/: its
  // copy to the content address; texts/: extracted text): where an upload's time goes (bench only).
  const puts: Array<{ prefix: string; ms: number; bytes: number; buffersGrowth: number }> = [];
  const storage = app.ctx.files.storage;
  const put = storage.put.bind(storage);
  storage.put = async (key, body, options) => {
    const start = performance.now();
    const buffers = process.memoryUsage().arrayBuffers;
    const result = await put(key, body, options);
    puts.push({ prefix: key.split('/')[0]!, ms: performance.now() - start, bytes: result.bytes, buffersGrowth: process.memoryUsage().arrayBuffers - buffers });
    return result;
  };
  const { url } = await app.listen();
  const delay = monitorEventLoopDelay({ resolution: 1 });
  // The serving (main) thread's scheduler figures: ns on a core, ns runnable but waiting for one.
  const schedstat = () => {
    try {
      const [run, wait] = readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ').map(Number);
      return { run: run!, wait: wait! };
    } catch {
      return { run: NaN, wait: NaN };
    }
  };
  /** CPU ticks of the process's threads other than the serving one, by niceness (the processing workers run at +10). */
  const otherThreads = () => {
    const ticks = new Map<number, number>();
    try {
      for (const tid of readdirSync('/proc/self/task')) {
        if (Number(tid) === process.pid) continue;
        const fields = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ');
        // After "pid (comm) ": state is field 0, utime 11, stime 12, nice 16.
        const nice = Number(fields[16]);
        ticks.set(nice, (ticks.get(nice) ?? 0) + Number(fields[11]) + Number(fields[12]));
      }
    } catch {
      // not Linux: no per-thread figures
    }
    return ticks;
  };
  let others = otherThreads();
  let sched = schedstat();
  let since = performance.now();
  serveIpc({
    ...rssProbe(),
    'worker-times': () => ({ times: times.splice(0) }),
    'storage-puts': () => ({ puts: puts.splice(0) }),
    'eld-start': () => {
      delay.reset();
      delay.enable();
      sched = schedstat();
      others = otherThreads();
      since = performance.now();
      return {};
    },
    'eld-stop': () => {
      delay.disable();
      // The histogram records the interval between timer turns: the 1 ms resolution is taken off.
      const ms = (ns: number) => Math.max(0, ns / 1e6 - 1);
      const now = schedstat();
      const wall = (performance.now() - since) * 1e6;
      // Clock ticks are 10 ms on Linux (USER_HZ 100): CPU share per niceness, in cores.
      const othersNow = otherThreads();
      const byNice = [...othersNow].map(([nice, ticks]) => `nice ${nice}: ${(((ticks - (others.get(nice) ?? 0)) * 10e6) / wall).toFixed(2)} cores`).join(', ');
      return {
        p50: ms(delay.percentile(50)),
        p99: ms(delay.percentile(99)),
        max: ms(delay.max),
        count: delay.count,
        cpuShare: (now.run - sched.run) / wall,
        waitShare: (now.wait - sched.wait) / wall,
        byNice,
      };
    },
    stop: async () => {
      await app.close();
      setImmediate(() => process.exit(0));
      return {};
    },
  });
  process.send!({ id: 0, url });
}

/** The floor: node:http, the request body streamed into a file through SHA-256. */
async function floorRole(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'sy-bench-floor-'));
  let n = 0;
  const server = createServer((req, res) => {
    const hash = createHash('sha256');
    const path = join(dir, `upload-${n++}`);
    req.on('data', (chunk: Buffer) => hash.update(chunk));
    pipeline(req, createWriteStream(path)).then(
      () => {
        rmSync(path, { force: true });
        res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ sha256: hash.digest('hex') }));
      },
      (error: Error) => res.writeHead(500).end(error.message),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  serveIpc({
    ...rssProbe(),
    stop: () => {
      server.close();
      rmSync(dir, { recursive: true, force: true });
      setImmediate(() => process.exit(0));
      return {};
    },
  });
  process.send!({ id: 0, url: `http://127.0.0.1:${(server.address() as { port: number }).port}` });
}

/** s3rver in a process of its own (it stores on disk), so its work is neither the server's nor the client's. */
async function s3Role(): Promise<void> {
  const { startLocalS3 } = await import('../test/support/s3-server.js');
  const s3 = await startLocalS3('files-bench');
  serveIpc({
    stop: async () => {
      await s3.stop();
      setImmediate(() => process.exit(0));
      return {};
    },
  });
  process.send!({ id: 0, config: s3.config });
}

// ---------------------------------------------------------------- parent

interface Child {
  process: ChildProcess;
  first: Record<string, unknown>;
  ask(op: string, extra?: Record<string, unknown>): Promise<Record<string, unknown>>;
}

async function startChild(role: string, env: Record<string, string> = {}): Promise<Child> {
  // This script is TypeScript: every child runs it through tsx (with --dist the app itself is loaded from dist/).
  const execArgv = ['--expose-gc', '--import', 'tsx', ...(args.profile && role === 'server' ? ['--cpu-prof', '--cpu-prof-dir', args.profile] : [])];
  const childArgs = ['--role', role, ...(args.dist ? ['--dist'] : [])];
  const child = fork(SCRIPT, childArgs, { execArgv, env: { ...process.env, ...env }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const waiting = new Map<number, (value: Record<string, unknown>) => void>();
  let next = 1;
  const first = await new Promise<Record<string, unknown>>((resolve, reject) => {
    waiting.set(0, resolve);
    child.once('exit', (code) => reject(new Error(`${role} exited with ${code}`)));
    child.on('message', (message: Message) => {
      waiting.get(message.id)?.(message);
      waiting.delete(message.id);
    });
  });
  return {
    process: child,
    first,
    ask: (op, extra = {}) =>
      new Promise((resolve) => {
        const id = next++;
        waiting.set(id, resolve);
        child.send({ id, op, ...extra });
      }),
  };
}

async function stopChild(child: Child): Promise<void> {
  const exited = new Promise((resolve) => child.process.once('exit', resolve));
  await child.ask('stop');
  await exited;
}

interface Server {
  child: Child;
  url: string;
  token: string;
  dir: string;
}

async function startServer(env: Record<string, string>): Promise<Server> {
  const dir = args.dir ? mkdtempSync(join(args.dir, 'sy-bench-files-')) : mkdtempSync(join(tmpdir(), 'sy-bench-files-'));
  const child = await startChild('server', {
    SECRET: 'bench-secret-0123456789-abcdefghij',
    HOST: '127.0.0.1',
    SERVER_PORT: '0',
    METRICS_ENABLED: 'false',
    LOG_LEVEL: 'silent',
    DATA_DIR: dir,
    STORAGE_DIR: join(dir, 'storage'),
    ADMIN_EMAIL: ADMIN.email,
    ADMIN_PASSWORD: ADMIN.password,
    HEALTH_CHECK_ENABLED: 'false',
    MAX_FILE_SIZE: `${Math.max(600, Number(args['size-mb']) + 100)}MB`,
    ...(args.workers ? { FILE_PROCESSING_WORKERS: args.workers } : {}),
    ...env,
  });
  const url = child.first.url as string;
  const login = await fetch(`${url}/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) });
  const token = ((await login.json()) as { access_token: string }).access_token;
  if (!token) throw new Error(`login failed: ${login.status}`);
  return { child, url, token, dir };
}

async function stopServer(server: Server): Promise<void> {
  await stopChild(server.child);
  rmSync(server.dir, { recursive: true, force: true });
}

/**
 * A multipart upload of `size` bytes written chunk by chunk (backpressure respected) with
 * Content-Length; resolves with the status, the answer and the elapsed ms from the first byte.
 */
function upload(url: string, token: string | null, size: number, filename: string, chunk: Buffer): Promise<{ status: number; body: string; ms: number }> {
  const boundary = `----switchyard-bench-${randomBytes(12).toString('hex')}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbench\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const req = httpRequest(url, {
      method: 'POST',
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': head.length + size + tail.length, ...(token ? { authorization: `Bearer ${token}` } : {}) },
    });
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (text: string) => (body += text));
      res.on('end', () => resolve({ status: res.statusCode!, body, ms: performance.now() - start }));
    });
    req.on('error', reject);
    void (async () => {
      const write = (bytes: Buffer) => (req.write(bytes) ? Promise.resolve() : new Promise<void>((r) => req.once('drain', () => r())));
      await write(head);
      for (let sent = 0; sent < size; sent += chunk.length) await write(sent + chunk.length <= size ? chunk : chunk.subarray(0, size - sent));
      req.end(tail);
    })();
  });
}

/** A small file as a multipart form through fetch. */
async function uploadBytes(server: Server, bytes: Buffer, filename: string): Promise<string> {
  const form = new FormData();
  form.set('purpose', 'bench');
  form.set('file', new Blob([bytes]), filename);
  const res = await fetch(`${server.url}/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${server.token}` }, body: form });
  const json = (await res.json()) as { id?: string };
  if (res.status !== 201 || !json.id) throw new Error(`upload ${filename}: ${res.status} ${JSON.stringify(json)}`);
  return json.id;
}

async function fileStatus(server: Server, id: string): Promise<{ status: string; status_details: string | null }> {
  const res = await fetch(`${server.url}/v1/files/${id}`, { headers: { authorization: `Bearer ${server.token}` } });
  return (await res.json()) as { status: string; status_details: string | null };
}

async function waitProcessed(server: Server, id: string, pollMs = 5): Promise<void> {
  for (;;) {
    const { status, status_details } = await fileStatus(server, id);
    if (status === 'processed') return;
    if (status === 'error') throw new Error(`file ${id} failed: ${status_details}`);
    await new Promise((r) => setTimeout(r, pollMs));
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const fmt = (x: number, digits = 0) => x.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const mib = (bytes: number) => bytes / 1024 / 1024;
const load = () => loadavg().map((x) => x.toFixed(1)).join(' ');
const rows: string[] = [];
const row = (cells: Array<string | number>) => {
  const line = `| ${cells.join(' | ')} |`;
  rows.push(line);
  console.log(line);
};

async function uploadPhase(): Promise<void> {
  const size = Number(args['size-mb']) * MB;
  const chunk = randomBytes(1024 * 1024);
  console.log(`\n### upload of ${args['size-mb']} MB (load ${load()})\n\n| path | MB/s | seconds | RSS baseline MiB | RSS peak − baseline MiB | Buffers peak − baseline MiB | after a GC: RSS / Buffers − baseline MiB | storage puts (the request's seconds) |\n|---|---:|---:|---:|---:|---:|---:|---|`);
  const measure = async (label: string, child: Child, url: string, token: string | null) => {
    await child.ask('rss-start');
    const probe = args['gc-probe-ms']
      ? new Promise<string>((resolve) => setTimeout(() => void child.ask('gc').then((r) => resolve(`, a GC at ${args['gc-probe-ms']} ms: Buffers ${fmt(mib(r.before as number))} → ${fmt(mib(r.after as number))} MiB`)), Number(args['gc-probe-ms'])))
      : Promise.resolve('');
    const { status, body, ms } = await upload(url, token, size, 'big.bin', chunk);
    const probed = await probe;
    const { baseline, peak, buffersBaseline, buffersPeak, rssAfterGc, buffersAfterGc } = (await child.ask('rss-stop')) as Record<string, number>;
    if (status !== 201) throw new Error(`${label}: ${status} ${body.slice(0, 300)}`);
    let split = '';
    if (label.startsWith('Switchyard')) {
      const { puts } = (await child.ask('storage-puts')) as { puts: Array<{ prefix: string; ms: number; buffersGrowth: number }> };
      split = puts.map((p) => `${p.prefix}/ ${fmt(p.ms / 1000, 2)} s (Buffers +${fmt(mib(p.buffersGrowth))} MiB)`).join(', ') + probed;
    }
    row([label, fmt(size / MB / (ms / 1000), 1), fmt(ms / 1000, 2), fmt(mib(baseline!)), fmt(mib(peak! - baseline!), 1), fmt(mib(buffersPeak! - buffersBaseline!), 1), `${fmt(mib(rssAfterGc! - baseline!), 1)} / ${fmt(mib(buffersAfterGc! - buffersBaseline!), 1)}`, split]);
    return size / MB / (ms / 1000);
  };
  const floor = await startChild('floor');
  const floorRate = await measure('floor: node:http → file + SHA-256', floor, `${floor.first.url as string}/`, null);
  await stopChild(floor);
  for (const storage of args.storage.split(',')) {
    let s3: Child | null = null;
    let env: Record<string, string> = {};
    if (storage === 's3') {
      s3 = await startChild('s3');
      const config = s3.first.config as { bucket: string; endpoint: string; credentials: { accessKeyId: string; secretAccessKey: string } };
      env = { STORAGE_TYPE: 's3', S3_BUCKET: config.bucket, S3_ENDPOINT: config.endpoint, S3_ACCESS_KEY_ID: config.credentials.accessKeyId, S3_SECRET_ACCESS_KEY: config.credentials.secretAccessKey, S3_FORCE_PATH_STYLE: 'true' };
    }
    // Random bytes are application/octet-stream: nothing to process after the upload.
    const server = await startServer(env);
    try {
      const rate = await measure(`Switchyard, STORAGE_TYPE=${storage}`, server.child, `${server.url}/v1/files`, server.token);
      console.log(`  (${fmt((rate / floorRate) * 100)} % of the floor)`);
    } finally {
      await stopServer(server);
      if (s3) await stopChild(s3);
    }
  }
}

async function pdfFixture(pages: number): Promise<Buffer> {
  const { makePdf } = await import('../test/support/file-fixtures.js');
  const text = (page: number) => Array.from({ length: 40 }, (_, line) => `Page ${page + 1}, line ${line + 1}: freight invoice totals and the quick brown fox.`);
  return makePdf(Array.from({ length: pages }, (_, page) => text(page)));
}

async function ocrFixture(): Promise<Buffer> {
  const { encodePage, textPage } = await import('../test/support/ocr-fixtures.js');
  return encodePage(textPage(), 'png').bytes;
}

async function processingPhase(kind: 'pdf' | 'ocr'): Promise<void> {
  const bytes = kind === 'pdf' ? await pdfFixture(Number(args.pages)) : await ocrFixture();
  const label = kind === 'pdf' ? `${args.pages}-page PDF (${fmt(bytes.length / 1024)} KiB)` : `A4 150 dpi PNG (${fmt(bytes.length / 1024)} KiB)`;
  console.log(`\n### ${label} (load ${load()})\n\n| run | upload → processed ms | processor ms (worker pool) |\n|---|---:|---:|`);
  const server = await startServer({});
  try {
    const totals: number[] = [];
    const workers: number[] = [];
    for (let run = 1; run <= Number(args.runs); run++) {
      const start = performance.now();
      const id = await uploadBytes(server, bytes, kind === 'pdf' ? 'doc.pdf' : 'page.png');
      await waitProcessed(server, id);
      const total = performance.now() - start;
      const { times } = (await server.child.ask('worker-times')) as { times: Array<{ ms: number }> };
      totals.push(total);
      workers.push(times[0]?.ms ?? NaN);
      row([`${kind} ${run}`, fmt(total), fmt(times[0]?.ms ?? NaN)]);
    }
    const later = (xs: number[]) => (xs.length > 1 ? xs.slice(1) : xs);
    row([`${kind} median of runs 2..${args.runs}`, fmt(median(later(totals))), fmt(median(later(workers)))]);
  } finally {
    await stopServer(server);
  }
}

/** Light API traffic, one request at a time: the client-side latency of each. */
function lightTraffic(server: Server, id: string, gapMs: number): { stop(): Promise<number[]> } {
  const latencies: number[] = [];
  let running = true;
  const loop = (async () => {
    for (let i = 0; running; i++) {
      const start = performance.now();
      const res = await fetch(i % 2 === 0 ? `${server.url}/v1/files/${id}` : `${server.url}/v1/files?limit=20`, { headers: { authorization: `Bearer ${server.token}` } });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`light traffic: ${res.status}`);
      latencies.push(performance.now() - start);
      await new Promise((r) => setTimeout(r, gapMs));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return latencies;
    },
  };
}

async function eldPhase(): Promise<void> {
  const which = args['eld-files'];
  const pdf = which === 'ocr' ? null : await pdfFixture(Number(args.pages));
  const png = which === 'pdf' ? null : await ocrFixture();
  const files = Array.from({ length: 4 }, (_, i) => (which === 'mixed' ? (i % 2 === 0 ? pdf! : png!) : (pdf ?? png!)));
  const server = await startServer({});
  const gapMs = Number(args['gap-ms']);
  console.log(
    `\n### event-loop delay of the serving thread (4 × ${which}, ${args.workers || 'default'} workers, light traffic every ${gapMs} ms; load ${load()})\n\n` +
      '| case | seconds | ELD p50 ms | ELD p99 ms | ELD max ms | serving thread on a core | waiting for a core | requests | request p50 ms | request p99 ms |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  );
  const report = async (label: string, seconds: number, traffic: number[]) => {
    const eld = (await server.child.ask('eld-stop')) as { p50: number; p99: number; max: number; cpuShare: number; waitShare: number; byNice: string };
    const sorted = [...traffic].sort((a, b) => a - b);
    const pct = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
    row([label, fmt(seconds, 1), fmt(eld.p50, 2), fmt(eld.p99, 2), fmt(eld.max, 1), `${fmt(eld.cpuShare * 100, 1)} %`, `${fmt(eld.waitShare * 100, 1)} %`, traffic.length, fmt(pct(50), 2), fmt(pct(99), 2)]);
    console.log(`  the process's other threads: ${eld.byNice}`);
  };
  try {
    const probe = await uploadBytes(server, Buffer.from('a small text file for the light traffic\n'), 'probe.txt');
    await waitProcessed(server, probe);
    // Warm the processing workers (and the OCR engine) first, so the loaded case is not their start.
    const warm = await uploadBytes(server, files[0]!, 'warm');
    await waitProcessed(server, warm);
    await server.child.ask('worker-times');
    // Baseline: the same traffic with nothing processed.
    await server.child.ask('eld-start');
    let traffic = lightTraffic(server, probe, gapMs);
    await new Promise((r) => setTimeout(r, Number(args.seconds) * 1000));
    await report('no processing', Number(args.seconds), await traffic.stop());
    // Loaded: 4 files uploaded at once, measured until the last is processed.
    const ids = await Promise.all(files.map((bytes, i) => uploadBytes(server, bytes, `load-${i}`)));
    await server.child.ask('eld-start');
    const start = performance.now();
    traffic = lightTraffic(server, probe, gapMs);
    await Promise.all(ids.map((id) => waitProcessed(server, id, 20)));
    const latencies = await traffic.stop();
    await report(`4 files processed (${which})`, (performance.now() - start) / 1000, latencies);
    const { times } = (await server.child.ask('worker-times')) as { times: Array<{ ms: number }> };
    console.log(`  processor ms per file: ${times.map((t) => fmt(t.ms)).join(', ')}`);
  } finally {
    await stopServer(server);
  }
}

async function main(): Promise<void> {
  const phases = args.phases.split(',');
  console.log(`node ${process.version}, ${args.dist ? 'dist/' : 'src/ (tsx)'}, load ${load()}, ${new Date().toISOString()}`);
  if (phases.includes('upload')) await uploadPhase();
  if (phases.includes('pdf')) await processingPhase('pdf');
  if (phases.includes('ocr')) await processingPhase('ocr');
  if (phases.includes('eld')) await eldPhase();
  console.log(`\n${rows.join('\n')}`);
}

if (args.role === 'server') await serverRole();
else if (args.role === 'floor') await floorRole();
else if (args.role === 's3') await s3Role();
else await main();
