/** The first message of a chat started on the new-chat page, handed to the conversation page. */
export interface PendingSend {
  content: string;
  fileIds: string[];
}

const pending = new Map<string, PendingSend>();

export const setPending = (conversationId: string, send: PendingSend) => void pending.set(conversationId, send);

/** The pending message of a conversation, once (taken away). */
export function takePending(conversationId: string): PendingSend | undefined {
  const send = pending.get(conversationId);
  pending.delete(conversationId);
  return send;
}
