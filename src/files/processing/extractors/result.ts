/** Small constructors of ProcessingResult shared by the extractors. */
import type { ProcessingResult } from '../processor.js';

export type Extracted = Extract<ProcessingResult, { ok: true }>;
export type Failed = Extract<ProcessingResult, { ok: false }>;

export const extracted = (text: string, pages: number | null = null, ocrPages = 0): Extracted => ({ ok: true, text, pages, ocrPages });

/** A file that cannot be read as its type: the reason is shown to the user, so it is short and has no internals. */
export const failed = (reason: string): Failed => ({ ok: false, code: 'file_processing_error', reason });
