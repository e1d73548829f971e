/** The few building blocks every page uses; plain elements styled by styles.css. */
import { useEffect, useId, useRef, useState, type ReactNode } from 'react';
import { common } from '../i18n/common';
import { useT } from '../i18n/context';
import { ApiError } from '../api/client';

export function Page({ title, actions, children }: { title: string; actions?: ReactNode; children: ReactNode }) {
  return (
    <section className="page">
      <header className="page-head">
        <h1>{title}</h1>
        {actions ? <div className="page-actions">{actions}</div> : null}
      </header>
      {children}
    </section>
  );
}

export function Loading() {
  const t = useT(common);
  return (
    <p className="muted" role="status">
      {t('loading')}
    </p>
  );
}

/** An error from the API (its message and code) or any other. */
export function ErrorNote({ error, onRetry }: { error: Error | null | undefined; onRetry?: () => void }) {
  const t = useT(common);
  if (!error) return null;
  const code = error instanceof ApiError && error.code ? ` (${error.code})` : '';
  return (
    <div className="error-note" role="alert">
      <span>
        {error.message}
        {code}
      </span>
      {onRetry ? (
        <button type="button" className="link" onClick={onRetry}>
          {t('retry')}
        </button>
      ) : null}
    </div>
  );
}

/** A labelled form control: the label is tied to the control for screen readers and clicks. */
export function Field({ label, hint, children }: { label: string; hint?: ReactNode; children: (id: string) => ReactNode }) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {children(id)}
      {hint ? <small className="muted">{hint}</small> : null}
    </div>
  );
}

/** A modal dialog on the native <dialog> (focus trap and Escape come with it). */
export function Modal({ title, open, onClose, children, wide }: { title: string; open: boolean; onClose: () => void; children: ReactNode; wide?: boolean }) {
  const ref = useRef<HTMLDialogElement>(null);
  const t = useT(common);
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) dialog.showModal();
    if (!open && dialog.open) dialog.close();
  }, [open]);
  return (
    <dialog ref={ref} className={wide ? 'modal wide' : 'modal'} onClose={onClose} aria-label={title}>
      <header className="modal-head">
        <h2>{title}</h2>
        <button type="button" className="icon" aria-label={t('close')} onClick={onClose}>
          ×
        </button>
      </header>
      {open ? children : null}
    </dialog>
  );
}

export function CopyButton({ text, label }: { text: string; label?: string }) {
  const t = useT(common);
  const [done, setDone] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
    } catch {
      // No clipboard permission (plain http): select-and-copy through a text area instead.
      const area = document.createElement('textarea');
      area.value = text;
      document.body.append(area);
      area.select();
      document.execCommand('copy');
      area.remove();
    }
    setDone(true);
    setTimeout(() => setDone(false), 1500);
  };
  return (
    <button type="button" className="secondary" onClick={() => void copy()} aria-label={label ?? t('copy')}>
      {done ? t('copied') : (label ?? t('copy'))}
    </button>
  );
}

/** A switch for a boolean setting (a checkbox with role=switch). */
export function Toggle({ label, checked, onChange, disabled }: { label: string; checked: boolean; onChange: (on: boolean) => void; disabled?: boolean }) {
  return (
    <label className="toggle">
      <input type="checkbox" role="switch" checked={checked} disabled={disabled} onChange={(e) => onChange(e.target.checked)} />
      <span>{label}</span>
    </label>
  );
}

export function Empty({ children }: { children?: ReactNode }) {
  const t = useT(common);
  return <p className="muted empty">{children ?? t('none')}</p>;
}

/**
 * The loading / empty / table switch of a list. `rows` is undefined or null until the first answer.
 * `loading`, when given, limits Loading to while it is true: after a failed first load the error
 * note stands alone. `footer` (paging, a count) shows under the table, only when there are rows.
 */
export interface TableStateProps<T> {
  rows: readonly T[] | null | undefined;
  loading?: boolean;
  empty?: ReactNode;
  table: (rows: readonly T[]) => ReactNode;
  footer?: (rows: readonly T[]) => ReactNode;
}

export function TableState<T>({ rows, loading = true, empty, table, footer }: TableStateProps<T>) {
  if (!rows) return loading ? <Loading /> : null;
  if (rows.length === 0) return <Empty>{empty}</Empty>;
  return (
    <>
      <div className="table-wrap">{table(rows)}</div>
      {footer?.(rows)}
    </>
  );
}

/**
 * A list section labelled by its heading: the heading (in a row with the actions at the right when
 * there are any), `intro` (a hint), the list's error, the TableState, then `children` (the
 * section's dialogs, kept inside it).
 */
export function ListSection<T>({
  id,
  title,
  actions,
  className = 'ops-section',
  intro,
  error,
  onRetry,
  children,
  ...state
}: TableStateProps<T> & { id: string; title: ReactNode; actions?: ReactNode; className?: string; intro?: ReactNode; error?: Error | null; onRetry?: () => void; children?: ReactNode }) {
  const heading = <h2 id={id}>{title}</h2>;
  return (
    <section className={className} aria-labelledby={id}>
      {actions ? (
        <div className="row">
          {heading}
          <span className="spacer" />
          {actions}
        </div>
      ) : (
        heading
      )}
      {intro}
      <ErrorNote error={error} onRetry={onRetry} />
      <TableState {...state} />
      {children}
    </section>
  );
}

/** Downloads a Response body as a file (exports). */
export async function download(response: Response, fallbackName: string): Promise<void> {
  const disposition = response.headers.get('content-disposition') ?? '';
  const name = /filename="?([^";]+)"?/.exec(disposition)?.[1] ?? fallbackName;
  const url = URL.createObjectURL(await response.blob());
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
