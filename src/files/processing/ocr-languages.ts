/**
 * OCR language data (issue 18): where each configured language's `.traineddata` is, the startup
 * check that stops a server configured with a language it has no data for, and the one folder
 * tesseract.js reads them from. Kept apart from ocr.ts so the serving thread's startup check
 * loads neither tesseract.js nor a canvas.
 */
import { createHash } from 'node:crypto';
import { closeSync, fstatSync, lstatSync, mkdirSync, openSync, readlinkSync, readSync, statSync, symlinkSync, unlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { constants as zlib, gunzipSync } from 'node:zlib';
import type { Config } from '../../config.js';
import { ConfigError } from '../../errors.js';

export type OcrSettings = Config['files']['ocr'];

/** One configured language and the file holding its data (`.traineddata`, gzipped or not). */
export interface LanguageData {
  code: string;
  file: string;
}

const require = createRequire(import.meta.url);

/** Where Debian's tesseract-ocr-<lang> packages put their data: named in the startup message. */
const DEBIAN_TESSDATA = '/usr/share/tesseract-ocr/5/tessdata';

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/**
 * The data file of one language, or null: `<tessdataDir>/<code>.traineddata[.gz]` first, then the
 * npm package `@tesseract.js-data/<code>` (its LSTM-only data, which is all the LSTM engine uses,
 * else its full data).
 */
export function findLanguageData(code: string, tessdataDir: string | null): string | null {
  if (tessdataDir) {
    for (const name of [`${code}.traineddata`, `${code}.traineddata.gz`]) {
      const file = join(tessdataDir, name);
      if (isFile(file)) return file;
    }
  }
  let packageDir: string;
  try {
    packageDir = dirname(require.resolve(`@tesseract.js-data/${code}/package.json`));
  } catch {
    return null;
  }
  for (const version of ['4.0.0_best_int', '4.0.0']) {
    const file = join(packageDir, version, `${code}.traineddata.gz`);
    if (isFile(file)) return file;
  }
  return null;
}

/**
 * The startup check: every configured language has data here, or a ConfigError naming each one
 * that has none and how to add it. Returns where each language's data is.
 */
export function checkOcrLanguages(settings: OcrSettings): LanguageData[] {
  const found: LanguageData[] = [];
  const missing: string[] = [];
  const damaged: string[] = [];
  for (const code of settings.languages) {
    const file = findLanguageData(code, settings.tessdataDir);
    if (!file) missing.push(code);
    else if (!looksLikeTraineddata(file)) damaged.push(`OCR language '${code}': ${file} is not tesseract language data (damaged or another format)`);
    else found.push({ code, file });
  }
  if (damaged.length > 0 && missing.length === 0) throw new ConfigError(damaged.join('\n'));
  if (missing.length > 0) {
    const searched = settings.tessdataDir ? `; ${settings.tessdataDir} has no such file` : '';
    throw new ConfigError(
      missing
        .map(
          (code) =>
            `OCR language '${code}' has no data: install @tesseract.js-data/${code} or set OCR_TESSDATA_DIR to a folder holding ${code}.traineddata ` +
            `(Debian: apt-get install tesseract-ocr-${code.replace(/_/g, '-')}, which fills ${DEBIAN_TESSDATA})${searched}`,
        )
        .concat(damaged)
        .join('\n'),
    );
  }
  return found;
}

/** The bytes of a file's start, and its size (both of the data inside when the file is gzipped). */
function traineddataStart(file: string, length: number): { head: Buffer; size: number } {
  const fd = openSync(file, 'r');
  try {
    const fileSize = fstatSync(fd).size;
    const raw = Buffer.alloc(Math.min(fileSize, 64 * 1024));
    readSync(fd, raw, 0, raw.length, 0);
    if (raw[0] !== 0x1f || raw[1] !== 0x8b) return { head: raw.subarray(0, length), size: fileSize };
    // gzip: inflate only the start; the trailer's last four bytes are the data's size (mod 2^32).
    const trailer = Buffer.alloc(4);
    readSync(fd, trailer, 0, 4, fileSize - 4);
    return { head: gunzipSync(raw, { finishFlush: zlib.Z_SYNC_FLUSH }).subarray(0, length), size: trailer.readUInt32LE(0) };
  } finally {
    closeSync(fd);
  }
}

/**
 * A cheap check of a `.traineddata` file's table of contents (an int32 count, then that many
 * int64 offsets, -1 for a missing part, the others increasing and inside the file). tesseract.js
 * handed a file that is not one fails in a way that takes its host thread down, so such a file
 * is refused at startup instead.
 */
export function looksLikeTraineddata(file: string): boolean {
  try {
    const { head, size } = traineddataStart(file, 4 + 8 * 64);
    if (head.length < 12) return false;
    const count = head.readInt32LE(0);
    if (count < 1 || count > 64 || head.length < 4 + 8 * count) return false;
    let last = 4 + 8 * count - 1;
    let parts = 0;
    for (let i = 0; i < count; i++) {
      const offset = Number(head.readBigInt64LE(4 + 8 * i));
      if (offset === -1) continue;
      if (offset <= last || offset >= size) return false;
      last = offset;
      parts++;
    }
    return parts > 0;
  } catch {
    return false;
  }
}

/**
 * tesseract.js reads every language from one folder (`langPath/<code>.traineddata[.gz]`). When the
 * languages' files are in one folder with one suffix that folder is used; otherwise (npm packages
 * each have their own folder) a folder of symbolic links named `<code>.traineddata` is made under
 * the temp dir, named after what it links to so every thread and restart shares it. tesseract.js
 * tells gzipped data by its magic bytes, so the links need no `.gz`.
 */
export function languageFolder(languages: readonly LanguageData[]): { langPath: string; gzip: boolean } {
  const folders = new Set(languages.map((l) => dirname(l.file)));
  const gzipped = new Set(languages.map((l) => l.file.endsWith('.gz')));
  const [folder] = folders;
  const [gzip] = gzipped;
  const named = languages.every((l) => basename(l.file) === `${l.code}.traineddata${l.file.endsWith('.gz') ? '.gz' : ''}`);
  if (folder !== undefined && gzip !== undefined && folders.size === 1 && gzipped.size === 1 && named) return { langPath: folder, gzip };

  const links = languages.map((l) => [`${l.code}.traineddata`, l.file] as const);
  const digest = createHash('sha256').update(JSON.stringify(links)).digest('hex').slice(0, 16);
  const langPath = join(tmpdir(), `switchyard-tessdata-${digest}`);
  mkdirSync(langPath, { recursive: true });
  for (const [name, target] of links) linkTo(join(langPath, name), target);
  return { langPath, gzip: false };
}

/** A symbolic link at `path` to `target`, tolerating another thread that made it first. */
function linkTo(path: string, target: string): void {
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      if (lstatSync(path).isSymbolicLink() && readlinkSync(path) === target) return;
      unlinkSync(path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    try {
      symlinkSync(target, path);
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
  throw new Error(`cannot link ${path} to the OCR language data`);
}
