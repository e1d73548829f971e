/**
 * Text extraction per type (src/files/processing/extractors), on generated files: the text that
 * went into each fixture must come back out, and each kind of bad file must fail with its reason.
 */
import { describe, expect, it } from 'vitest';
import { MIME } from '../../src/files/mime.js';
import { extractText, PAGE_BREAK } from '../../src/files/processing/extractors/index.js';
import type { Ocr } from '../../src/files/processing/ocr.js';
import { pdfJsAssets } from '../../src/files/processing/pdfjs-assets.js';
import { corrupted, makeCjkPdf, makeDocx, makeImage, makePdf, truncated } from '../support/file-fixtures.js';

const utf8 = (text: string) => new TextEncoder().encode(text);

describe('plain text types', () => {
  it.each([
    [MIME.text, 'Grüße aus Köln\nzweite Zeile 🚀\n'],
    [MIME.markdown, '# Title\n\n- item *one*\n- item two\n'],
    [MIME.csv, 'name,amount\n"Smith, Jo",12.5\nLee,7\n'],
    [MIME.json, '{"city":"Zürich","tags":["a","b"]}'],
  ])('%s comes back exactly as written', async (mimeType, text) => {
    expect(await extractText(utf8(text), mimeType, null)).toEqual({ ok: true, text, pages: null, ocrPages: 0 });
  });

  it('drops a byte-order mark', async () => {
    expect(await extractText(new Uint8Array([0xef, 0xbb, 0xbf, ...utf8('hello')]), MIME.text, null)).toMatchObject({ ok: true, text: 'hello' });
  });

  it.each([MIME.text, MIME.json, MIME.csv, MIME.html])('%s that is not UTF-8 is an error', async (mimeType) => {
    // Latin-1 "café" and a lone continuation byte: no UTF-8 reading of either.
    const latin1 = new Uint8Array([0x63, 0x61, 0x66, 0xe9, 0x20, 0x80]);
    expect(await extractText(latin1, mimeType, null)).toEqual({ ok: false, code: 'file_processing_error', reason: 'not valid UTF-8 text' });
  });
});

describe('HTML', () => {
  it('keeps the readable text and drops scripts, styles, link targets and images', async () => {
    const html = `<!doctype html><html><head><title>Report</title><style>p { color: red }</style>
      <script>var secret = "do not index";</script></head>
      <body><h1>Quarterly report</h1><p>Revenue grew by <b>12%</b> in <a href="https://example.test/q3">Q3</a>.</p>
      <img src="chart.png" alt="chart"><ul><li>North</li><li>South</li></ul>
      <noscript>enable scripts</noscript><script type="module">import "x";</script></body></html>`;
    const result = await extractText(utf8(html), MIME.html, null);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.text).toContain('Quarterly report');
    expect(result.text).toContain('Revenue grew by 12% in Q3.');
    expect(result.text).toMatch(/North[\s\S]*South/);
    for (const hidden of ['secret', 'do not index', 'color: red', 'example.test', 'chart.png', 'enable scripts', 'import']) {
      expect(result.text).not.toContain(hidden);
    }
    expect(result.pages).toBeNull();
  });
});

