/**
 * The day's category files (issue 19): entries from the log hub are buffered in memory and
 * appended in batches by one asynchronous writer (never a write per entry on the serving thread);
 * a file past the size limit rotates (numbered, gzip'd in the background); a retention job
 * compresses past days, moves them to the archive and removes expired files. Every change to the
 * directory (appends, rotations, retention) runs on one queue, so none races another. The layout
 * and the decisions are in layout.ts; docs/decisions/0180-log-files.md says why this is written
 * here rather than taken from a rotating-stream package.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, readdir, rename, rmdir, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import type { LogEntry } from '../entry.js';
import type { LogHub } from '../hub.js';
import { compressedName, dayOf, dayOfTime, fileNameOf, isDay, isMonth, liveFileName, monthOf, movedName, nextIndex, planDay, rotatedFileName, type LogFileName, type RetentionDays } from './layout.js';

export interface LogFilesSettings {
  maxFileBytes: number;
  retentionDays: RetentionDays;
  retentionIntervalMs: number;
}

export interface LogFilesOptions {
  hub: LogHub;
  dir: string;
  config: LogFilesSettings;
  /** Now, in ms (tests move it by days). */
  clock?: () => number;
  /** Told of a failing write or retention step (once until writing works again). */
  onError?: (error: unknown, what: string) => void;
  /** Told what each retention run did. */
  onRetention?: (report: RetentionReport) => void;
  /** How long an entry may wait in memory before its batch is written. */
  flushDelayMs?: number;
  /** Entries waiting past this many bytes are dropped (and counted) rather than exhaust memory. */
  maxPendingBytes?: number;
}

export interface LogFiles {
  /** Resolves once every entry published so far is in its file (and rotations are compressed). */
  flush(): Promise<void>;
  /** Stops the schedule, writes what is waiting, closes the files. */
  close(): Promise<void>;
  /** Compresses, archives and removes expired files now; resolves with what it did. */
  runRetention(): Promise<RetentionReport>;
  /** Entries dropped because writing could not keep up. */
  readonly dropped: number;
}

export interface RetentionReport {
  compressed: number;
  archived: number;
  deleted: number;
}

interface OpenFile {
  handle: FileHandle;
  dir: string;
  name: LogFileName;
  size: number;
  nextIndex: number;
}

/** Starts writing the hub's entries under `dir`, with retention at startup and every interval. */
export function startLogFiles(options: LogFilesOptions): LogFiles {
  const files = new LogFileWriter(options);
  const unsubscribe = options.hub.subscribe((entry) => files.write(entry));
  const run = () => void files.runRetention().catch(() => undefined);
  run();
  const schedule = setInterval(run, options.config.retentionIntervalMs);
  schedule.unref();
  return {
    flush: () => files.flush(),
    async close() {
      clearInterval(schedule);
      unsubscribe();
      await files.close();
    },
    runRetention: () => files.runRetention(),
    get dropped() {
      return files.dropped;
    },
  };
}

export class LogFileWriter {
  private pending = new Map<string, string[]>();
  private pendingBytes = 0;
  private timer: NodeJS.Timeout | null = null;
  /** The queue every directory change runs on. */
  private queue: Promise<unknown> = Promise.resolve();
  private readonly open = new Map<string, OpenFile>();
  private readonly compressing = new Set<Promise<void>>();
  private failing = false;
  dropped = 0;
  private readonly clock: () => number;
  private readonly flushDelayMs: number;
  private readonly maxPendingBytes: number;

  constructor(private readonly options: Omit<LogFilesOptions, 'hub'>) {
    this.clock = options.clock ?? Date.now;
    this.flushDelayMs = options.flushDelayMs ?? 100;
    this.maxPendingBytes = options.maxPendingBytes ?? 32 * 1024 * 1024;
  }

  /** Buffers the entry's line; a timer (or a full buffer) has the batch written. */
  write(entry: LogEntry): void {
    if (this.pendingBytes > this.maxPendingBytes) {
      this.dropped += 1;
      return;
    }
    const line = `${JSON.stringify(entry)}\n`;
    const key = `${dayOf(entry.timestamp)}/${fileNameOf(entry)}`;
    const lines = this.pending.get(key);
    if (lines) lines.push(line);
    else this.pending.set(key, [line]);
    this.pendingBytes += line.length;
    if (this.timer === null) {
      this.timer = setTimeout(() => void this.flush().catch(() => undefined), this.flushDelayMs);
      this.timer.unref();
    }
  }

  async flush(): Promise<void> {
    await this.enqueue(() => this.drain());
    await Promise.all(this.compressing);
  }

  async close(): Promise<void> {
    await this.flush();
    await this.enqueue(() => this.closeFiles(() => true));
  }

  async runRetention(): Promise<RetentionReport> {
    const report = await this.enqueue(() => this.retain());
    this.options.onRetention?.(report);
    return report;
  }

  private enqueue<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(task);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private report(error: unknown, what: string) {
    if (this.failing) return;
    this.failing = true;
    this.options.onError?.(error, what);
  }

