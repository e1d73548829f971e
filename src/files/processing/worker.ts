/**
 * The file-processing worker (a piscina worker thread, started by pool.ts): reads one file and
 * extracts its text. Loaded both as built JavaScript and, in tests and `npm run dev`, as
 * TypeScript through tsx's require hook, so it has no top-level await and no import.meta.
 */
import { readFile } from 'node:fs/promises';
import { workerData } from 'node:worker_threads';
import { extractText } from './extractors/index.js';
import { failed } from './extractors/result.js';
import { loadOcr, type Ocr, type OcrSettings } from './ocr.js';
import type { ProcessingInput, ProcessingResult } from './processor.js';

/** What the pool hands every worker at start. */
export interface FileWorkerData {
  ocr: OcrSettings;
}

// Loaded on the first file, once per worker (an OCR engine is expensive to start).
let ocr: Promise<Ocr | null> | null = null;

export default async function processFile(input: ProcessingInput): Promise<ProcessingResult> {
  ocr ??= loadOcr((workerData as FileWorkerData).ocr);
  let bytes: Buffer;
  try {
    bytes = await readFile(input.path);
  } catch {
    return failed('file not readable');
  }
  return extractText(bytes, input.mimeType, await ocr);
}