describe('PDF', () => {
  const pages = [
    ['Invoice 2024-117', 'Total due: 420 EUR'],
    ['Second page mentions the warranty'],
    ['Third page: signatures'],
  ];

  it('gives the text of every page, in order, joined by page breaks, and the page count', async () => {
    const result = await extractText(await makePdf(pages), MIME.pdf, null);
    expect(result).toEqual({ ok: true, text: pages.map((lines) => lines.join('\n')).join(PAGE_BREAK), pages: 3, ocrPages: 0 });
  });

  it("reads CJK text in a font with a predefined CMap from pdf.js's CMap files, which it cannot without them", async () => {
    const pdf = makeCjkPdf('日本語の文書');
    expect(await extractText(pdf, MIME.pdf, null, pdfJsAssets())).toEqual({ ok: true, text: '日本語の文書', pages: 1, ocrPages: 0 });
    expect(await extractText(pdf, MIME.pdf, null, null)).toEqual({ ok: true, text: '', pages: 1, ocrPages: 0 });
  });

  it('refuses an encrypted document', async () => {
    expect(await extractText(await makePdf([['classified']], { userPassword: 'hunter2' }), MIME.pdf, null)).toEqual({
      ok: false,
      code: 'file_processing_error',
      reason: 'encrypted document',
    });
  });

  it.each([
    ['cut short', async () => truncated(await makePdf(pages), 200)],
    ['not a PDF at all', () => Promise.resolve(Buffer.from('%PDF-1.7\nthis is not really a PDF'))],
    ['empty', () => Promise.resolve(Buffer.alloc(0))],
  ])('calls a PDF that is %s corrupt', async (_, make) => {
    expect(await extractText(await make(), MIME.pdf, null)).toEqual({ ok: false, code: 'file_processing_error', reason: 'corrupt PDF' });
  });

  it('leaves a scanned page (an image, no text layer) empty without OCR, and hands it to the OCR hook with it', async () => {
    const pdf = await makePdf([['typed page'], ['Scanned words'], ['another typed page']], { scannedPages: [2] });
    expect(await extractText(pdf, MIME.pdf, null)).toEqual({ ok: true, text: ['typed page', '', 'another typed page'].join(PAGE_BREAK), pages: 3, ocrPages: 0 });

    const asked: number[] = [];
    const ocr: Ocr = {
      image: () => Promise.reject(new Error('no image here')),
      pdfPage: (page) => {
        asked.push(page.pageNumber);
        return Promise.resolve(` text read from page ${page.pageNumber} \n`);
      },
    };
    expect(await extractText(pdf, MIME.pdf, ocr)).toEqual({
      ok: true,
      text: ['typed page', 'text read from page 2', 'another typed page'].join(PAGE_BREAK),
      pages: 3,
      ocrPages: 1,
    });
    expect(asked).toEqual([2]);
  });
});

describe('DOCX', () => {
  const paragraphs = ['Meeting notes', 'Attendees: Ana, Bo and Chidi', 'Decision: ship on Friday'];

  it('gives the paragraphs in order', async () => {
    const result = await extractText(await makeDocx(paragraphs), MIME.docx, null);
    expect(result).toEqual({ ok: true, text: paragraphs.join('\n\n'), pages: null, ocrPages: 0 });
  });

  it.each([
    ['cut short', async () => truncated(await makeDocx(paragraphs), 300)],
    ['a zip with its directory overwritten', async () => {
      const docx = await makeDocx(paragraphs);
      // The end-of-central-directory record sits in the last 22 bytes: wipe its signature.
      return corrupted(docx, [0, 1, 2, 3].map((i) => ({ offset: docx.length - 22 + i, value: 0 })));
    }],
    ['not a zip at all', () => Promise.resolve(Buffer.from('PK but nothing else'))],
  ])('calls a DOCX that is %s corrupt', async (_, make) => {
    expect(await extractText(await make(), MIME.docx, null)).toEqual({ ok: false, code: 'file_processing_error', reason: 'corrupt DOCX' });
  });
});

describe('images and other types', () => {
  it('processes an image to empty text with OCR off, and uses the OCR hook when there is one', async () => {
    const png = makeImage('image/png');
    expect(await extractText(png, MIME.png, null)).toEqual({ ok: true, text: '', pages: null, ocrPages: 0 });
    const ocr: Ocr = { image: (_bytes, mimeType) => Promise.resolve(`  seen as ${mimeType}\n`), pdfPage: () => Promise.resolve('') };
    expect(await extractText(png, MIME.png, ocr)).toEqual({ ok: true, text: 'seen as image/png', pages: null, ocrPages: 1 });
  });

  it.each([MIME.unknown, 'image/gif'])('refuses %s as an unsupported type', async (mimeType) => {
    expect(await extractText(utf8('GIF89a'), mimeType, null)).toEqual({ ok: false, code: 'file_processing_error', reason: `unsupported type ${mimeType}` });
  });
});
