/**
 * The web UI's build: web/ -> dist/web (index.html + hashed files under assets/), which the server
 * serves at /. JSX is compiled by Vite's esbuild (no React plugin: no fast refresh needed, one
 * dependency less). `npm run dev:web` proxies the API to a server on :8000.
 */
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const root = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root,
  base: '/',
  esbuild: { jsx: 'automatic' },
  build: {
    outDir: fileURLToPath(new URL('../dist/web', import.meta.url)),
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
