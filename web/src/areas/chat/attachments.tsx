/** Attachments: upload with progress, wait for processing, the extracted text in a dialog. */
import { useCallback, useEffect, useRef, useState } from 'react';
import { api } from '../../api/client';
import { useT } from '../../i18n/context';
import { ErrorNote, Loading, Modal } from '../../ui/kit';
import { useApi } from '../../ui/use-api';
import { chatMessages } from './messages';
import type { FileObject, FileText } from './types';
import { uploadFile } from './upload';

export const FILE_POLL_MS = 500;

export interface Attachment {
  key: string;
  name: string;
  /** 0..1 while uploading. */
  progress: number;
  file: FileObject | null;
  error: string | null;
}

export const attachmentReady = (a: Attachment) => a.file?.status === 'processed';
export const attachmentPending = (a: Attachment) => a.error === null && a.file?.status !== 'processed' && a.file?.status !== 'error';

export function useAttachments() {
  const [items, setItems] = useState<Attachment[]>([]);
  const live = useRef(true);
  useEffect(() => {
    live.current = true;
    return () => {
      live.current = false;
    };
  }, []);
  const update = useCallback((key: string, change: Partial<Attachment>) => {
    if (live.current) setItems((list) => list.map((a) => (a.key === key ? { ...a, ...change } : a)));
  }, []);

  const add = useCallback(
    (files: Iterable<File>) => {
      for (const file of files) {
        const key = `${Date.now()}-${Math.random()}`;
        setItems((list) => [...list, { key, name: file.name, progress: 0, file: null, error: null }]);
        void (async () => {
          try {
            let stored = await uploadFile(file, (progress) => update(key, { progress }));
            update(key, { progress: 1, file: stored });
            // Processing (text extraction) runs after the upload: poll until it ends.
            while (live.current && (stored.status === 'uploaded' || stored.status === 'processing')) {
              await new Promise((r) => setTimeout(r, FILE_POLL_MS));
              stored = await api<FileObject>(`/v1/files/${stored.id}`);
              update(key, { file: stored });
            }
          } catch (error) {
            update(key, { error: (error as Error).message });
          }
        })();
      }
    },
    [update],
  );
  const remove = useCallback((key: string) => setItems((list) => list.filter((a) => a.key !== key)), []);
  const clear = useCallback(() => setItems([]), []);
  return { items, add, remove, clear };
}

/** A button that opens a file's extracted text. */
export function FileTextButton({ fileId, name }: { fileId: string; name: string }) {
  const t = useT(chatMessages);
  const [open, setOpen] = useState(false);
  return (
    <>
      <button type="button" className="link" onClick={() => setOpen(true)} aria-label={`${t('viewText')}: ${name}`}>
        {t('viewText')}
      </button>
      <Modal title={t('fileText', { name })} open={open} onClose={() => setOpen(false)} wide>
        <FileTextBody fileId={fileId} />
      </Modal>
    </>
  );
}

function FileTextBody({ fileId }: { fileId: string }) {
  const t = useT(chatMessages);
  const text = useApi<FileText>(`/v1/files/${fileId}/text`);
  if (text.error) return <ErrorNote error={text.error} onRetry={() => void text.reload()} />;
  if (!text.data) return <Loading />;
  return (
    <>
      {text.data.truncated ? <p className="muted">{t('fileTruncated')}</p> : null}
      <pre className="file-text">{text.data.text}</pre>
    </>
  );
}

/** A message's attached file: its name and its text. */
export function MessageFile({ fileId }: { fileId: string }) {
  const file = useApi<FileObject>(`/v1/files/${fileId}`);
  const name = file.data?.filename ?? fileId;
  return (
    <span className="file-chip">
      <span className="file-name">{name}</span> <FileTextButton fileId={fileId} name={name} />
    </span>
  );
}

/** The composer's attachments: progress, processing, ready (text viewable) or failed. */
export function AttachmentList({ items, onRemove }: { items: Attachment[]; onRemove: (key: string) => void }) {
  const t = useT(chatMessages);
  if (items.length === 0) return null;
  return (
    <ul className="attachments" aria-label={t('attach')}>
      {items.map((a) => {
        const status = a.error
          ? t('failed', { reason: a.error })
          : a.file === null
            ? t('uploading', { percent: Math.round(a.progress * 100) })
            : a.file.status === 'processed'
              ? t('ready')
              : a.file.status === 'error'
                ? t('failed', { reason: a.file.status_details ?? '' })
                : t('processing');
        return (
          <li key={a.key} className="file-chip">
            <span>{a.name}</span>
            {a.file === null && !a.error ? <progress max={1} value={a.progress} aria-label={status} /> : null}
            <span className={a.error || a.file?.status === 'error' ? 'badge bad' : attachmentReady(a) ? 'badge ok' : 'badge'} role="status">
              {status}
            </span>
            {a.file && attachmentReady(a) ? <FileTextButton fileId={a.file.id} name={a.name} /> : null}
            <button type="button" className="icon" aria-label={t('removeFile', { name: a.name })} onClick={() => onRemove(a.key)}>
              ×
            </button>
          </li>
        );
      })}
    </ul>
  );
}
