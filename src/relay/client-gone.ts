/**
 * "The client went away", in the form UpstreamPools.request accepts as a signal (an AbortEmitter:
 * `aborted`, `reason`, and 'abort' listeners added with `once` and removed with `off`). An
 * AbortController is an EventTarget, and creating one per request was a visible share of the
 * relay's CPU time; a Node EventEmitter (its listener table, a bound wrapper per `once`) also
 * showed, for what is at most two listeners that fire at most once.
 */
export class ClientGone {
  aborted = false;
  reason: Error | undefined;
  private listeners: Array<() => void> | null = null;

  abort(reason: Error): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const listeners = this.listeners;
    this.listeners = null;
    if (listeners !== null) for (const listener of listeners) listener();
  }

  /** Listeners are called once, on abort, in the order they were added. */
  once(_event: 'abort', listener: () => void): this {
    if (!this.aborted) (this.listeners ??= []).push(listener);
    return this;
  }

  off(_event: 'abort', listener: () => void): this {
    const listeners = this.listeners;
    if (listeners === null) return this;
    const i = listeners.indexOf(listener);
    if (i !== -1) listeners.splice(i, 1);
    return this;
  }

  listenerCount(_event: 'abort'): number {
    return this.listeners?.length ?? 0;
  }
}

/** Waits `ms`, or less if the client goes away meanwhile. */
export function backoff(ms: number, gone: ClientGone): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      gone.off('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    gone.once('abort', done);
  });
}
