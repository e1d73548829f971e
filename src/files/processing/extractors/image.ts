/**
 * Images: their text is whatever OCR recognises. With OCR off an image is still processed (to
 * empty text): it is used as an image part in chat all the same.
 */
import { OcrUnavailableError } from '../../../errors.js';
import { ocrRefusal, type Ocr } from '../ocr.js';
import { extracted, failed } from './result.js';
import type { ProcessingResult } from '../processor.js';

export async function extractImage(bytes: Uint8Array, mimeType: string, ocr: Ocr | null): Promise<ProcessingResult> {
  if (!ocr) return extracted('');
  const refusal = ocrRefusal(bytes);
  if (refusal) return failed(refusal);
  try {
    return extracted((await ocr.image(bytes, mimeType)).trim(), null, 1);
  } catch (error) {
    return failed(error instanceof OcrUnavailableError ? 'OCR not available' : 'unreadable image');
  }
}
