/** Runs a command through its decider and reports what it appended. The API's one way in. */
import type { Metrics } from '../api/metrics.js';
import type { EventStore, StoredEvent } from '../ports/event-store.js';
import { handleCommand, StateCache, type CommandContext, type CommandResult, type Decider, type DomainEvent, type HandleOptions } from './decider.js';

/** Told of every commit a command appended on this instance (the operational log writes its entries). */
export type AppendedListener = (stored: readonly StoredEvent[]) => void;

export class CommandBus {
  private readonly listeners: AppendedListener[] = [];
  /** States decided on lately: a command to one of those streams skips its read (decision 0310). */
  private readonly states = new StateCache();

  constructor(
    private readonly store: EventStore,
    private readonly metrics: Metrics,
  ) {}

  /** Adds a listener of appended events; a listener that throws never fails the command. */
  onAppended(listener: AppendedListener): void {
    this.listeners.push(listener);
  }

  /** `options.maxRetries: 0`: a claim — a concurrency conflict is thrown, not decided again. */
  async execute<C, S, E extends DomainEvent>(decider: Decider<C, S, E>, id: string, command: C, context: CommandContext, options?: HandleOptions): Promise<CommandResult<S, E>> {
    const result = await handleCommand(this.store, decider, id, command, context, options, this.states);
    if (result.events.length > 0) {
      this.metrics.eventsAppended.inc({ category: decider.category }, result.events.length);
      for (const listener of this.listeners) {
        try {
          listener(result.stored);
        } catch {
          // Logging what happened must never undo or fail what happened.
        }
      }
    }
    return result;
  }
}
