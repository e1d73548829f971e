/** The ledger (filters, pages of 50, the API's CSV export) and a month's statement. */
import { useState } from 'react';
import { send } from '../../api/client';
import type { ListOf } from '../../api/types';
import { useFormat, useT } from '../../i18n/context';
import { download, ErrorNote, Field, Loading, TableState } from '../../ui/kit';
import { useAction, useApi } from '../../ui/use-api';
import { useUsers, type LedgerEntry } from './data';
import { ledgerQuery, pageOf, thisMonth, type LedgerFilters } from './logic';
import { messages, type Key } from './messages';

const PAGE = 50;
const TYPE_LABEL: Record<LedgerEntry['type'], Key> = { charge: 'charge', topup: 'topupType', adjustment: 'adjustment', subscription_fee: 'subscription_fee' };

export function LedgerPage() {
  const t = useT(messages);
  const { dateTime } = useFormat();
  const { users, emailOf } = useUsers();
  const [filters, setFilters] = useState<LedgerFilters>({ user_id: '', type: '', from: '', to: '' });
  const [page, setPage] = useState(1);
  const query = ledgerQuery(filters);
  const ledger = useApi<ListOf<LedgerEntry>>('/v1/admin/billing/ledger', query);
  const exporter = useAction(async () => download(await send('/v1/admin/billing/ledger', { query: { ...query, format: 'csv' } }), 'ledger.csv'));
  const change = (next: Partial<LedgerFilters>) => {
    setFilters({ ...filters, ...next });
    setPage(1);
  };
  // The API answers in log order (oldest first); the page shows the newest first.
  const entries = [...(ledger.data?.data ?? [])].reverse();
  const shown = pageOf(entries, page, PAGE);
  return (
    <section className="ops-section" aria-labelledby="ledger-h">
      <h2 id="ledger-h">{t('ledger')}</h2>
      <div className="form-row" role="search" aria-label={t('ledger')}>
        <Field label={t('user')}>
          {(id) => (
            <select id={id} value={filters.user_id} onChange={(e) => change({ user_id: e.target.value })}>
              <option value="">{t('allUsers')}</option>
              {users.map((u) => (
                <option key={u.id} value={u.id}>
                  {u.email}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label={t('type')}>
          {(id) => (
            <select id={id} value={filters.type} onChange={(e) => change({ type: e.target.value })}>
              <option value="">{t('allTypes')}</option>
              {Object.entries(TYPE_LABEL).map(([value, key]) => (
                <option key={value} value={value}>
                  {t(key)}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label={t('from')}>{(id) => <input id={id} type="date" value={filters.from} onChange={(e) => change({ from: e.target.value })} />}</Field>
        <Field label={t('to')}>{(id) => <input id={id} type="date" value={filters.to} onChange={(e) => change({ to: e.target.value })} />}</Field>
      </div>
      <div className="form-actions">
        <button type="button" className="secondary" disabled={exporter.busy} onClick={() => void exporter.run()}>
          {t('exportCsv')}
        </button>
        <span className="muted">{t('entries', { n: entries.length })}</span>
      </div>
      <ErrorNote error={ledger.error ?? exporter.error} onRetry={ledger.error ? () => void ledger.reload() : undefined} />
      <TableState
        rows={ledger.data ? entries : undefined}
        table={() => (
          <table aria-labelledby="ledger-h">
            <thead>
              <tr>
                <th>{t('time')}</th>
                <th>{t('user')}</th>
                <th>{t('type')}</th>
                <th className="num">{t('amount')}</th>
                <th className="num">{t('balanceAfter')}</th>
                <th>{t('details')}</th>
              </tr>
            </thead>
            <tbody>
              {shown.items.map((e) => (
                <tr key={e.id}>
                  <td className="nowrap">{dateTime(e.created_at)}</td>
                  <td>{emailOf(e.user_id)}</td>
                  <td>{t(TYPE_LABEL[e.type])}</td>
                  <td className="num">{e.amount}</td>
                  <td className="num">{e.balance_after}</td>
                  <td>{e.reason ?? e.model ?? e.plan_id ?? ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        footer={() =>
          shown.pages > 1 ? (
            <div className="form-actions">
              <button type="button" className="secondary" disabled={shown.page <= 1} onClick={() => setPage(shown.page - 1)}>
                {t('previous')}
              </button>
              <span>{t('pageN', { page: shown.page, pages: shown.pages })}</span>
              <button type="button" className="secondary" disabled={shown.page >= shown.pages} onClick={() => setPage(shown.page + 1)}>
                {t('next')}
              </button>
            </div>
          ) : null
        }
      />
    </section>
  );
}

interface Totals {
  opening_balance: string;
  topups: string;
  adjustments: string;
  charges: string;
  subscription_fees: string;
  closing_balance: string;
  requests: number;
  covered_requests: number;
  list_cost: string;
}

export function StatementsPage() {
  const t = useT(messages);
  const { number } = useFormat();
  const { users, emailOf } = useUsers();
  const [period, setPeriod] = useState(thisMonth());
  const [user, setUser] = useState('');
  const valid = /^\d{4}-(0[1-9]|1[0-2])$/.test(period);
  const statement = useApi<{ users: Array<Totals & { user_id: string }>; totals: Totals }>(valid ? '/v1/admin/billing/statements' : null, { period, user_id: user || undefined });
  const cols: Array<[Key, (x: Totals) => string]> = [
    ['opening', (x) => x.opening_balance],
    ['topups', (x) => x.topups],
    ['adjustments', (x) => x.adjustments],
    ['charges', (x) => x.charges],
    ['fees', (x) => x.subscription_fees],
    ['closing', (x) => x.closing_balance],
    ['requestsCount', (x) => number(x.requests)],
    ['covered', (x) => number(x.covered_requests)],
    ['listCost', (x) => x.list_cost],
  ];
  return (
    <section className="ops-section" aria-labelledby="statement-h">
      <h2 id="statement-h">{t('statements')}</h2>
      <div className="form-row">
        <Field label={t('month')}>{(id) => <input id={id} type="month" value={period} onChange={(e) => setPeriod(e.target.value)} />}</Field>
        <Field label={t('user')}>
          {(id) => (
            <select id={id} value={user} onChange={(e) => setUser(e.target.value)}>
              <option value="">{t('allUsers')}</option>
              {users.map((u) => (
                <option key={u.id} value={u.id}>
                  {u.email}
                </option>
              ))}
            </select>
          )}
        </Field>
      </div>
      <ErrorNote error={statement.error} />
      {!statement.data ? (
        valid ? <Loading /> : null
      ) : (
        <div className="table-wrap">
          <table>
            <thead>
              <tr>
                <th>{t('user')}</th>
                {cols.map(([key]) => (
                  <th key={key} className="num">
                    {t(key)}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {statement.data.users.map((u) => (
                <tr key={u.user_id}>
                  <td>{emailOf(u.user_id)}</td>
                  {cols.map(([key, get]) => (
                    <td key={key} className="num">
                      {get(u)}
                    </td>
                  ))}
                </tr>
              ))}
              <tr>
                <th scope="row">{t('totals')}</th>
                {cols.map(([key, get]) => (
                  <td key={key} className="num">
                    <strong>{get(statement.data!.totals)}</strong>
                  </td>
                ))}
              </tr>
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
