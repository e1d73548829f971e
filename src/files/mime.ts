/**
 * The file types Switchyard recognises (issue 18). Detection (src/files/detect.ts) names a file by
 * its content with one of these; processing (src/files/processing/) dispatches on them. Anything
 * else is `application/octet-stream`: stored, and processing ends in `file_processing_error`
 * ("unsupported type").
 */
export const MIME = {
  text: 'text/plain',
  markdown: 'text/markdown',
  csv: 'text/csv',
  json: 'application/json',
  html: 'text/html',
  pdf: 'application/pdf',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  png: 'image/png',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  tiff: 'image/tiff',
  bmp: 'image/bmp',
  unknown: 'application/octet-stream',
} as const;

export type KnownMime = (typeof MIME)[keyof typeof MIME];

/** Images: OCR'd when OCR is enabled, and sent as image parts to models that take images. */
export const IMAGE_MIMES: ReadonlySet<string> = new Set([MIME.png, MIME.jpeg, MIME.webp, MIME.tiff, MIME.bmp]);

/** Texts read as UTF-8 (HTML is reduced to its text). */
export const TEXT_MIMES: ReadonlySet<string> = new Set([MIME.text, MIME.markdown, MIME.csv, MIME.json, MIME.html]);
