/**
 * Files read model (`files`; migration 0150): one row per uploaded file with its name in the
 * clear, opened from the sealed event with the file's data key (src/files/names.ts) read through
 * the projection's own transaction. A name whose key is destroyed cannot be opened: the file was
 * deleted (the key goes right after FileDeleted), so it is projected as a tombstone (no name,
 * `deleted` = 1) — a rebuild after a deletion shows it deleted even before its FileDeleted
 * event. `UserDeleted` (users aggregate) drops the names of the user's files.
 *
 * On SQLite the writes run with `secure_delete` on (as the conversations projection): a name
 * overwritten by NULL does not stay in the file's free pages.
 */
import type { Updateable } from 'kysely';
import type { FilesTable } from '../adapters/sql/schema.js';
import { readDataKey } from '../adapters/data-keys/sql.js';
import { FILE_EVENT_TYPES, FileEvent } from '../commands/files/events.js';
import type { SecretBox } from '../crypto/secret-box.js';
import { fileKeyScope, openFileName } from '../files/names.js';
import type { StoredEvent } from '../ports/event-store.js';
import type { Projection, ReadModelDb } from './runtime/projection.js';
import { securedProjection } from './runtime/secure-delete.js';

export const fileIdOf = (stream: string) => stream.slice('file-'.length);

const USER_DELETED = 'UserDeleted';

const tombstone = (stored: StoredEvent): Updateable<FilesTable> => ({ filename: null, deleted: 1, deleted_at: stored.occurred_at });

async function applyEvent(trx: ReadModelDb, box: SecretBox, stored: StoredEvent): Promise<void> {
  if (stored.type === USER_DELETED) {
    const userId = (stored.data as { user_id?: unknown }).user_id;
    if (typeof userId === 'string') await trx.updateTable('files').set({ filename: null }).where('user_id', '=', userId).execute();
    return;
  }
  const parsed = FileEvent.safeParse({ type: stored.type, data: stored.data });
  if (!parsed.success) return;
  const event = parsed.data;
  const id = fileIdOf(stored.stream);
  const update = (set: Updateable<FilesTable>) => trx.updateTable('files').set(set).where('id', '=', id).where('deleted', '=', 0).execute();

  switch (event.type) {
    case 'FileUploaded': {
      const d = event.data;
      const key = await readDataKey(trx, box, fileKeyScope(d.user_id, id));
      // null: destroyed (the file was deleted); undefined: never made (nothing to open either).
      const filename = key ? openFileName(key, id, d.filename) : null;
      await trx
        .insertInto('files')
        .values({
          id,
          tenant_id: stored.tenant_id,
          user_id: d.user_id,
          filename,
          purpose: d.purpose,
          bytes: d.bytes,
          sha256: d.sha256,
          mime_type: d.mime_type,
          storage_key: d.storage_key,
          status: 'uploaded',
          status_code: null,
          status_reason: null,
          processing_started_at: null,
          text_key: null,
          text_chars: null,
          truncated: 0,
          pages: null,
          ocr_pages: null,
          created_at: stored.occurred_at,
          processed_at: null,
          deleted: filename === null ? 1 : 0,
          deleted_at: filename === null ? stored.occurred_at : null,
        })
        .execute();
      return;
    }
    case 'FileProcessingStarted':
      await update({ status: 'processing', processing_started_at: event.data.at, status_code: null, status_reason: null });
      return;
    case 'FileProcessed': {
      const d = event.data;
      await update({ status: 'processed', text_key: d.text_key, text_chars: d.text_chars, truncated: d.truncated ? 1 : 0, pages: d.pages, ocr_pages: d.ocr_pages, processed_at: stored.occurred_at });
      return;
    }
    case 'FileProcessingFailed':
      await update({ status: 'error', status_code: event.data.code, status_reason: event.data.reason, processed_at: stored.occurred_at });
      return;
    case 'FileDeleted':
      await update(tombstone(stored));
      return;
  }
}

/** `dataKeys`: opens the sealed keys of `data_keys` (`new SecretBox(secret, 'data-keys')`, as SqlDataKeys). */
export function filesProjection(dataKeys: SecretBox): Projection {
  return securedProjection({
    name: 'files',
    version: 1,
    eventTypes: [...FILE_EVENT_TYPES, USER_DELETED],
    tables: ['files'],
    applyEvent: (trx, stored) => applyEvent(trx, dataKeys, stored),
  });
}
