/**
 * Files used in chat (issue 18). A chat request's `{"type":"file","file":{"file_id"}}` parts, and
 * a conversation message's `file_ids`, name the caller's uploaded files; before any provider sees
 * the request each becomes what a chat API reads:
 *
 * - a text file: a text part that names the file, with its text (chat's truncated form);
 * - an image file in a user message: an image part (its data URL); where the channel's provider
 *   takes no image of that type (Provider.imageTypes), the image's recognised text instead. That
 *   choice is made per attempt (`forProvider`): a fallback to another kind of channel may differ.
 * - an image file in any other message: its recognised text (chat APIs take images from users only).
 *
 * Requests without files never come here (the ingresses check for them cheaply first).
 */
import { AppError, BadRequestError, NotFoundError } from '../errors.js';
import type { AttachedFile, FileAttachments, FileOwner } from '../files/attachments.js';
import { COMMON_IMAGE_TYPES, type Provider } from './providers/provider.js';
import type { ChatCompletionRequest, ClientMessage, ContentPart, ImagePart, Message, TextPart } from './schema.js';

/**
 * The images made from files, by their data URL (not by part object: validation copies the
 * parts, never the strings), each with the text part that stands for it where a provider takes
 * no such image.
 */
export type FileImages = ReadonlyMap<string, FileImage>;

/** An image made from a file: its data URL, type, and the text part standing for it. */
export interface FileImage {
  url: string;
  mimeType: string;
  text: TextPart;
}

/** What one file becomes in a message: its part, and (images) the text standing for it. */
interface FileContent {
  part: ContentPart;
  image?: FileImage;
}

/** The text a model reads for a file: which file it is, then its text. */
export function fileText(file: AttachedFile): TextPart {
  const name = JSON.stringify(file.filename);
  if (file.text === null) return { type: 'text', text: `[image file ${name} (${file.id}): no text was recognised in it]` };
  const what = file.kind === 'image' ? 'text recognised in image file' : 'file';
  return { type: 'text', text: `--- ${what} ${name} (${file.id}) ---\n${file.text}\n--- end of ${name} ---` };
}

/** The part a file becomes in a message (images stay images only in a user's message). */
export function fileContent(file: AttachedFile, inUserMessage: boolean): FileContent {
  const text = fileText(file);
  if (file.kind === 'text' || !inUserMessage) return { part: text };
  const part: ImagePart = { type: 'image_url', image_url: { url: file.dataUrl } };
  return { part, image: { url: file.dataUrl, mimeType: file.mimeType, text } };
}

/** A file that could not be used, with the request field that named it (the port's errors carry none). */
function withParam(error: unknown, param: string): unknown {
  return error instanceof AppError ? new AppError(error.status, error.type, error.code, error.message, error.headers, param) : error;
}

const fileNotFound = (fileId: string) => new NotFoundError(`file ${fileId} not found`, 'file_not_found');

/**
 * The caller's files, each attached once (a file named twice is read once), in parallel. The
 * first failure in `requested` order is thrown with its param: 404 `file_not_found` (not the
 * caller's, unknown, deleted; a caller without a user has no files), 409 `file_not_ready`.
 */
export async function attachAll(attachments: FileAttachments, userId: string | null, tenantId: string, requested: ReadonlyArray<{ fileId: string; param: string }>): Promise<Map<string, AttachedFile>> {
  const owner: FileOwner | null = userId === null ? null : { tenantId, userId };
  const ids = [...new Set(requested.map((r) => r.fileId))];
  const settled = await Promise.allSettled(ids.map((id) => (owner === null ? Promise.reject(fileNotFound(id)) : attachments.attach(owner, id))));
  const files = new Map<string, AttachedFile>();
  const failures = new Map<string, unknown>();
  ids.forEach((id, i) => {
    const outcome = settled[i]!;
    if (outcome.status === 'fulfilled') files.set(id, outcome.value);
    else failures.set(id, outcome.reason);
  });
  for (const { fileId, param } of requested) if (failures.has(fileId)) throw withParam(failures.get(fileId), param);
  return files;
}

/**
 * Files attached to earlier messages of a conversation, as far as they can still be used: null
 * for one deleted (or failed) since. Never throws for a file: the conversation goes on without it.
 */
