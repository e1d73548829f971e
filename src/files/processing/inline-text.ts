/**
 * TEMPORARY processor for `FILE_PROCESSING_ENGINE=builtin` until the worker-pool engine
 * (src/files/processing/pool.ts, branch files-extract) is merged: it reads the TEXT_MIMES in
 * process (small and cheap: a UTF-8 decode; HTML reduced to its text by a crude tag strip), passes
 * images with no text (no OCR here: they are still usable as images in chat), and answers
 * `file_processing_error` ("unsupported type") for everything else. The integrator
 * replaces it with the pool in openFileProcessor.
 */
import { readFile } from 'node:fs/promises';
import { IMAGE_MIMES, MIME, TEXT_MIMES } from '../mime.js';
import type { FileProcessor, ProcessingInput, ProcessingResult } from './processor.js';

const ENTITIES: ReadonlyMap<string, string> = new Map([['amp', '&'], ['lt', '<'], ['gt', '>'], ['quot', '"'], ['apos', "'"], ['nbsp', ' ']]);

/** HTML's visible text, roughly: scripts, styles and tags out, entities in, blank runs squeezed. */
export function htmlText(html: string): string {
  return html
    .replace(/<(script|style|noscript)\b[^>]*>[\s\S]*?<\/\1\s*>/gi, ' ')
    .replace(/<!--[\s\S]*?-->/g, ' ')
    .replace(/<(br|\/p|\/div|\/h[1-6]|\/li|\/tr)\b[^>]*>/gi, '\n')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, name: string) => {
      if (name.startsWith('#x') || name.startsWith('#X')) return String.fromCodePoint(parseInt(name.slice(2), 16));
      if (name.startsWith('#')) return String.fromCodePoint(Number(name.slice(1)));
      return ENTITIES.get(name.toLowerCase()) ?? whole;
    })
    .replace(/[ \t]+/g, ' ')
    .replace(/ *\n[\s]*/g, '\n')
    .trim();
}

export class InlineTextProcessor implements FileProcessor {
  private closed = false;

  async process(input: ProcessingInput): Promise<ProcessingResult> {
    if (this.closed) throw new Error('the file processor is closed');
    if (IMAGE_MIMES.has(input.mimeType)) return { ok: true, text: '', pages: null, ocrPages: 0 };
    if (!TEXT_MIMES.has(input.mimeType)) return { ok: false, code: 'file_processing_error', reason: `unsupported type ${input.mimeType}` };
    try {
      const text = new TextDecoder('utf-8', { fatal: true }).decode(await readFile(input.path));
      return { ok: true, text: input.mimeType === MIME.html ? htmlText(text) : text.replace(/^\uFEFF/, ''), pages: null, ocrPages: 0 };
    } catch {
      return { ok: false, code: 'file_processing_error', reason: 'the text is not valid UTF-8' };
    }
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}
