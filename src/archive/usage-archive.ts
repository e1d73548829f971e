/**
 * Archival of old usage events (docs/decisions/0090-usage-archival.md).
 *
 * Usage events are most of the log (one per relayed request) and their aggregated history already
 * lives in the read models. `archiveUsage` copies the usage commits older than a cutoff into a
 * gzip'd JSON-lines file (one `Commit` per line, in position order), records it in the archive's
 * manifest (position range, counts, sha256), and only then removes those commits from the log
 * (`EventStore.removeCommitsBefore`). Each usage stream keeps its last commit in the log, so its
 * version stays readable.
 *
 * Nothing that reads the log has to know: `withArchive(store, dir)` is the log as it was, archived
 * commits merged back by position, for anything that reads from before the archive's end (a
 * rebuild, an audit); a reader past it (every live subscriber after start) goes straight to the
 * store. `readArchivedCommits` reads the archive alone.
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync, fsyncSync, mkdirSync, openSync, closeSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { createGunzip, createGzip } from 'node:zlib';
import { z } from 'zod';
import { ArchivalNotSupportedError } from '../errors.js';
import { commitFor, type Commit, type EventStore, type ReadAllOptions, type SubscribeOptions, type Subscription } from '../ports/event-store.js';

/** The relay's usage streams (`usage-<instance>`, src/relay/usage-publisher.ts). */
export const isUsageStream = (stream: string): boolean => stream.startsWith('usage-');

export const MANIFEST_FILE = 'manifest.json';

const ManifestEntry = z.object({
  file: z.string(),
  /** Lowest and highest log position in the file. */
  from_position: z.number().int().positive(),
  to_position: z.number().int().positive(),
  commits: z.number().int().nonnegative(),
  events: z.number().int().nonnegative(),
  first_occurred_at: z.string(),
  last_occurred_at: z.string(),
  /** Of the file's bytes as written (compressed). */
  sha256: z.string(),
  bytes: z.number().int().nonnegative(),
  /** The cutoff the run archived before. */
  before: z.string(),
  created_at: z.string(),
});
export type ManifestEntry = z.infer<typeof ManifestEntry>;

const Manifest = z.object({ format: z.literal(1), entries: z.array(ManifestEntry) });
export type Manifest = z.infer<typeof Manifest>;

export function readManifest(dir: string): Manifest {
  const file = join(dir, MANIFEST_FILE);
  if (!existsSync(file)) return { format: 1, entries: [] };
  return Manifest.parse(JSON.parse(readFileSync(file, 'utf8')));
}

/** Writes a file so that a crash leaves the old one or the new one, never half of either. */
function writeFileDurably(file: string, text: string): void {
  const temporary = `${file}.tmp`;
  writeFileSync(temporary, text);
  const fd = openSync(temporary, 'r');
  fsyncSync(fd);
  closeSync(fd);
  renameSync(temporary, file);
}

