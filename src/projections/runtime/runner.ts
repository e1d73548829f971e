/**
 * Runs projections: catch up from each projection's checkpoint, then tail the log.
 *
 * Idempotence: each commit is applied in ONE transaction together with a conditional checkpoint
 * update (`position < commit AND generation = g`). A redelivered commit, or one another instance
 * already applied, updates no checkpoint row and is rolled back, so it is never applied twice.
 * While catching up (or behind the live log), consecutive commits share a transaction
 * (`position < first AND generation = g`, set to the last); if that claim fails they are applied
 * one by one, each with its own claim.
 * Several instances can run the same projector side by side (JetStream hands each commit to one of
 * them through a shared durable consumer; the checkpoint guard makes it exact either way).
 *
 * Rebuild: reset the tables, set the checkpoint to 0 and bump the generation in one transaction.
 * A projector still running the old generation notices at its next write and restarts.
 * Projections rebuilt together share one read of the log, and each checkpoint ends at the last
 * commit the rebuild read (rebuildTogether).
 */
import { preparedStatement } from '../../adapters/sql/compiled.js';
import type { Logger } from '../../logger.js';
import type { Commit, EventStore, StoredEvent, Subscription } from '../../ports/event-store.js';
import type { Projection, ReadModelDb } from './projection.js';
import { clearQuarantine, databaseAnswers, errorText, quarantinedCounts, quarantineEvent } from './quarantine.js';

class GenerationChanged extends Error {}

/** One event of a commit applied event by event threw `cause`. */
class EventFailed extends Error {
  constructor(
    readonly event: StoredEvent,
    override readonly cause: unknown,
  ) {
    super(errorText(cause));
  }
}

/** Tries of a failing commit (the first included) before its failing events are quarantined. */
const APPLY_ATTEMPTS = 3;

interface Running {
  projection: Projection;
  generation: number;
  /** Highest commit position this instance knows to be applied (or irrelevant). */
  position: number;
  subscription: Subscription | null;
  /** The catch-up replay that runs before the live subscription opens. */
  catchUp: Promise<void> | null;
  retryTimer: NodeJS.Timeout | null;
  relevant: ReadonlySet<string>;
  /** Pending write of a checkpoint that only skipped irrelevant commits. */
  skipTimer: NodeJS.Timeout | null;
  /** Commits the next catch-up read asks for (nextReadLimit). */
  readLimit: number;
}

/** How long a checkpoint that only passed over irrelevant commits may wait to be stored. */
const SKIP_CHECKPOINT_DELAY_MS = 50;

/** Commits per read of the log while catching up, at most. */
const REPLAY_BATCH = 500;

/**
 * Events a catch-up read aims at. The log is read by commits, and a commit of the usage publisher
 * holds up to 500 events: 500 of them were 100,000+ events per read, hundreds of megabytes once
 * parsed (twice over, with the next read in flight). So the next read asks for as many commits as
 * make about this many events, judging by the last read.
 */
const REPLAY_BATCH_EVENTS = 20_000;

/** How many commits the next catch-up read asks for, given what the last one held. */
export function nextReadLimit(commits: number, events: number, targetEvents: number, maxCommits = REPLAY_BATCH): number {
  if (commits === 0 || events <= commits) return maxCommits;
  return Math.max(1, Math.min(maxCommits, Math.floor((targetEvents * commits) / events)));
}

/**
 * Relevant events one transaction applies at most when several commits are waiting (a catch-up
 * read, or live commits that queued up while the projector was busy): a read-model transaction's
 * commit writes every page it dirtied, and the per-request tables' indexes by user and by key
 * dirty a page per user and per key touched, so committing several log commits together writes
 * each such page once instead of once per log commit.
 */
const GROUP_EVENTS = 1000;

/** Catch-up reads kept for the other projections replaying beside the one that read them. */
const SHARED_READS = 2;

export interface ProjectionStatus {
  name: string;
  version: number;
  position: number;
  lag: number;
  /** Events set aside as poison and not replayed yet (see quarantine.ts). */
  quarantined: number;
}

const now = () => new Date().toISOString();

/**
 * Moves a checkpoint to `position` if it is still below `below` (the first commit applied) and of
 * `generation`: the claim every transaction of applied commits makes (compiled once: it runs for
 * every commit of every projection).
 */
