/** Text extraction by detected type (src/files/mime.ts): one extractor module per kind of file. */
import { IMAGE_MIMES, MIME } from '../../mime.js';
import type { Ocr } from '../ocr.js';
import type { PdfJsAssets } from '../pdfjs-assets.js';
import type { ProcessingResult } from '../processor.js';
import { extractDocx } from './docx.js';
import { extractHtml } from './html.js';
import { extractImage } from './image.js';
import { extractPdf, loadPdfJs } from './pdf.js';
import { failed } from './result.js';
import { extractPlainText } from './text.js';

export { PAGE_BREAK } from './pdf.js';

const PLAIN_TEXT: ReadonlySet<string> = new Set([MIME.text, MIME.markdown, MIME.csv, MIME.json]);

/** Loads the libraries a type needs before its file's clock starts (a worker loads each once). */
export async function prepareFor(mimeType: string): Promise<void> {
  if (mimeType === MIME.pdf) await loadPdfJs();
}

/** `pdfAssets`: pdf.js's data folders (pdfjs-assets.ts); without them CJK text with predefined CMaps is lost. */
export async function extractText(bytes: Uint8Array, mimeType: string, ocr: Ocr | null, pdfAssets: PdfJsAssets | null = null): Promise<ProcessingResult> {
  if (PLAIN_TEXT.has(mimeType)) return extractPlainText(bytes);
  if (mimeType === MIME.html) return extractHtml(bytes);
  if (mimeType === MIME.pdf) return extractPdf(bytes, ocr, pdfAssets);
  if (mimeType === MIME.docx) return extractDocx(bytes);
  if (IMAGE_MIMES.has(mimeType)) return extractImage(bytes, mimeType, ocr);
  return failed(`unsupported type ${mimeType}`);
}
