/**
 * The `switchyard` command line as operators meet it: a child process with only the environment
 * a test gives it (and PATH / HOME, so it can find node). It runs the run's compiled copy of the
 * sources (test/support/compiled-sources.ts); outside vitest's setup, the sources through tsx.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TEST_ADMIN, TEST_SECRET } from './app.js';
import { distributedEnv, type ServerDialect } from './modes.js';
import type { ServiceName } from './services.js';

const compiled = process.env.SWITCHYARD_COMPILED_SOURCES;
export const CLI = compiled ? join(compiled, 'src', 'cli.js') : join(process.cwd(), 'src', 'cli.ts');
/** `node ...CLI_NODE_ARGS <command>`: one process, the CLI itself (a signal reaches it, not a wrapper). */
export const CLI_NODE_ARGS: readonly string[] = compiled ? [CLI] : ['--import', 'tsx', CLI];
/** The CLI as shell words, for script(1) and pipes: `${CLI_SHELL} events tail | wc -l`. */
export const CLI_SHELL = [process.execPath, ...CLI_NODE_ARGS].map((word) => `"${word}"`).join(' ');

export interface CliOutcome {
  /** The exit status (1 when the process ended on a signal or a timeout). */
  code: number;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  /** Killed after this long (default 120 s: a CLI loaded through tsx takes seconds on a busy machine). */
  timeoutMs?: number;
}

/** PATH and HOME, on which a test's own variables are laid. */
export function cliEnv(env: Record<string, string | undefined>): Record<string, string> {
  const base: Record<string, string | undefined> = { PATH: process.env.PATH, HOME: process.env.HOME, ...env };
  return Object.fromEntries(Object.entries(base).filter((e): e is [string, string] => e[1] !== undefined));
}

/** Runs the CLI to its end; never throws: a failure is in `code` and `stderr`. */
export function runCli(args: string[], env: Record<string, string | undefined>, options: CliOptions = {}): Promise<CliOutcome> {
  return new Promise((resolve) => {
    execFile(process.execPath, [...CLI_NODE_ARGS, ...args], { env: cliEnv(env), timeout: options.timeoutMs ?? 120_000, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
    });
  });
}

/** Runs the CLI and expects it to succeed: a non-zero status throws with what it printed. */
export async function runCliOk(args: string[], env: Record<string, string | undefined>, options: CliOptions = {}): Promise<CliOutcome> {
  const outcome = await runCli(args, env, options);
  if (outcome.code !== 0) throw new Error(`switchyard ${args.join(' ')} exited with ${outcome.code}:\n${outcome.stderr}${outcome.stdout}`);
  return outcome;
}

/** A Switchyard the CLI writes into (`upgrade`, `import`); a test starts it afterwards on what was written. */
export interface CliInstallation {
  /** What the CLI gets: SECRET, DATA_DIR, the stores, the bootstrap admin. */
  env: Record<string, string>;
  /** What startApp gets on top of its own defaults (the stores). */
  appEnv: Record<string, string>;
  dataDir: string;
  cleanup(): Promise<void>;
}

/** Embedded (SQLite files under a fresh data dir), or on NATS + `dialect` + Redis with stores of its own. */
export function cliInstallation(
  mode: 'embedded' | 'distributed',
  options: { urls: Record<ServiceName, string>; dialect?: ServerDialect; env?: Record<string, string> },
): CliInstallation {
  const dataDir = mkdtempSync(join(tmpdir(), 'sy-cli-target-'));
  const stores = mode === 'embedded' ? { env: {}, cleanup: async () => undefined } : distributedEnv(options.urls, options.dialect ?? 'mysql');
  return {
    env: {
      SECRET: TEST_SECRET,
      DATA_DIR: dataDir,
      STORAGE_DIR: join(dataDir, 'storage'),
      LOG_DIR: join(dataDir, 'logs'),
      LOG_FILES_ENABLED: 'false',
      ADMIN_EMAIL: TEST_ADMIN.email,
      ADMIN_PASSWORD: TEST_ADMIN.password,
      ...options.env,
      ...stores.env,
    },
    appEnv: stores.env,
    dataDir,
    cleanup: async () => {
      await stores.cleanup();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
