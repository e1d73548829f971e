/** The message box: text, attachments (button or drag and drop), Send, and Stop while a reply streams. */
import { useRef, useState } from 'react';
import { useT } from '../../i18n/context';
import { AttachmentList, attachmentPending, attachmentReady, useAttachments } from './attachments';
import { chatMessages } from './messages';

export interface ComposerProps {
  streaming: boolean;
  /** Sends; answers false when it failed (the text is kept then). */
  onSend(content: string, fileIds: string[]): Promise<boolean>;
  onStop(): void;
  disabled?: boolean;
}

export function Composer({ streaming, onSend, onStop, disabled }: ComposerProps) {
  const t = useT(chatMessages);
  const [text, setText] = useState('');
  const [dragging, setDragging] = useState(false);
  const [sending, setSending] = useState(false);
  const attachments = useAttachments();
  const input = useRef<HTMLInputElement>(null);
  const waiting = attachments.items.some(attachmentPending);
  const canSend = !disabled && !streaming && !sending && !waiting && text.trim() !== '';

  const submit = async () => {
    if (!canSend) return;
    const content = text;
    const fileIds = attachments.items.filter(attachmentReady).map((a) => a.file!.id);
    setSending(true);
    setText('');
    const ok = await onSend(content, fileIds);
    setSending(false);
    if (ok) attachments.clear();
    else setText((now) => (now === '' ? content : now));
  };

  return (
    <form
      className={dragging ? 'composer dragging' : 'composer'}
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
      onDragOver={(e) => {
        if (!e.dataTransfer.types.includes('Files')) return;
        e.preventDefault();
        setDragging(true);
      }}
      onDragLeave={() => setDragging(false)}
      onDrop={(e) => {
        e.preventDefault();
        setDragging(false);
        if (e.dataTransfer.files.length > 0) attachments.add(e.dataTransfer.files);
      }}
    >
      {dragging ? <p className="drop-hint">{t('dropHere')}</p> : null}
      <AttachmentList items={attachments.items} onRemove={attachments.remove} />
      <textarea
        aria-label={t('message')}
        placeholder={t('messagePlaceholder')}
        rows={3}
        value={text}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) {
            e.preventDefault();
            void submit();
          }
        }}
      />
      <div className="row composer-actions">
        <input
          ref={input}
          type="file"
          multiple
          hidden
          aria-label={t('attach')}
          onChange={(e) => {
            if (e.target.files) attachments.add(e.target.files);
            e.target.value = '';
          }}
        />
        <button type="button" className="secondary" onClick={() => input.current?.click()} disabled={disabled}>
                    {t('attach')}
        </button>
        <span className="spacer" />
        {streaming ? (
          <button type="button" className="danger" onClick={onStop}>
            {t('stop')}
          </button>
        ) : (
          <button type="submit" disabled={!canSend}>
            {t('send')}
          </button>
        )}
      </div>
    </form>
  );
}
