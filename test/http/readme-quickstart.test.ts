/**
 * The README's quickstart, executed: the commands between `<!-- quickstart:begin -->` and
 * `<!-- quickstart:end -->` are read from README.md and run as written — the server with
 * `npm start` (the built dist/, as a user gets it), the curl + jq steps in bash, the `openai` SDK
 * snippet with node — so the section cannot rot. Only what must differ on a test machine is
 * replaced: the port (a free one instead of 8000), OpenAI's URL (a fake upstream that speaks its
 * wire format) and the data directory (a temp one). `npm ci` is not re-run: the suite runs after it.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/package-root.js';
import { replyText } from '../support/fake-upstreams/fake.js';
import { startOpenAiFake, type OpenAiFake } from '../support/fake-upstreams/openai.js';

interface Block {
  lang: string;
  code: string;
}

/** The fenced code blocks of the README's quickstart section, in order. */
function quickstartBlocks(readme: string): Block[] {
  const begin = readme.indexOf('<!-- quickstart:begin');
  const end = readme.indexOf('<!-- quickstart:end -->');
  if (begin < 0 || end < begin) throw new Error('README.md has no quickstart section (quickstart:begin / quickstart:end)');
  return [...readme.slice(begin, end).matchAll(/```(\w+)\n([\s\S]*?)```/g)].map((m) => ({ lang: m[1]!, code: m[2]! }));
}

/** A child process run to its end without blocking this process (the fake upstream answers from it). */
function run(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number }): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
    child.once('error', reject);
    child.once('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

const root = packageRoot();
const hasTools = ['curl', 'jq'].every((tool) => spawnSync('sh', ['-c', `command -v ${tool}`]).status === 0);

describe('README quickstart', () => {
  const blocks = quickstartBlocks(readFileSync(join(root, 'README.md'), 'utf8'));
  let upstream: OpenAiFake;
  let server: ChildProcess | null = null;
  let serverLog = '';
  let dataDir: string;
  let port: number;
  let key = '';
  const local = (code: string) => code.replaceAll('http://localhost:8000', `http://127.0.0.1:${port}`).replaceAll('https://api.openai.com/v1', upstream.baseUrl);

  beforeAll(async () => {
    upstream = await startOpenAiFake();
    dataDir = mkdtempSync(join(tmpdir(), 'sy-quickstart-'));
    port = await freePort();
  });

  afterAll(async () => {
    if (server?.pid) {
      try {
        process.kill(-server.pid, 'SIGTERM');
      } catch {
        // already gone
      }
      await new Promise((r) => setTimeout(r, 300));
    }
    await upstream?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('has the install-and-start block, the curl steps and the SDK snippet', () => {
    expect(blocks.map((b) => b.lang)).toEqual(['sh', 'sh', 'js']);
    expect(blocks[0]!.code).toMatch(/^npm ci$/m);
    expect(blocks[0]!.code).toMatch(/ADMIN_PASSWORD=\S+ npm start$/m);
  });

  it('starts with `npm start` as written and answers on the port', async () => {
    const start = blocks[0]!.code.split('\n').find((line) => line.endsWith('npm start'))!;
    server = spawn('bash', ['-c', start], {
      cwd: root,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, DATA_DIR: dataDir, STORAGE_DIR: join(dataDir, 'storage'), SERVER_PORT: String(port), METRICS_PORT: '0', LOG_LEVEL: 'warn', NODE_ENV: 'production' },
    });
    server.stdout!.on('data', (chunk: Buffer) => (serverLog += chunk.toString()));
    server.stderr!.on('data', (chunk: Buffer) => (serverLog += chunk.toString()));
    let ready = false;
    for (let i = 0; i < 300 && !ready && server.exitCode === null; i++) {
      ready = await fetch(`http://127.0.0.1:${port}/health/ready`).then((r) => r.ok, () => false);
      if (!ready) await new Promise((r) => setTimeout(r, 100));
    }
    expect(ready, `the server did not come up:\n${serverLog}`).toBe(true);
  }, 60_000);

  it.skipIf(!hasTools)('the curl steps log in, add a channel, create a key and get a chat completion', async () => {
    const script = `set -euo pipefail\n${local(blocks[1]!.code)}\necho\necho "QUICKSTART_KEY=$KEY"\n`;
    const steps = await run('bash', ['-c', script], { cwd: dataDir, timeoutMs: 30_000, env: { ...process.env, OPENAI_API_KEY: 'test-key' } });
    expect(steps.status, `${steps.stdout}\n${steps.stderr}\n${serverLog}`).toBe(0);
    const lines = steps.stdout.trim().split('\n');
    key = lines.at(-1)!.replace('QUICKSTART_KEY=', '');
    expect(key).toMatch(/^sk-/);
    expect(JSON.parse(lines[0]!)).toMatchObject({ name: 'openai', type: 'openai', models: ['gpt-4o-mini'] });
    expect(lines.slice(1, -1).join('\n').trim()).toBe(replyText('Say hello'));
    // The channel's key reached the upstream as its credential.
    expect(upstream.requests.at(-1)?.headers.authorization).toBe('Bearer test-key');
  }, 40_000);

  it.skipIf(!hasTools)('the SDK snippet answers with the same key', async () => {
    expect(key).toMatch(/^sk-/);
    // Inside the package's node_modules, so that `import 'openai'` resolves as in a user's project.
    const dir = mkdtempSync(join(root, 'node_modules', '.quickstart-'));
    try {
      writeFileSync(join(dir, 'hello.mjs'), local(blocks[2]!.code));
      const hello = await run('node', ['hello.mjs'], { cwd: dir, timeoutMs: 30_000, env: { ...process.env, SWITCHYARD_KEY: key } });
      expect(hello.status, hello.stderr).toBe(0);
      expect(hello.stdout.trim()).toBe(replyText('Say hello'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 40_000);
});
