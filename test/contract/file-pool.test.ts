/**
 * The file-processing pool (src/files/processing/pool.ts) with real worker threads: extraction
 * through the workers, fuzzed truncated and corrupted PDFs, DOCX and images (every result a
 * clean failure or a text, the pool serving afterwards), a file that loops forever ending in
 * `file_processing_timeout` with its worker terminated, crashes and heap exhaustion ending in
 * `file_processing_error`, shutdown, and the pool loaded from built JavaScript (no tsx).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { MIME } from '../../src/files/mime.js';
import { PAGE_BREAK } from '../../src/files/processing/extractors/index.js';
import { openFileProcessor } from '../../src/files/processing/index.js';
import { FileProcessingPool } from '../../src/files/processing/pool.js';
import type { FileProcessor, ProcessingResult } from '../../src/files/processing/processor.js';
import { createLogger } from '../../src/logger.js';
import { corrupted, makeCjkPdf, makeDocx, makeDocxBomb, makeImage, makePdf, truncated } from '../support/file-fixtures.js';
import { FAULT_MESSAGE_SECRET, FAULTS } from '../support/file-worker-faults.js';

const OCR_OFF = { enabled: false, languages: ['eng'], tessdataDir: null };
const FAULTY_WORKER = new URL('../support/file-worker-faults.js', import.meta.url);
const logger = createLogger('silent');

const dir = mkdtempSync(join(tmpdir(), 'sy-file-pool-'));
let written = 0;
/** Writes bytes to a new file of the scratch folder (the pool reads files by path). */
const file = (bytes: Uint8Array): string => {
  const path = join(dir, `f${written++}`);
  writeFileSync(path, bytes);
  return path;
};

const PDF_PAGES = [['Fuzz base page one', 'with two lines'], ['Page two of the base']];
const DOCX_PARAGRAPHS = ['Base paragraph one', 'Base paragraph two'];
let pdf: Buffer;
let docx: Buffer;
let images: { mimeType: string; bytes: Buffer }[];

