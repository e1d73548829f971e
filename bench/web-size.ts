/**
 * The web UI's first-load weight, from the build's manifest (dist/web/.vite/manifest.json): the
 * JavaScript and CSS a browser downloads to show the chat page after signing in — the entry, its
 * static imports, and the chat area's chunk with its own static imports — each gzipped. Lazy
 * chunks (other pages, highlight.js languages, charts) are listed apart.
 *
 *   npx tsx bench/web-size.ts [--dir dist/web] [--json]
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';

interface ManifestChunk {
  file: string;
  isEntry?: boolean;
  isDynamicEntry?: boolean;
  imports?: string[];
  dynamicImports?: string[];
  css?: string[];
  src?: string;
}

export interface WebSize {
  /** Files of the first load (entry + chat page), with raw and gzipped bytes. */
  firstLoad: Array<{ file: string; bytes: number; gzip: number }>;
  firstLoadJsGzip: number;
  firstLoadCssGzip: number;
  /** Every other chunk (loaded when a page needs it). */
  lazy: Array<{ file: string; bytes: number; gzip: number }>;
}

/** The page a signed-in user lands on: its chunk counts as first load. */
const LANDING_AREA = 'src/areas/chat/index.tsx';

export function webSize(dir: string): WebSize {
  const manifest = JSON.parse(readFileSync(join(dir, '.vite', 'manifest.json'), 'utf8')) as Record<string, ManifestChunk>;
  const first = new Set<string>();
  const visit = (key: string) => {
    const chunk = manifest[key];
    if (!chunk || first.has(chunk.file)) return;
    first.add(chunk.file);
    for (const css of chunk.css ?? []) first.add(css);
    for (const imported of chunk.imports ?? []) visit(imported);
  };
  for (const [key, chunk] of Object.entries(manifest)) if (chunk.isEntry) visit(key);
  visit(LANDING_AREA);
  const measure = (file: string) => {
    const bytes = readFileSync(join(dir, file));
    return { file, bytes: bytes.length, gzip: gzipSync(bytes, { level: 9 }).length };
  };
  const firstLoad = [...first].map(measure);
  const all = new Set(Object.values(manifest).flatMap((c) => [c.file, ...(c.css ?? [])]));
  const lazy = [...all].filter((f) => !first.has(f)).map(measure);
  const sum = (ext: string) => firstLoad.filter((f) => f.file.endsWith(ext)).reduce((n, f) => n + f.gzip, 0);
  return { firstLoad, firstLoadJsGzip: sum('.js'), firstLoadCssGzip: sum('.css'), lazy };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const args = process.argv.slice(2);
  const dirArg = args.indexOf('--dir');
  const dir = dirArg >= 0 ? args[dirArg + 1]! : fileURLToPath(new URL('../dist/web', import.meta.url));
  const size = webSize(dir);
  if (args.includes('--json')) console.log(JSON.stringify(size, null, 2));
  else {
    const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
    console.log('first load (entry + chat page):');
    for (const f of size.firstLoad) console.log(`  ${f.file.padEnd(44)} ${kb(f.bytes).padStart(10)}  gzip ${kb(f.gzip).padStart(9)}`);
    console.log(`  JavaScript gzipped: ${kb(size.firstLoadJsGzip)} (budget 300 KB); CSS gzipped: ${kb(size.firstLoadCssGzip)}`);
    console.log('loaded later:');
    for (const f of size.lazy.sort((a, b) => b.gzip - a.gzip)) console.log(`  ${f.file.padEnd(44)} ${kb(f.bytes).padStart(10)}  gzip ${kb(f.gzip).padStart(9)}`);
  }
}
