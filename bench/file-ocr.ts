/**
 * OCR (issue 18): what one page costs with tesseract.js and the npm `eng` data, on this machine.
 * Engine start; one page-sized (A4, 150 dpi) image per format through `ocrWith` (BMP re-encoded as
 * PNG, as processing does) and, for comparison, BMP handed to tesseract.js as it is; one scanned
 * PDF page rendered by pdf.js and read. The pages are generated (test/support/ocr-fixtures.ts),
 * each run checks the words came back.
 *
 *   npx tsx bench/file-ocr.ts [--runs 5]
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { ocrWith, openOcrEngine, renderPdfPage } from '../src/files/processing/ocr.js';
import { encodePage, missingWords, scannedPdf, textPage, type ImageFormat } from '../test/support/ocr-fixtures.js';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '5' } } });
const runs = Number(values.runs);
const ENG = { enabled: true, languages: ['eng'], tessdataDir: null };

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
async function time(label: string, run: () => Promise<void>): Promise<void> {
  const ms: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    await run();
    ms.push(performance.now() - start);
  }
  console.log(`| ${label} | ${Math.round(median(ms))} | ${Math.round(Math.min(...ms))} | ${Math.round(Math.max(...ms))} |`);
}

const page = textPage();
const check = (text: string) => {
  const missing = missingWords(text, page.words);
  if (missing.length > 0) throw new Error(`OCR missed ${missing.join(', ')}`);
};

console.log(`runs: ${runs}, node ${process.version}\n\n| step | median ms | min | max |\n|---|---|---|---|`);
await time('engine start (tesseract.js worker + eng data)', async () => (await openOcrEngine(ENG)).close());
const engine = await openOcrEngine(ENG);
const ocr = ocrWith(engine);
for (const format of ['png', 'jpeg', 'webp', 'tiff', 'bmp'] as ImageFormat[]) {
  const { bytes, mimeType } = encodePage(page, format);
  const note = format === 'bmp' ? ', re-encoded as PNG first' : '';
  await time(`A4 page, ${format} (${Math.round(bytes.length / 1024)} KiB)${note}`, async () => check(await ocr.image(bytes, mimeType)));
}
const bmp = encodePage(page, 'bmp').bytes;
await time('A4 page, bmp handed to tesseract.js as it is', async () => check(await engine.recognize(bmp)));
const pdf = await scannedPdf([page.png]);
const document = await getDocument({ data: new Uint8Array(pdf), isEvalSupported: false, disableFontFace: true, verbosity: 0 }).promise;
const scan = await document.getPage(1);
let png: Uint8Array = new Uint8Array();
await time('scanned PDF page: render at 200 dpi', async () => {
  png = await renderPdfPage(scan);
});
await time('scanned PDF page: OCR of the render', async () => check(await engine.recognize(png)));
await document.destroy();
await engine.close();
