/**
 * The OCR hooks of the extractors (issue 18). Images are OCR'd whole; a PDF page without a text
 * layer (a scan) is handed over as the pdf.js page so the engine can render it. Until an OCR
 * engine is built in, `loadOcr` answers null: images end in `file_processing_error` ("OCR not
 * available") and PDF pages without text contribute nothing.
 */
import type { PDFPageProxy } from 'pdfjs-dist/legacy/build/pdf.mjs';
import type { Config } from '../../config.js';

export interface Ocr {
  /** The text recognised in one image (PNG, JPEG, WebP, TIFF or BMP). */
  image(bytes: Uint8Array, mimeType: string): Promise<string>;
  /** The text recognised on one PDF page that has no text layer. */
  pdfPage(page: PDFPageProxy): Promise<string>;
}

export type OcrSettings = Config['files']['ocr'];

/** The OCR engine for these settings, or null when OCR is off or there is no engine. Runs in the worker. */
export function loadOcr(settings: OcrSettings): Promise<Ocr | null> {
  if (!settings.enabled) return Promise.resolve(null);
  // No engine is built in yet (the OCR step of issue 18 fills this in): OCR on, but nothing to run it.
  return Promise.resolve(null);
}
