/**
 * What a file becomes in a chat request (src/relay/files.ts): the text part naming it, images as
 * image parts only in user messages, and per provider the images it cannot take swapped for their
 * text (the request left as it is when it takes them all).
 */
import { describe, expect, it } from 'vitest';
import type { AttachedFile } from '../../src/files/attachments.js';
import { fileContent, fileText, forProvider, hasFileParts } from '../../src/relay/files.js';
import { PROVIDERS } from '../../src/relay/providers/index.js';
import type { ChatCompletionRequest, ImagePart, TextPart } from '../../src/relay/schema.js';

const textFile: AttachedFile = { kind: 'text', id: 'file-1', filename: 'notes "v2".md', mimeType: 'text/markdown', text: 'line one\nline two', truncated: false };
const image = (mimeType: string, text: string | null): AttachedFile => ({ kind: 'image', id: 'file-2', filename: 'scan.img', mimeType, dataUrl: `data:${mimeType};base64,AAAA`, text, truncated: false });

describe('file parts', () => {
  it('gives a text file as a text part that names the file around its text', () => {
    const part = fileText(textFile);
    expect(part.type).toBe('text');
    expect(part.text.split('\n')).toEqual(['--- file "notes \\"v2\\".md" (file-1) ---', 'line one', 'line two', '--- end of "notes \\"v2\\".md" ---']);
  });

  it('gives an image as an image part in a user message and as its recognised text elsewhere', () => {
    const png = image('image/png', 'INVOICE 42');
    const inUser = fileContent(png, true);
    expect(inUser.part).toEqual({ type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } });
    expect(inUser.image).toEqual({ url: 'data:image/png;base64,AAAA', mimeType: 'image/png', text: { type: 'text', text: expect.stringContaining('INVOICE 42') } });
    expect(fileContent(png, false)).toEqual({ part: { type: 'text', text: expect.stringContaining('text recognised in image file "scan.img" (file-2)') } });
    expect(fileText(image('image/png', null)).text).toBe('[image file "scan.img" (file-2): no text was recognised in it]');
  });

  it('swaps only the file images a provider cannot take for their text', () => {
    const png = fileContent(image('image/png', 'PNG TEXT'), true);
    const tiff = fileContent({ ...image('image/tiff', 'TIFF TEXT'), dataUrl: 'data:image/tiff;base64,CCCC' } as AttachedFile, true);
    const clientImage: ImagePart = { type: 'image_url', image_url: { url: 'data:image/tiff;base64,BBBB' } };
    // Keyed by data URL: parts copied by validation are still found.
    const body: ChatCompletionRequest = { model: 'm', messages: [{ role: 'user', content: [{ type: 'text', text: 'look' }, png.part, tiff.part, clientImage] }] };
    const images = new Map([
      [png.image!.url, png.image!],
      [tiff.image!.url, tiff.image!],
    ]);

    const forOpenAi = forProvider(body, images, PROVIDERS.openai);
    expect(forOpenAi.messages[0]!.content).toEqual([{ type: 'text', text: 'look' }, png.part, tiff.image!.text, clientImage]);
    expect(forProvider(body, images, PROVIDERS.deepseek).messages[0]!.content).toEqual([{ type: 'text', text: 'look' }, png.image!.text, tiff.image!.text, clientImage]);
    // Nothing to swap: the very same request.
    const onlyPng = new Map([[png.image!.url, png.image!]]);
    expect(forProvider(body, onlyPng, PROVIDERS.anthropic)).toBe(body);
    expect((tiff.image!.text as TextPart).text).toContain('TIFF TEXT');
  });

  it('finds file parts only where a message has parts', () => {
    expect(hasFileParts([{ role: 'user', content: 'a file: file-1' }, { role: 'user', content: [{ type: 'text', text: 'x' }] }])).toBe(false);
    expect(hasFileParts([{ role: 'system', content: 'x' }, { role: 'user', content: [{ type: 'file', file: { file_id: 'file-1' } }] }])).toBe(true);
  });
});
