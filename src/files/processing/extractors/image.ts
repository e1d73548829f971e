/** Images: their text is whatever OCR recognises; without an OCR engine there is none to give. */
import type { Ocr } from '../ocr.js';
import { extracted, failed } from './result.js';
import type { ProcessingResult } from '../processor.js';

export async function extractImage(bytes: Uint8Array, mimeType: string, ocr: Ocr | null): Promise<ProcessingResult> {
  if (!ocr) return failed('OCR not available');
  return extracted((await ocr.image(bytes, mimeType)).trim(), null, 1);
}
