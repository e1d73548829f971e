/** A thread entry for test/unit/file-ocr.test.ts: OCR in a worker thread, as the processing pool runs it. */
import { loadOcr, type OcrSettings } from '../../../src/files/processing/ocr.js';
import { serveThread } from '../../../src/threads.js';

serveThread(async (settings: OcrSettings) => ({
  image: async ({ bytes, mimeType }: { bytes: Uint8Array; mimeType: string }) => (await loadOcr(settings))?.image(bytes, mimeType) ?? null,
}));
