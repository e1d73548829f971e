/** Type detection from content (src/files/detect.ts), on generated fixtures. */
import { describe, expect, it } from 'vitest';
import { detectMime, textOf } from '../../src/files/detect.js';
import { MIME } from '../../src/files/mime.js';
import { docxBytes, gifBytes, pdfBytes, pngBytes } from '../support/files.js';

const text = (s: string) => Buffer.from(s, 'utf8');

describe('detectMime', () => {
  it('names binary types by their magic bytes, whatever the name says', async () => {
    expect(await detectMime(pngBytes(), 'notes.txt')).toBe(MIME.png);
    expect(await detectMime(pdfBytes(), 'photo.png')).toBe(MIME.pdf);
    expect(await detectMime(docxBytes(), 'data.csv')).toBe(MIME.docx);
    expect(await detectMime(Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46, 0x49, 0x46, 0, 1]), 'a.md')).toBe(MIME.jpeg);
  });

  it('answers octet-stream for binary content it does not process, even named as text', async () => {
    expect(await detectMime(gifBytes(), 'readme.md')).toBe(MIME.unknown);
    expect(await detectMime(Buffer.from([1, 2, 3, 0, 4, 5]), 'notes.txt')).toBe(MIME.unknown);
    expect(await detectMime(Buffer.from([0xc3, 0x28, 0x41]), 'notes.txt')).toBe(MIME.unknown); // invalid UTF-8
  });

  it('tells texts apart: JSON and HTML by content, Markdown and CSV by extension or look', async () => {
    expect(await detectMime(text('  {"a": 1}'), 'x.txt')).toBe(MIME.json);
    expect(await detectMime(text('[1,2]'), 'x')).toBe(MIME.json);
    expect(await detectMime(text('<!DOCTYPE html><html><body>hi</body></html>'), 'page')).toBe(MIME.html);
    expect(await detectMime(text('<html lang="en">hi'), 'page.txt')).toBe(MIME.html);
    expect(await detectMime(text('plain words'), 'notes.md')).toBe(MIME.markdown);
    expect(await detectMime(text('# Title\n\nBody'), 'notes')).toBe(MIME.markdown);
    expect(await detectMime(text('a,b\n1,2'), 'table.csv')).toBe(MIME.csv);
    expect(await detectMime(text('a,b,c\n1,2,3\n4,5,6\n'), 'table')).toBe(MIME.csv);
    expect(await detectMime(text('hello, world\nthis is prose'), 'notes.txt')).toBe(MIME.text);
    expect(await detectMime(text('Grüße aus Köln'), 'x.log')).toBe(MIME.text);
    expect(await detectMime(text(''), 'empty.txt')).toBe(MIME.text);
  });

  it('reads a head cut inside a multi-byte character as text', () => {
    const whole = Buffer.from('añ€😀', 'utf8');
    for (let cut = 1; cut <= whole.length; cut++) expect(textOf(whole.subarray(0, cut)), `cut at ${cut}`).not.toBeNull();
    expect(textOf(Buffer.from([0x61, 0x80]))).toBeNull(); // a lone continuation byte is not UTF-8
  });
});
