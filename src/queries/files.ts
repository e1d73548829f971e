/**
 * Reads of the files read model (src/projections/files.ts). Only the owner reads a file: every
 * read for a caller is scoped to one (tenant, user), and a deleted, missing or someone else's file
 * is the same `undefined`.
 */
import type { FilesTable } from '../adapters/sql/schema.js';
import type { ReadModelDb } from '../projections/runtime/projection.js';

export interface FileOwner {
  tenantId: string;
  userId: string;
}

/** The owner's live file, or undefined (deleted, missing, or not the owner's). */
export function findOwnFile(db: ReadModelDb, owner: FileOwner, id: string): Promise<FilesTable | undefined> {
  return db.selectFrom('files').selectAll().where('id', '=', id).where('user_id', '=', owner.userId).where('tenant_id', '=', owner.tenantId).where('deleted', '=', 0).executeTakeFirst();
}

/** The owner's deleted file (its tombstone), or undefined. */
export function findOwnDeletedFile(db: ReadModelDb, owner: FileOwner, id: string): Promise<FilesTable | undefined> {
  return db.selectFrom('files').selectAll().where('id', '=', id).where('user_id', '=', owner.userId).where('tenant_id', '=', owner.tenantId).where('deleted', '=', 1).executeTakeFirst();
}

export interface FilePage {
  limit: number;
  order: 'asc' | 'desc';
  /** A file id: the page starts after it (ids are time-ordered). */
  after?: string;
  purpose?: string;
}

/** The owner's live files in id (= upload time) order. */
export function listOwnFiles(db: ReadModelDb, owner: FileOwner, page: FilePage): Promise<FilesTable[]> {
  let query = db.selectFrom('files').selectAll().where('tenant_id', '=', owner.tenantId).where('user_id', '=', owner.userId).where('deleted', '=', 0);
  if (page.after !== undefined) query = query.where('id', page.order === 'asc' ? '>' : '<', page.after);
  if (page.purpose !== undefined) query = query.where('purpose', '=', page.purpose);
  return query.orderBy('id', page.order).limit(page.limit).execute();
}

/** Bytes the tenant's live files take (what the storage quota counts). */
export async function tenantStoredBytes(db: ReadModelDb, tenantId: string): Promise<number> {
  const row = await db
    .selectFrom('files')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<number | string>('bytes'), eb.val(0)).as('bytes'))
    .where('tenant_id', '=', tenantId)
    .where('deleted', '=', 0)
    .executeTakeFirstOrThrow();
  return Number(row.bytes);
}

export interface FileUsageRow {
  tenant_id: string;
  user_id: string;
  status: string;
  files: number;
  bytes: number;
}

/** Counts and bytes of live files per user and status (null tenant: every tenant). No names, no content. */
export async function fileUsage(db: ReadModelDb, tenantId: string | null): Promise<FileUsageRow[]> {
  let query = db
    .selectFrom('files')
    .select((eb) => ['tenant_id', 'user_id', 'status', eb.fn.countAll<number | string>().as('files'), eb.fn.sum<number | string>('bytes').as('bytes')])
    .where('deleted', '=', 0)
    .groupBy(['tenant_id', 'user_id', 'status'])
    .orderBy('tenant_id')
    .orderBy('user_id')
    .orderBy('status');
  if (tenantId !== null) query = query.where('tenant_id', '=', tenantId);
  const rows = await query.execute();
  return rows.map((r) => ({ tenant_id: r.tenant_id, user_id: r.user_id, status: r.status, files: Number(r.files), bytes: Number(r.bytes) }));
}

/** Live files in `status` (startup's look for work a dead instance left), oldest first. */
export function filesInStatus(db: ReadModelDb, status: 'uploaded' | 'processing', limit: number): Promise<Array<Pick<FilesTable, 'id' | 'tenant_id' | 'processing_started_at'>>> {
  return db.selectFrom('files').select(['id', 'tenant_id', 'processing_started_at']).where('status', '=', status).where('deleted', '=', 0).orderBy('id').limit(limit).execute();
}

/** Any file row, live or not, by id: for the processing runner (not for callers). */
export function fileById(db: ReadModelDb, id: string): Promise<FilesTable | undefined> {
  return db.selectFrom('files').selectAll().where('id', '=', id).executeTakeFirst();
}
