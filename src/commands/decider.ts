/**
 * Deciders and the one generic command handler.
 *
 * An aggregate is a pure decider: `decide(command, state) -> events` says what happens,
 * `evolve(state, event) -> state` folds history into state. The handler does the I/O around it:
 * load the stream, fold, decide, append at the version it read, and on a concurrency conflict
 * start over with the fresh history. With a `StateCache` (the command bus has one) a stream decided
 * on lately is not read again unless the append says it moved on.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { z } from 'zod';
import { NotFoundError, WrongExpectedVersionError } from '../errors.js';
import type { EventStore, StoredEvent } from '../ports/event-store.js';

/** A domain event as deciders see it: a type and its data. */
export interface DomainEvent {
  type: string;
  data: Record<string, unknown>;
}

export interface Decider<Command, State, Event extends DomainEvent> {
  /** Stream category: the part of the stream name before the first dash. */
  category: string;
  initialState: State;
  decide(command: Command, state: State): Event[];
  evolve(state: State, event: Event): State;
  /** Schema of this aggregate's events (a discriminated union on `type`); validates history. */
  events: z.ZodType<Event>;
}

export interface CommandContext {
  tenantId: string;
  /** What caused the command: usually the HTTP request id. */
  causationId?: string | null;
  correlationId?: string | null;
}

export interface CommandResult<State, Event> {
  events: Event[];
  state: State;
  /** Stream version after the command (unchanged when it decided nothing). */
  version: number;
  /** Log position of the commit, or null when nothing was appended. */
  position: number | null;
  /** The appended events as the log holds them (empty when nothing was appended). */
  stored: StoredEvent[];
}

export function streamName(category: string, id: string): string {
  return `${category}-${id}`;
}

export function foldEvents<C, S, E extends DomainEvent>(decider: Decider<C, S, E>, history: readonly StoredEvent[]): S {
  let state = decider.initialState;
  for (const stored of history) state = decider.evolve(state, decider.events.parse({ type: stored.type, data: stored.data }));
  return state;
}

export interface HandleOptions {
  /** Attempts after a concurrency conflict before giving up (the conflict is then thrown). */
  maxRetries?: number;
}

interface CachedState {
  state: unknown;
  version: number;
  tenantId: string;
}

/**
 * The states this process last decided on, by stream (the most recent `capacity`), so that a
 * command to a stream seen lately skips reading it. A cached state is only trusted through the
 * append: decided events are appended at the cached version, which the store refuses if the
 * stream moved on (another instance, another process); a decision of nothing, or a refusal, is
 * taken again on the stream as read. Decision 0310.
 */
export class StateCache {
  private readonly entries = new Map<string, CachedState>();

  constructor(private readonly capacity = 2_000) {}

  get(stream: string): CachedState | undefined {
    const entry = this.entries.get(stream);
    if (entry) {
      // Most recently used last: the first key is the one to drop.
      this.entries.delete(stream);
      this.entries.set(stream, entry);
    }
    return entry;
  }

  set(stream: string, entry: CachedState): void {
    this.entries.delete(stream);
    this.entries.set(stream, entry);
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!);
  }

  forget(stream: string): void {
    this.entries.delete(stream);
  }
}

async function appendDecided<S, E extends DomainEvent>(
  store: EventStore,
  decider: Decider<unknown, S, E>,
  stream: string,
  events: E[],
  state: S,
  version: number,
  context: CommandContext,
): Promise<CommandResult<S, E>> {
  // Ids chosen here, so the caller knows the stored events (the command bus logs them).
  const withIds = events.map((event) => ({ ...event, id: randomUUID() }));
  const occurredAt = new Date().toISOString();
  const causationId = context.causationId ?? null;
  const result = await store.append(stream, withIds, {
    expectedVersion: version,
    tenantId: context.tenantId,
    causationId,
    correlationId: context.correlationId ?? causationId,
  });
  const stored = withIds.map(
    (event, i): StoredEvent => ({
      id: event.id,
      type: event.type,
      stream,
      version: result.version - withIds.length + 1 + i,
      position: result.position,
      tenant_id: context.tenantId,
      occurred_at: occurredAt,
      schema_version: 1,
      causation_id: causationId,
      correlation_id: context.correlationId ?? causationId,
      data: event.data,
    }),
  );
  return { events, state: events.reduce(decider.evolve, state), version: result.version, position: result.position, stored };
}

/** A decision on the cached state, when there is one that decides something; null: read the stream. */
async function decideOnCached<C, S, E extends DomainEvent>(
  store: EventStore,
  decider: Decider<C, S, E>,
  stream: string,
  command: C,
  context: CommandContext,
  cache: StateCache,
): Promise<CommandResult<S, E> | null> {
  const cached = cache.get(stream);
  if (!cached || cached.tenantId !== context.tenantId) return null;
  let events: E[];
  try {
    events = decider.decide(command, cached.state as S);
  } catch {
    return null; // perhaps only because the state is old: decided again on the stream
  }
  if (events.length === 0) return null;
  try {
    const result = await appendDecided(store, decider as Decider<unknown, S, E>, stream, events, cached.state as S, cached.version, context);
    cache.set(stream, { state: result.state, version: result.version, tenantId: context.tenantId });
    return result;
  } catch (error) {
    cache.forget(stream);
    if (error instanceof WrongExpectedVersionError) return null; // the stream moved on: not a conflict of this command's
    throw error;
  }
}

export async function handleCommand<C, S, E extends DomainEvent>(
  store: EventStore,
  decider: Decider<C, S, E>,
  id: string,
  command: C,
  context: CommandContext,
  { maxRetries = 5 }: HandleOptions = {},
  cache?: StateCache,
): Promise<CommandResult<S, E>> {
  const stream = streamName(decider.category, id);
  if (cache) {
    const decided = await decideOnCached(store, decider, stream, command, context, cache);
    if (decided) return decided;
  }
  for (let attempt = 0; ; attempt++) {
    const history = await store.readStream(stream);
    // Tenants never touch each other's aggregates; a foreign id looks exactly like a missing one.
    if (history.length > 0 && history[0]!.tenant_id !== context.tenantId) throw new NotFoundError(`${decider.category} not found`, `${decider.category}_not_found`);
    const state = foldEvents(decider, history);
    const version = history.length === 0 ? 0 : history.at(-1)!.version;
    if (version > 0) cache?.set(stream, { state, version, tenantId: context.tenantId });
    const events = decider.decide(command, state);
    if (events.length === 0) return { events, state, version, position: null, stored: [] };
    try {
      const result = await appendDecided(store, decider as Decider<unknown, S, E>, stream, events, state, version, context);
      cache?.set(stream, { state: result.state, version: result.version, tenantId: context.tenantId });
      return result;
    } catch (error) {
      cache?.forget(stream);
      if (!(error instanceof WrongExpectedVersionError) || attempt >= maxRetries) throw error;
      // Someone else wrote first: back off a little (jittered) and decide again on fresh history.
      await sleep(Math.random() * 5 * (attempt + 1));
    }
  }
}
