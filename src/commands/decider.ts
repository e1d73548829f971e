/**
 * Deciders and the one generic command handler.
 *
 * An aggregate is a pure decider: `decide(command, state) -> events` says what happens,
 * `evolve(state, event) -> state` folds history into state. The handler does the I/O around it:
 * load the stream, fold, decide, append at the version it read, and on a concurrency conflict
 * start over with the fresh history.
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

export async function handleCommand<C, S, E extends DomainEvent>(
  store: EventStore,
  decider: Decider<C, S, E>,
  id: string,
  command: C,
  context: CommandContext,
  { maxRetries = 5 }: HandleOptions = {},
): Promise<CommandResult<S, E>> {
  const stream = streamName(decider.category, id);
  for (let attempt = 0; ; attempt++) {
    const history = await store.readStream(stream);
    // Tenants never touch each other's aggregates; a foreign id looks exactly like a missing one.
    if (history.length > 0 && history[0]!.tenant_id !== context.tenantId) throw new NotFoundError(`${decider.category} not found`, `${decider.category}_not_found`);
    const state = foldEvents(decider, history);
    const version = history.length === 0 ? 0 : history.at(-1)!.version;
    const events = decider.decide(command, state);
    if (events.length === 0) return { events, state, version, position: null, stored: [] };
    try {
      // Ids chosen here, so the caller knows the stored events (the command bus logs them).
      const withIds = events.map((event) => ({ ...event, id: randomUUID() }));
      const occurredAt = new Date().toISOString();
      const result = await store.append(stream, withIds, {
        expectedVersion: version,
        tenantId: context.tenantId,
        causationId: context.causationId ?? null,
        correlationId: context.correlationId ?? context.causationId ?? null,
      });
      const causationId = context.causationId ?? null;
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
    } catch (error) {
      if (!(error instanceof WrongExpectedVersionError) || attempt >= maxRetries) throw error;
      // Someone else wrote first: back off a little (jittered) and decide again on fresh history.
      await sleep(Math.random() * 5 * (attempt + 1));
    }
  }
}
