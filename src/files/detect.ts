/**
 * What a file is, from its content (issue 18): the first bytes of the upload (DETECT_HEAD_BYTES)
 * and, for texts only, its name. Binary types come from their magic bytes (the `file-type`
 * package) and the name is never trusted for them: a PNG named `notes.txt` is a PNG, an
 * executable named `photo.png` is `application/octet-stream`. A file with no magic is a text when
 * its head is valid UTF-8 without NULs; then JSON when it looks like JSON, HTML when it starts
 * like HTML, Markdown or CSV by extension (or, without one, by their look), else plain text.
 * No I/O: the caller hands the head it kept while streaming.
 */
import { fileTypeFromBuffer } from 'file-type';
import { MIME, type KnownMime } from './mime.js';

/** How much of the upload detection looks at (file-type needs ~4 KB; a DOCX's zip entries a little more). */
export const DETECT_HEAD_BYTES = 64 * 1024;

/** The binary types we recognise, as file-type names them. */
const BINARY: ReadonlyMap<string, KnownMime> = new Map([
  ['application/pdf', MIME.pdf],
  [MIME.docx, MIME.docx],
  ['image/png', MIME.png],
  ['image/jpeg', MIME.jpeg],
  ['image/webp', MIME.webp],
  ['image/tiff', MIME.tiff],
  ['image/bmp', MIME.bmp],
]);

/** Text types file-type reports from text content (XML, SVG...): treated as the text they are. */
const TEXTUAL_MAGIC = /^(application\/(xml|json)|image\/svg\+xml|text\/)/;

export async function detectMime(head: Uint8Array, filename: string): Promise<KnownMime> {
  const magic = await fileTypeFromBuffer(head);
  if (magic && !TEXTUAL_MAGIC.test(magic.mime)) return BINARY.get(magic.mime) ?? MIME.unknown;
  const text = textOf(head);
  return text === null ? MIME.unknown : textKind(text, filename);
}

/** The head as text, or null when it is not UTF-8 or holds a NUL (a binary file). */
export function textOf(head: Uint8Array): string | null {
  if (head.includes(0)) return null;
  // The head may end inside a multi-byte character: leave out an incomplete last sequence.
  const bytes = Buffer.from(head.buffer, head.byteOffset, head.byteLength);
  const end = completeUtf8End(bytes);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(0, end));
  } catch {
    return null;
  }
}

/** Length of `bytes` without a trailing, unfinished UTF-8 sequence. */
function completeUtf8End(bytes: Buffer): number {
  for (let back = 1; back <= Math.min(3, bytes.length); back++) {
    const b = bytes[bytes.length - back]!;
    if ((b & 0xc0) === 0x80) continue; // a continuation byte: look further back for its lead
    const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return need > back ? bytes.length - back : bytes.length;
  }
  return bytes.length;
}

const extensionOf = (filename: string) => /\.([A-Za-z0-9]{1,10})$/.exec(filename)?.[1]?.toLowerCase() ?? '';
const MARKDOWN_EXT = new Set(['md', 'markdown', 'mdown', 'mkd']);
const CSV_EXT = new Set(['csv']);

export function textKind(text: string, filename: string): KnownMime {
  const start = text.replace(/^\uFEFF/, '').trimStart();
  if (/^[[{]/.test(start)) return MIME.json;
  if (/^(<!doctype\s+html|<html[\s>]|<head[\s>]|<body[\s>])/i.test(start)) return MIME.html;
  const ext = extensionOf(filename);
  if (MARKDOWN_EXT.has(ext)) return MIME.markdown;
  if (CSV_EXT.has(ext)) return MIME.csv;
  if (ext === '' || ext === 'txt') {
    if (looksLikeMarkdown(start)) return MIME.markdown;
    if (looksLikeCsv(start)) return MIME.csv;
  }
  return MIME.text;
}

/** A heading, a fenced block or a link at a line start: enough Markdown to call it that. */
function looksLikeMarkdown(text: string): boolean {
  return /^(#{1,6} \S|```|\* \S.*\n\* |- \S.*\n- |\[[^\]]+\]\([^)]+\))/m.test(text.slice(0, 4096));
}

/** At least two whole lines with the same number (>= 1) of commas (the last line of a head may be cut short). */
function looksLikeCsv(text: string): boolean {
  const lines = text.slice(0, 4096).split(/\r?\n/).slice(0, 10);
  if (lines.at(-1) === '') lines.pop();
  if (lines.length < 3) return false;
  const commas = (line: string) => line.split(',').length - 1;
  const first = commas(lines[0]!);
  return first >= 1 && lines.slice(0, -1).every((line) => commas(line) === first) && commas(lines.at(-1)!) <= first;
}
