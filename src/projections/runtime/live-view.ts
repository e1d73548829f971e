/**
 * A live view: read-model state held in this process's memory for the hot path (no database
 * round trip per request), kept current by tailing the log.
 *
 * It starts from a snapshot of a projection's tables taken in the same transaction as that
 * projection's checkpoint, then applies every later commit itself. So it never replays the whole
 * log, and every instance converges on every change within one delivery (maintenance mode, key
 * revocation... take effect everywhere without polling).
 */
import type { SqlDatabase } from '../../adapters/sql/database.js';
import type { Logger } from '../../logger.js';
import type { EventStore, StoredEvent, Subscription } from '../../ports/event-store.js';
import type { Projection, ReadModelDb } from './projection.js';

/** How many events a live view folds before it lets the event loop serve what is waiting. */
export const EVENTS_PER_SLICE = 64;

const yieldToRequests = () => new Promise<void>((resolve) => setImmediate(resolve));

export interface LiveViewDefinition<State> {
  /** The projection whose tables and checkpoint seed the view. */
  projection: Projection;
  load(db: ReadModelDb): Promise<State>;
  evolve(state: State, event: StoredEvent): State;
}

export interface LiveViewOptions {
  /**
   * Streams whose events the view gets another way (the relay's own usage stream: the billing
   * view folds it as it is published). Their commits pass without events; see SubscribeOptions.
   */
  skipEventsOf?: (stream: string) => boolean;
}

export class LiveView<State> {
  private current: State | undefined;
  private position = 0;
  private subscription: Subscription | null = null;
  private readonly waiters = new Set<() => void>();
  private stopped = false;

  constructor(
    private readonly store: EventStore,
    private readonly sql: SqlDatabase,
    private readonly definition: LiveViewDefinition<State>,
    private readonly logger: Logger,
    private readonly options: LiveViewOptions = {},
  ) {}

  get state(): State {
    if (this.current === undefined) throw new Error(`live view ${this.definition.projection.name} read before start()`);
    return this.current;
  }

  async start(): Promise<void> {
    this.stopped = false;
    const { state, position } = await this.snapshot();
    this.current = state;
    this.position = position;
    this.follow();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.subscription?.close();
    this.subscription = null;
  }

  /** Resolves once this view has seen the commit at `position` (read-your-writes). */
  async waitFor(position: number, timeoutMs = 5000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.position < position) {
      const left = deadline - Date.now();
      if (left <= 0 || this.stopped) throw new Error(`live view ${this.definition.projection.name} did not reach ${position}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, Math.min(left, 250));
        function done() {
          clearTimeout(timer);
          resolve();
        }
        this.waiters.add(done);
      });
    }
  }

  private async snapshot(): Promise<{ state: State; position: number }> {
    const name = this.definition.projection.name;
    // One transaction, so the rows and the checkpoint describe the same moment.
    let transaction = this.sql.db.transaction();
    // SQLite transactions are snapshots already; the servers need REPEATABLE READ for one.
    if (this.sql.dialect !== 'sqlite') transaction = transaction.setIsolationLevel('repeatable read');
    return transaction.execute(async (trx) => {
      const row = await trx.selectFrom('projection_checkpoints').select('position').where('name', '=', name).executeTakeFirst();
      return { state: await this.definition.load(trx), position: row?.position ?? 0 };
    });
  }

  private follow() {
    const relevant = new Set(this.definition.projection.eventTypes);
    this.subscription = this.store.subscribe({
      after: this.position,
      skipEventsOf: this.options.skipEventsOf,
      onCommit: async (commit) => {
        let applied = 0;
        for (const event of commit.events) {
          if (!relevant.has(event.type)) continue;
          try {
            this.current = this.definition.evolve(this.current as State, event);
          } catch (error) {
            // An event the view cannot fold must not freeze it (following again would meet the
            // same event forever): it is left out here; the projection's runner quarantines it.
            this.logger.error({ err: error, view: this.definition.projection.name, position: event.position, event: event.id }, 'live view could not apply an event; left out');
          }
          // A commit of hundreds of usage events would hold the serving thread for milliseconds
          // (every request arriving meanwhile waits: the relay's tail latency). Requests go
          // in between slices; they see the view part-way through the commit, as they would
          // have seen it a moment earlier or later.
          if (++applied % EVENTS_PER_SLICE === 0) await yieldToRequests();
        }
        this.position = commit.position;
        const waiters = [...this.waiters];
        this.waiters.clear();
        for (const w of waiters) w();
      },
      onError: (error) => {
        if (this.stopped) return;
        this.logger.error({ err: error, view: this.definition.projection.name }, 'live view failed; following again');
        setTimeout(() => {
          if (!this.stopped) this.follow();
        }, 1000).unref();
      },
    });
  }
}
