/**
 * Events of uploaded files (issue 18): the aggregate `file-<file id>` (ids `file-<32 hex>`), in its
 * owner's tenant, and the content-addressed bytes they share: the aggregate `blob-<sha256>`.
 *
 * The file name is a user text: SEALED with the file's data key (scope `user:<userId>:file:<id>`,
 * src/files/names.ts), like conversation texts (decision 0120). Deleting the file destroys the key,
 * so the name left in the log can no longer be opened. The bytes themselves are in storage under
 * `uploads/<xx>/<sha256>`; the blob aggregate counts the files using them so that they go when the
 * last one is deleted, whichever instance deletes it.
 *
 * Other fields are deliberately loose (plain strings) so history written under older rules parses.
 */
import { z } from 'zod';
import { SealedTextSchema } from '../conversations/events.js';

export const FileUploaded = z.object({
  type: z.literal('FileUploaded'),
  data: z.object({
    file_id: z.string(),
    /** The owner: only this user of this tenant reads or uses the file. */
    tenant_id: z.string(),
    user_id: z.string(),
    filename: SealedTextSchema,
    /** As the uploader gave it (`chat` for the UI's uploads). */
    purpose: z.string(),
    bytes: z.number().int().nonnegative(),
    sha256: z.string(),
    /** Detected from the content (src/files/detect.ts), never taken from the name for binary types. */
    mime_type: z.string(),
    storage_key: z.string(),
  }),
});

/**
 * A processor claimed the file (appended at the version it read: one instance wins). `at`: when,
 * so that a claim left by a dead instance can be taken over once FILE_PROCESSING_TIMEOUT passed.
 */
export const FileProcessingStarted = z.object({ type: z.literal('FileProcessingStarted'), data: z.object({ at: z.string() }) });

export const FileProcessed = z.object({
  type: z.literal('FileProcessed'),
  data: z.object({
    /** Storage key of the extracted text (UTF-8). */
    text_key: z.string(),
    text_chars: z.number().int().nonnegative(),
    /** text_chars > FILE_TEXT_LIMIT: chat uses a cut form that says so. */
    truncated: z.boolean(),
    pages: z.number().int().nullable(),
    ocr_pages: z.number().int().nonnegative(),
  }),
});

export const FileProcessingFailed = z.object({
  type: z.literal('FileProcessingFailed'),
  data: z.object({
    /** file_processing_timeout | file_processing_error */
    code: z.string(),
    reason: z.string(),
  }),
});

/** The file is gone; its data key is destroyed beside this event, its bytes released (blob). */
export const FileDeleted = z.object({ type: z.literal('FileDeleted'), data: z.object({ by: z.string().nullable() }) });

export const FileEvent = z.discriminatedUnion('type', [FileUploaded, FileProcessingStarted, FileProcessed, FileProcessingFailed, FileDeleted]);
export type FileEvent = z.infer<typeof FileEvent>;

export const FILE_EVENT_TYPES = ['FileUploaded', 'FileProcessingStarted', 'FileProcessed', 'FileProcessingFailed', 'FileDeleted'] as const satisfies ReadonlyArray<FileEvent['type']>;

// --- blobs: the bytes under one sha256, shared by every file with that content -----------------

/** The bytes were written under `storage_key` (before this event: a writer copies, then appends). */
export const BlobStored = z.object({ type: z.literal('BlobStored'), data: z.object({ sha256: z.string(), storage_key: z.string(), bytes: z.number().int().nonnegative() }) });
export const BlobReferenced = z.object({ type: z.literal('BlobReferenced'), data: z.object({ file_id: z.string() }) });
export const BlobReleased = z.object({ type: z.literal('BlobReleased'), data: z.object({ file_id: z.string() }) });
/** The last reference went: the releaser deletes the object. Until BlobPurged, uploads of the same bytes wait. */
export const BlobPurging = z.object({ type: z.literal('BlobPurging'), data: z.object({ at: z.string() }) });
export const BlobPurged = z.object({ type: z.literal('BlobPurged'), data: z.object({}) });

export const BlobEvent = z.discriminatedUnion('type', [BlobStored, BlobReferenced, BlobReleased, BlobPurging, BlobPurged]);
export type BlobEvent = z.infer<typeof BlobEvent>;
