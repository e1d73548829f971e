import { SqliteAdapter, sql } from 'kysely';
import type { StoredEvent } from '../../ports/event-store.js';
import type { Projection, ReadModelDb } from './projection.js';

/**
 * Runs `work` with SQLite's secure_delete on (freed cells are zeroed): only the projections of user
 * texts (conversations, file names) pay for it. Other read-model databases keep old row versions in
 * their own logs (decision 0120).
 */
export async function securely(trx: ReadModelDb, work: () => Promise<void>): Promise<void> {
  if (!(trx.getExecutor().adapter instanceof SqliteAdapter)) return work();
  await sql`PRAGMA secure_delete = ON`.execute(trx);
  try {
    await work();
  } finally {
    await sql`PRAGMA secure_delete = OFF`.execute(trx);
  }
}

/**
 * A projection of user texts: every event, commit and reset runs under `securely`. `tables` are
 * emptied in order on reset (children first).
 */
export function securedProjection(spec: {
  name: string;
  version: number;
  eventTypes: readonly string[];
  tables: readonly string[];
  applyEvent: (trx: ReadModelDb, stored: StoredEvent) => Promise<void>;
}): Projection {
  return {
    name: spec.name,
    version: spec.version,
    eventTypes: [...spec.eventTypes],
    apply: (trx, stored) => securely(trx, () => spec.applyEvent(trx, stored)),
    applyCommit: (trx, events) =>
      securely(trx, async () => {
        for (const stored of events) await spec.applyEvent(trx, stored);
      }),
    async reset(trx) {
      await securely(trx, async () => {
        for (const table of spec.tables) await trx.deleteFrom(table as never).execute();
      });
    },
  };
}
