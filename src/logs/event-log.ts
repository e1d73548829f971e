/**
 * Entries of the domain events this instance appends, written to stdout and the day's category
 * files as they happen (`user_activity.log`, `security.log`...). The searchable index gets the
 * same entries from the `logs` projection (once, and again on a rebuild), so these lines carry
 * `log_index: false`.
 */
import type { AppendedListener } from '../commands/bus.js';
import type { Logger } from '../logger.js';
import type { LogLevel } from './entry.js';
import { entriesOfEvent, type EntriesOfEventOptions } from './of-events.js';

const PINO_METHOD: Record<LogLevel, 'debug' | 'info' | 'warn' | 'error' | 'fatal'> = { DEBUG: 'debug', INFO: 'info', WARNING: 'warn', ERROR: 'error', CRITICAL: 'fatal' };

export function logAppendedEvents(logger: Logger, options: EntriesOfEventOptions = {}): AppendedListener {
  return (stored) => {
    for (const event of stored) {
      for (const entry of entriesOfEvent(event, options)) {
        const { level, message, details, id: _id, timestamp: _timestamp, instance: _instance, ...fields } = entry;
        logger[PINO_METHOD[level]]({ ...details, ...fields, event_id: event.id, log_index: false }, message);
      }
    }
  };
}
