/**
 * A live view: read-model state held in this process's memory for the hot path (no database
 * round trip per request), kept current by tailing the log.
 *
 * It starts from a snapshot of a projection's tables taken in the same transaction as that
 * projection's checkpoint, then applies every later commit itself. So it never replays the whole
 * log, and every instance converges on every change within one delivery (maintenance mode, key
 * revocation... take effect everywhere without polling).
 *
 * A view whose definition opts in (`snapshot`) also saves its own state with its position
 * (`live_view_snapshots`) every `snapshotEvery` events it folds and when it stops; a start takes
 * that snapshot instead of the tables when it is at least as recent as the projection's checkpoint
 * (a projection being rebuilt is at 0: the view would otherwise replay the whole log on the
 * serving thread), and ignores one of another format version or whose checksum fails.
 */
import { createHash } from 'node:crypto';
import { deserialize, serialize } from 'node:v8';
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
  /**
   * Opt-in: the state may be saved as a snapshot (V8 serialisation: plain objects, arrays, Maps,
   * Sets; no class instances, and no secrets: snapshots sit in the read-model database). Bump
   * `version` whenever the state's shape or `evolve` changes.
   */
  snapshot?: { version: number };
}

export interface LiveViewOptions {
  /**
   * Streams whose events the view gets another way (the relay's own usage stream: the billing
   * view folds it as it is published). Their commits pass without events; see SubscribeOptions.
   */
  skipEventsOf?: (stream: string) => boolean;
  /** Save a snapshot every this many folded events (0 or absent: never; LIVE_VIEW_SNAPSHOT_EVERY). */
  snapshotEvery?: number;
}

/** Where a start took the view's state from, and the log position it followed on from. */
export interface LiveViewStart {
  source: 'snapshot' | 'tables';
  position: number;
}

export class LiveView<State> {
  private current: State | undefined;
  private position = 0;
  private subscription: Subscription | null = null;
  private readonly waiters = new Set<() => void>();
  private stopped = false;
  /** Where the last start took the state from (observability and tests). */
  startedFrom: LiveViewStart | null = null;
  /** Relevant events folded from the log since the last start. */
  eventsFolded = 0;
  private foldedSinceSnapshot = 0;
  private savingSnapshot: Promise<void> = Promise.resolve();

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
    this.eventsFolded = 0;
    this.foldedSinceSnapshot = 0;
    const saved = await this.savedSnapshot();
    const checkpoint = saved ? await this.checkpoint() : Infinity;
    const { state, position } = saved && saved.position >= checkpoint ? saved : await this.snapshot();
    this.startedFrom = { source: saved && saved.position >= checkpoint ? 'snapshot' : 'tables', position };
    this.current = state;
    this.position = position;
    this.follow();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.subscription?.close();
    this.subscription = null;
    if (this.foldedSinceSnapshot > 0) this.saveSnapshot();
    await this.savingSnapshot;
  }

  private get snapshotsOn(): boolean {
    return this.definition.snapshot !== undefined && (this.options.snapshotEvery ?? 0) > 0;
  }

  /** The format a saved snapshot must carry: the view's snapshot version and its projection's. */
  private get snapshotSchema(): string {
    return `${this.definition.snapshot?.version ?? 0}:${this.definition.projection.version}`;
  }

  private async checkpoint(): Promise<number> {
    const row = await this.sql.db.selectFrom('projection_checkpoints').select('position').where('name', '=', this.definition.projection.name).executeTakeFirst();
    return Number(row?.position ?? 0);
  }

  /** The saved snapshot, if there is a usable one. */
  private async savedSnapshot(): Promise<{ state: State; position: number } | null> {
    if (!this.snapshotsOn) return null;
    const name = this.definition.projection.name;
    try {
      const row = await this.sql.db.selectFrom('live_view_snapshots').selectAll().where('name', '=', name).executeTakeFirst();
      if (!row) return null;
      if (row.schema_version !== this.snapshotSchema) {
        this.logger.info({ view: name, found: row.schema_version, expected: this.snapshotSchema }, 'live view snapshot of another version ignored');
        return null;
      }
      if (createHash('sha256').update(row.state).digest('hex') !== row.sha256) throw new Error('checksum differs');
      return { state: deserialize(Buffer.from(row.state, 'base64')) as State, position: Number(row.position) };
    } catch (error) {
      this.logger.warn({ err: error, view: name }, 'live view snapshot unreadable; starting from the tables');
      return null;
    }
  }

  /**
   * Serialises the state now (at a commit boundary, so it matches `position`) and writes it in
   * the background; a failed write is logged, the next one tries again.
   */
  private saveSnapshot(): void {
    const name = this.definition.projection.name;
    let row: { name: string; schema_version: string; position: number; state: string; sha256: string; written_at: string };
    try {
      const state = serialize(this.current).toString('base64');
      row = { name, schema_version: this.snapshotSchema, position: this.position, state, sha256: createHash('sha256').update(state).digest('hex'), written_at: new Date().toISOString() };
    } catch (error) {
      this.logger.error({ err: error, view: name }, 'live view state cannot be snapshotted');
      return;
    }
    this.foldedSinceSnapshot = 0;
    this.savingSnapshot = this.savingSnapshot.then(() =>
      this.sql.db
        .transaction()
        .execute(async (trx) => {
          await trx.deleteFrom('live_view_snapshots').where('name', '=', name).execute();
          await trx.insertInto('live_view_snapshots').values(row).execute();
        })
        .catch((error: unknown) => this.logger.warn({ err: error, view: name }, 'live view snapshot not written')),
    );
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
            this.logger.error({ err: error, view: this.definition.projection.name, position: event.position, event_id: event.id }, 'live view could not apply an event; left out');
          }
          // A commit of hundreds of usage events would hold the serving thread for milliseconds
          // (every request arriving meanwhile waits: the relay's tail latency). Requests go
          // in between slices; they see the view part-way through the commit, as they would
          // have seen it a moment earlier or later.
          if (++applied % EVENTS_PER_SLICE === 0) await yieldToRequests();
        }
        this.position = commit.position;
        this.eventsFolded += applied;
        if (this.snapshotsOn) {
          this.foldedSinceSnapshot += applied;
          if (this.foldedSinceSnapshot >= this.options.snapshotEvery!) this.saveSnapshot();
        }
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
