/**
 * Generated test files for file processing (issue 18): PDFs (pdfkit), DOCX (docx), images
 * (@napi-rs/canvas), and helpers that truncate or corrupt bytes. Nothing binary is committed; every fixture is made here from the
 * text the tests then expect back.
 */
import { createCanvas } from '@napi-rs/canvas';
import { Document, Packer, Paragraph } from 'docx';
import JSZip from 'jszip';
import PDFDocument from 'pdfkit';

export interface PdfOptions {
  /** Encrypts the document (RC4/AES per pdfkit): opening it needs this password. */
  userPassword?: string;
  /**
   * Pages (1-based numbers) that are scans: their lines are drawn into a PNG placed on the page,
   * with no text layer, as a scanner makes them (text for OCR to find, none for an extractor).
   */
  scannedPages?: number[];
}

/** A PDF with one page per entry of `pages`, each page's lines drawn as text (Helvetica). */
export function makePdf(pages: readonly (readonly string[])[], options: PdfOptions = {}): Promise<Buffer> {
  const doc = new PDFDocument({
    autoFirstPage: false,
    compress: true,
    ...(options.userPassword ? { userPassword: options.userPassword, ownerPassword: `${options.userPassword}-owner`, pdfVersion: '1.7' as const } : {}),
  });
  const chunks: Buffer[] = [];
  doc.on('data', (chunk: Buffer) => chunks.push(chunk));
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });
  pages.forEach((lines, index) => {
    doc.addPage({ size: 'A4', margin: 50 });
    if (options.scannedPages?.includes(index + 1)) {
      // A4 at 150 dpi is 1240 x 1754 pixels; the image fills the page.
      doc.image(makeImage('image/png', lines, { width: 1240, height: 1754, fontPx: 48 }), 0, 0, { width: doc.page.width, height: doc.page.height });
      return;
    }
    doc.font('Helvetica').fontSize(14);
    for (const line of lines) doc.text(line);
  });
  doc.end();
  return done;
}

/**
 * A one-page PDF of CJK text in a font that is not embedded and uses Adobe's predefined CMap
 * UniJIS-UCS2-H, as many Japanese office documents are made. pdfkit always embeds its fonts, so
 * this one is written object by object. `text` must be in the Basic Multilingual Plane.
 */
export function makeCjkPdf(text: string): Buffer {
  const ucs2 = [...text].map((char) => char.charCodeAt(0).toString(16).padStart(4, '0')).join('');
  const content = `BT /F1 24 Tf 10 50 Td <${ucs2}> Tj ET`;
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 400 100] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>',
    '<< /Type /Font /Subtype /Type0 /BaseFont /KozMinPr6N-Regular /Encoding /UniJIS-UCS2-H /DescendantFonts [6 0 R] >>',
    `<< /Length ${content.length} >>\nstream\n${content}\nendstream`,
    '<< /Type /Font /Subtype /CIDFontType0 /BaseFont /KozMinPr6N-Regular /CIDSystemInfo << /Registry (Adobe) /Ordering (Japan1) /Supplement 6 >> /FontDescriptor 7 0 R >>',
    '<< /Type /FontDescriptor /FontName /KozMinPr6N-Regular /Flags 4 /FontBBox [0 -120 1000 880] /ItalicAngle 0 /Ascent 880 /Descent -120 /CapHeight 700 /StemV 80 >>',
  ];
  let pdf = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((body, index) => {
    offsets.push(pdf.length);
    pdf += `${index + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = pdf.length;
  pdf += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((offset) => `${String(offset).padStart(10, '0')} 00000 n \n`).join('')}`;
  pdf += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(pdf, 'latin1');
}

/** A DOCX whose body is these paragraphs, in order. */
export function makeDocx(paragraphs: readonly string[]): Promise<Buffer> {
  const document = new Document({ sections: [{ children: paragraphs.map((text) => new Paragraph({ text })) }] });
  return Packer.toBuffer(document);
}

/**
 * A decompression bomb shaped as a DOCX: a small file whose word/document.xml inflates to about
 * `inflatedMb` megabytes of paragraphs (every one the same, so it compresses about a thousandfold).
 */
export async function makeDocxBomb(inflatedMb: number): Promise<Buffer> {
  const zip = await JSZip.loadAsync(await makeDocx(['bomb']));
  const paragraph = '<w:p><w:r><w:t>boom</w:t></w:r></w:p>';
  const body = paragraph.repeat(Math.ceil((inflatedMb * 1024 * 1024) / paragraph.length));
  const xml = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>${body}</w:body></w:document>`;
  zip.file('word/document.xml', xml);
  return zip.generateAsync({ type: 'nodebuffer', compression: 'DEFLATE', compressionOptions: { level: 1 } });
}

/**
 * An image of black lines of text on white (the fonts are the system's: with none installed the
 * lines draw nothing, which is still a valid image).
 */
export function makeImage(
  mimeType: 'image/png' | 'image/jpeg' | 'image/webp',
  lines: readonly string[] = [],
  { width = 320, height = 120, fontPx = 24 }: { width?: number; height?: number; fontPx?: number } = {},
): Buffer {
  const canvas = createCanvas(width, height);
  const context = canvas.getContext('2d');
  context.fillStyle = '#ffffff';
  context.fillRect(0, 0, width, height);
  context.fillStyle = '#000000';
  context.font = `${fontPx}px sans-serif`;
  lines.forEach((line, index) => context.fillText(line, fontPx / 2, fontPx * 1.5 * (index + 1)));
  // The encoders' type parameters are literal unions; each branch names one.
  if (mimeType === 'image/png') return canvas.toBuffer('image/png');
  if (mimeType === 'image/jpeg') return canvas.toBuffer('image/jpeg', 90);
  return canvas.toBuffer('image/webp', 90);
}

/** The first `length` bytes (a download cut short). */
export function truncated(bytes: Uint8Array, length: number): Buffer {
  return Buffer.from(bytes.subarray(0, Math.max(0, Math.min(length, bytes.length))));
}

/** A copy with the byte at each given offset replaced (offsets past the end are ignored). */
export function corrupted(bytes: Uint8Array, changes: readonly { offset: number; value: number }[]): Buffer {
  const copy = Buffer.from(bytes);
  for (const { offset, value } of changes) if (offset >= 0 && offset < copy.length) copy[offset] = value & 0xff;
  return copy;
}
