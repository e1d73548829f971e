/**
 * Where log entries meet their sinks (the day's category files, the searchable index). The process
 * logger publishes every entry it writes; a projected domain event's entries are published by the
 * instance that appended it with `index: false` (the `logs` projection indexes those, once, and
 * again on a rebuild).
 */
import type { LogEntry } from './entry.js';
import { scrubEntry } from './process-entries.js';

export interface LogSinkMeta {
  /** False when the `logs` projection indexes this entry itself (entries derived from events). */
  index: boolean;
}

export type LogSink = (entry: LogEntry, meta: LogSinkMeta) => void;

export class LogHub {
  private readonly sinks = new Set<LogSink>();

  /** Adds a sink; returns the function that removes it. */
  subscribe(sink: LogSink): () => void {
    this.sinks.add(sink);
    return () => this.sinks.delete(sink);
  }

  /**
   * Hands the entry, scrubbed (src/logs/redact.ts), to every sink. A sink that throws never stops
   * the others or the caller.
   */
  publish(entry: LogEntry, meta: LogSinkMeta = { index: true }): void {
    if (this.sinks.size === 0) return;
    const scrubbed = scrubEntry(entry);
    for (const sink of this.sinks) {
      try {
        sink(scrubbed, meta);
      } catch {
        // A broken sink must not break logging; sinks report their own failures.
      }
    }
  }

  get size(): number {
    return this.sinks.size;
  }
}
