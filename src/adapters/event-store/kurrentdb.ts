/**
 * EventStore on KurrentDB (formerly EventStoreDB).
 *
 * Layout: one KurrentDB stream per event-store stream, named `<streamPrefix><stream>`. An `append`
 * is one atomic appendToStream call. KurrentDB gives every event its own commit position in the
 * $all log (the append returns the last event's), so a commit is recognised by metadata instead:
 * each event carries its commit id, its index in the commit and the commit size. A commit's
 * position is the commit position of its LAST event — what appendToStream returns — so a
 * checkpoint at a commit's position means "this whole commit is done".
 *
 * Concurrency: expectedVersion 0 -> NO_STREAM, n -> revision n-1, 'any' -> ANY; the server's
 * WrongExpectedVersion becomes our WrongExpectedVersionError.
 *
 * Idempotency: event ids are deterministic (UUID v5 of stream, commit id and index) unless the
 * caller gave one, so a retried append carries the same ids and KurrentDB acknowledges it without
 * writing again.
 *
 * This adapter needs a KurrentDB server >= 22.6 (events read from a stream carry their position).
 */
import { createHash, randomUUID } from 'node:crypto';
import {
  ANY,
  BACKWARDS,
  END,
  FORWARDS,
  KurrentDBClient,
  NO_STREAM,
  START,
  StreamNotFoundError,
  WrongExpectedVersionError as KurrentWrongExpectedVersionError,
  jsonEvent,
  streamNameFilter,
  type AllStreamResolvedEvent,
  type AllStreamSubscription,
  type AppendStreamState,
  type Filter,
  type ReadPosition,
  type RecordedEvent,
  type ResolvedEvent,
} from '@kurrent/kurrentdb-client';
import { z } from 'zod';
import { ArchivalNotSupportedError, ConfigError, WrongExpectedVersionError } from '../../errors.js';
import {
  commitFor,
  NewEvent,
  StreamName,
  type AppendOptions,
  type AppendResult,
  type Commit,
  type EventStore,
  type ExpectedVersion,
  type ReadAllOptions,
  type StoredEvent,
  type SubscribeOptions,
  type Subscription,
} from '../../ports/event-store.js';

export interface KurrentDbEventStoreOptions {
  /** e.g. "kurrentdb://localhost:2113?tls=false" (the deprecated "esdb://" scheme is accepted). */
  connectionString: string;
  /** Prepended to every stream name, so several stores (or test runs) can share one database. */
  streamPrefix?: string;
}

/** Envelope fields that KurrentDB has no native place for. `$correlationId`/`$causationId` are
 * also written, for KurrentDB's own projections, but not read back. */
const EventMetadata = z.object({
  tenant_id: z.string(),
  schema_version: z.number().int().positive(),
  occurred_at: z.string(),
  causation_id: z.string().nullable(),
  correlation_id: z.string().nullable(),
  commit_id: z.string(),
  commit_index: z.number().int().nonnegative(),
  commit_size: z.number().int().positive(),
});
type EventMetadata = z.infer<typeof EventMetadata>;

/** One event read back, before it is placed in its commit (whose position is its last event's). */
interface DecodedEvent {
  envelope: Omit<StoredEvent, 'position'>;
  position: number;
  commitId: string;
  commitIndex: number;
  commitSize: number;
}

/** RFC 4122 namespace for our name-based event ids (a fixed random UUID). */
const EVENT_ID_NAMESPACE = '0f6b1c8e-7f0a-4d52-9b7e-5a1f3c2d9e41';

