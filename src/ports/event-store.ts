/**
 * The event store port. Three adapters implement it (SQLite embedded, NATS JetStream, KurrentDB)
 * and all of them pass the one contract suite in test/contract/event-store.contract.ts.
 *
 * Vocabulary:
 * - A *stream* is the history of one aggregate instance ("maintenance-global", "key-<tenant>-<id>").
 *   Its *version* is the number of events in it (0 = the stream does not exist yet).
 * - A *commit* is what one `append` wrote: one or more events of one stream, stored atomically.
 * - The *global log* orders commits. Each commit has a *position*: a positive integer, strictly
 *   increasing along the log, but not necessarily contiguous (JetStream sequences and KurrentDB
 *   log offsets have gaps). Projectors checkpoint on commit positions.
 */
import { z } from 'zod';
import { util } from 'zod/v4/core';

/** Stream names: aggregate category, a dash, then the id. Restricted so every adapter can map
 * them to its own naming (NATS subject tokens, KurrentDB stream names) without escaping surprises. */
export const StreamName = z
  .string()
  .min(3)
  .max(200)
  .regex(/^[a-z][a-z0-9_]*-[A-Za-z0-9_:@-]+$/, 'stream name must look like "<category>-<id>"');

/** What a command hands to `append`. */
export const NewEvent = z.object({
  type: z.string().min(1).max(100),
  data: z.record(z.string(), z.unknown()),
  /** Version of this event type's data schema; upcasters key on it. */
  schema_version: z.number().int().positive().default(1),
  /** Optional caller-chosen id (idempotency); a UUID is generated otherwise. */
  id: z.uuid().optional(),
});
export type NewEvent = z.input<typeof NewEvent>;

const UUID = z.regexes.uuid();

/**
 * `NewEvent.parse`, with a shortcut for the common case: an event whose type, id and (absent)
 * schema version are what the schema outputs, and whose data is a plain object the schema's
 * record would copy key for key, is taken as it is, without copying `data` (the relay's usage
 * publisher appends one event per request, and the copy was most of the parse). Anything else
 * goes through the schema: same result, same errors. The caller must serialise `data` before it
 * can change (the SQLite log does so at once).
 */
export function parseNewEvent(event: NewEvent): z.output<typeof NewEvent> {
  const { type, data, schema_version: schemaVersion, id } = event;
  const plain =
    util.isPlainObject(event) &&
    typeof type === 'string' &&
    type.length >= 1 &&
    type.length <= 100 &&
    schemaVersion === undefined &&
    (id === undefined || (typeof id === 'string' && UUID.test(id))) &&
    util.isPlainObject(data) &&
    // The record copies own enumerable string keys except __proto__ and refuses symbol keys.
    Object.getOwnPropertySymbols(data).length === 0 &&
    !Object.hasOwn(data, '__proto__');
  if (!plain) return NewEvent.parse(event);
  return id === undefined ? { type, data, schema_version: 1 } : { type, data, schema_version: 1, id };
}

/** The envelope every stored event carries, whatever the adapter. */
export const StoredEvent = z.object({
  id: z.string(),
  type: z.string(),
  stream: z.string(),
  /** 1-based index of this event within its stream. */
  version: z.number().int().positive(),
  /** Position of the commit this event belongs to in the global log. */
  position: z.number().int().positive(),
  tenant_id: z.string(),
  occurred_at: z.string(),
  schema_version: z.number().int().positive(),
  causation_id: z.string().nullable(),
  correlation_id: z.string().nullable(),
  data: z.record(z.string(), z.unknown()),
});
export type StoredEvent = z.infer<typeof StoredEvent>;

export interface Commit {
  position: number;
  stream: string;
  events: StoredEvent[];
}

/** `0` means "the stream must not exist yet"; `'any'` disables the check. */
export type ExpectedVersion = number | 'any';

