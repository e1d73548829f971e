/**
 * A record of the process logger (pino's JSON object) as a LogEntry. The entry's named fields
 * come from the record's bound fields (`logger.child({ category: 'security', component: 'auth' })`
 * or the call's own object); everything else goes into `details`.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { LEVEL_OF_PINO, LOG_CATEGORIES, type LogCategory, type LogEntry, type LogLevel } from './entry.js';
import { nullPrototype, ownValue, type NullPrototypeRecord } from '../own.js';
import { scrubString, scrubValue } from './redact.js';

/** pino's numeric levels (its defaults; the project defines no custom ones). */
const PINO_LEVEL_NAMES: Readonly<Record<number, string>> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };

/** Fields of a pino record that are pino's own (not news for the entry). */
const PINO_FIELDS = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'service', 'v', 'log_index']);
const ENTRY_FIELDS = ['category', 'component', 'event', 'user_id', 'tenant_id', 'request_id', 'ip_address', 'session_id'] as const;
const CATEGORIES: ReadonlySet<string> = new Set(LOG_CATEGORIES);

/** This process, as entries name their writer. */
export const PROCESS_INSTANCE = `${hostname()}:${process.pid}`;

export function levelOfPino(level: unknown): LogLevel {
  const name = typeof level === 'number' ? PINO_LEVEL_NAMES[level] : typeof level === 'string' ? level : undefined;
  return (name !== undefined ? ownValue(LEVEL_OF_PINO, name) : undefined) ?? 'INFO';
}

/** Components whose warnings and errors are the application's (API and relay), not the system's. */
export function isApplicationComponent(component: string): boolean {
  return component === 'http' || component === 'api' || component === 'relay' || component.startsWith('provider:');
}

export function defaultCategory(level: LogLevel, component: string): LogCategory {
  return (level === 'WARNING' || level === 'ERROR' || level === 'CRITICAL') && isApplicationComponent(component) ? 'application' : 'system';
}

const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : typeof value === 'number' ? String(value) : undefined);

/**
 * The entry of one pino record, scrubbed (src/logs/redact.ts). `id` and `instance` are given so
 * that tests can fix them.
 */
export function entryOfRecord(record: Readonly<Record<string, unknown>>, options: { id?: string; instance?: string } = {}): LogEntry {
  const level = levelOfPino(record.level);
  const time = typeof record.time === 'number' ? record.time : typeof record.time === 'string' ? Date.parse(record.time) : Date.now();
  const fields: Record<string, string | undefined> = {};
  for (const name of ENTRY_FIELDS) fields[name] = text(record[name]);
  // fastify's request loggers bind `reqId`.
  fields.request_id ??= text(record.reqId);
  const component = fields.component ?? (fields.request_id !== undefined ? 'http' : 'app');
  const category = fields.category !== undefined && CATEGORIES.has(fields.category) ? (fields.category as LogCategory) : defaultCategory(level, component);
  const details: NullPrototypeRecord<unknown> = nullPrototype({});
  for (const [name, value] of Object.entries(record)) {
    if (PINO_FIELDS.has(name) || name === 'reqId' || (ENTRY_FIELDS as readonly string[]).includes(name)) continue;
    details[name] = value;
  }
  const message = typeof record.msg === 'string' ? record.msg : (fields.event ?? '');
  return {
    id: options.id ?? randomUUID(),
    timestamp: new Date(Number.isFinite(time) ? time : Date.now()).toISOString(),
    level,
    category,
    component,
    event: fields.event ?? 'log',
    ...(fields.user_id !== undefined && { user_id: fields.user_id }),
    ...(fields.session_id !== undefined && { session_id: fields.session_id }),
    ...(fields.tenant_id !== undefined && { tenant_id: fields.tenant_id }),
    ...(fields.request_id !== undefined && { request_id: fields.request_id }),
    ...(fields.ip_address !== undefined && { ip_address: fields.ip_address }),
    message: scrubString(message),
    details: scrubValue(details) as Record<string, unknown>,
    instance: options.instance ?? PROCESS_INSTANCE,
  };
}

/** Any entry (a projected one too) with its message and details scrubbed: what every sink receives. */
export function scrubEntry(entry: LogEntry): LogEntry {
  const message = scrubString(entry.message);
  const details = scrubValue(entry.details) as Record<string, unknown>;
  return message === entry.message && details === entry.details ? entry : { ...entry, message, details };
}
