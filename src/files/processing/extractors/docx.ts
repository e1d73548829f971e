/** DOCX: the document's raw text (mammoth), one paragraph per line pair as mammoth writes it. */
import mammoth from 'mammoth';
import { extracted, failed } from './result.js';
import type { ProcessingResult } from '../processor.js';

export async function extractDocx(bytes: Uint8Array): Promise<ProcessingResult> {
  let text: string;
  try {
    text = (await mammoth.extractRawText({ buffer: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) })).value;
  } catch {
    // Not a zip, no word/document.xml, broken XML: to the user all of it is one thing.
    return failed('corrupt DOCX');
  }
  return extracted(text.trim());
}
