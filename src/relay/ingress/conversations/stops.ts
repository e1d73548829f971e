/**
 * Stopping a conversation's running generation from anywhere (`POST /v1/conversations/{id}/stop`,
 * e.g. from another device whose request lands on another instance). Decision 0130 has the
 * measurements behind the design:
 *
 * - This instance's generations are in a map: a stop that lands here ends them at once.
 * - Across instances, through the counters port (Redis in the distributed mode): a running
 *   generation counts itself in `convgen:<id>` (so any instance can tell whether one runs) and
 *   polls `convstop:<id>` every CONVERSATION_STOP_POLL; a stop adds one to `convstop:<id>`, and a
 *   generation that sees it grow past the value it started with stops. One small GET per running
 *   generation per interval, nothing at all while nothing runs. The embedded mode (memory
 *   counters, one process) needs no polling: the map is the whole story.
 */
import type { Logger } from '../../../logger.js';
import type { Counters } from '../../../ports/counters.js';

const runningKey = (conversationId: string) => `convgen:${conversationId}`;
const stopKey = (conversationId: string) => `convstop:${conversationId}`;

/** A generation's count in `convgen:` expires after this (a crashed instance's generation stops counting). */
const RUNNING_TTL_MS = 15 * 60_000;
const STOP_TTL_MS = 15 * 60_000;

export interface RunningGeneration {
  /** The generation ended (stored): it no longer counts, and no longer polls. */
  end(): void;
}

export class GenerationStops {
  private readonly local = new Map<string, Set<() => void>>();
  /** Other instances exist only with shared counters: memory counters mean one process. */
  private readonly shared: boolean;

  constructor(
    private readonly counters: Counters,
    private readonly pollMs: number,
    private readonly logger: Logger,
  ) {
    this.shared = counters.kind !== 'memory';
  }

  /**
   * Registers a generation of `conversationId`; `stop` is called (once) when a stop for it lands
   * on any instance. Nothing is awaited: the counters calls run beside the reply.
   */
  begin(conversationId: string, stop: () => void): RunningGeneration {
    let ended = false;
    let timer: NodeJS.Timeout | null = null;
    const fire = () => {
      if (ended) return;
      finish();
      stop();
    };
    let counted: Promise<unknown> = Promise.resolve();
    const finish = () => {
      if (ended) return;
      ended = true;
      if (timer !== null) clearTimeout(timer);
      const listeners = this.local.get(conversationId);
      listeners?.delete(fire);
      if (listeners?.size === 0) this.local.delete(conversationId);
      if (this.shared) void counted.then(() => this.counters.adjust(runningKey(conversationId), -1, RUNNING_TTL_MS)).catch((error: unknown) => this.warn(error));
    };

    let listeners = this.local.get(conversationId);
    if (listeners === undefined) this.local.set(conversationId, (listeners = new Set()));
    listeners.add(fire);

    if (this.shared) {
      counted = this.counters.adjust(runningKey(conversationId), 1, RUNNING_TTL_MS).catch((error: unknown) => this.warn(error));
      void this.counters
        .get(stopKey(conversationId))
        .then((baseline) => {
          const poll = () => {
            timer = null;
            if (ended) return;
            this.counters
              .get(stopKey(conversationId))
              .then((value) => (value > baseline ? fire() : undefined))
              .catch((error: unknown) => this.warn(error))
              .finally(() => {
                if (!ended) timer = setTimeout(poll, this.pollMs);
              });
          };
          if (!ended) timer = setTimeout(poll, this.pollMs);
        })
        .catch((error: unknown) => this.warn(error));
    }
    return { end: finish };
  }

  /** Stops the conversation's generations wherever they run; true when one was running. */
  async stop(conversationId: string): Promise<boolean> {
    const listeners = [...(this.local.get(conversationId) ?? [])];
    for (const fire of listeners) fire();
    if (!this.shared) return listeners.length > 0;
    const elsewhere = await this.counters.get(runningKey(conversationId));
    // The count may still include the generations just stopped here: any count is worth a signal.
    if (elsewhere > 0) await this.counters.adjust(stopKey(conversationId), 1, STOP_TTL_MS);
    return listeners.length > 0 || elsewhere > 0;
  }

  /** Whether a generation of the conversation runs on this instance. */
  runningHere(conversationId: string): boolean {
    return this.local.has(conversationId);
  }

  private warn(error: unknown): void {
    this.logger.warn({ err: error }, 'conversation stop signal: counters call failed');
  }
}
