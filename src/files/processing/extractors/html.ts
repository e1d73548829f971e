/**
 * HTML: its readable text only (html-to-text), without scripts, styles, link targets or images.
 * Line breaks follow the blocks (paragraphs, headings, list items, table rows).
 */
import { convert, type HtmlToTextOptions } from 'html-to-text';
import { decodeUtf8 } from './text.js';
import { extracted, failed } from './result.js';
import type { ProcessingResult } from '../processor.js';

const OPTIONS: HtmlToTextOptions = {
  // No wrapping: the text is for a model and a search index, not a terminal.
  wordwrap: false,
  selectors: [
    { selector: 'a', options: { ignoreHref: true } },
    { selector: 'img', format: 'skip' },
    { selector: 'script', format: 'skip' },
    { selector: 'style', format: 'skip' },
    { selector: 'noscript', format: 'skip' },
    { selector: 'template', format: 'skip' },
    // Headings as written, not upper-cased.
    ...(['h1', 'h2', 'h3', 'h4', 'h5', 'h6'] as const).map((selector) => ({ selector, options: { uppercase: false } })),
    { selector: 'table', format: 'dataTable', options: { uppercaseHeaderCells: false } },
  ],
};

export function extractHtml(bytes: Uint8Array): ProcessingResult {
  const html = decodeUtf8(bytes);
  if (html === null) return failed('not valid UTF-8 text');
  return extracted(convert(html, OPTIONS).trim());
}
