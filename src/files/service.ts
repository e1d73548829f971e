/**
 * The files core (issue 18): uploads streamed to storage and recorded, deletions that release the
 * shared bytes, reads of the bytes and the extracted text, and the FileAttachments port for chat.
 *
 * Bytes are content-addressed (`uploads/<xx>/<sha256>`, src/ports/storage.ts): an upload streams to
 * a temp key first (its hash is known only at the end), then references the blob `blob-<sha256>`
 * (src/commands/files/blob-decider.ts), copying the bytes to their address when no file holds them
 * yet. Every blob change is appended at the version it was decided on, so on any number of
 * instances the bytes go exactly when the last file using them is deleted.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Readable } from 'node:stream';
import { text as readAll } from 'node:stream/consumers';
import type { FilesTable } from '../adapters/sql/schema.js';
import type { CommandBus } from '../commands/bus.js';
import { blobs } from '../commands/files/blob-decider.js';
import { fileNotFound, files } from '../commands/files/decider.js';
import { SYSTEM_TENANT } from '../commands/presets/decider.js';
import type { Config } from '../config.js';
import { AppError, ConflictError } from '../errors.js';
import { timeOrderedUuid } from '../ids.js';
import type { Logger } from '../logger.js';
import type { DataKeys } from '../ports/data-keys.js';
import { uploadKey, type Storage } from '../ports/storage.js';
import type { Projectors } from '../projections/runtime/projectors.js';
import type { ReadModelDb } from '../projections/runtime/projection.js';
import { findOwnFile, listOwnFiles, tenantStoredBytes, type FileOwner } from '../queries/files.js';
import type { AttachedFile, FileAttachments } from './attachments.js';
import { chatText } from './chat-text.js';
import { detectMime } from './detect.js';
import { IMAGE_MIMES } from './mime.js';
import { FileNames } from './names.js';
import { quotaExceeded, UploadMeter } from './upload-meter.js';

/** `file-` and 32 hex digits (a version 7 UUID's): time-ordered, so ids sort by upload time. */
export const newFileId = () => `file-${timeOrderedUuid().replace(/-/g, '')}`;

/** Where a file's extracted text is kept. */
export const textKeyOf = (fileId: string) => `texts/${fileId}`;

/** An upload received whole into a temp object, measured. */
export interface ReceivedUpload {
  tmpKey: string;
  bytes: number;
  sha256: string;
  head: Buffer;
}

export interface FileServiceDeps {
  commands: CommandBus;
  storage: Storage;
  db: ReadModelDb;
  dataKeys: DataKeys;
  runner: Projectors;
  config: Config['files'];
  logger: Logger;
  /** The tenant's storage quota in bytes (null: unlimited), from the settings view. */
  quotaOf(tenantId: string): number | null;
}

/** How often an upload waiting for another instance's purge of the same bytes looks again. */
const PURGE_POLL_MS = 100;

export class FileService implements FileAttachments {
  private readonly names: FileNames;

  constructor(private readonly deps: FileServiceDeps) {
    this.names = new FileNames(deps.dataKeys);
  }

  get storage(): Storage {
    return this.deps.storage;
  }

  /** The quota left to the tenant before this upload (null: unlimited). */
  async quotaLeft(tenantId: string): Promise<{ quota: number | null; left: number | null }> {
    const quota = this.deps.quotaOf(tenantId);
    if (quota === null) return { quota, left: null };
    return { quota, left: quota - (await tenantStoredBytes(this.deps.db, tenantId)) };
  }

