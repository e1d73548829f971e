/**
 * PDF: the text layer of each page (pdf.js, the legacy build that runs in Node), pages joined by
 * PAGE_BREAK. A page with no text at all is a scan: with OCR it is handed to the OCR hook.
 * Encrypted documents are refused (there is no password to give); anything pdf.js cannot parse
 * is a corrupt PDF.
 */
import type * as PdfJs from 'pdfjs-dist/legacy/build/pdf.mjs';
import type { TextItem, TextMarkedContent } from 'pdfjs-dist/types/src/display/api.js';
import { OcrUnavailableError } from '../../../errors.js';
import type { Ocr } from '../ocr.js';
import type { PdfJsAssets } from '../pdfjs-assets.js';
import { extracted, failed } from './result.js';
import type { ProcessingResult } from '../processor.js';

/** Between two pages' texts: a form feed on a line of its own (pdftotext's page separator, kept readable). */
export const PAGE_BREAK = '\n\f\n';

/** One page's text from pdf.js's items: their strings, with a line break where pdf.js saw a line end. */
export function pageText(items: readonly (TextItem | TextMarkedContent)[]): string {
  let text = '';
  for (const item of items) {
    // Marked-content items only bracket text; they carry none.
    if (!('str' in item)) continue;
    text += item.str;
    if (item.hasEOL) text += '\n';
  }
  return text.trim();
}

// pdf.js is several megabytes of modules: loaded by the first PDF a worker sees, not by every worker start.
let pdfjs: Promise<typeof PdfJs> | null = null;

export function loadPdfJs(): Promise<typeof PdfJs> {
  pdfjs ??= import('pdfjs-dist/legacy/build/pdf.mjs');
  return pdfjs;
}

export async function extractPdf(bytes: Uint8Array, ocr: Ocr | null, assets: PdfJsAssets | null): Promise<ProcessingResult> {
  const { getDocument } = await loadPdfJs();
  let document: PdfJs.PDFDocumentProxy;
  try {
    document = await getDocument({
      // pdf.js may take the buffer over; give it a copy.
      data: new Uint8Array(bytes),
      isEvalSupported: false,
      disableFontFace: true,
      useSystemFonts: false,
      verbosity: 0,
      ...(assets ? { ...assets, cMapPacked: true } : {}),
    }).promise;
  } catch (error) {
    return failed(error instanceof Error && error.name === 'PasswordException' ? 'encrypted document' : 'corrupt PDF');
  }
  try {
    const texts: string[] = [];
    let ocrPages = 0;
    for (let number = 1; number <= document.numPages; number++) {
      let page: PdfJs.PDFPageProxy;
      let text: string;
      try {
        page = await document.getPage(number);
        text = pageText((await page.getTextContent()).items);
      } catch {
        // The header parsed but a page did not: still a corrupt file, not a processing fault.
        return failed('corrupt PDF');
      }
      // OCR's own failures are not the PDF's: the file ends with OCR's reason, not "corrupt PDF".
      if (text === '' && ocr) {
        try {
          text = (await ocr.pdfPage(page)).trim();
        } catch (error) {
          return failed(error instanceof OcrUnavailableError ? 'OCR not available' : `OCR failed on page ${number}`);
        }
        ocrPages++;
      }
      texts.push(text);
      page.cleanup();
    }
    return extracted(texts.join(PAGE_BREAK), document.numPages, ocrPages);
  } finally {
    await document.destroy();
  }
}
