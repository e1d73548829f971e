/**
 * The schema steps of the 1.x chain, run in the legacy database itself. Each one is resumable:
 * MySQL/MariaDB commit every DDL statement on their own, so a step killed half-way is simply run
 * again; it looks at what the database has (columns, indexes, rows still to convert) rather than
 * assuming where it stopped. The version row is written last, when the step is complete.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { dirname, extname, join } from 'node:path';
import type { Kysely } from 'kysely';
import type { SqlDialectName } from '../adapters/sql/database.js';
import {
  addLegacyColumn,
  createLegacyTable,
  dropIndexIfExists,
  ensureIndex,
  LEGACY_TABLES,
  liveColumns,
  schemaAt,
  VERSION_DESCRIPTIONS,
  type LegacyVersion,
} from './legacy/schema.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type LegacyDb = Kysely<any>;

export interface StepContext {
  db: LegacyDb;
  dialect: SqlDialectName;
  /** The installation's uploads directory (checked to exist when the files table has rows). */
  uploads: string | null;
  /** A line for the operator (stdout). */
  say(line: string): void;
  /** Progress of a long loop (stderr). */
  progress(label: string, total: number): { tick(n?: number): void; finish(): void };
}

export async function countRows(db: LegacyDb, table: string, where?: (qb: any) => any): Promise<number> { // eslint-disable-line @typescript-eslint/no-explicit-any
  let query = db.selectFrom(table).select((eb) => eb.fn.countAll().as('n'));
  if (where) query = where(query);
  const row = (await query.executeTakeFirst()) as { n: number | string | bigint } | undefined;
  return Number(row?.n ?? 0);
}

/** Rows of a table in id order, a page at a time (tables of big installations do not fit in memory). */
export async function* pagesOf(db: LegacyDb, table: string, pageSize = 500, where?: (qb: any) => any): AsyncGenerator<Array<Record<string, any>>> { // eslint-disable-line @typescript-eslint/no-explicit-any
  let after = -1;
  for (;;) {
    let query = db.selectFrom(table).selectAll().where('id', '>', after).orderBy('id').limit(pageSize);
    if (where) query = where(query);
    const rows = (await query.execute()) as Array<Record<string, any>>; // eslint-disable-line @typescript-eslint/no-explicit-any
    if (rows.length === 0) return;
    yield rows;
    after = Number(rows[rows.length - 1]!.id);
    if (rows.length < pageSize) return;
  }
}

/** Adds every column `version` introduced that the database does not have yet. */
async function addColumnsOf(ctx: StepContext, version: LegacyVersion): Promise<string[]> {
  const live = await liveColumns(ctx.db);
  const added: string[] = [];
  for (const table of LEGACY_TABLES) {
    if (table.since === version) continue; // new tables are created whole
    for (const column of table.columns.filter((c) => c.since === version)) {
      if (live.get(table.name)?.has(column.name)) continue;
      await addLegacyColumn(ctx.db, ctx.dialect, table.name, column);
      added.push(`${table.name}.${column.name}`);
    }
  }
  return added;
}

/** Drops what `version` removed (indexes first: SQLite will not drop an indexed column). */
async function dropRemovedIn(ctx: StepContext, version: LegacyVersion): Promise<string[]> {
  const live = await liveColumns(ctx.db);
  const dropped: string[] = [];
  for (const table of LEGACY_TABLES) {
    for (const index of table.indexes.filter((i) => i.until === version)) await dropIndexIfExists(ctx.db, ctx.dialect, table.name, index.name);
    for (const column of table.columns.filter((c) => c.until === version)) {
      if (!live.get(table.name)?.has(column.name)) continue;
      await ctx.db.schema.alterTable(table.name).dropColumn(column.name).execute();
      dropped.push(`${table.name}.${column.name}`);
    }
  }
  return dropped;
}

async function createIndexesOf(ctx: StepContext, version: LegacyVersion): Promise<void> {
  for (const table of LEGACY_TABLES) {
    if (table.since === version) continue;
    for (const index of table.indexes.filter((i) => i.since === version)) await ensureIndex(ctx.db, ctx.dialect, table.name, index);
  }
}

export async function recordVersion(db: LegacyDb, version: LegacyVersion): Promise<void> {
  const there = await db.selectFrom('schema_migrations').select('version').where('version', '=', version).executeTakeFirst();
  if (!there) await db.insertInto('schema_migrations').values({ version, description: VERSION_DESCRIPTIONS[version] }).execute();
}

