/**
 * `switchyard init` (issue 22) with the real CLI: from flags, from a `<PROVIDER>_API_KEY`
 * variable, and on a terminal answering its questions (script(1) gives it a pseudo-terminal). The
 * curl line it prints is then run as printed against the started server, through the channel it
 * made to a fake OpenAI upstream. Bad input is one line and exit 1.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, TEST_ADMIN, TEST_SECRET } from '../support/app.js';
import { CLI_SHELL, runCli } from '../support/cli.js';
import { replyText } from '../support/fake-upstreams/fake.js';
import { startOpenAiFake, type OpenAiFake } from '../support/fake-upstreams/openai.js';

const hasScript = spawnSync('sh', ['-c', 'command -v script && command -v curl']).status === 0;

describe('switchyard init', () => {
  let upstream: OpenAiFake;
  const dirs: string[] = [];
  const newDataDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'sy-init-'));
    dirs.push(dir);
    return dir;
  };
  const baseEnv = (dataDir: string): NodeJS.ProcessEnv => {
    const env: NodeJS.ProcessEnv = { ...process.env, SECRET: TEST_SECRET, DATA_DIR: dataDir, STORAGE_DIR: join(dataDir, 'storage'), LOG_LEVEL: 'warn', ADMIN_EMAIL: TEST_ADMIN.email, ADMIN_PASSWORD: TEST_ADMIN.password };
    for (const name of Object.keys(env)) if (/_API_KEY$|_BASE_URL$|_MODELS$/.test(name)) delete env[name];
    return env;
  };
  const cli = (env: NodeJS.ProcessEnv, ...args: string[]) => runCli(['init', ...args], env);

  /** Starts the server on the data dir, runs the printed curl line against it (its port swapped in), stops it. */
  async function curlAsPrinted(dataDir: string, printed: string): Promise<string> {
    const line = printed.split('\n').find((l) => l.startsWith('curl '));
    expect(line, printed).toBeDefined();
    const app = await startApp({}, { keepDataDir: dataDir, anonymous: true });
    try {
      const command = line!.replace('http://localhost:8000', app.url);
      return await new Promise<string>((resolve, reject) => {
        const child = spawn('bash', ['-c', `${command} | jq -r '.choices[0].message.content'`], { stdio: ['ignore', 'pipe', 'inherit'] });
        let out = '';
        child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
        child.once('error', reject);
        child.once('close', () => resolve(out.trim()));
      });
    } finally {
      await app.close();
    }
  }

  beforeAll(async () => {
    upstream = await startOpenAiFake();
  });
  afterAll(async () => {
    await upstream?.close();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('from flags: a channel and a key, and a curl line that works as printed', async () => {
    const dataDir = newDataDir();
    const { code, stdout, stderr } = await cli(baseEnv(dataDir), '--provider', 'openai', '--key', 'test-key', '--base-url', upstream.baseUrl, '--models', 'gpt-4o-mini,gpt-4o');
    expect(code, stderr).toBe(0);
    expect(stdout).toMatch(/^channel {2}openai \(openai\) created; models: gpt-4o-mini, gpt-4o$/m);
    expect(stdout).toMatch(/^API key {2}sk-\S+ {3}\(shown once/m);
    expect(stdout).not.toContain('test-key'); // the provider key is never printed
    expect(await curlAsPrinted(dataDir, stdout)).toBe(replyText('Say hello'));
    // A second run keeps the channel and makes another key.
    const again = await cli(baseEnv(dataDir), '--provider', 'openai', '--key', 'test-key', '--base-url', upstream.baseUrl);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/^channel {2}openai \(openai\) already there, kept/m);
  }, 90_000);

  it('from OPENAI_API_KEY (the non-interactive form)', async () => {
    const dataDir = newDataDir();
    const { code, stdout, stderr } = await cli({ ...baseEnv(dataDir), OPENAI_API_KEY: 'test-key', OPENAI_BASE_URL: upstream.baseUrl, OPENAI_MODELS: 'gpt-4o-mini' });
    expect(code, stderr).toBe(0);
    expect(stdout).toMatch(/^channel {2}openai \(openai\) created; models: gpt-4o-mini$/m);
    expect(await curlAsPrinted(dataDir, stdout)).toBe(replyText('Say hello'));
  }, 90_000);

  it.each([
    [[], /name a provider and its key: --provider openai --key/],
    [['--provider', 'nope', '--key', 'k'], /--provider must be one of openai, anthropic/],
    [['--provider', 'openai'], /--key is missing/],
    [['--provider', 'openai', '--key', 'k', '--base-url', 'ftp://x'], /--base-url: must be an http\(s\) URL/],
  ])('%j off a terminal: one line and exit 1', async (args, message) => {
    const { code, stdout, stderr } = await cli(baseEnv(newDataDir()), ...args);
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toMatch(message);
    expect(stderr.trim().split('\n')).toHaveLength(1);
  });

  it.skipIf(!hasScript)('on a terminal it asks, without echoing the key', async () => {
    const dataDir = newDataDir();
    const output = await new Promise<string>((resolve) => {
      const child = spawn('script', ['-qec', `${CLI_SHELL} init`, '/dev/null'], { env: baseEnv(dataDir), stdio: ['pipe', 'pipe', 'inherit'] });
      let out = '';
      const answers = ['openai', 'test-key-typed', upstream.baseUrl, 'gpt-4o-mini'];
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        // Each answer when its question shows.
        const asked = (out.match(/Provider \[openai\]: |API key \(not shown\): |Base URL \[[^\]]*\]: |Models \[[^\]]*\]: /g) ?? []).length;
        while (answers.length > 4 - asked) child.stdin.write(`${answers.shift()}\n`);
      });
      child.once('close', () => resolve(out));
    });
    expect(output).toMatch(/Provider \[openai\]: /);
    expect(output).not.toContain('test-key-typed');
    expect(output).toMatch(/channel {2}openai \(openai\) created; models: gpt-4o-mini/);
  }, 90_000);
});
