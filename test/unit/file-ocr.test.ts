/**
 * OCR (issue 18) with the real tesseract.js and the npm language data, on generated pages, through
 * the real extractors: every image format, a scanned PDF page rendered by pdf.js, damaged images,
 * a tessdata folder mixed with an npm package, OCR in the file-processing pool's worker thread
 * (tesseract's own thread gone with it), and the startup check. One tesseract worker is shared
 * by the file (starting one takes about a second).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, OcrUnavailableError } from '../../src/errors.js';
import { extractText, PAGE_BREAK } from '../../src/files/processing/extractors/index.js';
import { MIME } from '../../src/files/mime.js';
import { checkOcrLanguages, findLanguageData, languageFolder } from '../../src/files/processing/ocr-languages.js';
import { closeOcr, loadOcr, ocrWith, openOcrEngine, type Ocr } from '../../src/files/processing/ocr.js';
import { FileProcessingPool } from '../../src/files/processing/pool.js';
import type { ProcessingResult } from '../../src/files/processing/processor.js';
import { createLogger } from '../../src/logger.js';
import { startApp } from '../support/app.js';
import { corrupted, truncated } from '../support/file-fixtures.js';
import { blankPng, encodePage, missingWords, scannedPdf, textPage, type ImageFormat, type TextPage } from '../support/ocr-fixtures.js';

const ENG = { enabled: true, languages: ['eng'], tessdataDir: null };
const FORMATS: ImageFormat[] = ['png', 'jpeg', 'webp', 'tiff', 'bmp'];

let page: TextPage;
let ocr: Ocr;
/** The working directory while tesseract started and read a page: it must stay empty (no traineddata cache). */
let startDir: string;

beforeAll(async () => {
  page = textPage();
  startDir = mkdtempSync(join(tmpdir(), 'sy-ocr-cwd-'));
  const cwd = process.cwd();
  process.chdir(startDir);
  try {
    ocr = (await loadOcr(ENG))!;
    // The engine starts on the first image.
    expect(missingWords(await ocr.image(page.png, MIME.png), page.words)).toEqual([]);
  } finally {
    process.chdir(cwd);
  }
});

afterAll(async () => {
  await closeOcr();
  rmSync(startDir, { recursive: true, force: true });
});

/** The text of a successful result (fails the test with the result otherwise). */
function textOf(result: ProcessingResult): string {
  expect(result).toMatchObject({ ok: true });
  return result.ok ? result.text : '';
}

describe('OCR of images', () => {
  it.each(FORMATS)('reads the words of a %s page', async (format) => {
    const { bytes, mimeType } = encodePage(page, format);
    const result = await extractText(bytes, mimeType, ocr);
    expect(result).toMatchObject({ ok: true, pages: null, ocrPages: 1 });
    expect(missingWords(textOf(result), page.words)).toEqual([]);
  });

  it('wrote nothing in the working directory', () => {
    expect(readdirSync(startDir)).toEqual([]);
  });

  it('processes an image to empty text when OCR is off', async () => {
    expect(await loadOcr({ ...ENG, enabled: false })).toBeNull();
    expect(await extractText(page.png, MIME.png, null)).toEqual({ ok: true, text: '', pages: null, ocrPages: 0 });
  });

  it('ends a damaged image in "unreadable image" or its text, and the engine reads on', async () => {
    const small = textPage(['Damaged sample'], { width: 480, height: 120 });
    const images = FORMATS.map((format) => encodePage(small, format));
    const damage = fc.oneof(
      fc.double({ min: 0, max: 1, noNaN: true }).map((at) => (bytes: Buffer) => truncated(bytes, Math.floor(at * bytes.length))),
      fc
        .array(fc.record({ at: fc.double({ min: 0, max: 1, noNaN: true }), value: fc.integer({ min: 0, max: 255 }) }), { minLength: 1, maxLength: 16 })
        .map((changes) => (bytes: Buffer) => corrupted(bytes, changes.map(({ at, value }) => ({ offset: Math.floor(at * bytes.length), value })))),
    );
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: images.length - 1 }), damage, async (index, hurt) => {
        const { bytes, mimeType } = images[index]!;
        const result = await extractText(hurt(bytes), mimeType, ocr);
        if (result.ok) expect(result).toMatchObject({ pages: null, ocrPages: 1 });
        else expect(result).toEqual({ ok: false, code: 'file_processing_error', reason: 'unreadable image' });
      }),
      { numRuns: 15 },
    );
    await expect(ocr.image(Buffer.from('not an image at all'), MIME.png)).rejects.not.toBeInstanceOf(OcrUnavailableError);
    expect(missingWords(await ocr.image(page.png, MIME.png), page.words)).toEqual([]);
  });
});

