/** Alerts the rules raised, newest first, filtered by state (firing / resolved), paged by cursor. */
import { useEffect, useState } from 'react';
import { api } from '../../api/client';
import { useFormat, useT } from '../../i18n/context';
import { ErrorNote, Field, TableState } from '../../ui/kit';
import { useAction } from '../../ui/use-api';
import { valueText, type AlertKind, type Severity } from './logic';
import { messages } from './messages';

interface Alert {
  id: string;
  rule_name: string;
  kind: AlertKind;
  severity: Severity;
  state: 'firing' | 'resolved';
  value: number;
  threshold: number;
  message: string;
  fired_at: string;
  resolved_at: string | null;
}
interface AlertPage {
  data: Alert[];
  has_more: boolean;
  next_cursor: string | null;
}

export const severityBadge = (s: Severity) => (s === 'critical' ? 'bad' : s === 'warning' ? 'warn' : '');

export function AlertsPage() {
  const t = useT(messages);
  const { dateTime } = useFormat();
  const [state, setState] = useState<'' | 'firing' | 'resolved'>('firing');
  const [alerts, setAlerts] = useState<Alert[] | null>(null);
  const [cursor, setCursor] = useState<string | null>(null);
  const load = useAction(async (s: typeof state, after?: string) => {
    const page = await api<AlertPage>('/api/admin/alerts', { query: { state: s || undefined, cursor: after, limit: 50 } });
    setAlerts((prev) => (after ? [...(prev ?? []), ...page.data] : page.data));
    setCursor(page.has_more ? page.next_cursor : null);
  });
  const { run } = load;
  // Reload when the filter changes (run is a new function each render: the state is the trigger).
  useEffect(() => void run(state), [state]);
  return (
    <section className="ops-section" aria-label={t('tabAlerts')}>
      <div className="filter-bar">
        <Field label={t('state')}>
          {(id) => (
            <select id={id} value={state} onChange={(e) => setState(e.target.value as typeof state)}>
              <option value="">{t('allStates')}</option>
              <option value="firing">{t('firing')}</option>
              <option value="resolved">{t('resolved')}</option>
            </select>
          )}
        </Field>
        <div className="filter-action">
          <button type="button" className="secondary" disabled={load.busy} onClick={() => void run(state)}>
            {t('refresh')}
          </button>
        </div>
      </div>
      <ErrorNote error={load.error} />
      <TableState
        rows={alerts}
        table={(rows) => (
          <table aria-label={t('tabAlerts')}>
            <thead>
              <tr>
                <th>{t('firedAt')}</th>
                <th>{t('rule')}</th>
                <th>{t('severity')}</th>
                <th>{t('state')}</th>
                <th className="num">{t('value')}</th>
                <th>{t('message')}</th>
                <th>{t('resolvedAt')}</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((a) => (
                <tr key={a.id}>
                  <td className="nowrap">{dateTime(a.fired_at)}</td>
                  <td>{a.rule_name}</td>
                  <td>
                    <span className={`badge ${severityBadge(a.severity)}`}>{t(a.severity)}</span>
                  </td>
                  <td>
                    <span className={`badge ${a.state === 'firing' ? 'bad' : 'ok'}`}>{t(a.state)}</span>
                  </td>
                  <td className="num">
                    {valueText(a.kind, a.value)} / {valueText(a.kind, a.threshold)}
                  </td>
                  <td>{a.message}</td>
                  <td className="nowrap">{a.resolved_at ? dateTime(a.resolved_at) : '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      />
      {cursor ? (
        <div className="form-actions">
          <button type="button" className="secondary" disabled={load.busy} onClick={() => void run(state, cursor)}>
            {t('loadMore')}
          </button>
        </div>
      ) : null}
    </section>
  );
}
