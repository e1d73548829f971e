/** Given / when / then over the files and blobs deciders: pure, no I/O. */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { blobs, PURGE_STALE_MS } from '../../src/commands/files/blob-decider.js';
import { files, type FileCommand } from '../../src/commands/files/decider.js';
import type { BlobEvent, FileEvent } from '../../src/commands/files/events.js';
import { sealText } from '../../src/crypto/data-seal.js';
import { ConflictError, DomainError, NotFoundError } from '../../src/errors.js';
import { DeciderSpec } from '../support/decider-spec.js';

const fileSpec = DeciderSpec.for(files);
const blobSpec = DeciderSpec.for(blobs);
const name = sealText(randomBytes(32), 'report.pdf');
const sha = 'ab'.repeat(32);
const key = `uploads/ab/${sha}`;

const upload: FileCommand = { type: 'UploadFile', fileId: 'file-1', tenantId: 't1', userId: 'u1', filename: name, purpose: 'chat', bytes: 10, sha256: sha, mimeType: 'application/pdf', storageKey: key };
const uploaded: FileEvent = {
  type: 'FileUploaded',
  data: { file_id: 'file-1', tenant_id: 't1', user_id: 'u1', filename: name, purpose: 'chat', bytes: 10, sha256: sha, mime_type: 'application/pdf', storage_key: key },
};
const started = (at: string): FileEvent => ({ type: 'FileProcessingStarted', data: { at } });
const processed: FileEvent = { type: 'FileProcessed', data: { text_key: 'texts/file-1', text_chars: 12, truncated: false, pages: 1, ocr_pages: 0 } };
const deleted: FileEvent = { type: 'FileDeleted', data: { by: 'u1' } };

describe('files decider', () => {
  it('records an upload with its sealed name, once', () => {
    fileSpec.given([]).when(upload).then([uploaded]);
    expect(fileSpec.given([uploaded]).state).toMatchObject({ status: 'uploaded', tenantId: 't1', userId: 'u1', sha256: sha, storageKey: key });
    fileSpec.given([uploaded]).when(upload).thenThrows(ConflictError, { code: 'file_exists' });
    fileSpec.given([]).when({ ...upload, filename: 'report.pdf' }).thenThrows(DomainError, { code: 'not_sealed' });
  });

  it('lets one processor claim an uploaded file; a live claim cannot be taken, a stale one can', () => {
    const t0 = '2026-11-25T10:00:00.000Z';
    fileSpec.given([uploaded]).when({ type: 'StartProcessing', at: t0 }).then([started(t0)]);
    fileSpec.given([uploaded, started(t0)]).when({ type: 'StartProcessing', at: t0 }).thenThrows(ConflictError, { code: 'file_processing_claimed' });
    // Reclaim: only claims made before the cut-off.
    fileSpec.given([uploaded, started(t0)]).when({ type: 'StartProcessing', at: t0, reclaimStartedBefore: '2026-11-25T09:59:00.000Z' }).thenThrows(ConflictError);
    const t1 = '2026-11-25T10:05:00.000Z';
    fileSpec.given([uploaded, started(t0)]).when({ type: 'StartProcessing', at: t1, reclaimStartedBefore: '2026-11-25T10:04:00.000Z' }).then([started(t1)]);
    fileSpec.given([uploaded, started(t0), processed]).when({ type: 'StartProcessing', at: t1, reclaimStartedBefore: t1 }).thenThrows(ConflictError);
    fileSpec.given([uploaded, deleted]).when({ type: 'StartProcessing', at: t1 }).thenThrows(ConflictError);
  });

  it('marks a text longer than the limit as truncated; results after a deletion are dropped', () => {
    const t0 = '2026-11-25T10:00:00.000Z';
    const complete = (textChars: number): FileCommand => ({ type: 'CompleteProcessing', textKey: 'texts/file-1', textChars, textLimit: 100, pages: null, ocrPages: 0 });
    fileSpec.given([uploaded, started(t0)]).when(complete(100)).then([{ type: 'FileProcessed', data: { text_key: 'texts/file-1', text_chars: 100, truncated: false, pages: null, ocr_pages: 0 } }]);
    fileSpec.given([uploaded, started(t0)]).when(complete(101)).then([{ type: 'FileProcessed', data: { text_key: 'texts/file-1', text_chars: 101, truncated: true, pages: null, ocr_pages: 0 } }]);
    fileSpec.given([uploaded, started(t0), deleted]).when(complete(5)).thenNothingHappened();
    fileSpec.given([uploaded]).when(complete(5)).thenNothingHappened();
    fileSpec
      .given([uploaded, started(t0)])
      .when({ type: 'FailProcessing', code: 'file_processing_timeout', reason: 'took longer than 60 s' })
      .then([{ type: 'FileProcessingFailed', data: { code: 'file_processing_timeout', reason: 'took longer than 60 s' } }]);
    expect(fileSpec.given([uploaded, started(t0), processed]).state).toMatchObject({ status: 'processed', textKey: 'texts/file-1', processingSince: null });
  });

  it('deletes a live file once; a missing one is not found', () => {
    fileSpec.given([uploaded, started('x'), processed]).when({ type: 'DeleteFile', by: 'u1' }).then([deleted]);
    fileSpec.given([uploaded, deleted]).when({ type: 'DeleteFile', by: 'u1' }).thenNothingHappened();
    fileSpec.given([]).when({ type: 'DeleteFile', by: 'u1' }).thenThrows(NotFoundError, { code: 'file_not_found' });
  });
});

