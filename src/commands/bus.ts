/** Runs a command through its decider and reports what it appended. The API's one way in. */
import type { Metrics } from '../api/metrics.js';
import type { EventStore } from '../ports/event-store.js';
import { handleCommand, type CommandContext, type CommandResult, type Decider, type DomainEvent, type HandleOptions } from './decider.js';

export class CommandBus {
  constructor(
    private readonly store: EventStore,
    private readonly metrics: Metrics,
  ) {}

  /** `options.maxRetries: 0`: a claim — a concurrency conflict is thrown, not decided again. */
  async execute<C, S, E extends DomainEvent>(decider: Decider<C, S, E>, id: string, command: C, context: CommandContext, options?: HandleOptions): Promise<CommandResult<S, E>> {
    const result = await handleCommand(this.store, decider, id, command, context, options);
    if (result.events.length > 0) this.metrics.eventsAppended.inc({ category: decider.category }, result.events.length);
    return result;
  }
}