const claimCheckpoint = preparedStatement('projection_checkpoints.claim', ['name', 'below', 'position', 'generation', 'updated_at'], (db: ReadModelDb, p) =>
  db
    .updateTable('projection_checkpoints')
    .set({ position: p('position'), updated_at: p('updated_at') })
    .where('name', '=', p('name'))
    .where('position', '<', p('below'))
    .where('generation', '=', p('generation')),
);

export class ProjectionRunner {
  private readonly running = new Map<string, Running>();
  private readonly waiters = new Set<() => void>();
  private stopped = false;
  /** The latest catch-up reads, by the position they start after (see readBatch). */
  private readonly sharedReads = new Map<number, Promise<Commit[]>>();

  constructor(
    private readonly store: EventStore,
    private readonly db: ReadModelDb,
    private readonly projections: readonly Projection[],
    private readonly logger: Logger,
    private readonly options: { retryDelayMs?: number; applyAttempts?: number; applyRetryDelayMs?: number; replayBatchEvents?: number; replayBatchCommits?: number } = {},
  ) {
    const names = new Set<string>();
    for (const p of projections) {
      if (names.has(p.name)) throw new Error(`duplicate projection name ${p.name}`);
      names.add(p.name);
    }
  }

  get names(): string[] {
    return this.projections.map((p) => p.name);
  }

  private find(name: string): Projection {
    const projection = this.projections.find((p) => p.name === name);
    if (!projection) throw new Error(`unknown projection "${name}" (known: ${this.names.join(', ')})`);
    return projection;
  }

  /** Ensures checkpoint rows (rebuilding projections whose version changed) and starts tailing. */
  async start(): Promise<void> {
    this.stopped = false;
    // Every checkpoint first, then every launch: the projections start replaying together, so
    // that they share their reads of the log (readBatch) from the first one.
    const checkpoints: Array<{ position: number; generation: number }> = [];
    for (const projection of this.projections) checkpoints.push(await this.ensureCheckpoint(projection));
    this.projections.forEach((projection, i) => this.launch(projection, checkpoints[i]!.position, checkpoints[i]!.generation));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(
      [...this.running.values()].map(async (r) => {
        if (r.retryTimer) clearTimeout(r.retryTimer);
        await r.catchUp;
        await r.subscription?.close();
        await this.storeSkippedPosition(r);
      }),
    );
    this.running.clear();
    this.notify();
  }

  /** Drops the projection's state and replays it from the log. Resolves once caught up to the
   * head position as of the call (the projection keeps tailing afterwards if started). */
  async rebuild(name: string): Promise<void> {
    await this.rebuildTogether([name]);
  }

  /**
   * Drops the named projections' state and replays the log into all of them in ONE pass: each
   * batch of commits is read once and handed to every projection, each applying it in its own
   * transactions with its own checkpoint (and quarantine). Reading and parsing the log is most of
   * what a replay costs, so rebuilding nine projections together costs little more than one.
   * Resolves once every one has reached the head position as of the call, and its checkpoint is
   * stored there (commits it does not read included): a restart then starts from the head.
   */
  /** The log's last position (what a rebuild replays up to). */
  headPosition(): Promise<number> {
    return this.store.headPosition();
  }

  async rebuildTogether(names: readonly string[], onProgress?: (position: number, head: number) => void): Promise<void> {
    const chosen = [...new Set(names)].map((name) => this.find(name));
    const generations = new Map<string, number>();
    for (const projection of chosen) generations.set(projection.name, await this.reset(projection));
    this.logger.info({ projections: chosen.map((p) => p.name), generations: Object.fromEntries(generations) }, 'projections reset; replaying the log');
    const head = await this.store.headPosition();
    const running = chosen.filter((p) => this.running.has(p.name));
    const offline = chosen.filter((p) => !this.running.has(p.name));
    // Running projections relaunch together, so they share their reads (readBatch).
    await Promise.all(running.map((p) => this.relaunch(p.name, 0, generations.get(p.name)!)));
    await Promise.all([
      running.length > 0 ? this.waitFor(head, { projections: running.map((p) => p.name), timeoutMs: Infinity }) : undefined,
      offline.length > 0 ? this.catchUpTogether(offline.map((p) => this.newState(p, 0, generations.get(p.name)!)), head, onProgress) : undefined,
    ]);
  }