beforeAll(async () => {
  pdf = await makePdf(PDF_PAGES);
  docx = await makeDocx(DOCX_PARAGRAPHS);
  images = (['image/png', 'image/jpeg', 'image/webp'] as const).map((mimeType) => ({ mimeType, bytes: makeImage(mimeType, ['Scan me']) }));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const pdfText = PDF_PAGES.map((lines) => lines.join('\n')).join(PAGE_BREAK);
const expectGoodPdf = async (processor: FileProcessor) =>
  expect(await processor.process({ path: file(pdf), mimeType: MIME.pdf })).toEqual({ ok: true, text: pdfText, pages: 2, ocrPages: 0 });

describe('the file-processing pool', () => {
  let pool: FileProcessingPool;
  beforeAll(() => {
    pool = new FileProcessingPool({ workers: 2, timeoutMs: 20_000, ocr: OCR_OFF }, logger);
  });
  afterAll(() => pool.close());

  it('extracts PDF, DOCX and text in its workers, several at once', async () => {
    const results = await Promise.all([
      pool.process({ path: file(pdf), mimeType: MIME.pdf }),
      pool.process({ path: file(docx), mimeType: MIME.docx }),
      pool.process({ path: file(new TextEncoder().encode('# notes\n')), mimeType: MIME.markdown }),
      pool.process({ path: file(pdf), mimeType: MIME.pdf }),
    ]);
    expect(results).toEqual([
      { ok: true, text: pdfText, pages: 2, ocrPages: 0 },
      { ok: true, text: DOCX_PARAGRAPHS.join('\n\n'), pages: null, ocrPages: 0 },
      { ok: true, text: '# notes\n', pages: null, ocrPages: 0 },
      { ok: true, text: pdfText, pages: 2, ocrPages: 0 },
    ]);
    // The workers have pdf.js's CMaps (see test/unit/file-extract.test.ts for why they matter).
    expect(await pool.process({ path: file(makeCjkPdf('東京')), mimeType: MIME.pdf })).toMatchObject({ ok: true, text: '東京' });
  });

  it('answers a missing file and an unsupported type with file_processing_error', async () => {
    expect(await pool.process({ path: join(dir, 'never-written'), mimeType: MIME.pdf })).toEqual({ ok: false, code: 'file_processing_error', reason: 'file not readable' });
    expect(await pool.process({ path: file(pdf), mimeType: 'image/gif' })).toEqual({ ok: false, code: 'file_processing_error', reason: 'unsupported type image/gif' });
  });

  it('survives truncated and corrupted PDFs, DOCX and images: each is a text or a clean failure', async () => {
    // What the extractors may answer for a damaged file: anything else (a crash, a timeout) fails the property.
    const cleanReasons = new Set(['corrupt PDF', 'corrupt DOCX', 'encrypted document', 'unreadable image']);
    const base = fc.oneof(
      fc.constant({ mimeType: MIME.pdf, bytes: () => pdf }),
      fc.constant({ mimeType: MIME.docx, bytes: () => docx }),
      fc.integer({ min: 0, max: 2 }).map((i) => ({ mimeType: images[i]!.mimeType, bytes: () => images[i]!.bytes })),
    );
    const damage = fc.oneof(
      fc.double({ min: 0, max: 1, noNaN: true }).map((at) => (bytes: Buffer) => truncated(bytes, Math.floor(at * bytes.length))),
      fc
        .array(fc.record({ at: fc.double({ min: 0, max: 1, noNaN: true }), value: fc.integer({ min: 0, max: 255 }) }), { minLength: 1, maxLength: 24 })
        .map((changes) => (bytes: Buffer) => corrupted(bytes, changes.map(({ at, value }) => ({ offset: Math.floor(at * bytes.length), value })))),
      // A run of garbage over the middle of the file (a damaged sector).
      fc.record({ at: fc.double({ min: 0, max: 1, noNaN: true }), garbage: fc.uint8Array({ minLength: 16, maxLength: 512 }) }).map(({ at, garbage }) => (bytes: Buffer) => {
        const copy = Buffer.from(bytes);
        copy.set(garbage.subarray(0, Math.max(0, copy.length - Math.floor(at * copy.length))), Math.floor(at * copy.length));
        return copy;
      }),
    );
    // Four files per run, processed together: the two workers and the queue in front of them both busy.
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(base, damage), { minLength: 4, maxLength: 4 }), async (cases) => {
        const results = await Promise.all(cases.map(([{ mimeType, bytes }, hurt]) => pool.process({ path: file(hurt(bytes())), mimeType })));
        for (const result of results) {
          if (result.ok) expect(typeof result.text).toBe('string');
          else expect({ code: result.code, clean: cleanReasons.has(result.reason) }).toEqual({ code: 'file_processing_error', clean: true });
        }
      }),
      { numRuns: 25 },
    );
    await expectGoodPdf(pool);
  });
});

describe('a pool whose worker misbehaves', () => {
  let pool: FileProcessingPool;
  const logged: Record<string, unknown>[] = [];
  beforeAll(() => {
    // One worker, so every recovery below is the pool starting a new one.
    const capture = createLogger('info', { write: (line: string) => void logged.push(JSON.parse(line) as Record<string, unknown>) });
    pool = new FileProcessingPool({ workers: 1, timeoutMs: 2_000, ocr: OCR_OFF, workerModule: FAULTY_WORKER }, capture);
  });
  afterAll(() => pool.close());

  it('terminates a file that loops past the timeout, then serves the file that waited behind it', async () => {
    const started = performance.now();
    // The PDF queues behind the loop (one worker): its own clock starts only once it has the worker.
    const [looping, waiting] = await Promise.all([pool.process({ path: file(pdf), mimeType: FAULTS.loop }), pool.process({ path: file(pdf), mimeType: MIME.pdf })]);
    expect(looping).toEqual({ ok: false, code: 'file_processing_timeout', reason: 'processing took longer than 2 s' });
    expect(waiting).toEqual({ ok: true, text: pdfText, pages: 2, ocrPages: 0 });
    expect(performance.now() - started).toBeGreaterThanOrEqual(2_000);
  });

  it.each([
    ['throws', FAULTS.throw, 'processing failed'],
    ['exits', FAULTS.exit, 'the worker stopped'],
  ])('answers file_processing_error when the worker %s, and keeps serving', async (_, mimeType, reason) => {
    expect(await pool.process({ path: file(pdf), mimeType })).toEqual({ ok: false, code: 'file_processing_error', reason });
    await expectGoodPdf(pool);
  });

  it('logs each failure with the type and the error class, never what a parser quoted from the file', () => {
    expect(logged).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ msg: 'file processing timed out; its worker was terminated', mimeType: FAULTS.loop }),
        expect.objectContaining({ msg: 'file processing failed in its worker', mimeType: FAULTS.throw, error: { name: 'Error' } }),
        expect.objectContaining({ msg: 'file processing failed in its worker', mimeType: FAULTS.exit, error: { name: 'Error', message: 'worker exited with code: 7' } }),
      ]),
    );
    expect(JSON.stringify(logged)).not.toContain(FAULT_MESSAGE_SECRET);
  });

  it('ends running and waiting files with "shutting down" on close, and refuses files after it', async () => {
    const closing = new FileProcessingPool({ workers: 1, timeoutMs: 30_000, ocr: OCR_OFF, workerModule: FAULTY_WORKER }, logger);
    const running = closing.process({ path: file(pdf), mimeType: FAULTS.loop });
    const waiting = closing.process({ path: file(pdf), mimeType: MIME.pdf });
    await closing.close();
    const shuttingDown: ProcessingResult = { ok: false, code: 'file_processing_error', reason: 'shutting down' };
    expect(await running).toEqual(shuttingDown);
    expect(await waiting).toEqual(shuttingDown);
    await expect(closing.process({ path: file(pdf), mimeType: MIME.pdf })).rejects.toThrow(/closed/);
  });
});

