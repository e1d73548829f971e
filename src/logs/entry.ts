/**
 * The one shape of an operational log entry (issue 19), wherever it goes: stdout, the day's
 * category file under LOG_DIR, the searchable index behind /api/admin/logs, exports.
 *
 * Entries come from two places: the process (startup, dependencies, errors, slow requests,
 * security refusals: written through the pino logger, src/logger.ts) and the event log (user
 * activity, role changes, usage errors, alerts: the `logs` projection). Both reach the index
 * through a LogIndexWriter.
 */
import { z } from 'zod';

export const LOG_LEVELS = ['DEBUG', 'INFO', 'WARNING', 'ERROR', 'CRITICAL'] as const;
export const LogLevel = z.enum(LOG_LEVELS);
export type LogLevel = z.infer<typeof LogLevel>;

/** Severity rank: `level` filters mean "this level and above". */
export function levelRank(level: LogLevel): number {
  return LOG_LEVELS.indexOf(level);
}

/** pino's level labels in the entry's words (trace counts as DEBUG, fatal as CRITICAL). */
export const LEVEL_OF_PINO: Readonly<Record<string, LogLevel>> = {
  trace: 'DEBUG',
  debug: 'DEBUG',
  info: 'INFO',
  warn: 'WARNING',
  error: 'ERROR',
  fatal: 'CRITICAL',
};

export const LOG_CATEGORIES = ['system', 'application', 'user_activity', 'security', 'performance'] as const;
export const LogCategory = z.enum(LOG_CATEGORIES);
export type LogCategory = z.infer<typeof LogCategory>;

export const LogEntry = z.object({
  /** Unique: process entries get a fresh one, projected entries one derived from their event (idempotent rebuilds). */
  id: z.string(),
  /** ISO 8601 with milliseconds, UTC. */
  timestamp: z.string(),
  level: LogLevel,
  category: LogCategory,
  /** What produced it: `database`, `cache`, `bus`, `projections`, `http`, `relay`, `provider:<kind>`, `auth`, `jobs`, `resources`, ... */
  component: z.string(),
  /** A stable machine name of what happened: `startup`, `login_failed`, `key_created`, `slow_request`, ... */
  event: z.string(),
  user_id: z.string().optional(),
  session_id: z.string().optional(),
  /** Absent for installation-wide (system) entries, which only operators see. */
  tenant_id: z.string().optional(),
  request_id: z.string().optional(),
  ip_address: z.string().optional(),
  message: z.string(),
  details: z.record(z.string(), z.unknown()),
  /** The instance that wrote it (process entries) or `projection` (entries derived from events). */
  instance: z.string().optional(),
});
export type LogEntry = z.infer<typeof LogEntry>;

/** The plain-text line form: `[<timestamp>] <LEVEL>: <message>`. */
export function textLineOf(entry: Pick<LogEntry, 'timestamp' | 'level' | 'message'>): string {
  return `[${entry.timestamp}] ${entry.level}: ${entry.message}`;
}

/** Where entries become searchable from every instance (the SQL read-model database). */
export interface LogIndexWriter {
  /** Stores the entries; an entry whose id is already stored is ignored (at-least-once writers). */
  append(entries: readonly LogEntry[]): Promise<void>;
}
