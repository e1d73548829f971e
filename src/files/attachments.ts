/**
 * Files used in chat (issue 18): what the conversations ingress and the relay's `file` content
 * parts need from a file. Implemented over the `files` read model and storage
 * (src/files/service.ts); owner only: another user's, another tenant's, a deleted or unknown id
 * all answer `file_not_found`.
 */
export interface FileOwner {
  tenantId: string;
  userId: string;
}

export type AttachedFile =
  | {
      kind: 'text';
      id: string;
      filename: string;
      mimeType: string;
      /** The extracted text in chat's form: cut at FILE_TEXT_LIMIT with a note saying so. */
      text: string;
      truncated: boolean;
    }
  | {
      kind: 'image';
      id: string;
      filename: string;
      mimeType: string;
      /** `data:<mime>;base64,...` of the original bytes. */
      dataUrl: string;
      /** The OCR text (chat's form), for models that do not take images; null when OCR found none or was off. */
      text: string | null;
      truncated: boolean;
    };

export interface FileAttachments {
  /**
   * The file for use in a chat request. Throws NotFoundError `file_not_found` (not the owner's, or
   * none) and ConflictError `file_not_ready` (uploaded or processing; `error` files answer
   * `file_not_ready` too, with the failure reason in the message).
   */
  attach(owner: FileOwner, fileId: string): Promise<AttachedFile>;
}