export interface AppendOptions {
  expectedVersion: ExpectedVersion;
  tenantId: string;
  /** The command or event that caused these events (e.g. the request id). */
  causationId?: string | null;
  /** Groups everything that happened because of one user action. */
  correlationId?: string | null;
  /** Deterministic id of this commit, for de-duplicating a retried append. Defaults to the
   * first event's id. */
  commitId?: string;
}

export interface AppendResult {
  /** Version of the stream after the append (= version of the last event written). */
  version: number;
  position: number;
}

export interface ReadAllOptions {
  /** Exclusive: commits with position > after. 0 = from the beginning. */
  after: number;
  /** Maximum number of commits returned. */
  limit?: number;
}

export interface SubscribeOptions {
  /** Exclusive start position (usually a projection's checkpoint). */
  after: number;
  /**
   * Called once per commit, in log order; the next commit is not delivered before the returned
   * promise settles. If it throws, the subscription stops and `onError` is called.
   */
  onCommit: (commit: Commit) => Promise<void>;
  /**
   * Optional: several commits the adapter already has at hand (a subscriber that fell behind),
   * in log order, delivered together instead of one `onCommit` each, under the same rules. Lets a
   * projector apply them in fewer transactions. Adapters that receive commits one at a time
   * ignore it.
   */
  onCommits?: (commits: readonly Commit[]) => Promise<void>;
  onError?: (error: unknown) => void;
  /**
   * Optional: streams whose events this subscriber gets another way (the serving thread's live
   * views take this instance's own usage events as the relay publishes them). Their commits
   * still arrive, in order, but with no events, so the subscriber's position moves on. An adapter
   * that holds a commit as text need not parse it for such a subscriber.
   */
  skipEventsOf?: (stream: string) => boolean;
  /**
   * A name shared by every instance that runs the same projector. Adapters with server-side
   * durable consumers (JetStream) use it so that, across instances, each commit is handed to one
   * instance at a time, in order. Adapters without them ignore it; correctness never depends on
   * it because projectors checkpoint idempotently.
   */
  durableName?: string;
}

/** A commit as a subscriber receives it: without its events when it skips the commit's stream. */
export function commitFor(subscriber: Pick<SubscribeOptions, 'skipEventsOf'>, commit: Commit): Commit {
  return subscriber.skipEventsOf?.(commit.stream) ? { position: commit.position, stream: commit.stream, events: [] } : commit;
}

export interface Subscription {
  /** Stops delivery; resolves once any in-flight `onCommit` has finished. */
  close(): Promise<void>;
}

export interface EventStore {
  /** Adapter name for health reports and logs: "sqlite", "nats", "kurrentdb". */
  readonly kind: string;
  /** Appends events to one stream as one atomic commit. Throws WrongExpectedVersionError. */
  append(stream: string, events: readonly NewEvent[], options: AppendOptions): Promise<AppendResult>;
  /** Events of one stream with version > afterVersion (default 0), in order. */
  readStream(stream: string, afterVersion?: number): Promise<StoredEvent[]>;
  /** Commits of the global log, in order. */
  readAll(options: ReadAllOptions): Promise<Commit[]>;
  /** Position of the last commit in the log (0 when empty). */
  headPosition(): Promise<number>;
  /** Catch up from `after`, then tail live commits. */
  subscribe(options: SubscribeOptions): Subscription;
  /**
   * Archival: removes, for each stream named in `cuts`, its commits with a position below the
   * given one, except the stream's last commit (kept so the stream's version, and appends at it,
   * stay right). Only for commits already copied elsewhere (src/archive/usage-archive.ts).
   * Returns how many commits went. Throws ArchivalNotSupportedError where the store cannot.
   * Every adapter has it; read-only views of a store (an audit's replay source) may leave it out.
   */
  removeCommitsBefore?(cuts: ReadonlyMap<string, number>): Promise<number>;
  /** Throws when the store is unreachable (readiness probe). */
  ping(): Promise<void>;
  close(): Promise<void>;
}
