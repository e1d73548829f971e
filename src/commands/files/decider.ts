/**
 * Files (issue 18): the aggregate `file-<id>`, in its owner's tenant. Status
 * `uploaded -> processing -> processed | error`, then `deleted`.
 *
 * The file name arrives SEALED (the caller seals it with the file's data key); the decider refuses
 * anything else, so a clear name cannot reach the log. Ownership checks are the routes' (404 to
 * anyone but the owner, before any command).
 */
import { ConflictError, DomainError, NotFoundError } from '../../errors.js';
import { isSealedText, type SealedText } from '../../crypto/data-seal.js';
import type { Decider } from '../decider.js';
import { FileEvent } from './events.js';

export type FileStatus = 'none' | 'uploaded' | 'processing' | 'processed' | 'error' | 'deleted';

export interface FileState {
  status: FileStatus;
  tenantId: string | null;
  userId: string | null;
  sha256: string | null;
  storageKey: string | null;
  mimeType: string | null;
  /** When the current processing claim was made (ISO), while `processing`. */
  processingSince: string | null;
  textKey: string | null;
}

export type FileCommand =
  | {
      type: 'UploadFile';
      fileId: string;
      tenantId: string;
      userId: string;
      filename: SealedText;
      purpose: string;
      bytes: number;
      sha256: string;
      mimeType: string;
      storageKey: string;
    }
  /**
   * Claim the file for processing. From `uploaded`; from `processing` only with
   * `reclaimStartedBefore` and a claim older than it (its instance died).
   */
  | { type: 'StartProcessing'; at: string; reclaimStartedBefore?: string }
  | { type: 'CompleteProcessing'; textKey: string; textChars: number; textLimit: number; pages: number | null; ocrPages: number }
  | { type: 'FailProcessing'; code: 'file_processing_timeout' | 'file_processing_error'; reason: string }
  | { type: 'DeleteFile'; by: string | null };

/** Missing, deleted, or someone else's: the same answer. */
export const fileNotFound = () => new NotFoundError('file not found', 'file_not_found');

/** The claim went to another processor (or the file is no longer waiting for one). */
export const processingClaimed = () => new ConflictError('the file is not waiting for processing', 'file_processing_claimed');

const LIVE: ReadonlySet<FileStatus> = new Set(['uploaded', 'processing', 'processed', 'error']);

export const files: Decider<FileCommand, FileState, FileEvent> = {
  category: 'file',
  initialState: { status: 'none', tenantId: null, userId: null, sha256: null, storageKey: null, mimeType: null, processingSince: null, textKey: null },
  events: FileEvent,

  decide(command, state) {
    switch (command.type) {
      case 'UploadFile': {
        if (state.status !== 'none') throw new ConflictError('file already exists', 'file_exists');
        if (!isSealedText(command.filename)) throw new DomainError("filename must be sealed with the file's data key", 'not_sealed');
        return [
          {
            type: 'FileUploaded',
            data: {
              file_id: command.fileId,
              tenant_id: command.tenantId,
              user_id: command.userId,
              filename: command.filename,
              purpose: command.purpose,
              bytes: command.bytes,
              sha256: command.sha256,
              mime_type: command.mimeType,
              storage_key: command.storageKey,
            },
          },
        ];
      }
      case 'StartProcessing': {
        const stale = state.status === 'processing' && command.reclaimStartedBefore !== undefined && state.processingSince !== null && state.processingSince < command.reclaimStartedBefore;
        if (state.status !== 'uploaded' && !stale) throw processingClaimed();
        return [{ type: 'FileProcessingStarted', data: { at: command.at } }];
      }
      case 'CompleteProcessing':
        // Deleted (or finished by another claim) meanwhile: the result is not wanted.
        if (state.status !== 'processing') return [];
        return [
          {
            type: 'FileProcessed',
            data: { text_key: command.textKey, text_chars: command.textChars, truncated: command.textChars > command.textLimit, pages: command.pages, ocr_pages: command.ocrPages },
          },
        ];
      case 'FailProcessing':
        if (state.status !== 'processing') return [];
        return [{ type: 'FileProcessingFailed', data: { code: command.code, reason: command.reason } }];
      case 'DeleteFile':
        if (state.status === 'deleted') return [];
        if (!LIVE.has(state.status)) throw fileNotFound();
        return [{ type: 'FileDeleted', data: { by: command.by } }];
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'FileUploaded':
        return { ...state, status: 'uploaded', tenantId: event.data.tenant_id, userId: event.data.user_id, sha256: event.data.sha256, storageKey: event.data.storage_key, mimeType: event.data.mime_type };
      case 'FileProcessingStarted':
        return { ...state, status: 'processing', processingSince: event.data.at };
      case 'FileProcessed':
        return { ...state, status: 'processed', processingSince: null, textKey: event.data.text_key };
      case 'FileProcessingFailed':
        return { ...state, status: 'error', processingSince: null };
      case 'FileDeleted':
        return { ...state, status: 'deleted', processingSince: null };
    }
  },
};
