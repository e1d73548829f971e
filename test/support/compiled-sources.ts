/**
 * One compiled copy of the sources per test run (esbuild, file by file, the same layout as the
 * build's dist/): the CLI the tests spawn and the app's worker threads load it instead of going
 * through tsx, which costs twice the CPU at every start (docs/decisions/0300).
 *
 * It lives under node_modules/.cache so that packages resolve from it as from src/; each run has
 * its own folder (two runs in one checkout do not meet) and removes it at the end.
 */
import { mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';

const ROOT = process.cwd();
const CACHE = join(ROOT, 'node_modules', '.cache', 'switchyard-tests');
const STALE_MS = 24 * 3600_000;

function typescriptFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
    .map((f) => join(dir, f));
}

/** Compiles src/ and migrations/ into `dir` (src/x.ts -> dir/src/x.js). */
export async function compileSourcesInto(dir: string): Promise<void> {
  await build({
    entryPoints: [...typescriptFiles(join(ROOT, 'src')), ...typescriptFiles(join(ROOT, 'migrations'))],
    outdir: dir,
    outbase: ROOT,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: 'linked',
    logLevel: 'error',
  });
  // Node looks for a module's package type no higher than node_modules: this copy says it itself.
  writeFileSync(join(dir, 'package.json'), '{"type":"module"}\n');
}

/** A fresh folder for this run's copy; copies left by runs that died long ago are removed. */
export function compiledSourcesFolder(): { dir: string; remove(): void } {
  mkdirSync(CACHE, { recursive: true });
  for (const name of readdirSync(CACHE)) {
    const old = join(CACHE, name);
    if (Date.now() - statSync(old).mtimeMs > STALE_MS) rmSync(old, { recursive: true, force: true });
  }
  const dir = join(CACHE, `run-${process.pid}-${Date.now()}`);
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
