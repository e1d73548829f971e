/**
 * File names, sealed with the file's data key (crypto-shredding, decision 0120, as conversation
 * texts in src/conversations/texts.ts): deleting the file destroys the key, and every copy of the
 * name in the log becomes unreadable.
 *
 * Scope `user:<userId>:file:<fileId>`: under the user's prefix, so deleting a user
 * (`destroyPrefix(userKeyPrefix(userId))`) takes their files' names too.
 * Context `file:<fileId>:filename`: a sealed name moved to another file does not open there.
 */
import { openText, sealText, type SealedText } from '../crypto/data-seal.js';
import type { DataKeys } from '../ports/data-keys.js';
import { userKeyPrefix } from '../conversations/texts.js';

export const fileKeyScope = (userId: string, fileId: string) => `${userKeyPrefix(userId)}file:${fileId}`;
const nameContext = (fileId: string) => `file:${fileId}:filename`;

/** Opens with a key already read (the projection reads keys through its transaction). */
export function openFileName(key: Buffer, fileId: string, sealed: SealedText): string {
  return openText(key, sealed, nameContext(fileId));
}

export class FileNames {
  constructor(private readonly keys: DataKeys) {}

  /** Makes the file's key and seals its name with it. */
  async seal(userId: string, fileId: string, name: string): Promise<SealedText> {
    const key = await this.keys.create(fileKeyScope(userId, fileId));
    return sealText(key, name, nameContext(fileId));
  }

  /** Crypto-shreds the name: the sealed copies in the log can no longer be opened. */
  destroy(userId: string, fileId: string): Promise<void> {
    return this.keys.destroy(fileKeyScope(userId, fileId));
  }
}
