/**
 * The projectors' thread: the same ProjectionRunner as ever, with its own connections to the
 * event store and the read-model database, so that folding events into SQL (every usage event
 * feeds the usage, billing and key-usage tables) never runs on the thread serving requests.
 * Spoken to through ProjectorThread (projectors.ts).
 */
import { openEventStore } from '../../adapters/index.js';
import { openSqlDatabase } from '../../adapters/sql/database.js';
import type { Config } from '../../config.js';
import { createLogger } from '../../logger.js';
import { lowerThreadPriority, serveThread, threadLogDestination } from '../../threads.js';
import { projectionsOf } from '../index.js';
import { ProjectionRunner } from './runner.js';
import type { WaitForOptions } from './projectors.js';

serveThread(async ({ config }: { config: Config }) => {
  const logger = createLogger(config.server.logLevel, threadLogDestination);
  // Folding a usage batch is milliseconds of CPU at a time; at the default priority the kernel
  // lets it finish its slice while a request that just became ready waits for the core, which
  // was most of the relay's tail latency (docs/history/benchmarks-2026-11-21.md). Lower, it yields at once and
  // still gets every idle moment, and a share of a busy core, to keep up.
  let priority: ReturnType<typeof lowerThreadPriority> = null;
  try {
    priority = lowerThreadPriority(config.projectorsNice);
  } catch (error) {
    logger.warn({ err: error }, 'could not lower the projector thread priority; it runs as the serving thread does');
  }
  const store = await openEventStore(config.eventStore);
  const sql = await openSqlDatabase(config.readModels).catch(async (error: unknown) => {
    await store.close();
    throw error;
  });
  const runner = new ProjectionRunner(store, sql.db, projectionsOf(config), logger);
  return {
    start: () => runner.start(),
    status: () => runner.status(),
    rebuild: (name: string) => runner.rebuild(name),
    rebuildTogether: (names: readonly string[]) => runner.rebuildTogether(names),
    /** The thread's id and niceness (null: not lowered). */
    priority: () => priority,
    waitFor: ({ position, options }: { position: number; options: WaitForOptions }) => runner.waitFor(position, options),
    async stop() {
      await runner.stop();
      await Promise.all([store.close(), sql.close()]);
    },
  };
});