/** UUID v5: the same commit always yields the same event ids. */
export function deterministicEventId(stream: string, commitId: string, index: number): string {
  const namespace = Buffer.from(EVENT_ID_NAMESPACE.replace(/-/g, ''), 'hex');
  const hash = createHash('sha1').update(namespace).update(`${stream}\n${commitId}\n${index}`).digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50; // version 5
  hash[8] = (hash[8]! & 0x3f) | 0x80; // RFC 4122 variant
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

function toStreamState(expected: ExpectedVersion): AppendStreamState {
  if (expected === 'any') return ANY;
  if (expected === 0) return NO_STREAM;
  return BigInt(expected - 1);
}

/** KurrentDB positions are bigint byte offsets; ours are JS numbers (safe up to 8 PiB). */
function toPosition(commit: bigint): number {
  const n = Number(commit);
  if (!Number.isSafeInteger(n) || n <= 0) throw new Error(`KurrentDB commit position ${commit} is not usable as a position`);
  return n;
}

/** Our positions are commit positions of events, where commit and prepare positions coincide. */
function fromPosition(after: number): ReadPosition {
  return after <= 0 ? START : { commit: BigInt(after), prepare: BigInt(after) };
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Groups the events of a log (or of a stream) into commits. Appends are atomic and contiguous,
 * so the events of a commit arrive together; the one with the last index completes the commit.
 * A read may start inside a commit (readStream from a version): the partial commit is accepted.
 */
class CommitAssembler {
  private pending: { stream: string; commitId: string; events: Omit<StoredEvent, 'position'>[] } | undefined;

  push(event: DecodedEvent): Commit | undefined {
    const { stream } = event.envelope;
    if (this.pending && (this.pending.commitId !== event.commitId || this.pending.stream !== stream)) {
      throw new Error(`commit ${this.pending.commitId} of ${this.pending.stream} is incomplete in the KurrentDB log`);
    }
    this.pending ??= { stream, commitId: event.commitId, events: [] };
    this.pending.events.push(event.envelope);
    if (event.commitIndex < event.commitSize - 1) return undefined;
    const { events } = this.pending;
    this.pending = undefined;
    return { position: event.position, stream, events: events.map((e) => ({ ...e, position: event.position })) };
  }
}

export class KurrentDbEventStore implements EventStore {
  readonly kind = 'kurrentdb';
  private readonly subscriptions = new Set<KurrentSubscription>();
  /** Server-side filter on our stream names: skips system streams and other prefixes. */
  private readonly filter: Filter;
  private readonly ownStream: RegExp;

  private constructor(
    private readonly client: KurrentDBClient,
    readonly streamPrefix: string,
  ) {
    const pattern = `^${escapeRegex(streamPrefix)}[a-z][a-z0-9_]*-`;
    this.filter = streamNameFilter({ regex: pattern });
    this.ownStream = new RegExp(pattern);
  }

  static connect(options: KurrentDbEventStoreOptions): KurrentDbEventStore {
    const prefix = options.streamPrefix ?? '';
    if (prefix.startsWith('$')) throw new ConfigError('KurrentDB stream prefix may not start with "$" (reserved for system streams)');
    // The client still accepts esdb:// but warns on every start; it means the same thing.
    const url = options.connectionString.replace(/^esdb(\+discover)?:\/\//, 'kurrentdb$1://');
    return new KurrentDbEventStore(KurrentDBClient.connectionString(url), prefix);
  }

  private nameOf(stream: string): string {
    if (!StreamName.safeParse(stream).success) throw new Error(`invalid stream name ${JSON.stringify(stream)}`);
    return `${this.streamPrefix}${stream}`;
  }

  // ----- append -------------------------------------------------------------------------------

  async append(stream: string, events: readonly NewEvent[], options: AppendOptions): Promise<AppendResult> {
    const name = this.nameOf(stream);
    if (events.length === 0) throw new Error('append needs at least one event');
    const parsed = events.map((e) => NewEvent.parse(e));
    const commitId = options.commitId ?? parsed[0]!.id ?? randomUUID();
    const occurredAt = new Date().toISOString();
    const data = parsed.map((e, index) => {
      const metadata: EventMetadata & Record<string, unknown> = {
        tenant_id: options.tenantId,
        schema_version: e.schema_version,
        occurred_at: occurredAt,
        causation_id: options.causationId ?? null,
        correlation_id: options.correlationId ?? null,
        commit_id: commitId,
        commit_index: index,
        commit_size: parsed.length,
        ...(options.correlationId ? { $correlationId: options.correlationId } : {}),
        ...(options.causationId ? { $causationId: options.causationId } : {}),
      };
      return jsonEvent({ id: e.id ?? deterministicEventId(stream, commitId, index), type: e.type, data: e.data, metadata });
    });

    try {
      const result = await this.client.appendToStream(name, data, { streamState: toStreamState(options.expectedVersion) });
      const lastRevision = result.nextExpectedRevision;
      // An idempotent retry may come back without a position: read it from the stored event.
      const position = result.position ? toPosition(result.position.commit) : await this.positionAt(name, lastRevision);
      return { version: Number(lastRevision) + 1, position };
    } catch (error) {
      if (error instanceof KurrentWrongExpectedVersionError) {
        const actual = error.actualState === NO_STREAM ? 0 : Number(error.actualState) + 1;
        throw new WrongExpectedVersionError(stream, options.expectedVersion, actual);
      }
      throw error;
    }
  }

  private async positionAt(name: string, revision: bigint): Promise<number> {
    for await (const resolved of this.client.readStream(name, { fromRevision: revision, maxCount: 1, direction: FORWARDS })) {
      const commit = resolved.event?.position?.commit;
      if (commit !== undefined) return toPosition(commit);
    }
    throw new Error(`KurrentDB did not return the position of ${name}@${revision}`);
  }

  // ----- reads --------------------------------------------------------------------------------

  async readStream(stream: string, afterVersion = 0): Promise<StoredEvent[]> {
    const name = this.nameOf(stream);
    const assembler = new CommitAssembler();
    const out: StoredEvent[] = [];
    try {
      const reader = this.client.readStream(name, { fromRevision: BigInt(afterVersion), direction: FORWARDS });
      for await (const resolved of reader) {
        const decoded = this.decodeStreamEvent(resolved);
        if (!decoded) continue;
        const commit = assembler.push(decoded);
        if (commit) out.push(...commit.events);
      }
    } catch (error) {
      if (error instanceof StreamNotFoundError) return [];
      throw error;
    }
    return out;
  }

  async readAll(options: ReadAllOptions): Promise<Commit[]> {
    const limit = options.limit ?? Infinity;
    const commits: Commit[] = [];
    if (limit <= 0) return commits;
    const assembler = new CommitAssembler();
    const reader = this.client.readAll({ fromPosition: fromPosition(options.after), direction: FORWARDS, filter: this.filter });
    for await (const resolved of reader) {
      const decoded = this.decodeAllEvent(resolved);
      // The start position is inclusive: skip the last event of the commit at `after`.
      if (!decoded || decoded.position <= options.after) continue;
      const commit = assembler.push(decoded);
      if (commit) commits.push(commit);
      if (commits.length >= limit) break;
    }
    return commits;
  }

  async headPosition(): Promise<number> {
    // The last event of ours in $all is the last event of the last commit.
    const reader = this.client.readAll({ fromPosition: END, direction: BACKWARDS, maxCount: 1, filter: this.filter });
    for await (const resolved of reader) {
      const decoded = this.decodeAllEvent(resolved);
      if (decoded) return decoded.position;
    }
    return 0;
  }

  // ----- decoding -----------------------------------------------------------------------------

  private decodeAllEvent(resolved: AllStreamResolvedEvent): DecodedEvent | undefined {
    const event = resolved.event;
    if (!event || !this.ownStream.test(event.streamId)) return undefined;
    return this.decode(event, event.position.commit);
  }

  private decodeStreamEvent(resolved: ResolvedEvent): DecodedEvent | undefined {
    const event = resolved.event;
    if (!event) return undefined;
    if (!event.position) throw new Error('KurrentDB did not return event positions on stream reads (server >= 22.6 required)');
    return this.decode(event, event.position.commit);
  }

  private decode(event: RecordedEvent, commitPosition: bigint): DecodedEvent {
    const stream = event.streamId.slice(this.streamPrefix.length);
    const metadata = EventMetadata.safeParse(event.metadata);
    const data = z.record(z.string(), z.unknown()).safeParse(event.data);
    if (!metadata.success || !data.success) throw new Error(`event ${event.id} in ${event.streamId} is not a Switchyard event`);
    const m = metadata.data;
    return {
      envelope: {
        id: event.id,
        type: event.type,
        stream,
        version: Number(event.revision) + 1,
        tenant_id: m.tenant_id,
        occurred_at: m.occurred_at,
        schema_version: m.schema_version,
        causation_id: m.causation_id,
        correlation_id: m.correlation_id,
        data: data.data,
      },
      position: toPosition(commitPosition),
      commitId: m.commit_id,
      commitIndex: m.commit_index,
      commitSize: m.commit_size,
    };
  }

  // ----- subscriptions ------------------------------------------------------------------------

  subscribe(options: SubscribeOptions): Subscription {
    // durableName is ignored: KurrentDB catch-up subscriptions are per process, and projectors
    // checkpoint idempotently (see SubscribeOptions.durableName).
    const feed = this.client.subscribeToAll({ fromPosition: fromPosition(options.after), filter: this.filter });
    const subscription = new KurrentSubscription(feed, options, (e) => this.decodeAllEvent(e), () => this.subscriptions.delete(subscription));
    this.subscriptions.add(subscription);
    return subscription;
  }

  /**
   * Not offered: KurrentDB removes events only through a stream's truncate-before metadata and a
   * later scavenge, per stream revision rather than log position (docs/decisions/0090).
   */
  async removeCommitsBefore(): Promise<number> {
    throw new ArchivalNotSupportedError('usage archival is not available on KurrentDB: archive with the SQLite or NATS JetStream event store, or truncate streams with KurrentDB tools');
  }

  // ----- lifecycle ----------------------------------------------------------------------------

  async ping(): Promise<void> {
    // Any read of $all needs a live, authorised connection; the database is never empty.
    for await (const _ of this.client.readAll({ fromPosition: END, direction: BACKWARDS, maxCount: 1 })) break;
  }

  async close(): Promise<void> {
    await Promise.all([...this.subscriptions].map((s) => s.close()));
    await this.client.dispose();
  }
}

/** A catch-up subscription to $all (exclusive start), delivering whole commits one at a time. */
class KurrentSubscription implements Subscription {
  private closing = false;
  private failed = false;
  private readonly finished: Promise<void>;

  constructor(
    private readonly feed: AllStreamSubscription,
    private readonly options: SubscribeOptions,
    private readonly decode: (event: AllStreamResolvedEvent) => DecodedEvent | undefined,
    onFinished: () => void,
  ) {
    this.finished = this.run().finally(onFinished);
  }

  async close(): Promise<void> {
    this.closing = true;
    // Ends the feed; a handler in flight finishes first, then run() returns.
    await this.feed.unsubscribe().catch(() => undefined);
    await this.finished;
  }

  private async run(): Promise<void> {
    const assembler = new CommitAssembler();
    try {
      // Async iteration applies backpressure: the next event is read once the handler settled.
      for await (const resolved of this.feed) {
        if (this.closing) return;
        const decoded = this.decode(resolved);
        if (!decoded || decoded.position <= this.options.after) continue;
        const commit = assembler.push(decoded);
        if (commit && !(await this.deliver(commit))) return;
      }
      this.fail(new Error('KurrentDB subscription ended'));
    } catch (error) {
      this.fail(error);
    } finally {
      await this.feed.unsubscribe().catch(() => undefined);
    }
  }

  private async deliver(commit: Commit): Promise<boolean> {
    try {
      await this.options.onCommit(commitFor(this.options, commit));
      return true;
    } catch (error) {
      this.fail(error);
      return false;
    }
  }

  /** Reports the first failure only, and never one caused by our own close(). */
  private fail(error: unknown): void {
    if (this.failed || this.closing) return;
    this.failed = true;
    this.options.onError?.(error);
  }
}
