/**
 * The file-processing port (issue 18): text extraction and OCR of one stored file, off the serving
 * thread. The built-in engine (src/files/processing/pool.ts) runs it in a small pool of worker
 * threads; with `FILE_PROCESSING_ENGINE=none` there is no processor and files stay `uploaded`.
 */

export interface ProcessingInput {
  /** A local file holding the bytes (the caller copies an S3 object to a temp file first). */
  path: string;
  /** The detected type (src/files/mime.ts). */
  mimeType: string;
}

export type ProcessingResult =
  | {
      ok: true;
      /** The whole extracted text (never cut here; see FILE_TEXT_LIMIT for chat's cut form). */
      text: string;
      /** PDF pages, when the type has pages. */
      pages: number | null;
      /** Pages or images whose text came from OCR. */
      ocrPages: number;
    }
  | {
      ok: false;
      /** `file_processing_timeout` (past FILE_PROCESSING_TIMEOUT, the worker was terminated) or `file_processing_error`. */
      code: 'file_processing_timeout' | 'file_processing_error';
      /** A short reason for the user: "corrupt PDF", "encrypted document", "unsupported type image/gif"... never a stack. */
      reason: string;
    };

export interface FileProcessor {
  /** Never rejects for a bad file: failures come back as `ok: false`. Rejects only once closed. */
  process(input: ProcessingInput): Promise<ProcessingResult>;
  /** Terminates the workers; running jobs end with `file_processing_error` ("shutting down"). */
  close(): Promise<void>;
}

