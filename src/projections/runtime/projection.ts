/** What a projection is: a named, versioned fold of the event log into read-model tables. */
import type { Kysely } from 'kysely';
import type { ReadModelTables } from '../../adapters/sql/schema.js';
import type { StoredEvent } from '../../ports/event-store.js';

export type ReadModelDb = Kysely<ReadModelTables>;

export interface Projection {
  /** Unique, stable: the checkpoint row and the durable consumer are named after it. */
  name: string;
  /** Bump when `apply` or the tables change: a stored version that differs triggers a rebuild. */
  version: number;
  /** Event types `apply` reads; commits without any of them cost no database write. */
  eventTypes: readonly string[];
  /**
   * Optional, pure and cheap: false for an event of `eventTypes` this projection leaves alone after
   * all (the webhooks projection reads only the usage events refused for quota). Such events are
   * not handed to it, and a commit of nothing else costs no write, as for other types.
   */
  accepts?(event: StoredEvent): boolean;
  /** Applies one event inside the runner's transaction; must write only through `trx`. */
  apply(trx: ReadModelDb, event: StoredEvent): Promise<void>;
  /**
   * Optional: applies all the events of one commit that this projection reads, in order, inside
   * the runner's transaction, with the same result as `apply` on each. Lets a projection that
   * reads every usage event batch its reads and writes (one commit holds up to hundreds of them).
   */
  applyCommit?(trx: ReadModelDb, events: readonly StoredEvent[]): Promise<void>;
  /** Empties the projection's tables (rebuild drops its state and replays the log). */
  reset(trx: ReadModelDb): Promise<void>;
}
