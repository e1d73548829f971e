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
import { serveThread, threadLogDestination } from '../../threads.js';
import { projections } from '../index.js';
import { ProjectionRunner } from './runner.js';
import type { WaitForOptions } from './projectors.js';

serveThread(async ({ config }: { config: Config }) => {
  const logger = createLogger(config.server.logLevel, threadLogDestination);
  const store = await openEventStore(config.eventStore);
  const sql = await openSqlDatabase(config.readModels).catch(async (error: unknown) => {
    await store.close();
    throw error;
  });
  const runner = new ProjectionRunner(store, sql.db, projections, logger);
  return {
    start: () => runner.start(),
    status: () => runner.status(),
    rebuild: (name: string) => runner.rebuild(name),
    waitFor: ({ position, options }: { position: number; options: WaitForOptions }) => runner.waitFor(position, options),
    async stop() {
      await runner.stop();
      await Promise.all([store.close(), sql.close()]);
    },
  };
});
