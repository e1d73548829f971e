/**
 * The durable local journal of usage events (docs/decisions/0020-usage-journal.md).
 *
 * Every usage event is written here before the relay lets the last bytes of its answer go: a
 * process killed at any moment leaves each answered request's event either in the log or in this
 * journal. Writes are group-committed. With `wait: 'fsync'`, entries arriving within `fsyncMs` of
 * each other share one write and one fdatasync, run on libuv's thread pool (at most one commit in
 * flight), and an answer waits for both. With `wait: 'write'`, the entries of one event-loop turn
 * share one write to the operating system, which is all an answer waits for (the page cache
 * outlives the process), and an fdatasync follows within `fsyncMs`.
 *
 * Layout, under DATA_DIR/usage-journal:
 * - `<owner>.lock`: the owning process (pid, host, start); its mtime is a heartbeat.
 * - `<owner>-<n>.jsonl`: segments, one JSON entry a line. A segment is rotated past
 *   `segmentBytes` and deleted once every entry in it is acknowledged by the log.
 * - `<owner>-r-<file>`: a segment of a dead owner this owner claimed (renamed: atomic, so two
 *   processes starting together cannot both claim it) and replays.
 * - `dead-letter.jsonl`: events that failed validation (never sent to the log).
 */
import { closeSync, fdatasync, fdatasyncSync, writeSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, utimesSync, write, writeFileSync, appendFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { UsageData } from '../commands/usage/events.js';

/** One journal line. Short keys: a line is written per request. */
export interface JournalLine {
  /** Event id (the id it gets in the log). */
  id: string;
  /** The stream the event belongs to. */
  s: string;
  /** The version the event takes in that stream (its single writer appends in order). */
  v: number;
  d: UsageData;
}

/** A journaled event, as the publisher tracks it until the log acknowledges it. */
export interface JournalEntry {
  readonly line: JournalLine;
  acked: boolean;
  segment: Segment | null;
}

interface Segment {
  readonly file: string;
  lines: number;
  acked: number;
  bytes: number;
}

export interface UsageJournalOptions {
  dir: string;
  /** The owner id: this process's journal and stream suffix (hex, no dashes). */
  owner: string;
  /**
   * What an entry's `append` waits for: `fsync`, its group's write and fdatasync (survives power
   * loss); `write`, its group's write to the operating system (survives the process being killed,
   * kill -9 included, not a power loss or kernel crash), with an fdatasync every `fsyncMs` after.
   */
  wait: 'write' | 'fsync';
  /** `fsync`: longest wait before a group commit (0: as soon as the previous one is done). `write`: longest time between fdatasyncs. */
  fsyncMs: number;
  /** A segment past this size is closed and a new one started. */
  segmentBytes: number;
}

const HEARTBEAT_MS = 2000;
/** A lock whose heartbeat is older than this belongs to a dead process (pid reused, or another host). */
const STALE_LOCK_MS = 5 * HEARTBEAT_MS;
const SEGMENT = /^([0-9a-f]+)-.*\.jsonl$/;
const DEAD_LETTER = 'dead-letter.jsonl';

/** Owners open in this process: never another's orphan (several apps in one process, as tests run them). */
const liveOwners = new Set<string>();

interface LockContent {
  pid: number;
  host: string;
}

export class UsageJournal {
  private fd: number | null = null;
  private current: Segment | null = null;
  private segmentNumber = 0;
  private readonly segments = new Set<Segment>();
  private pending: { text: string; entries: JournalEntry[]; waiters: Array<(error?: Error) => void> } = { text: '', entries: [], waiters: [] };
  private timer: NodeJS.Timeout | NodeJS.Immediate | null = null;
  private committing = false;
  private syncTimer: NodeJS.Timeout | null = null;
  private syncing = false;
  private dirty = false;
  private heartbeat: NodeJS.Timeout | null = null;
  /** Entries journaled and not yet acknowledged by the log. */
  depth = 0;
  /** Group commits done (write + fdatasync each). */
  commits = 0;

  constructor(private readonly options: UsageJournalOptions) {}

  get lockFile(): string {
    return join(this.options.dir, `${this.options.owner}.lock`);
  }

  /** Takes ownership: the lock first, so no segment of a live owner is ever without one. */
  open(): void {
    mkdirSync(this.options.dir, { recursive: true });
    const lock: LockContent = { pid: process.pid, host: hostname() };
    writeFileSync(this.lockFile, JSON.stringify(lock));
    liveOwners.add(this.options.owner);
    this.heartbeat = setInterval(() => {
      const now = new Date();
      try {
        utimesSync(this.lockFile, now, now);
      } catch {
        // The directory went away (tests, an operator): nothing to keep alive.
      }
    }, HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  /** Bytes in this owner's segments (a metric). */
  get bytes(): number {
    let total = 0;
    for (const segment of this.segments) total += segment.bytes;
    return total;
  }

  /** Journals `line`; the promise settles once it is durable (or the write failed). */
  append(line: JournalLine): { entry: JournalEntry; durable: Promise<void> } {
    const entry: JournalEntry = { line, acked: false, segment: null };
    this.depth++;
    this.pending.text += JSON.stringify(line) + '\n';
    this.pending.entries.push(entry);
    const durable = new Promise<void>((resolve, reject) => this.pending.waiters.push((error) => (error ? reject(error) : resolve())));
    this.scheduleCommit();
    return { entry, durable };
  }

  /** The log has this entry: its segment may go once all of its entries are acknowledged. */
  ack(entry: JournalEntry): void {
    if (entry.acked) return;
    entry.acked = true;
    this.depth--;
    const segment = entry.segment;
    if (segment === null) return; // counted when its commit assigns it a segment
    segment.acked++;
    this.dropIfDone(segment);
  }

  /** Waits for every pending write, stops the heartbeat; removes the lock and all segments if everything was acknowledged. */
  async close(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer as NodeJS.Timeout);
      clearImmediate(this.timer as NodeJS.Immediate);
      this.timer = null;
    }
    while (this.committing || this.pending.entries.length > 0) {
      if (!this.committing) this.commit();
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    if (this.heartbeat) clearInterval(this.heartbeat);
    if (this.syncTimer) clearTimeout(this.syncTimer);
    while (this.syncing) await new Promise((resolve) => setTimeout(resolve, 1));
    if (this.fd !== null) {
      fdatasyncSync(this.fd);
      closeSync(this.fd);
    }
    this.fd = null;
    if (this.depth === 0) {
      for (const segment of this.segments) removeFile(segment.file);
      this.segments.clear();
    }
    // Without the lock, segments left behind (the log was unreachable) are replayed at the next start.
    removeFile(this.lockFile);
    liveOwners.delete(this.options.owner);
  }

  /**
   * Stops as a killed process would: no write, no cleanup; what is on disk stays for the next
   * owner (tests simulate a crash with it).
   */
  abandon(): void {
    if (this.timer) {
      clearTimeout(this.timer as NodeJS.Timeout);
      clearImmediate(this.timer as NodeJS.Immediate);
      this.timer = null;
    }
    if (this.heartbeat) clearInterval(this.heartbeat);
    if (this.syncTimer) clearTimeout(this.syncTimer);
    liveOwners.delete(this.options.owner);
  }

  /** Writes an event that must not reach the log, for an operator to look at. */
  deadLetter(record: unknown): void {
    appendFileSync(join(this.options.dir, DEAD_LETTER), JSON.stringify(record) + '\n');
  }

  /**
   * Renames the segments of dead owners to this owner (claiming them) and returns the claimed
   * files, oldest first. A segment another process claimed first is skipped.
   */
  claimOrphans(): string[] {
    const claimed: string[] = [];
    for (const name of readdirSync(this.options.dir).sort()) {
      const owner = SEGMENT.exec(name)?.[1];
      if (owner === undefined) continue;
      const file = join(this.options.dir, name);
      if (owner === this.options.owner) {
        // Claimed earlier by this owner, but not its own live segments.
        if (name.startsWith(`${owner}-r-`) && ![...this.segments].some((s) => s.file === file)) claimed.push(file);
        continue;
      }
      if (liveOwners.has(owner) || lockIsLive(join(this.options.dir, `${owner}.lock`))) continue;
      const target = join(this.options.dir, `${this.options.owner}-r-${name}`);
      try {
        renameSync(file, target);
      } catch {
        continue; // another process claimed it
      }
      claimed.push(target);
    }
    // Locks of owners with no segment left are litter.
    for (const name of readdirSync(this.options.dir)) {
      const match = /^([0-9a-f]+)\.lock$/.exec(name);
      if (match && !liveOwners.has(match[1]!) && !lockIsLive(join(this.options.dir, name))) {
        if (!readdirSync(this.options.dir).some((f) => f.startsWith(`${match[1]}-`))) removeFile(join(this.options.dir, name));
      }
    }
    return claimed;
  }

  private scheduleCommit() {
    if (this.timer || this.committing) return;
    if (this.options.wait === 'write') {
      // Everything that finished in this turn of the event loop shares one write.
      this.timer = setImmediate(() => {
        this.timer = null;
        this.commit();
      });
      return;
    }
    this.timer = setTimeout(() => {
      this.timer = null;
      this.commit();
    }, this.options.fsyncMs);
  }

  private commit() {
    const batch = this.pending;
    if (batch.entries.length === 0) return;
    this.pending = { text: '', entries: [], waiters: [] };
    const segment = this.segmentFor();
    const bytes = Buffer.from(batch.text);
    if (this.options.wait === 'write') {
      // A small write to the page cache: microseconds, so on this thread. It survives the
      // process being killed; the fdatasync that follows (off this thread) survives power loss.
      let error: Error | null = null;
      try {
        writeAllSync(this.fd!, bytes);
      } catch (e) {
        error = e as Error;
      }
      this.committed(batch, segment, bytes.length, error);
      if (error === null) this.syncSoon();
      return;
    }
    this.committing = true;
    writeAll(this.fd!, bytes, (error) => {
      if (error) return this.committed(batch, segment, bytes.length, error);
      fdatasync(this.fd!, (syncError) => this.committed(batch, segment, bytes.length, syncError));
    });
  }

  private committed(batch: { entries: JournalEntry[]; waiters: Array<(error?: Error) => void> }, segment: Segment, length: number, error: Error | null) {
    this.committing = false;
    this.commits++;
    if (error === null) {
      segment.bytes += length;
      for (const entry of batch.entries) {
        entry.segment = segment;
        segment.lines++;
        if (entry.acked) segment.acked++;
      }
      if (segment.bytes >= this.options.segmentBytes) this.rotate();
      this.dropIfDone(segment);
    }
    for (const waiter of batch.waiters) waiter(error ?? undefined);
    if (this.pending.entries.length > 0) this.scheduleCommit();
  }

  /** `wait: 'write'`: an fdatasync at most every `fsyncMs`, in the background. */
  private syncSoon() {
    if (this.syncTimer !== null || this.syncing) {
      this.dirty = true;
      return;
    }
    this.syncTimer = setTimeout(() => {
      this.syncTimer = null;
      if (this.fd === null) return;
      this.syncing = true;
      this.dirty = false;
      fdatasync(this.fd, () => {
        this.syncing = false;
        if (this.dirty) this.syncSoon();
      });
    }, this.options.fsyncMs);
    this.syncTimer.unref();
  }

  private segmentFor(): Segment {
    if (this.current) return this.current;
    this.segmentNumber++;
    const file = join(this.options.dir, `${this.options.owner}-${String(this.segmentNumber).padStart(8, '0')}.jsonl`);
    this.fd = openSync(file, 'a');
    this.current = { file, lines: 0, acked: 0, bytes: 0 };
    this.segments.add(this.current);
    return this.current;
  }

  private rotate() {
    const fd = this.fd;
    this.fd = null;
    this.current = null;
    if (fd === null) return;
    // Once per segment (megabytes): the file is complete on disk before it is let go.
    fdatasyncSync(fd);
    closeSync(fd);
  }

  private dropIfDone(segment: Segment) {
    if (segment === this.current || segment.acked < segment.lines) return;
    this.segments.delete(segment);
    removeFile(segment.file);
  }
}

function writeAllSync(fd: number, bytes: Buffer) {
  let offset = 0;
  while (offset < bytes.length) offset += writeSync(fd, bytes, offset, bytes.length - offset);
}

function writeAll(fd: number, bytes: Buffer, callback: (error: Error | null) => void, offset = 0) {
  write(fd, bytes, offset, bytes.length - offset, null, (error, written) => {
    if (error) return callback(error);
    if (offset + written < bytes.length) return writeAll(fd, bytes, callback, offset + written);
    callback(null);
  });
}

function removeFile(file: string) {
  try {
    unlinkSync(file);
  } catch {
    // already gone
  }
}

/** Whether a lock belongs to a running process: by pid on this host, else by its heartbeat. */
export function lockIsLive(file: string, now = Date.now()): boolean {
  let lock: LockContent;
  let mtime: number;
  try {
    lock = JSON.parse(readFileSync(file, 'utf8')) as LockContent;
    mtime = statSync(file).mtimeMs;
  } catch {
    return false; // no lock (or a torn one): the owner is gone
  }
  const fresh = now - mtime < STALE_LOCK_MS;
  if (lock.host !== hostname()) return fresh; // another machine: only the heartbeat tells
  // This process's own pid under another owner id: a predecessor that had the same pid (containers).
  if (lock.pid === process.pid) return false;
  try {
    process.kill(lock.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
  }
  // A process with that pid runs; it may have reused the pid of the dead owner.
  return fresh;
}

/**
 * The entries of a journal file. A line that does not parse (the last one, torn by a crash
 * mid-write) is skipped and counted: it was never durable, so no answer waited for it.
 */
export function readJournalFile(file: string): { lines: JournalLine[]; torn: number } {
  const lines: JournalLine[] = [];
  let torn = 0;
  for (const text of readFileSync(file, 'utf8').split('\n')) {
    if (text === '') continue;
    try {
      const line = JSON.parse(text) as JournalLine;
      if (typeof line.id === 'string' && typeof line.s === 'string' && typeof line.v === 'number' && typeof line.d === 'object' && line.d !== null) lines.push(line);
      else torn++;
    } catch {
      torn++;
    }
  }
  return { lines, torn };
}
