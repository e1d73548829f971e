/** A thread entry for test/contract/threads.test.ts: echoes, fails on request, logs, lowers its priority, exits. */
import { ConflictError } from '../../../src/errors.js';
import { createLogger } from '../../../src/logger.js';
import { lowerThreadPriority, serveThread, threadLogDestination } from '../../../src/threads.js';

serveThread(async ({ greeting, failInit }: { greeting: string; failInit?: boolean }) => {
  if (failInit) throw new Error('init refused');
  const logger = createLogger('info', threadLogDestination);
  return {
    echo: (value: unknown) => ({ greeting, value }),
    slow: async (ms: number) => {
      await new Promise((resolve) => setTimeout(resolve, ms));
      return ms;
    },
    conflict: () => {
      throw new ConflictError('already taken', 'name_taken');
    },
    log: (message: string) => {
      logger.warn({ detail: 42, user: { password: 'hunter2' } }, message);
      return true;
    },
    lower: (nice: number) => lowerThreadPriority(nice),
    exit: () => process.exit(3),
  };
});