export async function attachAvailable(attachments: FileAttachments, owner: FileOwner, fileIds: readonly string[]): Promise<Map<string, AttachedFile | null>> {
  const ids = [...new Set(fileIds)];
  const settled = await Promise.allSettled(ids.map((id) => attachments.attach(owner, id)));
  return new Map(ids.map((id, i) => {
    const outcome = settled[i]!;
    if (outcome.status === 'rejected' && !(outcome.reason instanceof AppError)) throw outcome.reason;
    return [id, outcome.status === 'fulfilled' ? outcome.value : null] as const;
  }));
}

/** The note a model reads for an earlier message's file that is gone. */
export const missingFileText = (fileId: string): TextPart => ({ type: 'text', text: `[file ${fileId} is no longer available]` });

/**
 * The first file part of a raw body that gives no `file_id` (inline `file_data`), as the 400 that
 * says what to do instead; null when there is none. Only asked for bodies validation refused (zod
 * names such a part's whole message content "invalid input", which helps nobody).
 */
export function inlineFileRefusal(body: unknown): BadRequestError | null {
  const messages = isRecord(body) ? body.messages : undefined;
  if (!Array.isArray(messages)) return null;
  for (let i = 0; i < messages.length; i++) {
    const content: unknown = isRecord(messages[i]) ? (messages[i] as Record<string, unknown>).content : undefined;
    if (!Array.isArray(content)) continue;
    for (let j = 0; j < content.length; j++) {
      const part: unknown = content[j];
      if (!isRecord(part) || part.type !== 'file' || (isRecord(part.file) && typeof part.file.file_id === 'string')) continue;
      return new BadRequestError('a file part names an uploaded file by file_id: upload the file with POST /v1/files first (inline file_data is not accepted)', 'unsupported_parameter', `messages[${i}].content[${j}].file.file_id`);
    }
  }
  return null;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Whether any message has a file part (only requests zod parsed can: the fast path takes string contents only). */
export function hasFileParts(messages: readonly ClientMessage[]): boolean {
  for (const message of messages) {
    const content = message.content;
    if (Array.isArray(content)) for (const part of content) if (part.type === 'file') return true;
  }
  return false;
}

/**
 * The request's messages with every file part replaced (see the header), and the image parts
 * made from files. Throws the first file that cannot be used (404 / 409, param
 * `messages[i].content[j].file.file_id`).
 */
export async function resolveFileParts(messages: readonly ClientMessage[], attach: (requested: ReadonlyArray<{ fileId: string; param: string }>) => Promise<ReadonlyMap<string, AttachedFile>>): Promise<{ messages: Message[]; images: FileImages }> {
  const requested: Array<{ fileId: string; param: string }> = [];
  messages.forEach((message, i) => {
    if (Array.isArray(message.content)) {
      message.content.forEach((part, j) => {
        if (part.type === 'file') requested.push({ fileId: part.file.file_id, param: `messages[${i}].content[${j}].file.file_id` });
      });
    }
  });
  const files = await attach(requested);
  const images = new Map<string, FileImage>();
  const resolved = messages.map((message): Message => {
    const content = message.content;
    if (!Array.isArray(content) || !content.some((part) => part.type === 'file')) return message as Message;
    const parts = content.map((part): ContentPart => {
      if (part.type !== 'file') return part;
      const made = fileContent(files.get(part.file.file_id)!, message.role === 'user');
      if (made.image !== undefined) images.set(made.image.url, made.image);
      return made.part;
    });
    return { ...message, content: parts };
  });
  return { messages: resolved, images };
}

/**
 * The request as `provider` gets it: the file images it takes stay images, the others become
 * their text. The request itself when the provider takes them all (the common case).
 */
export function forProvider(body: ChatCompletionRequest, images: FileImages, provider: Provider): ChatCompletionRequest {
  const accepted = provider.imageTypes ?? COMMON_IMAGE_TYPES;
  let all = true;
  for (const image of images.values()) if (!accepted.has(image.mimeType)) all = false;
  if (all) return body;
  const swap = (part: ContentPart): ContentPart => {
    const image = part.type === 'image_url' ? images.get(part.image_url.url) : undefined;
    return image !== undefined && !accepted.has(image.mimeType) ? image.text : part;
  };
  return { ...body, messages: body.messages.map((m) => (Array.isArray(m.content) ? { ...m, content: m.content.map(swap) } : m)) };
}