const CONTENT_TYPES: Record<string, string> = {
  '.txt': 'text/plain',
  '.md': 'text/markdown',
  '.csv': 'text/csv',
  '.json': 'application/json',
  '.html': 'text/html',
  '.pdf': 'application/pdf',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.docx': 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
};

/** The content type 1.7.0 gave uploads made before it (by their name's extension; NULL if unknown). */
export function contentTypeOf(filename: string): string | null {
  return new Map(Object.entries(CONTENT_TYPES)).get(extname(filename).toLowerCase()) ?? null;
}

export function sha256Hex(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

/** Where 2.0 keeps an upload: `<first two hex digits>/<sha256>` under the uploads directory. */
export function contentHashPath(sha256: string): string {
  return `${sha256.slice(0, 2)}/${sha256}`;
}

export interface SchemaStep {
  version: LegacyVersion;
  /** What the step would do, with row counts (the dry run). */
  plan(ctx: StepContext): Promise<string[]>;
  /** Does it (resumably); the caller records the version afterwards. */
  apply(ctx: StepContext): Promise<string[]>;
}

const columnsAdded = (version: LegacyVersion) =>
  LEGACY_TABLES.flatMap((t) => (t.since === version ? [] : t.columns.filter((c) => c.since === version).map((c) => `${t.name}.${c.name}`)));

export const STEP_1_7: SchemaStep = {
  version: '1.7.0',
  async plan(ctx) {
    const keys = await countRows(ctx.db, 'api_keys');
    const files = await countRows(ctx.db, 'files');
    return [`hash ${keys} API key(s) with sha256 and drop the plaintext column api_keys.key`, `add ${columnsAdded('1.7.0').join(', ')}; guess the content type of ${files} file(s) from their names`];
  },
  async apply(ctx) {
    const added = await addColumnsOf(ctx, '1.7.0');
    const live = await liveColumns(ctx.db);
    let hashed = 0;
    if (live.get('api_keys')?.has('key')) {
      const total = await countRows(ctx.db, 'api_keys', (q) => q.where('key_hash', 'is', null));
      const bar = ctx.progress('1.7.0 hashing API keys', total);
      for await (const page of pagesOf(ctx.db, 'api_keys', 500, (q) => q.where('key_hash', 'is', null))) {
        for (const row of page) {
          const secret = String(row.key);
          await ctx.db.updateTable('api_keys').set({ key_hash: sha256Hex(secret), key_prefix: secret.slice(0, 8) }).where('id', '=', row.id).execute();
          hashed++;
        }
        bar.tick(page.length);
      }
      bar.finish();
    }
    let typed = 0;
    for await (const page of pagesOf(ctx.db, 'files', 500, (q) => q.where('content_type', 'is', null))) {
      for (const row of page) {
        const type = contentTypeOf(String(row.filename));
        if (!type) continue;
        await ctx.db.updateTable('files').set({ content_type: type }).where('id', '=', row.id).execute();
        typed++;
      }
    }
    const dropped = await dropRemovedIn(ctx, '1.7.0');
    await createIndexesOf(ctx, '1.7.0');
    return [`hashed ${hashed} API key(s)`, `content types set on ${typed} file(s)`, ...(added.length > 0 ? [`added ${added.join(', ')}`] : []), ...(dropped.length > 0 ? [`dropped ${dropped.join(', ')}`] : [])];
  },
};

export const STEP_1_8: SchemaStep = {
  version: '1.8.0',
  async plan() {
    return [`add ${columnsAdded('1.8.0').join(', ')} (weight 1, no mapping, not pinned or archived, keys never expire)`];
  },
  async apply(ctx) {
    const added = await addColumnsOf(ctx, '1.8.0');
    await createIndexesOf(ctx, '1.8.0');
    return [added.length > 0 ? `added ${added.join(', ')}` : 'columns already there'];
  },
};

export const STEP_1_9: SchemaStep = {
  version: '1.9.0',
  async plan(ctx) {
    const shared = await countRows(ctx.db, 'presets', (q) => q.where('user_id', 'is', null));
    return [`add ${columnsAdded('1.9.0').join(', ')}`, `make ${shared} shared preset(s) (no owner) visible to the team`];
  },
  async apply(ctx) {
    const added = await addColumnsOf(ctx, '1.9.0');
    const shared = await ctx.db.updateTable('presets').set({ visibility: 'team' }).where('user_id', 'is', null).where('visibility', '=', 'private').executeTakeFirst();
    await createIndexesOf(ctx, '1.9.0');
    return [...(added.length > 0 ? [`added ${added.join(', ')}`] : []), `${Number(shared.numUpdatedRows)} shared preset(s) made team-visible`];
  },
};

/** The roles 2.0.0 creates, with fixed ids (re-runs insert nothing twice). */
export const LEGACY_ROLES = [
  { id: 1, name: 'admin', description: 'Administrators: everything, including users, channels and settings', permissions: ['chat', 'files.own', 'keys.own', 'presets.own', 'admin.users', 'admin.channels', 'admin.keys', 'admin.settings'] },
  { id: 2, name: 'user', description: 'Users: chat, their own files, keys and presets', permissions: ['chat', 'files.own', 'keys.own', 'presets.own'] },
] as const;

/** 2.0.0, schema part 1: roles, permissions and user_roles from users.is_admin, which then goes. */
export async function applyRoles(ctx: StepContext): Promise<string[]> {
  for (const table of schemaAt('2.0.0').filter((t) => t.since === '2.0.0')) await createLegacyTable(ctx.db, ctx.dialect, table, true);
  for (const role of LEGACY_ROLES) {
    if (!(await ctx.db.selectFrom('roles').select('id').where('id', '=', role.id).executeTakeFirst())) await ctx.db.insertInto('roles').values({ id: role.id, name: role.name, description: role.description }).execute();
    const have = new Set((await ctx.db.selectFrom('permissions').select('permission').where('role_id', '=', role.id).execute()).map((r) => String(r.permission)));
    const missing = role.permissions.filter((p) => !have.has(p));
    if (missing.length > 0) await ctx.db.insertInto('permissions').values(missing.map((permission) => ({ role_id: role.id, permission }))).execute();
  }
  let admins = 0;
  let users = 0;
  if ((await liveColumns(ctx.db)).get('users')?.has('is_admin')) {
    const withRole = new Set((await ctx.db.selectFrom('user_roles').select('user_id').execute()).map((r) => Number(r.user_id)));
    for await (const page of pagesOf(ctx.db, 'users', 1000)) {
      const rows = page.filter((u) => !withRole.has(Number(u.id))).map((u) => ({ user_id: u.id, role_id: Number(u.is_admin) === 1 ? 1 : 2 }));
      admins += rows.filter((r) => r.role_id === 1).length;
      users += rows.length - rows.filter((r) => r.role_id === 1).length;
      if (rows.length > 0) await ctx.db.insertInto('user_roles').values(rows).execute();
    }
  }
  const dropped = await dropRemovedIn(ctx, '2.0.0');
  return [`roles admin and user; ${admins} user(s) given admin, ${users} given user${dropped.length > 0 ? `; dropped ${dropped.join(', ')}` : ''}`];
}

export interface RenamedFiles {
  renamed: number;
  /** Rows whose bytes are not in the uploads directory (kept as they are, not imported). */
  missing: Array<{ id: number; path: string }>;
}

/**
 * 2.0.0, schema part 2: every upload moves to its content-hash name. Per row: the checksum is
 * written first (from the bytes), then the file is moved, then the path is updated; a re-run
 * finds a moved file by its checksum. Two rows with the same bytes end up sharing one file.
 */
export async function renameFiles(ctx: StepContext): Promise<RenamedFiles> {
  const uploads = ctx.uploads;
  const total = await countRows(ctx.db, 'files');
  const result: RenamedFiles = { renamed: 0, missing: [] };
  if (total === 0 || !uploads) return result;
  const bar = ctx.progress('2.0.0 renaming files', total);
  for await (const page of pagesOf(ctx.db, 'files', 500)) {
    for (const row of page) {
      const id = Number(row.id);
      const path = String(row.path);
      let sha256 = row.sha256 ? String(row.sha256) : null;
      const source = join(uploads, path);
      if (sha256 && path === contentHashPath(sha256) && existsSync(source)) {
        bar.tick(); // done by an earlier run
        continue;
      }
      if (existsSync(source)) {
        const computed = sha256Hex(readFileSync(source));
        if (computed !== sha256) await ctx.db.updateTable('files').set({ sha256: computed }).where('id', '=', id).execute();
        sha256 = computed;
        const target = join(uploads, contentHashPath(sha256));
        if (target !== source) {
          mkdirSync(dirname(target), { recursive: true });
          if (existsSync(target)) rmSync(source);
          else renameSync(source, target);
        }
      } else if (!sha256 || !existsSync(join(uploads, contentHashPath(sha256)))) {
        result.missing.push({ id, path });
        continue;
      }
      await ctx.db.updateTable('files').set({ path: contentHashPath(sha256) }).where('id', '=', id).execute();
      result.renamed++;
      bar.tick();
    }
  }
  bar.finish();
  return result;
}
