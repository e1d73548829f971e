/**
 * EventStore on NATS JetStream.
 *
 * Layout: one JetStream stream (file storage) holds the whole global log; every event-store stream
 * is one subject `<prefix>.<token>` in it. One `append` is ONE JetStream message (a JSON body with
 * all events of the commit), so a commit is atomic without batch publishing, and a commit's
 * position is simply the message's stream sequence.
 *
 * Concurrency: `Nats-Expected-Last-Subject-Sequence` makes the server refuse a message when the
 * subject moved on. That header takes the stream sequence of the subject's last message, not an
 * event count, so we keep a small cache stream -> {version, lastSeq} and otherwise look the last
 * message of the subject up (its headers carry the stream version).
 *
 * Idempotency: `Nats-Msg-Id` (scoped to the event-store stream) lets the server drop a retried
 * commit inside its duplicate window; the server checks it before any expectation header.
 */
import { createHash, randomUUID } from 'node:crypto';
import {
  AckPolicy,
  DeliverPolicy,
  DiscardPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  RetentionPolicy,
  StorageType,
  jetstream,
  jetstreamManager,
  type ConsumerInfo,
  type ConsumerMessages,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
  type PubAck,
} from '@nats-io/jetstream';
import { headers, nanos, type MsgHdrs, type NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { z } from 'zod';
import { ArchivalNotSupportedError, ConfigError, WrongExpectedVersionError } from '../../errors.js';
import type { ConnectionListener } from '../../ports/counters.js';
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

/** Reports the connection's losses and returns until it closes (the client reconnects by itself). */
async function watchConnection(nc: NatsConnection, onConnection: ConnectionListener): Promise<void> {
  let up = true;
  try {
    for await (const status of nc.status()) {
      if (status.type === 'disconnect' && up) {
        up = false;
        onConnection('down', `disconnected from ${status.server}`);
      } else if (status.type === 'reconnect' && !up) {
        up = true;
        onConnection('up');
      }
    }
  } catch {
    // The status iterator ends with the connection.
  }
}

export interface NatsEventStoreOptions {
  /** One URL or several, e.g. "nats://127.0.0.1:4222". */
  servers: string | string[];
  /** JetStream stream holding the log (created when missing). */
  streamName?: string;
  /** Subjects are `<subjectPrefix>.<encoded stream name>`. */
  subjectPrefix?: string;
  /** Timeout of JetStream API requests (publish acks, lookups), ms. */
  apiTimeoutMs?: number;
  /** How many streams the version cache remembers. */
  cacheSize?: number;
  /** Told when the connection to NATS is lost and when it is back (changes only). */
  onConnection?: ConnectionListener;
}

// ---------------------------------------------------------------------------------------------
// Subject tokens
// ---------------------------------------------------------------------------------------------

/**
 * Maps a stream name to one NATS subject token. Letters, digits and '-' are kept; '_' is the escape
 * character ('_' itself becomes '__'); anything else becomes '_' + two uppercase hex digits
 * (':' -> '_3A', '@' -> '_40'). Uppercase-only hex keeps the mapping one-to-one.
 */
export function encodeStreamToken(stream: string): string {
  let token = '';
  for (const ch of stream) {
    if (/^[A-Za-z0-9-]$/.test(ch)) token += ch;
    else if (ch === '_') token += '__';
    else {
      const code = ch.codePointAt(0) ?? 0;
      if (code > 0xff) throw new Error(`cannot encode character ${JSON.stringify(ch)} of stream ${stream}`);
      token += `_${code.toString(16).toUpperCase().padStart(2, '0')}`;
    }
  }
  return token;
}

/** Inverse of encodeStreamToken; throws on a token it could not have produced. */
export function decodeStreamToken(token: string): string {
  let stream = '';
  for (let i = 0; i < token.length; ) {
    const ch = token[i]!;
    if (ch !== '_') {
      stream += ch;
      i += 1;
    } else if (token[i + 1] === '_') {
      stream += '_';
      i += 2;
    } else {
      const hex = token.slice(i + 1, i + 3);
      if (!/^[0-9A-F]{2}$/.test(hex)) throw new Error(`invalid stream token ${token}`);
      stream += String.fromCharCode(parseInt(hex, 16));
      i += 3;
    }
  }
  return stream;
}

/** Durable consumer names may not contain '.', '*', '>', whitespace or path separators. Names that
 * needed changes get a hash suffix so two different names never collapse into one consumer. */
export function durableConsumerName(name: string): string {
  if (/^[A-Za-z0-9_-]{1,64}$/.test(name)) return name;
  const hash = createHash('sha256').update(name).digest('hex').slice(0, 10);
  return `${name.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 48)}_${hash}`;
}

// ---------------------------------------------------------------------------------------------
// Message format
// ---------------------------------------------------------------------------------------------

/** Custom headers: enough to learn a stream's version from its last message without the body. */
const Hdr = {
  tenant: 'Sy-Tenant-Id',
  firstVersion: 'Sy-First-Version',
  version: 'Sy-Version',
  commitId: 'Sy-Commit-Id',
} as const;

/** The JSON body of one commit message. Envelope fields shared by all its events are stored once;
 * positions are not stored (position = the message's stream sequence). */
const CommitBody = z.object({
  format: z.literal(1),
  first_version: z.number().int().positive(),
  tenant_id: z.string(),
  occurred_at: z.string(),
  causation_id: z.string().nullable(),
  correlation_id: z.string().nullable(),
  events: z
    .array(
      z.object({
        id: z.string(),
        type: z.string(),
        schema_version: z.number().int().positive(),
        data: z.record(z.string(), z.unknown()),
      }),
    )
    .min(1),
});
type CommitBody = z.infer<typeof CommitBody>;

/** What both JsMsg (consumers) and StoredMsg (message get) offer. */
interface RawMessage {
  subject: string;
  seq: number;
  data: Uint8Array;
}

/** Version and sequence of the last commit of a stream (version 0 / lastSeq 0 = no stream). */
interface StreamHead {
  version: number;
  lastSeq: number;
  /** Commit id of the last commit, to recognise a retried commit. */
  commitId: string | null;
}

const NO_STREAM: StreamHead = { version: 0, lastSeq: 0, commitId: null };

/** Messages per pull request when reading; also bounds client-side buffering. */
const READ_BATCH = 256;
/** A pull request that brings nothing within this time means the server lost our consumer. */
const READ_EXPIRES_MS = 5_000;
/** Durable consumers: redeliver an unacknowledged commit after this long... */
const DURABLE_ACK_WAIT_MS = 15_000;
/** ...unless its handler is still running: then we tell the server so this often. */
/** How far behind its subscriber's start a shared durable consumer may be and still be reused. */
const DURABLE_MAX_REDELIVERY = 1000;
const DURABLE_PROGRESS_MS = 5_000;
/** 'any' appends retry on races; past this many lost races the caller gets the conflict. */
const MAX_ANY_ATTEMPTS = 50;

/** LRU of stream heads. Only an optimisation: a stale entry costs one rejected publish. */
class StreamHeadCache {
  private readonly entries = new Map<string, StreamHead>();
  constructor(private readonly capacity: number) {}

  get(stream: string): StreamHead | undefined {
    const head = this.entries.get(stream);
    if (head) {
      this.entries.delete(stream);
      this.entries.set(stream, head);
    }
    return head;
  }

  /** Ignores heads older than the cached one (concurrent reads can finish out of order). */
  remember(stream: string, head: StreamHead): void {
    const known = this.entries.get(stream);
    if (known && known.lastSeq > head.lastSeq) return;
    this.entries.delete(stream);
    this.entries.set(stream, head);
    if (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
  }
}

/** Randomised, growing pause between 'any' retries, so writers racing on one hot stream spread
 * out instead of colliding again in lockstep. */
function jitter(attempt: number): Promise<void> {
  const ms = Math.random() * Math.min(2 ** attempt, 100);
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function isConflict(error: unknown): boolean {
  return (
    error instanceof JetStreamApiError &&
    (error.code === JetStreamApiCodes.StreamWrongLastSequence || error.code === JetStreamApiCodes.StreamWrongLastSequenceUnknown)
  );
}

function headerNumber(hdrs: MsgHdrs | undefined, name: string, seq: number): number {
  const value = Number(hdrs?.get(name));
  if (!Number.isSafeInteger(value) || value <= 0) throw new Error(`message ${seq} has no valid ${name} header`);
  return value;
}

/** The stream head a commit message represents, from its headers alone. */
function headOf(seq: number, hdrs: MsgHdrs | undefined): StreamHead {
  return { version: headerNumber(hdrs, Hdr.version, seq), lastSeq: seq, commitId: hdrs?.get(Hdr.commitId) || null };
}

/** A planned publish: the version the commit follows and the subject sequence the server must see. */
interface AppendPlan {
  baseVersion: number;
  expectedLastSeq: number;
  /** The head the plan was based on, when it needed one. */
  head?: StreamHead;
}

// ---------------------------------------------------------------------------------------------
// The store
// ---------------------------------------------------------------------------------------------

export class NatsEventStore implements EventStore {
  readonly kind = 'nats';
  private readonly cache: StreamHeadCache;
  private readonly subscriptions = new Set<NatsSubscription>();
  /** Deletions of throwaway read consumers, awaited on close. */
  private readonly cleanups = new Set<Promise<unknown>>();
  private closing: Promise<void> | undefined;

  private constructor(
    private readonly nc: NatsConnection,
    private readonly jsm: JetStreamManager,
    private readonly js: JetStreamClient,
    readonly streamName: string,
    readonly subjectPrefix: string,
    cacheSize: number,
  ) {
    this.cache = new StreamHeadCache(cacheSize);
  }

  static async connect(options: NatsEventStoreOptions): Promise<NatsEventStore> {
    const streamName = options.streamName ?? 'SWITCHYARD';
    const subjectPrefix = options.subjectPrefix ?? 'sy.ev';
    if (!/^[A-Za-z0-9_-]+$/.test(streamName)) throw new ConfigError(`invalid JetStream stream name ${streamName}`);
    if (!/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/.test(subjectPrefix)) throw new ConfigError(`invalid NATS subject prefix ${subjectPrefix}`);

    // An event store outlives network blips: reconnect forever instead of closing after 10 tries.
    const nc = await connect({ servers: options.servers, name: 'switchyard-event-store', maxReconnectAttempts: -1 });
    try {
      const jsOptions = { timeout: options.apiTimeoutMs ?? 5_000 };
      const jsm = await jetstreamManager(nc, jsOptions);
      await ensureStream(jsm, streamName, `${subjectPrefix}.>`);
      if (options.onConnection) void watchConnection(nc, options.onConnection);
      return new NatsEventStore(nc, jsm, jetstream(nc, jsOptions), streamName, subjectPrefix, options.cacheSize ?? 10_000);
    } catch (error) {
      await nc.close();
      throw error;
    }
  }

  /** Deletes the JetStream stream and everything in it (tests). */
  async deleteStream(): Promise<void> {
    await this.jsm.streams.delete(this.streamName);
  }

  subjectFor(stream: string): string {
    if (!StreamName.safeParse(stream).success) throw new Error(`invalid stream name ${JSON.stringify(stream)}`);
    return `${this.subjectPrefix}.${encodeStreamToken(stream)}`;
  }

  private streamOf(subject: string): string {
    return decodeStreamToken(subject.slice(this.subjectPrefix.length + 1));
  }

  // ----- append -------------------------------------------------------------------------------

  async append(stream: string, events: readonly NewEvent[], options: AppendOptions): Promise<AppendResult> {
    const subject = this.subjectFor(stream);
    if (events.length === 0) throw new Error('append needs at least one event');
    const parsed = events.map((e) => NewEvent.parse(e));
    const prepared = parsed.map((e) => ({ id: e.id ?? randomUUID(), type: e.type, schema_version: e.schema_version, data: e.data }));
    const commitId = options.commitId ?? prepared[0]!.id;
    const expected = options.expectedVersion;
    const occurredAt = new Date().toISOString();

    let known = this.cache.get(stream);
    for (let attempt = 1; ; attempt++) {
      const plan = await this.planAppend(stream, expected, known);
      // Commit ids are unique: if the stream already ends with this commit, this is a retry (maybe
      // from after the server's duplicate window), whatever the expectation says.
      if (plan.head?.commitId === commitId) return { version: plan.head.version, position: plan.head.lastSeq };
      const body: CommitBody = {
        format: 1,
        first_version: plan.baseVersion + 1,
        tenant_id: options.tenantId,
        occurred_at: occurredAt,
        causation_id: options.causationId ?? null,
        correlation_id: options.correlationId ?? null,
        events: prepared,
      };
      const ack = await this.publishCommit(subject, stream, commitId, body, plan.expectedLastSeq);
      if (ack === 'conflict') {
        // Someone else's commit got there first (or our cache was stale): learn the real head.
        known = await this.lookupHead(stream);
        if (known.commitId === commitId) return { version: known.version, position: known.lastSeq };
        const retry = expected === 'any' ? attempt < MAX_ANY_ATTEMPTS : known.version === expected && attempt === 1;
        if (!retry) throw new WrongExpectedVersionError(stream, expected, known.version);
        if (expected === 'any') await jitter(attempt);
        continue;
      }
      if (ack.duplicate) return this.resultOfDuplicate(stream, ack.seq);
      const version = plan.baseVersion + prepared.length;
      this.cache.remember(stream, { version, lastSeq: ack.seq, commitId });
      return { version, position: ack.seq };
    }
  }

  /**
   * Decides which subject sequence the server must see. For a numeric expectation that we already
   * know is wrong, we still publish with an expectation that cannot hold (0 = "no message on the
   * subject", false once the stream has a commit): the server checks `Nats-Msg-Id` first, so a
   * retried commit is answered as a duplicate and anything else is refused.
   */
  private async planAppend(stream: string, expected: ExpectedVersion, known: StreamHead | undefined): Promise<AppendPlan> {
    if (expected === 'any') {
      // Still serialised through the expectation header: event versions are stored in the message
      // and must stay dense, so two unchecked appends must not both claim the same version.
      const head = known ?? (await this.lookupHead(stream));
      return { baseVersion: head.version, expectedLastSeq: head.lastSeq, head };
    }
    if (expected === 0) return { baseVersion: 0, expectedLastSeq: 0 };
    const head = known?.version === expected ? known : await this.lookupHead(stream);
    if (head.version === expected) return { baseVersion: expected, expectedLastSeq: head.lastSeq, head };
    // A stream shorter than expected cannot contain this commit already: no need to ask the server.
    if (head.version < expected) throw new WrongExpectedVersionError(stream, expected, head.version);
    return { baseVersion: expected, expectedLastSeq: 0, head };
  }

  private async publishCommit(subject: string, stream: string, commitId: string, body: CommitBody, expectedLastSeq: number): Promise<PubAck | 'conflict'> {
    const payload = new TextEncoder().encode(JSON.stringify(body));
    const maxPayload = this.nc.info?.max_payload;
    if (maxPayload !== undefined && payload.length > maxPayload) {
      throw new Error(`commit of ${body.events.length} events is ${payload.length} bytes, over the NATS max_payload of ${maxPayload}`);
    }
    const lastVersion = body.first_version + body.events.length - 1;
    const hdrs = headers();
    hdrs.set(Hdr.tenant, body.tenant_id);
    hdrs.set(Hdr.firstVersion, String(body.first_version));
    hdrs.set(Hdr.version, String(lastVersion));
    hdrs.set(Hdr.commitId, commitId);
    try {
      return await this.js.publish(subject, payload, {
        headers: hdrs,
        // Scoped to the event-store stream: the same commit id (e.g. a request id) used for two
        // streams is two commits, not a duplicate.
        msgID: `${encodeStreamToken(stream)}/${commitId}`,
        expect: { lastSubjectSequence: expectedLastSeq },
      });
    } catch (error) {
      if (isConflict(error)) return 'conflict';
      throw error;
    }
  }

  /** The server dropped a retried commit: answer what the original append answered. */
  private async resultOfDuplicate(stream: string, seq: number): Promise<AppendResult> {
    const original = await this.jsm.streams.getMessage(this.streamName, { seq });
    if (!original || this.streamOf(original.subject) !== stream) {
      throw new Error(`JetStream reported commit ${seq} as the original of a retried commit on ${stream}, but it is not there`);
    }
    return { version: headOf(seq, original.header).version, position: seq };
  }

  /** Reads the last message of the stream's subject (consistent: served by the stream leader). */
  private async lookupHead(stream: string): Promise<StreamHead> {
    const last = await this.jsm.streams.getMessage(this.streamName, { last_by_subj: this.subjectFor(stream) });
    const head = last ? headOf(last.seq, last.header) : NO_STREAM;
    this.cache.remember(stream, head);
    return head;
  }

  // ----- reads --------------------------------------------------------------------------------

  async readStream(stream: string, afterVersion = 0): Promise<StoredEvent[]> {
    const subject = this.subjectFor(stream);
    const messages = await this.readMessages({ startSeq: 1, filter: subject, max: Infinity });
    const last = messages.at(-1);
    this.cache.remember(stream, last ? headOf(last.seq, last.headers) : NO_STREAM);
    return messages.flatMap((m) => this.toCommit(m).events).filter((e) => e.version > afterVersion);
  }

  async readAll(options: ReadAllOptions): Promise<Commit[]> {
    const max = options.limit ?? Infinity;
    if (max <= 0) return [];
    const messages = await this.readMessages({ startSeq: Math.max(options.after, 0) + 1, max });
    return messages.map((m) => this.toCommit(m));
  }

  async headPosition(): Promise<number> {
    const info = await this.jsm.streams.info(this.streamName);
    return info.state.last_seq;
  }

  /**
   * Reads messages from `startSeq` on with a throwaway consumer. The consumer's `num_pending` at
   * creation fixes the end of the read, so a read never waits for commits that do not exist yet.
   */
  private async readMessages(range: { startSeq: number; filter?: string; max: number }): Promise<JsMsg[]> {
    const info = await this.jsm.consumers.add(this.streamName, {
      ack_policy: AckPolicy.None,
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: range.startSeq,
      ...(range.filter ? { filter_subject: range.filter } : {}),
      mem_storage: true,
      num_replicas: 1,
      // Safety net only: we delete it as soon as the read is over.
      inactive_threshold: nanos(60_000),
    });
    try {
      return await this.fetchAll(info, Math.min(info.num_pending, range.max));
    } finally {
      this.deleteInBackground(info.name);
    }
  }

  private async fetchAll(info: ConsumerInfo, wanted: number): Promise<JsMsg[]> {
    const consumer = this.js.consumers.getConsumerFromInfo(info);
    const out: JsMsg[] = [];
    while (out.length < wanted) {
      const batch = await consumer.fetch({ max_messages: Math.min(wanted - out.length, READ_BATCH), expires: READ_EXPIRES_MS });
      const before = out.length;
      for await (const m of batch) out.push(m);
      if (out.length === before) throw new Error(`JetStream read stalled after ${out.length} of ${wanted} messages`);
    }
    return out;
  }

  private deleteInBackground(consumerName: string): void {
    const cleanup = this.jsm.consumers
      .delete(this.streamName, consumerName)
      .catch(() => undefined) // inactive_threshold removes it anyway
      .finally(() => this.cleanups.delete(cleanup));
    this.cleanups.add(cleanup);
  }

  private toCommit(msg: RawMessage): Commit {
    let body: CommitBody;
    try {
      body = CommitBody.parse(JSON.parse(new TextDecoder().decode(msg.data)));
    } catch (error) {
      throw new Error(`message ${msg.seq} on ${msg.subject} is not a Switchyard commit`, { cause: error });
    }
    const stream = this.streamOf(msg.subject);
    return {
      position: msg.seq,
      stream,
      events: body.events.map((e, i) => ({
        id: e.id,
        type: e.type,
        stream,
        version: body.first_version + i,
        position: msg.seq,
        tenant_id: body.tenant_id,
        occurred_at: body.occurred_at,
        schema_version: e.schema_version,
        causation_id: body.causation_id,
        correlation_id: body.correlation_id,
        data: e.data,
      })),
    };
  }

  // ----- subscriptions ------------------------------------------------------------------------

  subscribe(options: SubscribeOptions): NatsSubscription {
    if (this.closing) throw new Error('event store is closed');
    const { durableName, after } = options;
    const open = durableName ? () => this.openDurableFeed(durableName, after) : () => this.openOrderedFeed(after);
    const subscription = new NatsSubscription(options, open, (m) => this.toCommit(m), () => this.subscriptions.delete(subscription));
    this.subscriptions.add(subscription);
    return subscription;
  }

  /** One subscriber: an ordered consumer (client-side, ephemeral, re-created on gaps). */
  private async openOrderedFeed(after: number): Promise<CommitFeed> {
    const consumer = await this.js.consumers.get(this.streamName, { opt_start_seq: after + 1 });
    const messages = await consumer.consume({ max_messages: 64 }); // bounds client-side buffering
    return {
      messages,
      settle: () => undefined, // ordered consumers do not take acks
      keepAlive: () => () => undefined,
      dispose: async () => {
        await messages.close();
        await consumer.delete().catch(() => undefined); // inactive_threshold removes it anyway
      },
    };
  }

  /**
   * Shared subscribers: a durable pull consumer with max_ack_pending 1, so the server hands each
   * commit to one process at a time and the next one only after the ack (= after the handler).
   */
  private async openDurableFeed(durableName: string, after: number): Promise<CommitFeed> {
    const info = await this.ensureDurableConsumer(durableConsumerName(durableName), after);
    const messages = await this.js.consumers.getConsumerFromInfo(info).consume({ max_messages: 1 });
    return {
      messages,
      settle: (m, handled) => (handled ? m.ack() : m.nak()),
      keepAlive: (m) => {
        const timer = setInterval(() => m.working(), DURABLE_PROGRESS_MS);
        return () => clearInterval(timer);
      },
      dispose: async () => {
        await messages.close();
        if (!this.nc.isClosed()) await this.nc.flush().catch(() => undefined); // push the last ack out
      },
    };
  }

  private async ensureDurableConsumer(name: string, after: number): Promise<ConsumerInfo> {
    const existing = await this.jsm.consumers.info(this.streamName, name).catch((error: unknown) => {
      if (error instanceof JetStreamApiError && error.code === JetStreamApiCodes.ConsumerNotFound) return null;
      throw error;
    });
    // Reuse it unless it is ahead of the caller's checkpoint (the projection was rebuilt) or far
    // behind it (the projector caught up by reading the log in batches): a durable consumer hands
    // out one commit per round trip, so replaying a long stretch through it would be slow.
    if (existing && durableFloor(existing) <= after && after - durableFloor(existing) <= DURABLE_MAX_REDELIVERY) return existing;
    if (existing) await this.jsm.consumers.delete(this.streamName, name).catch(() => undefined);
    try {
      return await this.jsm.consumers.add(this.streamName, {
        durable_name: name,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.StartSequence,
        opt_start_seq: after + 1,
        max_ack_pending: 1,
        ack_wait: nanos(DURABLE_ACK_WAIT_MS),
        max_deliver: -1,
      });
    } catch (error) {
      // Another process created it concurrently with a different start: use theirs.
      const theirs = await this.jsm.consumers.info(this.streamName, name).catch(() => null);
      if (theirs) return theirs;
      throw error;
    }
  }

  /** Bytes the server holds for the log's stream (growth reports, bench/growth.ts). */
  async streamBytes(): Promise<number> {
    return (await this.jsm.streams.info(this.streamName)).state.bytes;
  }

  // ----- archival -----------------------------------------------------------------------------

  /**
   * JetStream purge of one subject below a sequence (`filter` + `seq`: messages before `seq` go).
   * The cut never passes the subject's last message, so its head (version, sequence) stays.
   * Streams created before archival existed carry deny_purge, which JetStream cannot lift.
   */
  async removeCommitsBefore(cuts: ReadonlyMap<string, number>): Promise<number> {
    const info = await this.jsm.streams.info(this.streamName);
    if (info.config.deny_purge) {
      throw new ArchivalNotSupportedError(
        `JetStream stream ${this.streamName} was created with deny_purge, which cannot be lifted: usage events cannot be archived out of it (docs/decisions/0090)`,
      );
    }
    let removed = 0;
    for (const [stream, before] of cuts) {
      const head = await this.lookupHead(stream);
      const upTo = Math.min(before, head.lastSeq);
      if (upTo <= 1) continue;
      const result = await this.jsm.streams.purge(this.streamName, { filter: this.subjectFor(stream), seq: upTo });
      removed += result.purged;
    }
    return removed;
  }

  // ----- lifecycle ----------------------------------------------------------------------------

  async ping(): Promise<void> {
    await this.jsm.streams.info(this.streamName);
  }

  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    await Promise.all([...this.subscriptions].map((s) => s.close()));
    await Promise.all([...this.cleanups]);
    if (!this.nc.isClosed()) await this.nc.drain();
  }
}

/** The sequence up to which a durable consumer will not deliver again. A fresh consumer reports
 * ack_floor 0 but delivered = opt_start_seq - 1, hence the second case. */
function durableFloor(info: ConsumerInfo): number {
  return info.num_ack_pending > 0 ? info.ack_floor.stream_seq : Math.max(info.ack_floor.stream_seq, info.delivered.stream_seq);
}

async function ensureStream(jsm: JetStreamManager, name: string, subject: string): Promise<void> {
  const info = await jsm.streams.info(name).catch(async (error: unknown) => {
    if (!(error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamNotFound)) throw error;
    return jsm.streams
      .add({
        name,
        subjects: [subject],
        storage: StorageType.File,
        retention: RetentionPolicy.Limits,
        discard: DiscardPolicy.New,
        // The log is the source of truth: no message may disappear one by one. Purging stays
        // allowed for one use: archival moves old usage events to files first (docs/decisions/0090).
        deny_delete: true,
        deny_purge: false,
        duplicate_window: nanos(2 * 60_000),
      })
      .catch(async (addError: unknown) => {
        // Lost a creation race? Then the winner's stream is there; otherwise report our failure.
        return jsm.streams.info(name).catch(() => Promise.reject(addError));
      });
  });
  const subjects = info.config.subjects ?? [];
  if (subjects.length !== 1 || subjects[0] !== subject) {
    throw new ConfigError(`JetStream stream ${name} captures ${JSON.stringify(subjects)}, expected exactly ["${subject}"]`);
  }
}

// ---------------------------------------------------------------------------------------------
// Subscription
// ---------------------------------------------------------------------------------------------

/** A consumer's message iterator plus how to acknowledge on it. */
interface CommitFeed {
  messages: ConsumerMessages;
  /** After the handler: ack when it succeeded; otherwise hand the commit back. */
  settle(msg: JsMsg, handled: boolean): void;
  /** Keeps the server from redelivering while a slow handler runs; returns the stop function. */
  keepAlive(msg: JsMsg): () => void;
  dispose(): Promise<void>;
}

export class NatsSubscription implements Subscription {
  /** Resolves once the consumer exists (or the subscription gave up): tests wait for it. */
  readonly ready: Promise<void>;
  private feed: CommitFeed | undefined;
  private closing = false;
  private failed = false;
  private readonly finished: Promise<void>;

  constructor(
    private readonly options: SubscribeOptions,
    openFeed: () => Promise<CommitFeed>,
    private readonly toCommit: (msg: JsMsg) => Commit,
    onFinished: () => void,
  ) {
    let markReady: () => void = () => undefined;
    this.ready = new Promise((resolve) => (markReady = resolve));
    this.finished = this.run(openFeed, markReady).finally(onFinished);
  }

  async close(): Promise<void> {
    this.closing = true;
    // Ends the iterator; a handler in flight finishes first, then run() returns.
    this.feed?.messages.stop();
    await this.finished;
  }

  private async run(openFeed: () => Promise<CommitFeed>, markReady: () => void): Promise<void> {
    try {
      this.feed = await openFeed();
    } catch (error) {
      this.fail(error);
      return;
    } finally {
      markReady();
    }
    try {
      // close() came while the consumer was being opened: stop it here. Its stop takes effect
      // through the iterator (so does its close()), hence the iteration below all the same.
      if (this.closing) this.feed.messages.stop();
      await this.deliverAll(this.feed);
      if (!this.closing) this.fail(new Error('JetStream consumer stopped delivering'));
    } catch (error) {
      this.fail(error);
    } finally {
      await this.feed.dispose();
    }
  }

  private async deliverAll(feed: CommitFeed): Promise<void> {
    for await (const msg of feed.messages) {
      if (this.closing) {
        feed.settle(msg, false); // buffered but not handled: let another instance have it now
        return;
      }
      // A durable consumer can be behind the caller's checkpoint: those commits are done already.
      if (msg.seq <= this.options.after) {
        feed.settle(msg, true);
        continue;
      }
      if (!(await this.deliver(feed, msg))) return;
    }
  }

  private async deliver(feed: CommitFeed, msg: JsMsg): Promise<boolean> {
    const stopKeepAlive = feed.keepAlive(msg);
    try {
      await this.options.onCommit(commitFor(this.options, this.toCommit(msg)));
    } catch (error) {
      feed.settle(msg, false);
      this.fail(error);
      return false;
    } finally {
      stopKeepAlive();
    }
    feed.settle(msg, true);
    return true;
  }

  /** Reports the first failure only, and never one caused by our own close(). */
  private fail(error: unknown): void {
    if (this.failed || this.closing) return;
    this.failed = true;
    this.options.onError?.(error);
  }
}
