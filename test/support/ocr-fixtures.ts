/**
 * Generated OCR fixtures (issue 18): a page-sized image with rendered text, the same page in every
 * image format Switchyard reads (PNG, JPEG, WebP from @napi-rs/canvas; TIFF from utif2; BMP from
 * bmp-js), and a scanned PDF (the PNG as the only content of a page, no text layer; pdfkit).
 * The font is Liberation Sans as pdfjs-dist ships it, so nothing outside node_modules is needed.
 * Each page carries a random reference number, so a test passes only if OCR really read the page.
 */
import { randomInt } from 'node:crypto';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { crc32, deflateSync } from 'node:zlib';
import { createCanvas, GlobalFonts, ImageData, type SKRSContext2D } from '@napi-rs/canvas';
import bmp from 'bmp-js';
import PDFDocument from 'pdfkit';
import UTIF from 'utif2';
import { MIME } from '../../src/files/mime.js';

const require = createRequire(import.meta.url);
const FONT_FAMILY = 'Switchyard Test Sans';
GlobalFonts.registerFromPath(join(dirname(require.resolve('pdfjs-dist/package.json')), 'standard_fonts', 'LiberationSans-Regular.ttf'), FONT_FAMILY);

/** A4 at 150 dpi. */
export const PAGE = { width: 1240, height: 1754, dpi: 150 } as const;

export interface TextPage {
  /** The lines drawn on the page, top to bottom. */
  lines: string[];
  /** The words a reader must find (every word of every line). */
  words: string[];
  /** PNG bytes. */
  png: Buffer;
  /** RGBA pixels, row by row (for the encoders that take raw pixels). */
  rgba: Uint8Array;
  width: number;
  height: number;
}

/** The default page's lines; a random reference number is added below them. */
export const SAMPLE_LINES = ['Switchyard reads scanned invoices', 'Quarterly freight total', 'The quick brown fox jumps over the lazy dog'];

/**
 * A white page with black text, 40 px (about 19 pt at 150 dpi), one line every 90 px; A4 unless
 * a smaller size is asked for (with smaller margins).
 */
export function textPage(
  lines: readonly string[] = [...SAMPLE_LINES, `Reference ${randomInt(100_000, 1_000_000)}`],
  size: { width: number; height: number } = PAGE,
): TextPage {
  const { width, height } = size;
  const canvas = createCanvas(width, height);
  const context: SKRSContext2D = canvas.getContext('2d');
  context.fillStyle = '#ffffff';
  context.fillRect(0, 0, width, height);
  context.fillStyle = '#000000';
  context.font = `40px "${FONT_FAMILY}"`;
  const margin = size === PAGE ? { left: 120, top: 220 } : { left: 20, top: 60 };
  lines.forEach((line, index) => context.fillText(line, margin.left, margin.top + index * 90));
  return {
    lines: [...lines],
    words: lines.flatMap((line) => line.split(/\s+/)),
    png: canvas.toBuffer('image/png'),
    rgba: new Uint8Array(context.getImageData(0, 0, width, height).data.buffer),
    width,
    height,
  };
}

export type ImageFormat = 'png' | 'jpeg' | 'webp' | 'tiff' | 'bmp';

/** The page encoded in one image format, with the MIME type detection gives it. */
export function encodePage(page: TextPage, format: ImageFormat): { bytes: Buffer; mimeType: string } {
  const { width, height } = page;
  switch (format) {
    case 'png':
      return { bytes: page.png, mimeType: MIME.png };
    case 'jpeg':
    case 'webp': {
      const canvas = createCanvas(width, height);
      const context = canvas.getContext('2d');
      context.putImageData(new ImageData(new Uint8ClampedArray(page.rgba), width, height), 0, 0);
      return format === 'jpeg'
        ? { bytes: canvas.toBuffer('image/jpeg', 90), mimeType: MIME.jpeg }
        : { bytes: canvas.toBuffer('image/webp', 90), mimeType: MIME.webp };
    }
    case 'tiff':
      return { bytes: Buffer.from(UTIF.encodeImage(page.rgba, width, height)), mimeType: MIME.tiff };
    case 'bmp': {
      // bmp-js takes pixels as A,B,G,R.
      const abgr = Buffer.alloc(page.rgba.length);
      for (let i = 0; i < page.rgba.length; i += 4) {
        abgr[i] = page.rgba[i + 3]!;
        abgr[i + 1] = page.rgba[i + 2]!;
        abgr[i + 2] = page.rgba[i + 1]!;
        abgr[i + 3] = page.rgba[i]!;
      }
      return { bytes: bmp.encode({ data: abgr, width, height }).data, mimeType: MIME.bmp };
    }
  }
}

/**
 * A blank white PNG of any size, small on disk (1-bit grayscale, deflated): the shape of a
 * decompression bomb, a few KB that decode to many megapixels. Written chunk by chunk (zlib), since
 * a canvas of that size would take seconds to encode.
 */
export function blankPng(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([1, 0, 0, 0, 0], 8); // bit depth 1, grayscale, deflate, no filter, no interlace
  const row = Buffer.concat([Buffer.from([0]), Buffer.alloc(Math.ceil(width / 8), 0xff)]);
  const pixels = Buffer.alloc(row.length * height);
  for (let y = 0; y < height; y++) row.copy(pixels, y * row.length);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(pixels, { level: 9 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/**
 * A scanned document: each PNG is the whole of one A4 page, with no text layer. `textPages`
 * adds pages with real text before the scans (a PDF mixing typed and scanned pages).
 */
export function scannedPdf(scans: readonly Buffer[], textPages: readonly string[] = []): Promise<Buffer> {
  const a4: [number, number] = [(PAGE.width / PAGE.dpi) * 72, (PAGE.height / PAGE.dpi) * 72];
  const doc = new PDFDocument({ autoFirstPage: false, compress: true });
  const chunks: Buffer[] = [];
  doc.on('data', (chunk: Buffer) => chunks.push(chunk));
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });
  for (const text of textPages) doc.addPage({ size: a4, margin: 50 }).font('Helvetica').fontSize(18).text(text);
  for (const scan of scans) doc.addPage({ size: a4, margin: 0 }).image(scan, 0, 0, { width: a4[0], height: a4[1] });
  doc.end();
  return done;
}

/** The words of `expected` that are not in `text` (case and spacing ignored; punctuation around words too). */
export function missingWords(text: string, expected: readonly string[]): string[] {
  const normalise = (word: string) => word.toLowerCase().replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, '');
  const seen = new Set(text.split(/\s+/).map(normalise));
  return expected.filter((word) => !seen.has(normalise(word)));
}
