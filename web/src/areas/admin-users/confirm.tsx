/** A yes/no question in a modal, with the action's error kept in it. */
import { useState } from 'react';
import { common } from '../../i18n/common';
import { useT } from '../../i18n/context';
import { ErrorNote, Modal } from '../../ui/kit';

export function Confirm({ title, text, action, open, onClose, onConfirm }: { title: string; text: string; action: string; open: boolean; onClose: () => void; onConfirm: () => Promise<void> }) {
  const tc = useT(common);
  const [error, setError] = useState<Error | null>(null);
  const [busy, setBusy] = useState(false);
  const confirm = async () => {
    setBusy(true);
    setError(null);
    try {
      await onConfirm();
      onClose();
    } catch (e) {
      setError(e as Error);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Modal title={title} open={open} onClose={onClose}>
      <p>{text}</p>
      <ErrorNote error={error} />
      <div className="row">
        <button type="button" className="danger" disabled={busy} onClick={() => void confirm()}>
          {action}
        </button>
        <button type="button" className="secondary" onClick={onClose}>
          {tc('cancel')}
        </button>
      </div>
    </Modal>
  );
}
