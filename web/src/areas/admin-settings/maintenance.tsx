/** Settings › Maintenance mode: on / off with the message users get, and a clear warning while on. */
import { useEffect, useState } from 'react';
import { api } from '../../api/client';
import { useFormat, useT } from '../../i18n/context';
import { ErrorNote, Field, Loading } from '../../ui/kit';
import { useAction, useApi } from '../../ui/use-api';
import { messages } from './messages';

interface MaintenanceView {
  enabled: boolean;
  message: string;
  changed_by: string | null;
  changed_at: string | null;
}

export function Maintenance() {
  const t = useT(messages);
  const fmt = useFormat();
  const state = useApi<MaintenanceView>('/v1/admin/maintenance');
  const [message, setMessage] = useState('');
  useEffect(() => {
    if (state.data) setMessage(state.data.message || t('defaultMaintenanceMessage'));
  }, [state.data, t]);
  const apply = useAction(async (enabled: boolean) => {
    state.set(await api<MaintenanceView>('/v1/admin/maintenance', { method: 'POST', body: { enabled, message: message.trim() } }));
  });

  if (!state.data) return state.error ? <ErrorNote error={state.error} onRetry={() => void state.reload()} /> : <Loading />;
  const on = state.data.enabled;
  return (
    <section className={on ? 'card settings-card maintenance-on' : 'card settings-card'} aria-labelledby="maintenance-heading">
      <h2 id="maintenance-heading">{t('maintenance')}</h2>
      {on ? (
        <div className="maintenance-banner" role="alert">
          <strong>{t('maintenanceOn')}</strong>
          {state.data.changed_at ? <span> · {t('maintenanceSince', { time: fmt.dateTime(state.data.changed_at) })}</span> : null}
          <p>{t('maintenanceWarning')}</p>
        </div>
      ) : (
        <p>
          <span className="badge ok">{t('maintenanceOff')}</span>
        </p>
      )}
      {!on ? <p className="muted">{t('maintenanceWarning')}</p> : null}
      <Field label={t('maintenanceMessage')}>{(id) => <textarea id={id} rows={2} maxLength={1000} value={message} onChange={(e) => setMessage(e.target.value)} />}</Field>
      <ErrorNote error={apply.error} />
      <div className="row">
        {on ? (
          <>
            <button type="button" disabled={apply.busy} onClick={() => void apply.run(false)}>
              {t('turnOff')}
            </button>
            <button type="button" className="secondary" disabled={apply.busy || message.trim() === state.data.message} onClick={() => void apply.run(true)}>
              {t('updateMessage')}
            </button>
          </>
        ) : (
          <button type="button" className="danger" disabled={apply.busy} onClick={() => void apply.run(true)}>
            {t('turnOn')}
          </button>
        )}
      </div>
    </section>
  );
}
