/**
 * The built UI the end-to-end tests load: dist/web, rebuilt first when any file under web/ is newer
 * than it (so a test run always sees the current source). Test files running at once build it
 * once: the first takes a lock directory, the others wait for it.
 */
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { execFile } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';

const run = promisify(execFile);

export const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
export const WEB_DIST = join(ROOT, 'dist', 'web');
const LOCK = join(ROOT, 'dist', '.web-build-lock');

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules') continue;
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSource(path) : statSync(path).mtimeMs);
  }
  return newest;
}

const fresh = () => {
  const index = join(WEB_DIST, 'index.html');
  return existsSync(index) && statSync(index).mtimeMs >= newestSource(join(ROOT, 'web'));
};

export async function ensureWebBuilt(): Promise<string> {
  for (let waited = 0; !fresh(); waited += 200) {
    mkdirSync(dirname(LOCK), { recursive: true });
    try {
      mkdirSync(LOCK, { recursive: false });
    } catch {
      // Another test file is building it (a lock older than 3 minutes was left by a crash).
      const lock = statSync(LOCK, { throwIfNoEntry: false });
      if (lock && Date.now() - lock.mtimeMs > 180_000) rmSync(LOCK, { recursive: true, force: true });
      if (waited > 180_000) throw new Error('waited 3 minutes for the web build');
      await sleep(200);
      continue;
    }
    try {
      // In a child process: under vitest NODE_ENV is "test", and Vite would build React's development bundle.
      if (!fresh()) await run(process.execPath, [join(ROOT, 'node_modules', 'vite', 'bin', 'vite.js'), 'build', '--config', join(ROOT, 'web', 'vite.config.ts'), '--logLevel', 'warn'], { cwd: ROOT, env: { ...process.env, NODE_ENV: 'production' } });
    } finally {
      rmSync(LOCK, { recursive: true, force: true });
    }
  }
  return WEB_DIST;
}