  private async drain(): Promise<void> {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    const batch = this.pending;
    this.pending = new Map();
    this.pendingBytes = 0;
    for (const [key, lines] of batch) {
      try {
        await this.append(key, lines);
        this.failing = false;
      } catch (error) {
        this.dropped += lines.length;
        this.open.delete(key);
        this.report(error, `could not write log file ${key}.log`);
      }
    }
  }

  /** Appends the lines to the key's live file, rotating it whenever the next line would pass the limit. */
  private async append(key: string, lines: readonly string[]): Promise<void> {
    let file = await this.fileOf(key);
    let chunk = '';
    let chunkBytes = 0;
    for (const line of lines) {
      const bytes = Buffer.byteLength(line);
      if (file.size + chunkBytes + bytes > this.options.config.maxFileBytes && file.size + chunkBytes > 0) {
        if (chunkBytes > 0) await file.handle.write(chunk);
        file.size += chunkBytes;
        chunk = '';
        chunkBytes = 0;
        file = await this.rotate(key, file);
      }
      chunk += line;
      chunkBytes += bytes;
    }
    if (chunkBytes > 0) await file.handle.write(chunk);
    file.size += chunkBytes;
  }

  private async fileOf(key: string): Promise<OpenFile> {
    const held = this.open.get(key);
    if (held) return held;
    const [day, name] = key.split('/') as [string, LogFileName];
    const dir = join(this.options.dir, day);
    await mkdir(dir, { recursive: true });
    const handle = await open(join(dir, liveFileName(name)), 'a');
    const file: OpenFile = { handle, dir, name, size: (await handle.stat()).size, nextIndex: nextIndex(name, await readdir(dir)) };
    this.open.set(key, file);
    return file;
  }

  /** The live file becomes the next numbered one (compressed in the background); a new live file opens. */
  private async rotate(key: string, file: OpenFile): Promise<OpenFile> {
    await file.handle.close();
    const rotated = join(file.dir, rotatedFileName(file.name, file.nextIndex, false));
    const live = join(file.dir, liveFileName(file.name));
    await rename(live, rotated);
    const next: OpenFile = { ...file, handle: await open(live, 'a'), size: 0, nextIndex: file.nextIndex + 1 };
    this.open.set(key, next);
    const compressing = gzipFile(rotated, `${rotated}.gz`).catch((error: unknown) => this.report(error, `could not compress ${rotated}`));
    this.compressing.add(compressing);
    void compressing.finally(() => this.compressing.delete(compressing));
    return next;
  }

  private async closeFiles(which: (day: string) => boolean): Promise<void> {
    for (const [key, file] of this.open) {
      if (!which(key.slice(0, 10))) continue;
      this.open.delete(key);
      await file.handle.close().catch(() => undefined);
    }
  }

  private async retain(): Promise<RetentionReport> {
    await this.drain();
    const today = dayOfTime(this.clock());
    // A past day's files are done with: closed before they are compressed and moved.
    await this.closeFiles((day) => day < today);
    await Promise.all(this.compressing);
    const report: RetentionReport = { compressed: 0, archived: 0, deleted: 0 };
    const root = this.options.dir;
    for (const day of (await listDir(root)).filter(isDay).sort()) {
      await this.retainDay(join(root, day), day, today, false, report);
    }
    const archive = join(root, 'archive');
    for (const month of (await listDir(archive)).filter(isMonth).sort()) {
      const monthDir = join(archive, month);
      for (const day of (await listDir(monthDir)).filter(isDay).sort()) await this.retainDay(join(monthDir, day), day, today, true, report);
      await removeIfEmpty(monthDir);
    }
    return report;
  }

  private async retainDay(dir: string, day: string, today: string, archived: boolean, report: RetentionReport): Promise<void> {
    try {
      const files = await listDir(dir);
      const present = new Set(files);
      for (const step of planDay(day, files, today, this.options.config.retentionDays, archived)) {
        if (step.kind === 'delete') {
          await unlink(join(dir, step.file));
          present.delete(step.file);
          report.deleted += 1;
        } else if (step.kind === 'compress') {
          const target = compressedName(step.file, present);
          await gzipFile(join(dir, step.file), join(dir, target));
          present.delete(step.file);
          present.add(target);
          report.compressed += 1;
        } else {
          const into = join(this.options.dir, 'archive', monthOf(day), day);
          await mkdir(into, { recursive: true });
          const taken = new Set(await listDir(into));
          for (const file of present) {
            const name = movedName(file, taken);
            await rename(join(dir, file), join(into, name));
            taken.add(name);
          }
          report.archived += 1;
        }
      }
      await removeIfEmpty(dir);
    } catch (error) {
      this.report(error, `log retention failed for ${dir}`);
    }
  }
}

/** gzip `source` into `target` (through a temporary name, so a half-written archive never has the final name), then removes `source`. */
export async function gzipFile(source: string, target: string): Promise<void> {
  const partial = `${target}.partial`;
  await pipeline(createReadStream(source), createGzip(), createWriteStream(partial));
  await rename(partial, target);
  await unlink(source);
}

async function listDir(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}

async function removeIfEmpty(dir: string): Promise<void> {
  await rmdir(dir).catch(() => undefined);
}