function fsyncDirectory(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

const READ_BATCH = 1000;

/** Every commit of the log from the start up to `until`, in batches. */
async function* logCommits(store: EventStore, until: number): AsyncGenerator<Commit> {
  let after = 0;
  while (after < until) {
    const commits = await store.readAll({ after, limit: READ_BATCH });
    if (commits.length === 0) return;
    for (const commit of commits) {
      if (commit.position > until) return;
      yield commit;
    }
    after = commits.at(-1)!.position;
  }
}

const commitTime = (commit: Commit): string => commit.events[0]?.occurred_at ?? '';

/**
 * Per usage stream, where archival stops: its first commit at or after the cutoff, and never past
 * its last commit (which stays in the log). Pure: fed the log's usage commits in order.
 */
export class ArchiveCuts {
  private readonly streams = new Map<string, { last: number; firstRecent: number | null }>();

  constructor(private readonly before: string) {}

  see(commit: Commit): void {
    const entry = this.streams.get(commit.stream) ?? { last: 0, firstRecent: null };
    entry.last = commit.position;
    if (entry.firstRecent === null && !(commitTime(commit) < this.before)) entry.firstRecent = commit.position;
    this.streams.set(commit.stream, entry);
  }

  /** Stream -> the position below which its commits are archived (streams with none left out). */
  cuts(): Map<string, number> {
    const cuts = new Map<string, number>();
    for (const [stream, { last, firstRecent }] of this.streams) {
      const cut = Math.min(last, firstRecent ?? Infinity);
      cuts.set(stream, cut);
    }
    return cuts;
  }
}

export interface ArchiveResult {
  /** The manifest entry written, or null when nothing was old enough. */
  entry: ManifestEntry | null;
  /** Commits removed from the log. */
  removed: number;
  /** The highest archived position (0: none). */
  upTo: number;
}

/**
 * Moves the usage commits that occurred before `before` out of the log into a new archive file
 * under `dir`. Safe to run again after a crash at any point: a file is listed in the manifest
 * only once complete, and commits archived twice (file written, removal not done) are read once.
 */
export async function archiveUsage(store: EventStore, dir: string, before: Date, now: Date = new Date()): Promise<ArchiveResult> {
  if (!store.removeCommitsBefore) throw new ArchivalNotSupportedError(`the ${store.kind} event store cannot remove commits`);
  mkdirSync(dir, { recursive: true });
  const head = await store.headPosition();
  const cutoff = before.toISOString();

  // Pass 1: where each usage stream's archivable prefix ends.
  const plan = new ArchiveCuts(cutoff);
  for await (const commit of logCommits(store, head)) if (isUsageStream(commit.stream)) plan.see(commit);
  const cuts = [...plan.cuts()].filter(([, cut]) => cut > 1);
  if (cuts.length === 0) return { entry: null, removed: 0, upTo: 0 };
  const cutOf = new Map(cuts);
  const lastCut = Math.max(...cuts.map(([, cut]) => cut));

  // Pass 2: the commits themselves, streamed into the file.
  const stats = { commits: 0, events: 0, from: 0, to: 0, first: '', last: '' };
  async function* lines(): AsyncGenerator<string> {
    for await (const commit of logCommits(store, lastCut)) {
      const cut = cutOf.get(commit.stream);
      if (cut === undefined || commit.position >= cut) continue;
      if (stats.commits === 0) {
        stats.from = commit.position;
        stats.first = commitTime(commit);
      }
      stats.commits += 1;
      stats.events += commit.events.length;
      stats.to = commit.position;
      stats.last = commitTime(commit);
      yield `${JSON.stringify(commit)}\n`;
    }
  }
  const name = `usage-${cutoff.slice(0, 10)}-p${Date.now().toString(36)}.jsonl.gz`;
  const file = join(dir, name);
  const hash = createHash('sha256');
  let bytes = 0;
  const temporary = `${file}.tmp`;
  const out = createWriteStream(temporary);
  const gzip = createGzip();
  gzip.on('data', (chunk: Buffer) => {
    hash.update(chunk);
    bytes += chunk.length;
  });
  await pipeline(Readable.from(lines()), gzip, out);
  if (stats.commits === 0) {
    // Everything planned was removed meanwhile (another run): nothing new to keep.
    rmSync(temporary, { force: true });
    return { entry: null, removed: 0, upTo: 0 };
  }
  const fd = openSync(temporary, 'r');
  fsyncSync(fd);
  closeSync(fd);
  renameSync(temporary, file);
  fsyncDirectory(dir);

  const entry: ManifestEntry = {
    file: name,
    from_position: stats.from,
    to_position: stats.to,
    commits: stats.commits,
    events: stats.events,
    first_occurred_at: stats.first,
    last_occurred_at: stats.last,
    sha256: hash.digest('hex'),
    bytes,
    before: cutoff,
    created_at: now.toISOString(),
  };
  const manifest = readManifest(dir);
  writeFileDurably(join(dir, MANIFEST_FILE), `${JSON.stringify({ format: 1, entries: [...manifest.entries, entry] } satisfies Manifest, null, 2)}\n`);
  fsyncDirectory(dir);

  // Only now, with the copy durable and listed, do the commits leave the log.
  const removed = await store.removeCommitsBefore(new Map(cuts.map(([stream, cut]) => [stream, Math.min(cut, stats.to + 1)])));
  return { entry, removed, upTo: stats.to };
}

/** The commits of one archive file, in position order. */
async function* fileCommits(dir: string, entry: ManifestEntry): AsyncGenerator<Commit> {
  const lines = createInterface({ input: createReadStream(join(dir, entry.file)).pipe(createGunzip()), crlfDelay: Infinity });
  for await (const line of lines) if (line) yield JSON.parse(line) as Commit;
}

/**
 * Archived commits with `from <= position <= to`, in position order, each once, across every
 * file of the archive (files of different runs can interleave: a stream archived later may hold
 * positions below an earlier file's end).
 */
export async function* readArchivedCommits(dir: string, range: { from?: number; to?: number } = {}): AsyncGenerator<Commit> {
  const from = range.from ?? 0;
  const to = range.to ?? Infinity;
  const entries = readManifest(dir).entries.filter((e) => e.to_position >= from && e.from_position <= to);
  const sources = entries.map((entry) => fileCommits(dir, entry));
  const heads: Array<Commit | undefined> = [];
  for (const source of sources) heads.push(await nextInRange(source, from));
  let lastYielded = 0;
  for (;;) {
    let lowest = -1;
    for (let i = 0; i < heads.length; i++) if (heads[i] && (lowest < 0 || heads[i]!.position < heads[lowest]!.position)) lowest = i;
    if (lowest < 0) return;
    const commit = heads[lowest]!;
    if (commit.position > to) return;
    if (commit.position !== lastYielded) yield commit;
    lastYielded = commit.position;
    heads[lowest] = (await sources[lowest]!.next()).value ?? undefined;
  }
}

async function nextInRange(source: AsyncGenerator<Commit>, from: number): Promise<Commit | undefined> {
  for (;;) {
    const { value, done } = await source.next();
    if (done) return undefined;
    if (value.position >= from) return value;
  }
}

export interface ArchiveCheck {
  file: string;
  ok: boolean;
  problem?: string;
}

/** Checks every archive file against the manifest: sha256, size, commit and event counts, order. */
export async function verifyArchive(dir: string): Promise<ArchiveCheck[]> {
  const checks: ArchiveCheck[] = [];
  for (const entry of readManifest(dir).entries) {
    const path = join(dir, entry.file);
    if (!existsSync(path)) {
      checks.push({ file: entry.file, ok: false, problem: 'file missing' });
      continue;
    }
    const hash = createHash('sha256');
    for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
    const sha256 = hash.digest('hex');
    if (sha256 !== entry.sha256 || statSync(path).size !== entry.bytes) {
      checks.push({ file: entry.file, ok: false, problem: 'sha256 differs from the manifest' });
      continue;
    }
    let commits = 0;
    let events = 0;
    let previous = 0;
    let problem: string | undefined;
    try {
      for await (const commit of fileCommits(dir, entry)) {
        if (commit.position <= previous) problem ??= `positions out of order at ${commit.position}`;
        previous = commit.position;
        commits += 1;
        events += commit.events.length;
      }
    } catch {
      problem = 'unreadable (not gzip JSON lines)';
    }
    if (!problem && (commits !== entry.commits || events !== entry.events)) problem = `holds ${commits} commits / ${events} events, manifest says ${entry.commits} / ${entry.events}`;
    if (!problem && commits > 0 && (previous !== entry.to_position)) problem = 'position range differs from the manifest';
    checks.push(problem ? { file: entry.file, ok: false, problem } : { file: entry.file, ok: true });
  }
  return checks;
}

/** The highest archived position (0: nothing archived). */
export function archivedUpTo(dir: string): number {
  let upTo = 0;
  for (const entry of readManifest(dir).entries) upTo = Math.max(upTo, entry.to_position);
  return upTo;
}

/**
 * The archive's manifest, re-read only when the file changed (a run of `usage archive` while the
 * process runs), so that readers of the log see a new archive without a restart.
 */
class ManifestWatch {
  private seen: { mtimeMs: number; size: number } | null = null;
  private upToCached = 0;

  constructor(private readonly dir: string) {}

  upTo(): number {
    const file = join(this.dir, MANIFEST_FILE);
    if (!existsSync(file)) return 0;
    const { mtimeMs, size } = statSync(file);
    if (!this.seen || this.seen.mtimeMs !== mtimeMs || this.seen.size !== size) {
      this.upToCached = archivedUpTo(this.dir);
      this.seen = { mtimeMs, size };
    }
    return this.upToCached;
  }
}

/**
 * Reads the archive forward for a reader catching up in consecutive batches: it keeps its place
 * (commits read but not yet asked for wait in `buffer`), so each batch costs its own commits
 * rather than a read of the archive from the start. Asked from further back, it starts over.
 */
class ArchiveReader {
  private source: AsyncGenerator<Commit> | null = null;
  private buffer: Commit[] = [];
  /** Every archived commit at or below this is no longer at hand. */
  private droppedUpTo = 0;
  private exhausted = false;

  constructor(private readonly dir: string) {}

  /** Archived commits with after < position <= bound, at most `limit`. */
  async between(after: number, bound: number, limit: number, upTo: number): Promise<Commit[]> {
    if (!this.source || this.droppedUpTo > after) {
      void this.source?.return(undefined);
      this.source = readArchivedCommits(this.dir, { from: after + 1, to: upTo });
      this.buffer = [];
      this.exhausted = false;
      this.droppedUpTo = after;
    }
    while (this.buffer.length > 0 && this.buffer[0]!.position <= after) this.droppedUpTo = this.buffer.shift()!.position;
    this.droppedUpTo = Math.max(this.droppedUpTo, after);
    const fits = () => this.buffer.filter((c) => c.position <= bound).length;
    while (!this.exhausted && fits() < limit && (this.buffer.length === 0 || this.buffer.at(-1)!.position <= bound)) {
      const next = await this.source.next();
      if (next.done) this.exhausted = true;
      else if (next.value.position > after) this.buffer.push(next.value);
    }
    return this.buffer.filter((c) => c.position <= bound).slice(0, limit);
  }
}

/**
 * The log with its archive merged back: `readAll` and `subscribe` from a position before the
 * archive's end return the archived commits among the log's, in position order; from past it, they
 * are the store's own (no cost on the live path). Everything else is the store's.
 */
export function withArchive(store: EventStore, dir: string): EventStore {
  const manifest = new ManifestWatch(dir);
  const archive = new ArchiveReader(dir);

  async function readAll({ after, limit = 1000 }: ReadAllOptions): Promise<Commit[]> {
    const upTo = manifest.upTo();
    if (after >= upTo) return store.readAll({ after, limit });
    const logged = await store.readAll({ after, limit });
    // Past the log batch's last position there may be log commits not read yet: nothing archived
    // beyond it may be returned, unless the log has nothing more.
    const bound = logged.length < limit ? upTo : Math.min(upTo, logged.at(-1)!.position);
    const archived = await archive.between(after, bound, limit, upTo);
    const merged: Commit[] = [];
    let i = 0;
    let j = 0;
    while (merged.length < limit && (i < logged.length || j < archived.length)) {
      const a = logged[i];
      const b = archived[j];
      if (b && (!a || b.position < a.position)) merged.push(archived[j++]!);
      else {
        // Equal positions: archived and not yet removed (a run interrupted); the log's copy.
        if (b && a!.position === b.position) j++;
        merged.push(logged[i++]!);
      }
    }
    return merged;
  }

  function subscribe(options: SubscribeOptions): Subscription {
    const upTo = manifest.upTo();
    if (options.after >= upTo) return store.subscribe(options);
    let closed = false;
    let live: Subscription | null = null;
    const running = (async () => {
      let after = options.after;
      try {
        // Catch up through the merged log to the archive's end, then follow the store from there.
        while (!closed && after < upTo) {
          const batch = (await readAll({ after, limit: 500 })).filter((c) => c.position <= upTo).map((c) => commitFor(options, c));
          if (batch.length === 0) break;
          if (options.onCommits && batch.length > 1) await options.onCommits(batch);
          else for (const commit of batch) if (!closed) await options.onCommit(commit);
          after = batch.at(-1)!.position;
        }
      } catch (error) {
        closed = true;
        options.onError?.(error);
        return;
      }
      if (!closed) live = store.subscribe({ ...options, after });
    })();
    return {
      close: async () => {
        closed = true;
        await running;
        await (live as Subscription | null)?.close();
      },
    };
  }

  return {
    get kind() {
      return store.kind;
    },
    append: (stream, events, options) => store.append(stream, events, options),
    readStream: (stream, afterVersion) => store.readStream(stream, afterVersion),
    readAll,
    headPosition: () => store.headPosition(),
    subscribe,
    removeCommitsBefore: store.removeCommitsBefore ? (cuts) => store.removeCommitsBefore!(cuts) : undefined,
    ping: () => store.ping(),
    close: () => store.close(),
  };
}
