import { SqliteAdapter, sql } from 'kysely';
import type { ReadModelDb } from './projection.js';

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
