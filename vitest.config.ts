import { defineConfig } from 'vitest/config';

export default defineConfig({
  esbuild: { jsx: 'automatic' }, // the web UI's component tests (web/src/**/*.test.tsx)
  test: {
    include: ['test/**/*.test.ts', 'web/src/**/*.test.{ts,tsx}'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 60_000, // tests that spawn the CLI load the code through tsx: seconds each on a busy machine
    hookTimeout: 30_000,
    pool: 'forks',
    // Two test files at a time: most of a file's time is spent waiting on servers (18.3 -> 12 min for the suite here).
    maxWorkers: 2,
    minWorkers: 1,
    reporters: ['default'],
  },
});
