/**
 * OCR (issue 18): tesseract.js, run inside a file-processing worker thread. tesseract.js starts
 * one thread of its own there (its wasm core); a terminated processing thread takes it along.
 *
 * Nothing is downloaded and nothing is cached on disk: the language data are files found at
 * startup (OCR_TESSDATA_DIR, then the `@tesseract.js-data/<lang>` npm packages), tesseract.js's
 * worker script and wasm core load from node_modules, and the cache is off (`cacheMethod: none`),
 * so tesseract.js never writes `<lang>.traineddata` into the working directory.
 *
 * Images go to tesseract as they are (its Leptonica reads PNG, JPEG, WebP and TIFF) except BMP,
 * which is re-encoded as PNG first: tesseract.js's own BMP path copies the pixels through a
 * plain object and takes seconds for a page. A PDF page without a text layer is rendered with
 * pdf.js onto an @napi-rs/canvas canvas and read like a PNG.
 */
import type { Worker as NodeWorker } from 'node:worker_threads';
import { createCanvas, loadImage } from '@napi-rs/canvas';
import { imageSize } from 'image-size';
import type { PDFPageProxy } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { createWorker, OEM, type Worker as TesseractWorker } from 'tesseract.js';
import { OcrUnavailableError } from '../../errors.js';
import { MIME } from '../mime.js';
import { checkOcrLanguages, languageFolder, type OcrSettings } from './ocr-languages.js';

export type { OcrSettings } from './ocr-languages.js';

/** What the extractors need from OCR (src/files/processing/extractors). */
export interface Ocr {
  /** The text recognised in one image (PNG, JPEG, WebP, TIFF or BMP). */
  image(bytes: Uint8Array, mimeType: string): Promise<string>;
  /** The text recognised on one PDF page that has no text layer. */
  pdfPage(page: PDFPageProxy): Promise<string>;
}

/** A running tesseract.js worker with the configured languages loaded. */
export interface OcrEngine {
  /** The text of one image tesseract reads (PNG, JPEG, WebP, TIFF; see `imageForTesseract`). */
  recognize(image: Uint8Array): Promise<string>;
  /** False once tesseract's thread has stopped (closed, crashed or exited). */
  readonly running: boolean;
  /** Stops tesseract's thread; resolves once it has ended. */
  close(): Promise<void>;
}

/** Starts tesseract.js with the settings' languages (checked again here: the worker may run long after startup). */
export async function openOcrEngine(settings: OcrSettings): Promise<OcrEngine> {
  const { langPath, gzip } = languageFolder(checkOcrLanguages(settings));
  // A failed initialisation never settles createWorker: its errorHandler is the only news of it.
  let failStart: (error: Error) => void = () => undefined;
  const startFailed = new Promise<never>((_, reject) => (failStart = reject));
  startFailed.catch(() => undefined);
  const worker: TesseractWorker = await Promise.race([
    createWorker(settings.languages, OEM.LSTM_ONLY, {
      langPath,
      gzip,
      cacheMethod: 'none',
      // Without a handler tesseract.js throws job failures from its message listener (uncaught);
      // with one they reach the job's promise, and a start that fails rejects here.
      errorHandler: (error: unknown) => failStart(new OcrUnavailableError(`OCR failed to start: ${String(error)}`)),
    }),
    startFailed,
  ]);
  // The thread under tesseract.js's worker object: when it dies mid-job the job would wait forever.
  const thread = (worker as unknown as { worker?: NodeWorker }).worker;
  let stopped: OcrUnavailableError | null = null;
  const died = new Promise<never>((_, reject) => {
    thread?.once('error', (error) => reject((stopped = new OcrUnavailableError(`the OCR thread failed: ${error.message}`))));
    thread?.once('exit', (code) => reject((stopped ??= new OcrUnavailableError(`the OCR thread stopped (exit code ${code})`))));
  });
  died.catch(() => undefined);
  const exited = thread ? new Promise<void>((resolve) => thread.once('exit', () => resolve())) : Promise.resolve();
  return {
    get running() {
      return stopped === null;
    },
    async recognize(image) {
      if (stopped) throw stopped;
      try {
        const result = await Promise.race([worker.recognize(Buffer.from(image.buffer, image.byteOffset, image.byteLength)), died]);
        return result.data.text;
      } catch (error) {
        // tesseract.js rejects with its message as a string.
        throw error instanceof Error ? error : new Error(String(error));
      }
    },
    async close() {
      stopped ??= new OcrUnavailableError('OCR is closed');
      await worker.terminate();
      // tesseract.js does not wait for its thread to end; the caller may (a pool shutting down).
      await exited;
    },
  };
}

/**
 * Images with more pixels than this are not OCR'd: tesseract's wasm memory grows with the pixels
 * and never shrinks (a 64-megapixel PNG of 260 KB took 1.6 GB and 13 s; 400 megapixels, 3.5 GB
 * before failing). 32 megapixels is an A3 page scanned at 400 dpi.
 */
export const MAX_OCR_PIXELS = 32_000_000;

/** After an image larger than this the thread's engine is restarted, which gives its memory back. */
const RESTART_AFTER_PIXELS = 12_000_000;

