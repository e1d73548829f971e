/**
 * The web UI's build: web/ -> dist/web (index.html + hashed files under assets/), which the server
 * serves at /. JSX is compiled by Vite's esbuild (no React plugin: no fast refresh needed, one
 * dependency less). `npm run dev:web` proxies the API to a server on :8000.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { defineConfig, type Plugin } from 'vite';

const root = fileURLToPath(new URL('.', import.meta.url));

const outDir = fileURLToPath(new URL('../dist/web', import.meta.url));

/**
 * Writes .br and .gz beside each script and stylesheet, once at build time: the server sends them
 * to browsers that accept them (@fastify/static `preCompressed`) instead of compressing per request.
 */
function precompress(): Plugin {
  return {
    name: 'switchyard-precompress',
    apply: 'build',
    async writeBundle(options, bundle) {
      for (const file of Object.keys(bundle).filter((f) => /\.(js|css|svg)$/.test(f))) {
        const path = join(options.dir ?? outDir, file);
        const data = await readFile(path);
        await writeFile(`${path}.br`, brotliCompressSync(data, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }));
        await writeFile(`${path}.gz`, gzipSync(data, { level: 9 }));
      }
    },
  };
}

export default defineConfig({
  root,
  base: '/',
  esbuild: { jsx: 'automatic' },
  plugins: [precompress()],
  build: {
    outDir,
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    manifest: true, // .vite/manifest.json: which chunks a page loads (bench/web-size.ts measures the first load from it)
    chunkSizeWarningLimit: 600,
    rollupOptions: {
      // An area's chunk is named after its folder (areas/chat/index.tsx -> assets/chat-<hash>.js).
      output: { chunkFileNames: (chunk) => `assets/${/areas\/([\w-]+)\/index/.exec(chunk.facadeModuleId ?? '')?.[1] ?? '[name]'}-[hash].js` },
    },
  },
  server: {
    proxy: { '/v1': 'http://127.0.0.1:8000', '/api': 'http://127.0.0.1:8000', '/health': 'http://127.0.0.1:8000' },
  },
});