describe('large images', () => {
  it('refuses OCR of an image past 32 megapixels by its header, before decoding it', async () => {
    const bomb = blankPng(6000, 6000);
    expect(bomb.length).toBeLessThan(100_000);
    expect(await extractText(bomb, MIME.png, ocr)).toEqual({
      ok: false,
      code: 'file_processing_error',
      reason: 'image too large for OCR (6000 × 6000 pixels; at most 32 megapixels)',
    });
  });

  it.runIf(process.platform === 'linux')('restarts the engine after a large image, giving its memory back', async () => {
    const before = threadCount();
    expect(await extractText(blankPng(4000, 3200), MIME.png, ocr)).toEqual({ ok: true, text: '', pages: null, ocrPages: 1 });
    // tesseract's thread is gone (its wasm memory with it); the next image starts a new one.
    const afterLarge = threadCount();
    expect(afterLarge).toBeLessThan(before);
    expect(missingWords(await ocr.image(page.png, MIME.png), page.words)).toEqual([]);
    expect(threadCount()).toBeGreaterThan(afterLarge);
  });
});

describe('OCR of scanned PDF pages', () => {
  it('renders a page without a text layer and reads it; the typed page keeps its text layer', async () => {
    const pdf = await scannedPdf([page.png], ['Typed cover sheet']);
    const result = await extractText(pdf, MIME.pdf, ocr);
    expect(result).toMatchObject({ ok: true, pages: 2, ocrPages: 1 });
    const [typed, scanned] = textOf(result).split(PAGE_BREAK);
    expect(typed).toBe('Typed cover sheet');
    expect(missingWords(scanned!, page.words)).toEqual([]);
  });

  it('leaves the scanned page empty with OCR off', async () => {
    const pdf = await scannedPdf([page.png], ['Typed cover sheet']);
    expect(await extractText(pdf, MIME.pdf, null)).toEqual({ ok: true, text: `Typed cover sheet${PAGE_BREAK}`, pages: 2, ocrPages: 0 });
  });
});

