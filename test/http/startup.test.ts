/**
 * The real process, as an operator starts it: `npm start` runs dist/src/cli.js; here the test
 * run's compiled copy of the same entry point (test/support/cli.ts).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI_NODE_ARGS, cliEnv } from '../support/cli.js';

function run(args: string[], env: Record<string, string>, waitFor?: RegExp): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...CLI_NODE_ARGS, ...args], { env: cliEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      // Once: the test is of one orderly shutdown.
      if (waitFor && !child.killed && waitFor.test(stdout)) child.kill('SIGTERM');
    });
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

describe('process startup', () => {
  it('exits at once with a message naming SECRET when it is missing', async () => {
    const r = await run(['serve'], {});
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('SECRET');
  });

  it('names a malformed setting', async () => {
    const r = await run(['serve'], { SECRET: 'x'.repeat(32), SERVER_PORT: 'abc' });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('SERVER_PORT');
  });

  it("says 'Failed to connect to database' when SQLDB_HOST cannot be reached", async () => {
    const port = await freePort(); // nothing listens there
    const dir = mkdtempSync(join(tmpdir(), 'sy-start-'));
    try {
      const r = await run(['serve'], { SECRET: 'x'.repeat(32), SQLDB_HOST: '127.0.0.1', SQLDB_PORT: String(port), DATA_DIR: dir });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('Failed to connect to database');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('serves embedded with only SECRET set, and shuts down cleanly on SIGTERM', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sy-start-'));
    const [port, metricsPort] = [await freePort(), await freePort()];
    try {
      const r = await run(['serve'], { SECRET: 'x'.repeat(32), DATA_DIR: dir, SERVER_PORT: String(port), METRICS_PORT: String(metricsPort) }, /switchyard is serving/);
      expect(r.stdout).toContain('"mode":"embedded"');
      expect(r.code).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('names JWT_PRIVATE_KEY_FILE when the RS256 key file is missing', async () => {
    const r = await run(['serve'], { SECRET: 'x'.repeat(32), JWT_PRIVATE_KEY_FILE: '/nonexistent/jwt.key', JWT_PUBLIC_KEY_FILE: '/nonexistent/jwt.pub' });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('JWT_PRIVATE_KEY_FILE: cannot read /nonexistent/jwt.key');
  });

  it('prints usage for an unknown command', async () => {
    const r = await run(['frobnicate'], { SECRET: 'x'.repeat(32) });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('usage: switchyard');
  });
});
