/**
 * The built UI the end-to-end tests load: dist/web, rebuilt first when any file under web/ is newer
 * than it (so a test run always sees the current source). Test files running at once build it
 * once: the first takes a lock directory, the others wait for it.
 */
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

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
      if (!fresh()) {
        const { build } = await import('vite');
        await build({ configFile: join(ROOT, 'web', 'vite.config.ts'), logLevel: 'warn' });
      }
    } finally {
      rmSync(LOCK, { recursive: true, force: true });
    }
  }
  return WEB_DIST;
}
