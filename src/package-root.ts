/**
 * The folder of Switchyard's package.json, from src/ (tsx), dist/src/ (the build) and a test
 * run's compiled copy of the sources (under node_modules/.cache) alike.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let found: string | undefined;

function isSwitchyardManifest(file: string): boolean {
  if (!existsSync(file)) return false;
  try {
    return (JSON.parse(readFileSync(file, 'utf8')) as { name?: string }).name === 'switchyard';
  } catch {
    return false;
  }
}

export function packageRoot(): string {
  if (found !== undefined) return found;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (isSwitchyardManifest(manifest)) return (found = dir);
    const parent = dirname(dir);
    if (parent === dir) return (found = process.cwd());
    dir = parent;
  }
}