  /** Empties a projection's tables and quarantine and moves its checkpoint to 0 of a new generation. */
  private async reset(projection: Projection): Promise<number> {
    await this.ensureCheckpoint(projection); // a fresh database has no checkpoint row yet
    return this.db.transaction().execute(async (trx) => {
      await projection.reset(trx);
      await clearQuarantine(trx, projection.name);
      const row = await trx.selectFrom('projection_checkpoints').select('generation').where('name', '=', projection.name).executeTakeFirst();
      const next = (row?.generation ?? 0) + 1;
      await this.writeCheckpoint(trx, projection, 0, next);
      return next;
    });
  }

  /** Replays into the projection up to `head` without tailing (used by the CLI). */
  async catchUpOnce(projection: Projection, generation: number, head: number): Promise<void> {
    await this.catchUpTogether([this.newState(projection, 0, generation)], head);
  }

  /**
   * Applies the log up to `until` to every state, reading each batch once (the next one is read
   * while this one is applied), then stores every checkpoint at the last commit read: a
   * projection whose last relevant event is far behind the head would otherwise keep its
   * checkpoint there (commits it skips are stored only by a debounced timer, which a one-shot
   * command does not outlive), and the next start would read the log again from there.
   */
  private async catchUpTogether(states: readonly Running[], until: number, onProgress?: (position: number, head: number) => void): Promise<void> {
    let after = Math.min(...states.map((s) => s.position));
    let limit = this.options.replayBatchCommits ?? REPLAY_BATCH;
    let next = after < until ? this.store.readAll({ after, limit }) : Promise.resolve([]);
    for (;;) {
      const commits = await next;
      const beyond = commits.findIndex((commit) => commit.position > until); // `until` is a bound, not a hint
      const batch = beyond < 0 ? commits : commits.slice(0, beyond);
      if (batch.length === 0) break;
      after = batch.at(-1)!.position;
      limit = this.nextReadLimit(commits);
      next = beyond < 0 && after < until ? this.store.readAll({ after, limit }) : Promise.resolve([]);
      next.catch(() => undefined); // awaited next round; a failure of this round must not leave it unhandled
      await Promise.all(states.map((state) => this.applyInGroups(state, batch, () => false)));
      onProgress?.(after, until);
    }
    await Promise.all(states.map((state) => this.storeSkippedPosition(state)));
  }

  private newState(projection: Projection, after: number, generation: number): Running {
    return { projection, generation, position: after, subscription: null, catchUp: null, retryTimer: null, relevant: new Set(projection.eventTypes), skipTimer: null, readLimit: this.options.replayBatchCommits ?? REPLAY_BATCH };
  }

  /** Applies commits after state.position up to `until`, reading the log in batches. */
  private async replay(state: Running, until: number, cancelled: () => boolean): Promise<void> {
    while (state.position < until && !cancelled()) {
      const commits = await this.readBatch(state.position, state.readLimit);
      if (commits.length === 0) break;
      state.readLimit = this.nextReadLimit(commits);
      const beyond = commits.findIndex((commit) => commit.position > until); // `until` is a bound, not a hint
      await this.applyInGroups(state, beyond < 0 ? commits : commits.slice(0, beyond), cancelled);
      if (beyond >= 0) return;
    }
  }

  /** Applies consecutive commits, several per transaction up to GROUP_EVENTS relevant events. */
  private async applyInGroups(state: Running, commits: readonly Commit[], cancelled: () => boolean): Promise<void> {
    let group: Commit[] = [];
    let events = 0;
    for (const commit of commits) {
      const relevant = this.relevantCount(state, commit);
      if (group.length > 0 && events + relevant > GROUP_EVENTS) {
        if (cancelled()) return;
        await this.applyCommits(state, group);
        group = [];
        events = 0;
      }
      group.push(commit);
      events += relevant;
    }
    if (group.length > 0 && !cancelled()) await this.applyCommits(state, group);
  }

  private relevantCount(state: Running, commit: Commit): number {
    let count = 0;
    for (const event of commit.events) if (isRelevant(state, event)) count++;
    return count;
  }

  /**
   * The commits after `after` (up to REPLAY_BATCH), shared by the projections catching up side by
   * side: they replay the same batches of the log, a step apart, and each read (rows and JSON
   * parsing) is a large share of what replaying costs. Sharing also hands them the very same event
   * objects, so what a projection derives once per event object (src/projections/usage-events.ts)
   * is derived once. A kept read is an earlier answer to the same question: an immutable prefix
   * of what a fresh read returns, at worst shorter, which replay handles like any batch (it reads
   * on from the last commit). Empty and failed reads are not kept.
   */
  private readBatch(after: number, limit: number): Promise<Commit[]> {
    const kept = this.sharedReads.get(after);
    if (kept) return kept;
    const read = this.store.readAll({ after, limit });
    this.sharedReads.set(after, read);
    if (this.sharedReads.size > SHARED_READS) this.sharedReads.delete(this.sharedReads.keys().next().value!);
    const forget = () => {
      if (this.sharedReads.get(after) === read) this.sharedReads.delete(after);
    };
    read.then((commits) => commits.length === 0 && forget(), forget);
    return read;
  }

