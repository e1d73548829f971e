/** A thread entry for test/unit/file-ocr.test.ts: the extractors with OCR in a worker thread, as the processing pool runs them. */
import { extractText } from '../../../src/files/processing/extractors/index.js';
import { loadOcr, type OcrSettings } from '../../../src/files/processing/ocr.js';
import { serveThread } from '../../../src/threads.js';

serveThread(async (settings: OcrSettings) => {
  const ocr = await loadOcr(settings);
  return {
    extract: ({ bytes, mimeType }: { bytes: Uint8Array; mimeType: string }) => extractText(bytes, mimeType, ocr),
  };
});