  /**
   * Streams `body` to a temp object, measuring it; refused (413, nothing kept) past MAX_FILE_SIZE
   * or the quota left.
   */
  async receive(body: Readable, quota: { quota: number | null; left: number | null }): Promise<ReceivedUpload> {
    const meter = new UploadMeter({ maxBytes: this.deps.config.maxSize, quotaLeft: quota.left }, quota.quota);
    const tmpKey = `tmp/${randomUUID()}`;
    let failure: unknown = null;
    body.on('error', (error) => meter.destroy(error));
    meter.on('error', (error) => {
      failure ??= error;
    });
    body.pipe(meter);
    try {
      await this.deps.storage.put(tmpKey, meter);
    } catch (error) {
      await this.deps.storage.delete(tmpKey).catch(() => undefined);
      // The meter's own refusal (413) rather than the storage's report of the stream ending.
      throw failure instanceof AppError ? failure : (failure ?? error);
    }
    // An empty upload when the tenant is already past its quota (no byte went through the meter).
    if (quota.left !== null && meter.bytes > quota.left) {
      await this.deps.storage.delete(tmpKey).catch(() => undefined);
      throw quotaExceeded(quota.quota ?? 0);
    }
    return { tmpKey, bytes: meter.bytes, sha256: meter.sha256(), head: meter.head() };
  }

  /** Drops a received upload that will not become a file. */
  async discard(received: ReceivedUpload): Promise<void> {
    await this.deps.storage.delete(received.tmpKey).catch((error: unknown) => this.deps.logger.warn({ err: error, storage_key: received.tmpKey }, 'could not remove a temp upload'));
  }

  /**
   * Records a received upload as the owner's file: type from content, name sealed, bytes at their
   * address (shared), FileUploaded; answers once the files projection shows it.
   */
  /** `fileId`: given by imports (a stable id per source row), else new. */
  async create(owner: FileOwner, received: ReceivedUpload, filename: string, purpose: string, causationId: string | null, fileId = newFileId()): Promise<FilesTable> {
    try {
      const mimeType = await detectMime(received.head, filename);
      const sealedName = await this.names.seal(owner.userId, fileId, filename);
      // The reference first: a crash before FileUploaded leaks a reference (bytes kept), never a file without bytes.
      const storageKey = await this.reference(fileId, received);
      const result = await this.deps.commands.execute(
        files,
        fileId,
        { type: 'UploadFile', fileId, tenantId: owner.tenantId, userId: owner.userId, filename: sealedName, purpose, bytes: received.bytes, sha256: received.sha256, mimeType, storageKey },
        { tenantId: owner.tenantId, causationId },
      );
      await this.settle(result.position);
      const row = await findOwnFile(this.deps.db, owner, fileId);
      if (!row) throw new Error('an uploaded file is missing from the files projection');
      return row;
    } finally {
      await this.discard(received);
    }
  }

  /** Adds `fileId` to the blob of its bytes, storing them at their address when no file holds them. */
  private async reference(fileId: string, received: ReceivedUpload): Promise<string> {
    const storageKey = uploadKey(received.sha256);
    let stored = false;
    for (;;) {
      try {
        await this.deps.commands.execute(
          blobs,
          received.sha256,
          { type: 'ReferenceBlob', fileId, sha256: received.sha256, storageKey, bytes: received.bytes, stored, now: new Date().toISOString() },
          { tenantId: SYSTEM_TENANT },
        );
        return storageKey;
      } catch (error) {
        const code = error instanceof AppError ? error.code : null;
        if (code === 'blob_absent') {
          const temp = await this.deps.storage.get(received.tmpKey);
          if (!temp) throw new Error('a received upload vanished from storage');
          await this.deps.storage.put(storageKey, temp.body);
          stored = true;
        } else if (code === 'blob_purging') {
          // Another instance is deleting these bytes (perhaps the copy just made): copy again once it is done.
          stored = false;
          await sleep(PURGE_POLL_MS);
        } else {
          throw error;
        }
      }
    }
  }

  /**
   * Deletes the owner's file: FileDeleted, its name's key destroyed, its reference to the bytes
   * released (the last one deletes them), its extracted text deleted; answers once the files
   * projection shows the deletion.
   */
  async delete(owner: FileOwner, row: FilesTable, causationId: string | null): Promise<void> {
    const result = await this.deps.commands.execute(files, row.id, { type: 'DeleteFile', by: owner.userId }, { tenantId: owner.tenantId, causationId });
    await this.finishDeletion(owner, row);
    await this.settle(result.position);
  }