describe('blobs decider', () => {
  const now = '2026-11-25T10:00:00.000Z';
  const ref = (fileId: string, stored = false) => ({ type: 'ReferenceBlob' as const, fileId, sha256: sha, storageKey: key, bytes: 10, stored, now });
  const storedEv: BlobEvent = { type: 'BlobStored', data: { sha256: sha, storage_key: key, bytes: 10 } };
  const refd = (fileId: string): BlobEvent => ({ type: 'BlobReferenced', data: { file_id: fileId } });
  const released = (fileId: string): BlobEvent => ({ type: 'BlobReleased', data: { file_id: fileId } });
  const purging = (at: string): BlobEvent => ({ type: 'BlobPurging', data: { at } });
  const purged: BlobEvent = { type: 'BlobPurged', data: {} };

  it('asks the first uploader to store the bytes, then records them with its reference', () => {
    blobSpec.given([]).when(ref('f1')).thenThrows(DomainError, { code: 'blob_absent' });
    blobSpec.given([]).when(ref('f1', true)).then([storedEv, refd('f1')]);
  });

  it('shares stored bytes: later uploads only reference them (even if they copied them too)', () => {
    blobSpec.given([storedEv, refd('f1')]).when(ref('f2')).then([refd('f2')]);
    blobSpec.given([storedEv, refd('f1')]).when(ref('f2', true)).then([refd('f2')]);
    blobSpec.given([storedEv, refd('f1')]).when(ref('f1')).thenNothingHappened();
  });

  it('purges on the last release only', () => {
    const two = [storedEv, refd('f1'), refd('f2')];
    blobSpec.given(two).when({ type: 'ReleaseBlob', fileId: 'f1', now }).then([released('f1')]);
    blobSpec.given([...two, released('f1')]).when({ type: 'ReleaseBlob', fileId: 'f2', now }).then([released('f2'), purging(now)]);
    blobSpec.given([...two, released('f1')]).when({ type: 'ReleaseBlob', fileId: 'f1', now }).thenNothingHappened();
    blobSpec.given([...two, released('f1'), released('f2'), purging(now)]).when({ type: 'FinishPurge' }).then([purged]);
    blobSpec.given(two).when({ type: 'FinishPurge' }).thenNothingHappened();
  });

  it('makes an upload wait while a purge runs; a stale purge counts as over; after it, bytes are stored again', () => {
    const purgingNow = [storedEv, refd('f1'), released('f1'), purging(now)];
    blobSpec.given(purgingNow).when(ref('f2', true)).thenThrows(DomainError, { code: 'blob_purging' });
    const later = new Date(Date.parse(now) + PURGE_STALE_MS + 1).toISOString();
    blobSpec.given(purgingNow).when({ ...ref('f2', true), now: later }).then([storedEv, refd('f2')]);
    blobSpec.given([...purgingNow, purged]).when(ref('f2')).thenThrows(DomainError, { code: 'blob_absent' });
    blobSpec.given([...purgingNow, purged]).when(ref('f2', true)).then([storedEv, refd('f2')]);
    expect(blobSpec.given([...purgingNow, purged, storedEv, refd('f2')]).state).toMatchObject({ status: 'stored', refs: new Set(['f2']) });
  });
});
