/**
 * Files in a Responses request (issue 18): `input_file` parts and `input_image` parts with a
 * `file_id` name the caller's uploaded files. They are replaced before the request goes anywhere
 * (as on chat completions, src/relay/files.ts): a file by an `input_text` naming it, an image in a
 * user's message by an `input_image` with its data URL (elsewhere: its text). The chat form gets
 * the images' text per provider (FileImages); the native form (openai, azure) gets the text of
 * images of a type those APIs do not take.
 */
import type { AttachedFile, FileAttachments } from '../../../files/attachments.js';
import type { RelayCaller } from '../../access/caller.js';
import { attachAll, attachAvailable, fileContent, missingFileText, type FileImage, type FileImages } from '../../files.js';
import { COMMON_IMAGE_TYPES } from '../../providers/provider.js';
import type { InputContentPart, InputItem } from './schema.js';

const namesFile = (part: InputContentPart) => part.type === 'input_file' || (part.type === 'input_image' && part.file_id !== undefined);

/** Whether any message item has a part naming a file. */
export function namesFiles(items: readonly InputItem[]): boolean {
  for (const item of items) if ((item.type === undefined || item.type === 'message') && Array.isArray(item.content) && item.content.some(namesFile)) return true;
  return false;
}

/** The file ids of the items' parts, with the request field naming each. */
function fileRefs(items: readonly InputItem[], param: string): Array<{ fileId: string; param: string }> {
  const refs: Array<{ fileId: string; param: string }> = [];
  items.forEach((item, i) => {
    if (!(item.type === undefined || item.type === 'message') || !Array.isArray(item.content)) return;
    item.content.forEach((part, j) => {
      if (part.type === 'input_file' || (part.type === 'input_image' && part.file_id !== undefined)) refs.push({ fileId: part.file_id!, param: `${param}[${i}].content[${j}].file_id` });
    });
  });
  return refs;
}

/** The items with their file parts replaced by what `files` holds (null: a file gone since, a note). */
function replaced(items: readonly InputItem[], files: ReadonlyMap<string, AttachedFile | null>, images: Map<string, FileImage>): InputItem[] {
  return items.map((item): InputItem => {
    if (!(item.type === undefined || item.type === 'message') || !Array.isArray(item.content) || !item.content.some(namesFile)) return item;
    const content = item.content.map((part): InputContentPart => {
      if (!namesFile(part)) return part;
      const id = (part as { file_id: string }).file_id;
      const file = files.get(id);
      if (file === undefined || file === null) return { type: 'input_text', text: missingFileText(id).text };
      const made = fileContent(file, item.role === 'user');
      if (made.image === undefined) return { type: 'input_text', text: (made.part as { text: string }).text };
      images.set(made.image.url, made.image);
      return { type: 'input_image', image_url: made.image.url, ...(part.type === 'input_image' && part.detail !== undefined && { detail: part.detail }) };
    });
    return { ...item, content };
  });
}

/**
 * The request's input and the stored conversation it continues, with every file part replaced.
 * The input's files must be the caller's and ready (404 / 409, param `input[i].content[j].file_id`);
 * those of the stored conversation are used as far as they still exist.
 */
export async function resolveInputFiles(attachments: FileAttachments, caller: RelayCaller, input: readonly InputItem[], history: readonly InputItem[]): Promise<{ input: InputItem[]; history: InputItem[]; images: FileImages }> {
  const asked = fileRefs(input, 'input');
  const earlier = fileRefs(history, 'previous_response_id').map((ref) => ref.fileId);
  const [own, stored] = await Promise.all([
    asked.length === 0 ? new Map<string, AttachedFile>() : attachAll(attachments, caller.userId, caller.tenantId, asked),
    earlier.length === 0 || caller.userId === null ? new Map<string, AttachedFile | null>() : attachAvailable(attachments, { tenantId: caller.tenantId, userId: caller.userId }, earlier),
  ]);
  const images = new Map<string, FileImage>();
  return { input: replaced(input, own, images), history: replaced(history, stored, images), images };
}

/** The items for an upstream that takes COMMON_IMAGE_TYPES only (the native Responses APIs): other file images as their text. */
export function withNativeImages(items: readonly InputItem[], images: FileImages): InputItem[] {
  let all = true;
  for (const image of images.values()) if (!COMMON_IMAGE_TYPES.has(image.mimeType)) all = false;
  if (all) return [...items];
  return items.map((item): InputItem => {
    if (!(item.type === undefined || item.type === 'message') || !Array.isArray(item.content)) return item;
    const content = item.content.map((part): InputContentPart => {
      const image = part.type === 'input_image' && part.image_url !== undefined ? images.get(part.image_url) : undefined;
      return image !== undefined && !COMMON_IMAGE_TYPES.has(image.mimeType) ? { type: 'input_text', text: image.text.text } : part;
    });
    return { ...item, content };
  });
}
