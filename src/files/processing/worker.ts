/**
 * The file-processing worker (a piscina worker thread, started by pool.ts): reads one file and
 * extracts its text. Loaded both as built JavaScript and, in tests and `npm run dev`, as
 * TypeScript through tsx's require hook, so it has no top-level await and no import.meta.
 */
import { readFile } from 'node:fs/promises';
import { parentPort, workerData } from 'node:worker_threads';
import { IMAGE_MIMES, MIME } from '../mime.js';
import { extractText, prepareFor } from './extractors/index.js';
import { failed } from './extractors/result.js';
import { loadOcr, type Ocr, type OcrSettings } from './ocr.js';
import type { PdfJsAssets } from './pdfjs-assets.js';
import type { ProcessingInput, ProcessingResult } from './processor.js';

/** What the pool hands every worker at start. */
export interface FileWorkerData {
  ocr: OcrSettings;
  pdfAssets: PdfJsAssets;
}

/** One file as the pool sends it: `job` names it in the started notice. */
export interface FileTask extends ProcessingInput {
  job: number;
}

/** Posted to the pool when a worker begins a file: its timeout counts from here, not from a worker's start or its library loading. */
export interface FileStarted {
  fileJobStarted: number;
}

export function announceStart(task: FileTask): void {
  parentPort?.postMessage({ fileJobStarted: task.job } satisfies FileStarted);
}

// Loaded on the first file that may need it, once per worker (an OCR engine is expensive to start).
let ocr: Promise<Ocr | null> | null = null;

/** Images, and PDFs (their pages without a text layer). */
const mayNeedOcr = (mimeType: string): boolean => mimeType === MIME.pdf || IMAGE_MIMES.has(mimeType);

export default async function processFile(task: FileTask): Promise<ProcessingResult> {
  // Libraries load before the file's clock starts: FILE_PROCESSING_TIMEOUT measures the file, not
  // a fresh worker's first import of pdf.js or an OCR engine (those are bounded by the start grace).
  const engine = mayNeedOcr(task.mimeType) ? await (ocr ??= loadOcr((workerData as FileWorkerData).ocr)) : null;
  await prepareFor(task.mimeType);
  announceStart(task);
  let bytes: Buffer;
  try {
    bytes = await readFile(task.path);
  } catch {
    return failed('file not readable');
  }
  return extractText(bytes, task.mimeType, engine, (workerData as FileWorkerData).pdfAssets);
}