describe('OCR language data', () => {
  it('finds eng in its npm package and names every language without data', () => {
    expect(findLanguageData('eng', null)).toMatch(/@tesseract\.js-data\/eng\/.+\/eng\.traineddata\.gz$/);
    expect(findLanguageData('zzz', null)).toBeNull();
    let error: unknown;
    try {
      checkOcrLanguages({ enabled: true, languages: ['eng', 'zzz', 'qqq'], tessdataDir: '/nonexistent' });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const lines = (error as ConfigError).message.split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^OCR language 'zzz' has no data: install @tesseract\.js-data\/zzz or set OCR_TESSDATA_DIR to a folder holding zzz\.traineddata/);
    expect(lines[1]).toMatch(/^OCR language 'qqq' has no data/);
  });

  it('refuses a data file that is not tesseract language data', () => {
    const tessdataDir = mkdtempSync(join(tmpdir(), 'sy-tessdata-'));
    try {
      writeFileSync(join(tessdataDir, 'bad.traineddata'), page.png);
      // A real one cut short: its table of contents points past its end.
      writeFileSync(join(tessdataDir, 'cut.traineddata'), gunzipSync(readFileSync(findLanguageData('eng', null)!)).subarray(0, 100_000));
      for (const code of ['bad', 'cut']) {
        expect(() => checkOcrLanguages({ enabled: true, languages: [code], tessdataDir })).toThrow(
          new ConfigError(`OCR language '${code}': ${join(tessdataDir, `${code}.traineddata`)} is not tesseract language data (damaged or another format)`),
        );
      }
    } finally {
      rmSync(tessdataDir, { recursive: true, force: true });
    }
  });

  it('reads a tessdata folder (uncompressed, as Debian installs it) next to an npm package', async () => {
    // A second "language" in a tessdata folder: eng's data under another name, uncompressed.
    const tessdataDir = mkdtempSync(join(tmpdir(), 'sy-tessdata-'));
    let linkFolder: string | null = null;
    try {
      writeFileSync(join(tessdataDir, 'tst.traineddata'), gunzipSync(readFileSync(findLanguageData('eng', null)!)));
      const settings = { enabled: true, languages: ['eng', 'tst'], tessdataDir };
      const languages = checkOcrLanguages(settings);
      expect(languages).toEqual([
        { code: 'eng', file: findLanguageData('eng', null) },
        { code: 'tst', file: join(tessdataDir, 'tst.traineddata') },
      ]);
      // Two folders: tesseract.js gets one folder of links.
      const folder = languageFolder(languages);
      linkFolder = folder.langPath;
      expect(folder.gzip).toBe(false);
      expect(readdirSync(folder.langPath).sort()).toEqual(['eng.traineddata', 'tst.traineddata']);
      const engine = await openOcrEngine(settings);
      try {
        expect(missingWords(await ocrWith(engine).image(page.png, MIME.png), page.words)).toEqual([]);
      } finally {
        await engine.close();
      }
      expect(engine.running).toBe(false);
      await expect(engine.recognize(page.png)).rejects.toBeInstanceOf(OcrUnavailableError);
    } finally {
      rmSync(tessdataDir, { recursive: true, force: true });
      // The link folder is named after this run's temp folder: no later run will use it.
      if (linkFolder) rmSync(linkFolder, { recursive: true, force: true });
    }
  });
});

/** The OS threads of this process (Linux: one /proc task each). */
const threadCount = () => readdirSync('/proc/self/task').length;

async function until(condition: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return true;
}

describe('OCR in the file-processing pool', () => {
  it.runIf(process.platform === 'linux')('reads an image and a scanned PDF in a pool worker, and its tesseract thread ends with the pool', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sy-ocr-pool-'));
    const before = threadCount();
    const pool = new FileProcessingPool({ workers: 1, timeoutMs: 30_000, ocr: ENG }, createLogger('silent'));
    try {
      writeFileSync(join(dir, 'page.webp'), encodePage(page, 'webp').bytes);
      writeFileSync(join(dir, 'scan.pdf'), await scannedPdf([page.png]));
      const image = await pool.process({ path: join(dir, 'page.webp'), mimeType: MIME.webp });
      expect(image).toMatchObject({ ok: true, pages: null, ocrPages: 1 });
      expect(missingWords(textOf(image), page.words)).toEqual([]);
      const scan = await pool.process({ path: join(dir, 'scan.pdf'), mimeType: MIME.pdf });
      expect(scan).toMatchObject({ ok: true, pages: 1, ocrPages: 1 });
      expect(missingWords(textOf(scan), page.words)).toEqual([]);
      // The pool's worker thread and tesseract.js's thread inside it.
      expect(threadCount()).toBeGreaterThanOrEqual(before + 2);
    } finally {
      await pool.close();
      rmSync(dir, { recursive: true, force: true });
    }
    expect(await until(() => threadCount() <= before, 5000)).toBe(true);
  });
});

describe('startup', () => {
  it('stops with a message naming a configured OCR language that has no data', async () => {
    const failure = startApp({ OCR_LANGUAGES: 'eng,zzz' });
    await expect(failure).rejects.toBeInstanceOf(ConfigError);
    await expect(failure).rejects.toThrow(/^OCR language 'zzz' has no data: install @tesseract\.js-data\/zzz or set OCR_TESSDATA_DIR/);
  });
});
