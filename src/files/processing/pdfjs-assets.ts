/**
 * Where pdf.js's data files are (the `pdfjs-dist` package's folders): CMaps (without them the text
 * of CJK documents whose fonts use a predefined CMap comes out empty), standard-font data and the
 * WebAssembly image decoders. Resolved on the main thread and handed to the workers as paths.
 */
import { createRequire } from 'node:module';
import { dirname, join, sep } from 'node:path';

export interface PdfJsAssets {
  /** Folders, each ending in a path separator as pdf.js wants them. */
  cMapUrl: string;
  standardFontDataUrl: string;
  wasmUrl: string;
}

export function pdfJsAssets(): PdfJsAssets {
  const root = dirname(createRequire(import.meta.url).resolve('pdfjs-dist/package.json'));
  const folder = (name: string) => join(root, name) + sep;
  return { cMapUrl: folder('cmaps'), standardFontDataUrl: folder('standard_fonts'), wasmUrl: folder('wasm') };
}
