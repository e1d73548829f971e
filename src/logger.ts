/**
 * The process logger (pino). Every line it writes is scrubbed (src/logs/redact.ts: secrets and
 * message text, at any depth and inside strings) before it reaches stdout, and becomes a LogEntry
 * published on the logger's LogHub (`logHubOf`), whose sinks are the day's category files and the
 * searchable index. pino's own `redact` drops the listed fields before they are serialised.
 */
import { destination, pino, type DestinationStream, type Logger } from 'pino';
import { LogHub } from './logs/hub.js';
import { entryOfRecord } from './logs/process-entries.js';
import { pinoRedactPaths, scrubValue } from './logs/redact.js';

export type { Logger };

export const REDACT_PATHS = pinoRedactPaths();

/** Where a root logger keeps its hub; child loggers inherit it (pino children are Object.create(parent)). */
const HUB = Symbol('switchyard.logHub');

/** The hub of a logger (its root's: children share it). A logger made elsewhere gets one on first use. */
export function logHubOf(logger: Logger): LogHub {
  const held = (logger as unknown as Record<symbol, LogHub | undefined>)[HUB];
  if (held) return held;
  const hub = new LogHub();
  Object.defineProperty(logger, HUB, { value: hub });
  return hub;
}

/**
 * The stream pino writes to: each line is parsed once, scrubbed, written on to `out` (as it came
 * when nothing was redacted) and, when the hub has sinks, published as an entry.
 */
function scrubbingStream(out: DestinationStream, hub: LogHub): DestinationStream & { flush?(): void } {
  return {
    write(line: string) {
      let record: Record<string, unknown>;
      try {
        record = JSON.parse(line) as Record<string, unknown>;
      } catch {
        out.write(line);
        return;
      }
      const scrubbed = scrubValue(record) as Record<string, unknown>;
      out.write(scrubbed === record ? line : `${JSON.stringify(scrubbed)}\n`);
      // `log_index: false`: the logs projection indexes this entry itself (it is derived from an event).
      if (hub.size > 0) hub.publish(entryOfRecord(scrubbed), { index: scrubbed.log_index !== false });
    },
    flush() {
      (out as { flush?(): void }).flush?.();
    },
  };
}

/** `stream`: stdout unless given (a worker thread hands its lines to the main thread's logger). */
export function createLogger(level: string, stream?: DestinationStream): Logger {
  const options = { level, redact: { paths: REDACT_PATHS, censor: '[redacted]' }, base: { service: 'switchyard' } };
  const hub = new LogHub();
  const logger = pino(options, scrubbingStream(stream ?? destination(1), hub));
  Object.defineProperty(logger, HUB, { value: hub });
  return logger;
}

/** A one-shot command's logger: lines go to stderr, so that stdout holds only the command's output. */
export function createCommandLogger(level: string): Logger {
  return createLogger(level, destination(2));
}