describe('a pool whose worker cannot start', () => {
  it('fails a file with "no worker available" once the start grace has passed', async () => {
    const broken = new FileProcessingPool({ workers: 1, timeoutMs: 30_000, ocr: OCR_OFF, startGraceMs: 1_000, workerModule: new URL('../support/no-such-worker.js', import.meta.url) }, logger);
    try {
      expect(await broken.process({ path: file(pdf), mimeType: MIME.pdf })).toEqual({ ok: false, code: 'file_processing_error', reason: 'no worker available' });
    } finally {
      await broken.close();
    }
  });
});

describe('the heap cap of a worker', () => {
  it('ends a decompression bomb at the heap cap of its worker, not in the process', async () => {
    // 12 MB of paragraphs in under a hundred kilobytes: parsed, far more than the worker's 64 MB heap.
    const bomb = await makeDocxBomb(12);
    expect(bomb.length).toBeLessThan(1024 * 1024);
    const heapBefore = process.memoryUsage().heapUsed;
    // The real worker, a small heap, and time enough that the cap, not the timeout, is what ends it.
    const capped = new FileProcessingPool({ workers: 1, timeoutMs: 60_000, ocr: OCR_OFF, heapLimitMb: 64 }, logger);
    try {
      expect(await capped.process({ path: file(bomb), mimeType: MIME.docx })).toEqual({ ok: false, code: 'file_processing_error', reason: 'out of memory' });
      // The serving side held nothing of it (the bomb's bytes above are all it saw). That the pool
      // serves on after a worker died is the case of the exiting worker above.
      expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(32 * 1024 * 1024);
    } finally {
      await capped.close();
    }
  });

});

describe('openFileProcessor', () => {
  const config = (engine: string) => loadConfig({ SECRET: 'x'.repeat(32), FILE_PROCESSING_ENGINE: engine, FILE_PROCESSING_WORKERS: '1' });

  it('gives no processor for FILE_PROCESSING_ENGINE=none and the worker pool for builtin', async () => {
    expect(await openFileProcessor(config('none'), logger)).toBeNull();
    // Processing through the pool is what the cases above test; here only which processor comes back.
    const processor = await openFileProcessor(config('builtin'), logger);
    expect(processor).toBeInstanceOf(FileProcessingPool);
    await processor!.close();
  });

  it('runs from built JavaScript, where the worker is a .js module and tsx is not involved', async () => {
    // The test run's compiled copy of the sources (test/support/compiled-sources.ts), which Node
    // loads itself: vitest leaves what is under node_modules untransformed.
    const copy = process.env.SWITCHYARD_COMPILED_SOURCES;
    expect(copy, 'the global setup names the compiled copy').toBeTruthy();
    const built = (await import(pathToFileURL(join(copy!, 'src/files/processing/index.js')).href)) as { openFileProcessor: typeof openFileProcessor };
    const processor = await built.openFileProcessor(config('builtin'), logger);
    try {
      await expectGoodPdf(processor!);
      expect(await processor!.process({ path: file(docx), mimeType: MIME.docx })).toMatchObject({ ok: true, text: DOCX_PARAGRAPHS.join('\n\n') });
    } finally {
      await processor?.close();
    }
  });
});
