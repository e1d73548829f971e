import { defineConfig } from 'vitest/config';

export default defineConfig({
  esbuild: { jsx: 'automatic' }, // the web UI's component tests (web/src/**/*.test.tsx)
  test: {
    include: ['test/**/*.test.ts', 'web/src/**/*.test.{ts,tsx}'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 60_000, // tests that spawn the CLI load the code through tsx: seconds each on a busy machine
    hookTimeout: 30_000,
    pool: 'forks',
    // Two test files at a time: a file waits on servers much of its time (docs/decisions/0300 on where the CPU goes).
    maxWorkers: 2,
    minWorkers: 1,
    reporters: ['default'],
  },
});