/** An image's size from its header (null when the header cannot be read). */
export function imageDimensions(bytes: Uint8Array): { width: number; height: number } | null {
  try {
    const { width, height } = imageSize(bytes);
    return Number.isFinite(width) && Number.isFinite(height) ? { width: Math.abs(width), height: Math.abs(height) } : null;
  } catch {
    return null;
  }
}

/** Why this image is not OCR'd (null: it is): a header that cannot be read, or too many pixels. */
export function ocrRefusal(bytes: Uint8Array): string | null {
  const size = imageDimensions(bytes);
  if (!size) return 'unreadable image';
  if (size.width * size.height > MAX_OCR_PIXELS) {
    return `image too large for OCR (${size.width} × ${size.height} pixels; at most ${MAX_OCR_PIXELS / 1_000_000} megapixels)`;
  }
  return null;
}

/** The image in a form tesseract reads quickly: BMP becomes PNG, the others are passed as they are. */
export async function imageForTesseract(bytes: Uint8Array, mimeType: string): Promise<Uint8Array> {
  if (mimeType !== MIME.bmp) return bytes;
  const image = await loadImage(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  const canvas = createCanvas(image.width, image.height);
  canvas.getContext('2d').drawImage(image, 0, 0);
  return canvas.toBuffer('image/png');
}

/** Scans are read at about 200 dpi (pdf.js's unit is 1/72 in), at most this many pixels a side. */
const SCAN_DPI = 200;
const MAX_RENDER_SIDE = 4000;

/** The render scale for a page of this size (in points): SCAN_DPI, less for pages too big for MAX_RENDER_SIDE. */
export function renderScale(widthPt: number, heightPt: number): number {
  const scale = SCAN_DPI / 72;
  const longest = Math.max(widthPt, heightPt) * scale;
  return longest > MAX_RENDER_SIDE ? (scale * MAX_RENDER_SIDE) / longest : scale;
}

type RenderParameters = Parameters<PDFPageProxy['render']>[0];

/** One PDF page drawn on a white canvas, as PNG. */
export async function renderPdfPage(page: PDFPageProxy): Promise<Uint8Array> {
  const base = page.getViewport({ scale: 1 });
  const viewport = page.getViewport({ scale: renderScale(base.width, base.height) });
  const canvas = createCanvas(Math.ceil(viewport.width), Math.ceil(viewport.height));
  const context = canvas.getContext('2d');
  context.fillStyle = '#ffffff';
  context.fillRect(0, 0, canvas.width, canvas.height);
  // pdf.js's types name the DOM canvas; in Node it draws on @napi-rs/canvas (its own NodeCanvasFactory uses it too).
  await page.render({ canvas: canvas as unknown as RenderParameters['canvas'], viewport }).promise;
  return canvas.toBuffer('image/png');
}

/** OCR over one engine: images and rendered PDF pages. */
export function ocrWith(engine: OcrEngine): Ocr {
  return {
    image: async (bytes, mimeType) => (await engine.recognize(await imageForTesseract(bytes, mimeType))).trim(),
    pdfPage: async (page) => (await engine.recognize(await renderPdfPage(page))).trim(),
  };
}

/** This thread's engine, started on first use and kept for the next files (tesseract takes ~1 s to start). */
let shared: { key: string; engine: Promise<OcrEngine> } | null = null;

async function sharedEngine(settings: OcrSettings): Promise<OcrEngine> {
  const key = JSON.stringify(settings);
  if (shared?.key === key) {
    // A failed start is kept (it is the data or the install, not chance); a dead engine is replaced.
    const engine = await shared.engine;
    if (engine.running) return engine;
  }
  if (shared) void shared.engine.then((engine) => engine.close()).catch(() => undefined);
  const engine = openOcrEngine(settings).catch((error: unknown) => {
    throw error instanceof OcrUnavailableError ? error : new OcrUnavailableError(`OCR failed to start: ${(error as Error).message}`);
  });
  engine.catch(() => undefined);
  shared = { key, engine };
  return engine;
}

/**
 * The OCR for these settings, or null when OCR is off. Runs in the processing worker: the engine
 * starts on the first image or scanned page (a thread that only sees typed documents never starts
 * one) and is kept for the thread's next files; one that died, or was closed after a large
 * image, is started afresh, one that failed to start is not retried. Engine failures reject with
 * OcrUnavailableError; an image tesseract cannot read rejects with another error.
 */
export function loadOcr(settings: OcrSettings): Promise<Ocr | null> {
  if (!settings.enabled) return Promise.resolve(null);
  return Promise.resolve({
    image: async (bytes, mimeType) => {
      const engine = await sharedEngine(settings);
      try {
        return await ocrWith(engine).image(bytes, mimeType);
      } finally {
        const size = imageDimensions(bytes);
        if (size && size.width * size.height > RESTART_AFTER_PIXELS) await closeEngine(engine);
      }
    },
    pdfPage: async (page) => ocrWith(await sharedEngine(settings)).pdfPage(page),
  });
}

/** Closes the thread's engine if it is this one (the next image starts a new one). */
async function closeEngine(engine: OcrEngine): Promise<void> {
  const current = shared;
  if (current && (await current.engine.catch(() => null)) === engine) shared = null;
  await engine.close();
}

/** Stops this thread's engine (the processing worker's shutdown). */
export async function closeOcr(): Promise<void> {
  const current = shared;
  shared = null;
  if (current) await (await current.engine.catch(() => null))?.close();
}
