/**
 * OCR (issue 18) with the real tesseract.js and the npm language data, on generated pages: every
 * image format, a scanned PDF page rendered by pdf.js, a tessdata folder mixed with an npm
 * package, OCR inside a worker thread (and its own thread gone with it), and the startup check.
 * One tesseract worker is shared by the file (starting one takes about a second).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { checkOcrLanguages, findLanguageData, languageFolder } from '../../src/files/processing/ocr-languages.js';
import { closeOcr, loadOcr, openOcrEngine, ocrWith, type Ocr } from '../../src/files/processing/ocr.js';
import { Thread } from '../../src/threads.js';
import { startApp } from '../support/app.js';
import { encodePage, missingWords, scannedPdf, textPage, type ImageFormat, type TextPage } from '../support/ocr-fixtures.js';

const ENG = { enabled: true, languages: ['eng'], tessdataDir: null };

let page: TextPage;
let ocr: Ocr;
/** The working directory while tesseract started: it must stay empty (no traineddata cache). */
let startDir: string;

beforeAll(async () => {
  page = textPage();
  startDir = mkdtempSync(join(tmpdir(), 'sy-ocr-cwd-'));
  const cwd = process.cwd();
  process.chdir(startDir);
  try {
    ocr = (await loadOcr(ENG))!;
  } finally {
    process.chdir(cwd);
  }
});

afterAll(async () => {
  await closeOcr();
  rmSync(startDir, { recursive: true, force: true });
});

describe('OCR of images', () => {
  it.each<ImageFormat>(['png', 'jpeg', 'webp', 'tiff', 'bmp'])('reads the words of a %s page', async (format) => {
    const { bytes, mimeType } = encodePage(page, format);
    const text = await ocr.image(bytes, mimeType);
    expect(missingWords(text, page.words)).toEqual([]);
  });

  it('reuses the thread engine and writes nothing in the working directory', async () => {
    expect(await loadOcr(ENG)).not.toBeNull();
    expect(readdirSync(startDir)).toEqual([]);
  });

  it('is off when OCR is disabled', async () => {
    expect(await loadOcr({ ...ENG, enabled: false })).toBeNull();
  });

  it('fails the image, not the engine, for bytes that are no image', async () => {
    await expect(ocr.image(Buffer.from('not an image at all'), 'image/png')).rejects.toThrow();
    const text = await ocr.image(page.png, 'image/png');
    expect(missingWords(text, page.words)).toEqual([]);
  });
});

describe('OCR of scanned PDF pages', () => {
  it('renders a page without a text layer and reads it; the typed page has its text layer', async () => {
    const pdf = await scannedPdf([page.png], ['Typed cover sheet']);
    const document = await getDocument({ data: pdf, isEvalSupported: false, disableFontFace: true, verbosity: 0 }).promise;
    try {
      const typed = await document.getPage(1);
      expect((await typed.getTextContent()).items.length).toBeGreaterThan(0);
      const scan = await document.getPage(2);
      expect((await scan.getTextContent()).items).toEqual([]);
      expect(missingWords(await ocr.pdfPage(scan), page.words)).toEqual([]);
    } finally {
      await document.destroy();
    }
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
    const message = (error as ConfigError).message;
    expect(message).toContain("OCR language 'zzz' has no data: install @tesseract.js-data/zzz or set OCR_TESSDATA_DIR");
    expect(message).toContain("OCR language 'qqq' has no data");
    expect(message).not.toContain("'eng'");
  });

  it('reads a tessdata folder (uncompressed, as Debian installs it) next to an npm package', async () => {
    // A second "language" in a tessdata folder: eng's data under another name, uncompressed.
    const tessdataDir = mkdtempSync(join(tmpdir(), 'sy-tessdata-'));
    const engine = await (async () => {
      writeFileSync(join(tessdataDir, 'tst.traineddata'), gunzipSync(readFileSync(findLanguageData('eng', null)!)));
      const settings = { enabled: true, languages: ['eng', 'tst'], tessdataDir };
      const languages = checkOcrLanguages(settings);
      expect(languages).toEqual([
        { code: 'eng', file: findLanguageData('eng', null) },
        { code: 'tst', file: join(tessdataDir, 'tst.traineddata') },
      ]);
      // Two folders: tesseract.js gets one folder of links.
      const folder = languageFolder(languages);
      expect(folder.gzip).toBe(false);
      expect(readdirSync(folder.langPath).sort()).toEqual(['eng.traineddata', 'tst.traineddata']);
      return openOcrEngine(settings);
    })();
    try {
      const text = await ocrWith(engine).image(page.png, 'image/png');
      expect(missingWords(text, page.words)).toEqual([]);
    } finally {
      await engine.close();
      rmSync(tessdataDir, { recursive: true, force: true });
    }
    expect(engine.running).toBe(false);
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

describe('OCR in a worker thread', () => {
  it.runIf(process.platform === 'linux')('runs nested in a processing thread, and its own thread ends when that thread is terminated', async () => {
    const before = threadCount();
    const thread = new Thread(new URL('../support/threads/ocr-thread.ts', import.meta.url), ENG);
    try {
      await thread.start();
      const text = await thread.call<string>('image', { bytes: page.png, mimeType: 'image/png' });
      expect(missingWords(text, page.words)).toEqual([]);
      // The processing thread and tesseract.js's thread inside it.
      expect(threadCount()).toBeGreaterThanOrEqual(before + 2);
    } finally {
      await thread.stop();
    }
    expect(await until(() => threadCount() <= before, 5000)).toBe(true);
  });

  it('answers null there when OCR is off', async () => {
    const thread = new Thread(new URL('../support/threads/ocr-thread.ts', import.meta.url), { ...ENG, enabled: false });
    try {
      await thread.start();
      expect(await thread.call('image', { bytes: page.png, mimeType: 'image/png' })).toBeNull();
    } finally {
      await thread.stop();
    }
  });
});

describe('startup', () => {
  it('stops with a message naming a configured OCR language that has no data', async () => {
    const failure = startApp({ OCR_LANGUAGES: 'eng,zzz' });
    await expect(failure).rejects.toBeInstanceOf(ConfigError);
    await expect(failure).rejects.toThrow(/^OCR language 'zzz' has no data: install @tesseract\.js-data\/zzz or set OCR_TESSDATA_DIR/);
  });

  it('does not check the languages when OCR is off', async () => {
    const app = await startApp({ OCR_ENABLED: 'false', OCR_LANGUAGES: 'zzz' }, { anonymous: true });
    await app.close();
  });
});