  private nextReadLimit(commits: readonly Commit[]): number {
    const { replayBatchEvents = REPLAY_BATCH_EVENTS, replayBatchCommits = REPLAY_BATCH } = this.options;
    return nextReadLimit(commits.length, eventCount(commits), replayBatchEvents, replayBatchCommits);
  }

  /** Current position and lag of every projection. */
  async status(): Promise<ProjectionStatus[]> {
    const head = await this.store.headPosition();
    const rows = await this.db.selectFrom('projection_checkpoints').selectAll().execute();
    const quarantined = await quarantinedCounts(this.db);
    return this.projections.map((p) => {
      const stored = rows.find((r) => r.name === p.name)?.position ?? 0;
      const position = Math.max(stored, this.running.get(p.name)?.position ?? 0);
      return { name: p.name, version: p.version, position, lag: Math.max(0, head - position), quarantined: quarantined.get(p.name) ?? 0 };
    });
  }

  /**
   * Resolves when every (or each named) projection has reached `position`. Checks this
   * instance's progress first, then the stored checkpoints: with a shared durable consumer,
   * another instance may be the one that applied the commit.
   */
  async waitFor(position: number, { timeoutMs = 10_000, projections }: { timeoutMs?: number; projections?: string[] } = {}): Promise<void> {
    const names = projections ?? this.names;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const behind = names.filter((n) => (this.running.get(n)?.position ?? 0) < position);
      if (behind.length === 0) return;
      const stored = await this.db.selectFrom('projection_checkpoints').select(['name', 'position']).where('name', 'in', behind).execute();
      if (behind.every((n) => (stored.find((r) => r.name === n)?.position ?? 0) >= position)) return;
      const left = deadline - Date.now();
      if (left <= 0 || this.stopped) throw new Error(`projections ${behind.join(', ')} did not reach position ${position} within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, Math.min(left, 50));
        function done() {
          clearTimeout(timer);
          resolve();
        }
        this.waiters.add(done);
      });
    }
  }

  private notify() {
    const waiters = [...this.waiters];
    this.waiters.clear();
    for (const w of waiters) w();
  }

  private async ensureCheckpoint(projection: Projection): Promise<{ position: number; generation: number }> {
    const row = await this.db.selectFrom('projection_checkpoints').selectAll().where('name', '=', projection.name).executeTakeFirst();
    if (!row) {
      await this.db
        .insertInto('projection_checkpoints')
        .values({ name: projection.name, position: 0, generation: 0, version: projection.version, updated_at: now() })
        .execute()
        .catch(() => undefined); // another instance inserted it first
      return this.ensureCheckpoint(projection);
    }
    if (row.version !== projection.version) {
      this.logger.warn({ projection: projection.name, from: row.version, to: projection.version }, 'projection version changed: rebuilding');
      const generation = row.generation + 1;
      await this.db.transaction().execute(async (trx) => {
        await projection.reset(trx);
        await clearQuarantine(trx, projection.name);
        await this.writeCheckpoint(trx, projection, 0, generation);
      });
      return { position: 0, generation };
    }
    return { position: row.position, generation: row.generation };
  }

  private async writeCheckpoint(trx: ReadModelDb, projection: Projection, position: number, generation: number) {
    await trx
      .updateTable('projection_checkpoints')
      .set({ position, generation, version: projection.version, updated_at: now() })
      .where('name', '=', projection.name)
      .execute();
  }

  /**
   * Catches up by reading the log in batches (fast on every adapter, where a shared durable
   * consumer hands out one commit per round trip), then follows it live. Runs in the background:
   * a long backlog must not hold up startup.
   */
  private launch(projection: Projection, after: number, generation: number) {
    if (this.stopped) return;
    const state = this.newState(projection, after, generation);
    this.running.set(projection.name, state);
    const superseded = () => this.stopped || this.running.get(projection.name) !== state;
    state.catchUp = (async () => {
      await this.replay(state, await this.store.headPosition(), superseded);
      if (superseded()) return;
      state.subscription = this.store.subscribe({
        after: state.position,
        durableName: `projection_${projection.name}`,
        onCommit: (commit) => this.applyCommits(state, [commit]),
        // Commits that queued up while this projector was busy: several per transaction too.
        onCommits: (commits) => this.applyInGroups(state, commits, superseded),
        onError: (error) => this.onSubscriptionError(state, error),
      });
    })().catch((error: unknown) => this.onSubscriptionError(state, error));
  }

  private async relaunch(name: string, after?: number, generation?: number) {
    const projection = this.find(name);
    // The checkpoint first: if the database does not answer, the projection is still registered
    // as it was, so the failure schedules another retry (onSubscriptionError) instead of leaving
    // the projection stopped.
    if (after === undefined || generation === undefined) {
      const checkpoint = await this.ensureCheckpoint(projection);
      after = checkpoint.position;
      generation = checkpoint.generation;
    }
    const current = this.running.get(name);
    if (current) {
      if (current.retryTimer) clearTimeout(current.retryTimer);
      this.running.delete(name); // supersedes a catch-up still running
      await current.catchUp;
      await current.subscription?.close();
    }
    this.launch(projection, after, generation);
  }

  private onSubscriptionError(state: Running, error: unknown) {
    if (this.stopped || this.running.get(state.projection.name) !== state) return;
    const restartOnly = error instanceof GenerationChanged;
    if (!restartOnly) this.logger.error({ event: 'projection_failed', err: error, projection: state.projection.name }, 'projection failed; retrying from its checkpoint');
    state.retryTimer = setTimeout(
      () => {
        void this.relaunch(state.projection.name).catch((e: unknown) => this.onSubscriptionError(state, e));
      },
      restartOnly ? 0 : (this.options.retryDelayMs ?? 1000),
    );
  }

  /**
   * Applies consecutive commits in ONE transaction, together with a conditional checkpoint update
   * from below the first to the last (`position < first AND generation = g`). If the claim fails
   * for several commits, some of them may have been applied by another instance sharing a
   * durable consumer: they are then applied one by one, each with its own claim.
   */
  private async applyCommits(state: Running, commits: readonly Commit[]): Promise<void> {
    // At or below what this projector already applied (or saw applied): a redelivery. Skipping
    // it here saves a transaction; anything newer is checked against the stored checkpoint.
    const fresh = commits.filter((commit) => commit.position > state.position);
    if (fresh.length === 0) return;
    const first = fresh[0]!.position;
    const last = fresh[fresh.length - 1]!.position;
    const relevant = fresh.flatMap((commit) => commit.events.filter((e) => isRelevant(state, e)));
    if (relevant.length > 0) {
      let claimed: boolean;
      try {
        claimed = await this.applyClaimed(state, first, last, relevant);
      } catch (error) {
        if (error instanceof GenerationChanged) throw error;
        if (fresh.length > 1) {
          // One commit of the group is at fault (or the database is): each on its own.
          for (const commit of fresh) await this.applyCommits(state, [commit]);
          return;
        }
        claimed = await this.applyOrQuarantine(state, first, relevant, error);
      }
      if (!claimed && fresh.length > 1) {
        for (const commit of fresh) await this.applyCommits(state, [commit]);
        return;
      }
      if (state.skipTimer) clearTimeout(state.skipTimer);
      state.skipTimer = null;
    } else {
      this.storeSkippedPositionSoon(state);
    }
    state.position = Math.max(state.position, last);
    this.notify();
  }

  /**
   * In ONE transaction: claims the checkpoint from below `first` to `last`, applies `events`
   * except those in `quarantined`, and records those as quarantined. False if the claim fails
   * (already applied).
   */
  private async applyClaimed(state: Running, first: number, last: number, events: readonly StoredEvent[], quarantined?: ReadonlyMap<StoredEvent, unknown>): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const claim = await claimCheckpoint(trx, { name: state.projection.name, below: first, position: last, generation: state.generation, updated_at: now() });
      if (Number(claim.numAffectedRows) === 0) {
        const row = await trx.selectFrom('projection_checkpoints').select(['generation']).where('name', '=', state.projection.name).executeTakeFirst();
        if (row && row.generation !== state.generation) throw new GenerationChanged(`projection ${state.projection.name} was rebuilt`);
        return false; // already applied (redelivery, or another instance got there first)
      }
      if (!quarantined) {
        if (state.projection.applyCommit) await state.projection.applyCommit(trx, events);
        else for (const event of events) await state.projection.apply(trx, event);
        return true;
      }
      // Event by event, so that the one that fails is known (and the others still apply).
      for (const event of events) {
        if (quarantined.has(event)) continue;
        try {
          if (state.projection.applyCommit) await state.projection.applyCommit(trx, [event]);
          else await state.projection.apply(trx, event);
        } catch (error) {
          throw new EventFailed(event, error);
        }
      }
      const at = now();
      for (const [event, error] of quarantined) await quarantineEvent(trx, state.projection.name, event, error, at);
      return true;
    });
  }

  /**
   * A commit whose transaction failed: retried a few times (a deadlock, a lost connection); then,
   * if the database answers (so the fault is the projection's, not an outage's), applied event by
   * event with each failing event quarantined, so the projection moves past it. While the
   * database does not answer, the error is thrown: the projection retries from its checkpoint.
   */
  private async applyOrQuarantine(state: Running, position: number, events: readonly StoredEvent[], failure: unknown): Promise<boolean> {
    const attempts = this.options.applyAttempts ?? APPLY_ATTEMPTS;
    let error = failure;
    for (let attempt = 1; attempt < attempts; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, (this.options.applyRetryDelayMs ?? 100) * attempt));
      try {
        return await this.applyClaimed(state, position, position, events);
      } catch (again) {
        if (again instanceof GenerationChanged) throw again;
        error = again;
      }
    }
    if (!(await databaseAnswers(this.db))) throw error;
    const quarantined = new Map<StoredEvent, unknown>();
    for (;;) {
      try {
        const claimed = await this.applyClaimed(state, position, position, events, quarantined);
        if (claimed) {
          for (const [event, cause] of quarantined) {
            this.logger.error({ event: 'event_quarantined', err: cause, projection: state.projection.name, position: event.position, event_id: event.id, type: event.type }, 'event quarantined: the projection could not apply it and moves on');
          }
        }
        return claimed;
      } catch (again) {
        if (!(again instanceof EventFailed) || quarantined.has(again.event) || !(await databaseAnswers(this.db))) throw again instanceof EventFailed ? again.cause : again;
        quarantined.set(again.event, again.cause);
      }
    }
  }

  /**
   * Commits a projection does not read cost no transaction, but their position is still stored,
   * debounced: so a restart does not re-read them, and so other instances sharing a durable
   * consumer (which may never see these commits) can tell the projection is up to date.
   */
  private storeSkippedPositionSoon(state: Running) {
    if (state.skipTimer) return;
    state.skipTimer = setTimeout(() => {
      state.skipTimer = null;
      void this.storeSkippedPosition(state).catch((error: unknown) => this.logger.warn({ err: error, projection: state.projection.name }, 'could not store checkpoint'));
    }, SKIP_CHECKPOINT_DELAY_MS);
  }

  private async storeSkippedPosition(state: Running) {
    if (state.skipTimer) clearTimeout(state.skipTimer);
    state.skipTimer = null;
    const [result] = await this.db
      .updateTable('projection_checkpoints')
      .set({ position: state.position, updated_at: now() })
      .where('name', '=', state.projection.name)
      .where('position', '<', state.position)
      .where('generation', '=', state.generation)
      .execute();
    if (Number(result?.numUpdatedRows ?? 0) > 0) return;
    // Rebuilt elsewhere (`switchyard projections rebuild` beside a running server): restart from the
    // new checkpoint now rather than at the next commit this projection reads, so the stored
    // position (what `projections status` shows) and this instance's (what /health shows) agree.
    const row = await this.db.selectFrom('projection_checkpoints').select(['generation']).where('name', '=', state.projection.name).executeTakeFirst();
    if (row && row.generation !== state.generation && this.running.get(state.projection.name) === state) this.onSubscriptionError(state, new GenerationChanged(`projection ${state.projection.name} was rebuilt`));
  }
}

/** An event the projection reads: of one of its types, and not left out by its `accepts`. */
function isRelevant(state: Running, event: StoredEvent): boolean {
  return state.relevant.has(event.type) && (state.projection.accepts?.(event) ?? true);
}

const eventCount = (commits: readonly Commit[]) => commits.reduce((n, commit) => n + commit.events.length, 0);

/** Used by tests and the CLI to look at a checkpoint row directly. */
export async function readCheckpoint(db: ReadModelDb, name: string): Promise<number> {
  const row = await db.selectFrom('projection_checkpoints').select('position').where('name', '=', name).executeTakeFirst();
  return row?.position ?? 0;
}
