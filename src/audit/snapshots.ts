/**
 * Audit snapshots: the audit's own scratch replay database, saved at the log positions it was
 * replayed to, so that a later audit continues the replay from there instead of from the log's
 * beginning (state before a period matters: a balance is the sum of everything before it).
 *
 * A snapshot is made only by the audit's replay of the log, never copied from the live tables
 * (the audit would then trust what it audits), and it is sealed: an HMAC, with a key derived from
 * SECRET, over its manifest and the database file's bytes. An audit copies a snapshot to its
 * scratch file and checks the seal on that copy (what it checked is what it uses); a snapshot
 * whose seal does not match, made by other projection code (versions) or another schema, is not
 * used. See docs/decisions/0060-streaming-audit.md.
 *
 * Files: <dir>/snapshot-<id>.db and <dir>/snapshot-<id>.json (the manifest), written to a
 * temporary name first and renamed, so a crash leaves no half snapshot under a real name.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { copyFile, mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { sql, type Kysely } from 'kysely';
import { deriveKey } from '../auth/tokens.js';
import { migrations } from '../../migrations/index.js';

/** What a snapshot holds: each audited projection's replay, up to its position. */
export interface SnapshotManifest {
  format: 1;
  /** Projection name -> the log position its tables were replayed to. */
  positions: Record<string, number>;
  /** Projection name -> its version (other projection code gives other tables: not usable). */
  versions: Record<string, number>;
  /** The latest migration of the schema the tables were made with. */
  schema: string;
  created_at: string;
  /** HMAC-SHA256 (hex) over the manifest without `mac` and the database file. */
  mac: string;
}

export interface SnapshotStore {
  dir: string;
  /** SECRET: the seal's key is derived from it. */
  secret: string;
  /** Snapshots kept (the newest); older ones are removed when one is saved. */
  kept: number;
}

/** A snapshot the audit can continue from: its positions, and the scratch file it now is. */
export interface UsableSnapshot {
  id: string;
  positions: Record<string, number>;
}

/* eslint-disable switchyard/no-string-index-lookup -- keys are the audited projections' names (src/audit/tables.ts), never a caller's */

export const currentSchema = (): string => Object.keys(migrations).sort().at(-1) ?? '';

async function seal(store: SnapshotStore, manifest: Omit<SnapshotManifest, 'mac'>, file: string): Promise<string> {
  const mac = createHmac('sha256', deriveKey(store.secret, 'audit-snapshot'));
  mac.update(JSON.stringify([manifest.format, manifest.positions, manifest.versions, manifest.schema, manifest.created_at]));
  for await (const chunk of createReadStream(file)) mac.update(chunk as Buffer);
  return mac.digest('hex');
}

async function manifests(store: SnapshotStore): Promise<Array<{ id: string; manifest: SnapshotManifest }>> {
  const names = await readdir(store.dir).catch(() => [] as string[]);
  const out: Array<{ id: string; manifest: SnapshotManifest }> = [];
  for (const name of names) {
    const match = /^snapshot-([0-9a-z-]+)\.json$/.exec(name);
    if (!match) continue;
    try {
      out.push({ id: match[1]!, manifest: JSON.parse(await readFile(join(store.dir, name), 'utf8')) as SnapshotManifest });
    } catch {
      // unreadable manifest: not a usable snapshot
    }
  }
  // Newest (furthest replayed) first.
  const reach = (m: SnapshotManifest) => Object.values(m.positions ?? {}).reduce((a, b) => a + b, 0);
  return out.sort((a, b) => reach(b.manifest) - reach(a.manifest));
}

/** Whether the snapshot was made by this projection code and schema, no further than `targets`. */
function fits(manifest: SnapshotManifest, targets: ReadonlyMap<string, { position: number; version: number }>): boolean {
  if (manifest.format !== 1 || manifest.schema !== currentSchema() || typeof manifest.positions !== 'object' || typeof manifest.versions !== 'object') return false;
  for (const [name, target] of targets) {
    const position = Object.hasOwn(manifest.positions, name) ? manifest.positions[name] : undefined;
    if (typeof position !== 'number' || position > target.position) return false;
    if (!Object.hasOwn(manifest.versions, name) || manifest.versions[name] !== target.version) return false;
  }
  return true;
}

/**
 * Copies the furthest snapshot that fits the targets to `scratchFile` and checks its seal there.
 * Snapshots whose seal does not match are counted in `rejected` (and skipped).
 */
export async function restoreSnapshot(
  store: SnapshotStore,
  targets: ReadonlyMap<string, { position: number; version: number }>,
  scratchFile: string,
): Promise<{ snapshot: UsableSnapshot | null; rejected: string[] }> {
  const rejected: string[] = [];
  for (const { id, manifest } of await manifests(store)) {
    if (!fits(manifest, targets)) continue;
    try {
      await copyFile(join(store.dir, `snapshot-${id}.db`), scratchFile);
    } catch {
      continue; // its database file is gone
    }
    const { mac, ...unsealed } = manifest;
    if ((await seal(store, unsealed, scratchFile)) === mac) return { snapshot: { id, positions: manifest.positions }, rejected };
    rejected.push(id);
    await rm(scratchFile, { force: true });
  }
  return { snapshot: null, rejected };
}

/**
 * Saves the scratch database (SQLite, `db`) as a snapshot at `positions`, then removes the
 * snapshots past the newest `kept`. Returns its id.
 */
export async function saveSnapshot<T>(store: SnapshotStore, db: Kysely<T>, positions: Record<string, number>, versions: Record<string, number>): Promise<string> {
  await mkdir(store.dir, { recursive: true });
  const id = `${Date.now().toString(36)}-${randomUUID().slice(0, 8)}`;
  const temporary = join(store.dir, `.saving-${id}.db`);
  // A compact, consistent copy of the scratch database, written by SQLite itself.
  await sql.raw(`vacuum into '${temporary.replace(/'/g, "''")}'`).execute(db);
  const unsealed = { format: 1 as const, positions, versions, schema: currentSchema(), created_at: new Date().toISOString() };
  const manifest: SnapshotManifest = { ...unsealed, mac: await seal(store, unsealed, temporary) };
  await rename(temporary, join(store.dir, `snapshot-${id}.db`));
  await writeFile(join(store.dir, `.saving-${id}.json`), JSON.stringify(manifest, null, 2));
  await rename(join(store.dir, `.saving-${id}.json`), join(store.dir, `snapshot-${id}.json`));
  for (const old of (await manifests(store)).slice(Math.max(1, store.kept))) {
    await rm(join(store.dir, `snapshot-${old.id}.json`), { force: true });
    await rm(join(store.dir, `snapshot-${old.id}.db`), { force: true });
  }
  return id;
}