  /** Deletes every live file of the owner (their user is deleted); answers how many. */
  async deleteAllOf(owner: FileOwner, causationId: string | null): Promise<number> {
    let deleted = 0;
    const seen = new Set<string>();
    for (;;) {
      // Rows already handled may still show live while their deletion is being projected.
      const page = (await listOwnFiles(this.deps.db, owner, { limit: 500, order: 'asc' })).filter((row) => !seen.has(row.id));
      if (page.length === 0) return deleted;
      let position: number | null = null;
      for (const row of page) {
        seen.add(row.id);
        position = (await this.deps.commands.execute(files, row.id, { type: 'DeleteFile', by: null }, { tenantId: owner.tenantId, causationId })).position ?? position;
        await this.finishDeletion(owner, row);
        deleted++;
      }
      // The next page is read once these deletions are projected.
      await this.settle(position);
    }
  }

  /** What follows FileDeleted; asking again finishes a deletion cut short (all steps are idempotent). */
  async finishDeletion(owner: FileOwner, row: Pick<FilesTable, 'id' | 'sha256' | 'storage_key'>): Promise<void> {
    await this.names.destroy(owner.userId, row.id);
    const released = await this.deps.commands.execute(blobs, row.sha256, { type: 'ReleaseBlob', fileId: row.id, now: new Date().toISOString() }, { tenantId: SYSTEM_TENANT });
    if (released.state.status === 'purging') {
      await this.deps.storage.delete(row.storage_key);
      await this.deps.commands.execute(blobs, row.sha256, { type: 'FinishPurge' }, { tenantId: SYSTEM_TENANT });
    }
    await this.deps.storage.delete(textKeyOf(row.id));
  }

  private async settle(position: number | null): Promise<void> {
    if (position !== null) await this.deps.runner.waitFor(position, { projections: ['files'] });
  }

  /** The file's original bytes. */
  async content(row: FilesTable): Promise<{ body: Readable; size: number }> {
    const object = await this.deps.storage.get(row.storage_key);
    if (!object) throw new ConflictError("the file's bytes are not in storage", 'file_content_missing');
    return object;
  }

  /** The whole extracted text of a processed file (else 409 file_not_ready). */
  async text(row: FilesTable): Promise<string> {
    assertReady(row);
    const object = await this.deps.storage.get(row.text_key ?? textKeyOf(row.id));
    if (!object) throw new ConflictError("the file's extracted text is not in storage", 'file_not_ready');
    return readAll(object.body);
  }

  // --- FileAttachments ------------------------------------------------------------------------

  async attach(owner: FileOwner, fileId: string): Promise<AttachedFile> {
    const row = await findOwnFile(this.deps.db, owner, fileId);
    if (!row) throw fileNotFound();
    const limit = this.deps.config.textLimit;
    const filename = row.filename ?? '';
    if (IMAGE_MIMES.has(row.mime_type)) {
      assertReady(row);
      const { body } = await this.content(row);
      const bytes = await bufferOf(body);
      const ocr = Number(row.text_chars ?? 0) > 0 ? chatText(await this.text(row), limit) : null;
      return { kind: 'image', id: row.id, filename, mimeType: row.mime_type, dataUrl: `data:${row.mime_type};base64,${bytes.toString('base64')}`, text: ocr?.text ?? null, truncated: ocr?.truncated ?? false };
    }
    const cut = chatText(await this.text(row), limit);
    return { kind: 'text', id: row.id, filename, mimeType: row.mime_type, text: cut.text, truncated: cut.truncated };
  }
}

/** 409 file_not_ready unless processed; a failed file says why. */
export function assertReady(row: Pick<FilesTable, 'status' | 'status_reason'>): void {
  if (row.status === 'processed') return;
  if (row.status === 'error') throw new ConflictError(`the file could not be processed: ${row.status_reason ?? 'unknown reason'}`, 'file_not_ready');
  throw new ConflictError(`the file is not processed yet (status ${row.status})`, 'file_not_ready');
}

async function bufferOf(body: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
