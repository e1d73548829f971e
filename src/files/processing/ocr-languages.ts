/**
 * OCR language data (issue 18): where each configured language's `.traineddata` is, the startup
 * check that stops a server configured with a language it has no data for, and the one folder
 * tesseract.js reads them from. Kept apart from ocr.ts so the serving thread's startup check
 * loads neither tesseract.js nor a canvas.
 */
import { createHash } from 'node:crypto';
import { lstatSync, mkdirSync, readlinkSync, statSync, symlinkSync, unlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
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
  for (const code of settings.languages) {
    const file = findLanguageData(code, settings.tessdataDir);
    if (file) found.push({ code, file });
    else missing.push(code);
  }
  if (missing.length > 0) {
    const searched = settings.tessdataDir ? `; ${settings.tessdataDir} has no such file` : '';
    throw new ConfigError(
      missing
        .map(
          (code) =>
            `OCR language '${code}' has no data: install @tesseract.js-data/${code} or set OCR_TESSDATA_DIR to a folder holding ${code}.traineddata ` +
            `(Debian: apt-get install tesseract-ocr-${code.replace(/_/g, '-')}, which fills ${DEBIAN_TESSDATA})${searched}`,
        )
        .join('\n'),
    );
  }
  return found;
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
