/**
 * Plain text, Markdown, CSV and JSON: kept as they are, once they decode as UTF-8. JSON is not
 * reformatted (a model reads it fine as written); a byte-order mark is dropped.
 */
import { extracted, failed } from './result.js';
import type { ProcessingResult } from '../processor.js';

/** The UTF-8 text of `bytes`, or null when they are not valid UTF-8 (fatal decoding: no U+FFFD guesses). */
export function decodeUtf8(bytes: Uint8Array): string | null {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
}

export function extractPlainText(bytes: Uint8Array): ProcessingResult {
  const text = decodeUtf8(bytes);
  return text === null ? failed('not valid UTF-8 text') : extracted(text);
}
