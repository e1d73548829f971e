/**
 * The budget: the UI's JavaScript for the first load (the shell and the chat page a user
 * lands on), gzipped, under 300 KB — measured on the current build (bench/web-size.ts).
 */
import { describe, expect, it } from 'vitest';
import { webSize } from '../../bench/web-size.js';
import { ensureWebBuilt } from './support/web-build.js';

describe('web UI bundle', () => {
  it('keeps the first load under 300 KB of gzipped JavaScript, and the rest in lazy chunks', async () => {
    const size = webSize(await ensureWebBuilt());
    expect(size.firstLoad.some((f) => f.file.endsWith('.js'))).toBe(true);
    expect(size.firstLoadJsGzip).toBeLessThan(300 * 1024);
    // Every page but the landing one is its own chunk, loaded when opened.
    expect(size.lazy.filter((f) => f.file.endsWith('.js')).length).toBeGreaterThanOrEqual(11);
  }, 180_000);
});
