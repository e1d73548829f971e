/**
 * Where log files go and what happens to them as days pass: pure functions, no I/O.
 *
 *   LOG_DIR/<YYYY-MM-DD>/<name>.log                    the live file of a day (JSON lines)
 *   LOG_DIR/<YYYY-MM-DD>/<name>.<n>.log.gz             the n-th rotation of that day (1 = oldest)
 *   LOG_DIR/archive/<YYYY-MM>/<YYYY-MM-DD>/<name>[.<n>].log.gz
 *                                                      a past day, compressed and moved
 *
 * `<name>` is the entry's category, or `debug` for DEBUG entries of any category (their own,
 * shorter retention). Days are UTC days of the entries' timestamps.
 */
import { LOG_CATEGORIES, type LogCategory, type LogEntry } from '../entry.js';

export const LOG_FILE_NAMES = [...LOG_CATEGORIES, 'debug'] as const;
export type LogFileName = LogCategory | 'debug';

export type RetentionDays = Readonly<Record<LogFileName, number>>;

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const MONTH = /^\d{4}-\d{2}$/;
const FILE = new RegExp(`^(${LOG_FILE_NAMES.join('|')})(?:\\.(\\d+))?\\.log(\\.gz)?$`);
const MS_PER_DAY = 86_400_000;

export function fileNameOf(entry: Pick<LogEntry, 'level' | 'category'>): LogFileName {
  return entry.level === 'DEBUG' ? 'debug' : entry.category;
}

/** The UTC day of an ISO timestamp (entries' timestamps are ISO UTC). */
export function dayOf(timestamp: string): string {
  const day = timestamp.slice(0, 10);
  return DAY.test(day) ? day : dayOfTime(Date.parse(timestamp));
}

export function dayOfTime(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

export const isDay = (name: string): boolean => DAY.test(name);
export const isMonth = (name: string): boolean => MONTH.test(name);
export const monthOf = (day: string): string => day.slice(0, 7);

/** Whole days from `day` to `today` (0 for today). */
export function ageInDays(day: string, today: string): number {
  return Math.round((Date.parse(`${today}T00:00:00Z`) - Date.parse(`${day}T00:00:00Z`)) / MS_PER_DAY);
}

export const liveFileName = (name: LogFileName): string => `${name}.log`;
export const rotatedFileName = (name: LogFileName, index: number, gz: boolean): string => `${name}.${index}.log${gz ? '.gz' : ''}`;

export interface ParsedLogFile {
  name: LogFileName;
  /** The rotation number; null for the day's last (live) part. */
  index: number | null;
  gz: boolean;
}

/** A file name of the layout, or null (anything else in a day directory is left alone). */
export function parseLogFileName(file: string): ParsedLogFile | null {
  const match = FILE.exec(file);
  if (!match) return null;
  return { name: match[1] as LogFileName, index: match[2] === undefined ? null : Number(match[2]), gz: match[3] !== undefined };
}

/** The next rotation number of `name` among `files` (one past the highest taken). */
export function nextIndex(name: LogFileName, files: Iterable<string>): number {
  let highest = 0;
  for (const file of files) {
    const parsed = parseLogFileName(file);
    if (parsed?.name === name && parsed.index !== null) highest = Math.max(highest, parsed.index);
  }
  return highest + 1;
}

/** `file` under its compressed name; a name already taken in `taken` becomes the next rotation number. */
export function compressedName(file: string, taken: ReadonlySet<string>): string {
  const parsed = parseLogFileName(file);
  if (!parsed) return `${file}.gz`;
  const wanted = parsed.index === null ? `${liveFileName(parsed.name)}.gz` : rotatedFileName(parsed.name, parsed.index, true);
  return taken.has(wanted) ? rotatedFileName(parsed.name, nextIndex(parsed.name, taken), true) : wanted;
}

/** Where a file keeps its name when it moves into a directory holding `taken` (a day archived twice). */
export function movedName(file: string, taken: ReadonlySet<string>): string {
  if (!taken.has(file)) return file;
  const parsed = parseLogFileName(file);
  return parsed ? rotatedFileName(parsed.name, nextIndex(parsed.name, taken), parsed.gz) : `${file}.${taken.size}`;
}

export type DayStep = { kind: 'delete'; file: string } | { kind: 'compress'; file: string } | { kind: 'archive' };

/**
 * What the retention job does with one day's files (`archived`: the day is already under
 * archive/). Every file past its name's retention goes; a past day's uncompressed files are
 * gzip'd, then the day moves to the archive (at the first run after the day ended: LOG_DIR holds
 * the current day, the archive every earlier one); a rotated file of today left uncompressed (a
 * crash between rotation and compression) is gzip'd too.
 */
export function planDay(day: string, files: readonly string[], today: string, retention: RetentionDays, archived: boolean): DayStep[] {
  const age = ageInDays(day, today);
  const steps: DayStep[] = [];
  let kept = 0;
  for (const file of files) {
    const parsed = parseLogFileName(file);
    if (!parsed) continue;
    if (age > retention[parsed.name]) {
      steps.push({ kind: 'delete', file });
      continue;
    }
    kept += 1;
    if (!parsed.gz && (age > 0 || parsed.index !== null)) steps.push({ kind: 'compress', file });
  }
  if (age > 0 && !archived && kept > 0) steps.push({ kind: 'archive' });
  return steps;
}
