/** The billing half of the usage page: subscription and plans, the ledger, the statements. */
import { useEffect, useId, useMemo, useState } from 'react';
import { api } from '../../api/client';
import type { ListOf } from '../../api/types';
import { useFormat, useT } from '../../i18n/context';
import { ErrorNote, Field, Loading, TableState } from '../../ui/kit';
import { useAction, useApi } from '../../ui/use-api';
import { messages } from './messages';
import { Stats, useCredits } from './parts';
import { monthOf, pageOf, type LedgerEntry } from './series';

type PlanPeriod = 'day' | 'week' | 'month' | { days: number };
interface Quota {
  models: string[];
  requests: number | null;
  tokens: number | null;
}
export interface Subscription {
  id: string;
  plan_id: string;
  plan_name: string;
  status: 'active' | 'expired' | 'canceled';
  period: PlanPeriod;
  price_micro: number;
  current_period_start: string;
  current_period_end: string;
  quotas: Array<Quota & { used_requests: number; used_tokens: number; remaining: number }>;
}
export interface CreditBalance {
  balance: string;
  balance_micro: number;
  subscription: Subscription | null;
}
interface Plan {
  id: string;
  name: string;
  description: string | null;
  period: PlanPeriod;
  quotas: Quota[];
  price_micro: number;
}

function usePeriodText() {
  const t = useT(messages);
  return (p: PlanPeriod) => (p === 'day' ? t('planPeriodDay') : p === 'week' ? t('planPeriodWeek') : p === 'month' ? t('planPeriodMonth') : t('planPeriodDays', { n: p.days }));
}

export function SubscriptionPanel({ subscription, onChanged }: { subscription: Subscription | null; onChanged: () => void }) {
  const t = useT(messages);
  const format = useFormat();
  const money = useCredits();
  const periodText = usePeriodText();
  const plans = useApi<ListOf<Plan>>('/v1/plans');
  const [confirming, setConfirming] = useState(false);
  const action = useAction(async (path: string, body?: unknown) => {
    await api(path, { method: 'POST', body });
    setConfirming(false);
    onChanged();
  });
  const statusText = { active: t('statusActive'), expired: t('statusExpired'), canceled: t('statusCanceled') };
  const running = subscription?.status === 'active';

  return (
    <>
      {subscription ? (
        <>
          <Stats
            items={[
              { label: t('plan'), value: subscription.plan_name },
              { label: t('status'), value: statusText[subscription.status], tone: running ? 'ok' : 'warn' },
              { label: t('periodEnds'), value: format.dateTime(subscription.current_period_end) },
              { label: t('price'), value: `${money(subscription.price_micro)} ${periodText(subscription.period)}` },
            ]}
          />
          {subscription.quotas.length > 0 ? (
            <div className="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th scope="col">{t('quotaModels')}</th>
                    <th scope="col" className="num">{t('quota')}</th>
                    <th scope="col" className="num">{t('used')}</th>
                    <th scope="col" className="num">{t('remaining')}</th>
                    <th scope="col">
                      <span className="sr-only">{t('used')}</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {subscription.quotas.map((q, i) => {
                    const limit = q.requests ?? q.tokens ?? 0;
                    const used = q.requests !== null ? q.used_requests : q.used_tokens;
                    const n = (v: number) => (q.requests !== null ? t('quotaRequests', { n: format.number(v) }) : t('quotaTokens', { n: format.number(v) }));
                    return (
                      <tr key={i}>
                        <th scope="row">{q.models.join(', ')}</th>
                        <td className="num">{n(limit)}</td>
                        <td className="num">{format.number(used)}</td>
                        <td className="num">{format.number(q.remaining)}</td>
                        <td>
                          <div className="quota-bar" role="progressbar" aria-label={t('used')} aria-valuemin={0} aria-valuemax={limit} aria-valuenow={Math.min(used, limit)}>
                            <span style={{ width: `${limit > 0 ? Math.min(100, (used / limit) * 100) : 0}%` }} />
                          </div>
                        </td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            </div>
          ) : null}
          <div className="row" style={{ marginTop: '0.75rem' }}>
            {subscription.status !== 'canceled' ? (
              <button type="button" disabled={action.busy} onClick={() => void action.run('/v1/subscriptions/renew')} title={t('renewHint')}>
                {t('renew')}
              </button>
            ) : null}
            {running && !confirming ? (
              <button type="button" className="danger" disabled={action.busy} onClick={() => setConfirming(true)}>
                {t('cancelSubscription')}
              </button>
            ) : null}
            {running && confirming ? (
              <>
                <button type="button" className="danger" disabled={action.busy} onClick={() => void action.run('/v1/subscriptions/cancel')}>
                  {t('confirmCancel')}
                </button>
                <span className="muted">{t('cancelHint')}</span>
              </>
            ) : null}
          </div>
          <p className="muted">{t('renewHint')}</p>
        </>
      ) : (
        <p className="muted">{t('noSubscription')}</p>
      )}
      <ErrorNote error={action.error} />
      {!running ? (
        <>
          <h3 className="chart-title">{t('plans')}</h3>
          <ErrorNote error={plans.error} onRetry={() => void plans.reload()} />
          {plans.data && plans.data.data.length === 0 ? <p className="muted">{t('noPlans')}</p> : null}
          <ul className="plain-list">
            {plans.data?.data.map((p) => (
              <li key={p.id} className="row">
                <div>
                  <strong>{p.name}</strong> — {money(p.price_micro)} {periodText(p.period)}
                  {p.description ? <div className="muted">{p.description}</div> : null}
                  <div className="muted">
                    {p.quotas.map((q) => `${q.models.join(', ')}: ${q.requests !== null ? t('quotaRequests', { n: format.number(q.requests) }) : t('quotaTokens', { n: format.number(q.tokens ?? 0) })}`).join(' · ')}
                  </div>
                </div>
                <div className="spacer" />
                <button type="button" disabled={action.busy} onClick={() => void action.run('/v1/subscriptions', { plan_id: p.id })}>
                  {t('subscribe', { name: p.name })}
                </button>
              </li>
            ))}
          </ul>
        </>
      ) : null}
    </>
  );
}

const PAGE_SIZE = 20;
const TYPES = ['charge', 'topup', 'adjustment', 'subscription_fee'] as const;

export function Ledger({ version }: { version: number }) {
  const t = useT(messages);
  const format = useFormat();
  const money = useCredits();
  const headingId = useId();
  const [type, setType] = useState('');
  const [page, setPage] = useState(1);
  const ledger = useApi<{ data: LedgerEntry[] }>('/v1/billing/ledger', { type: type || undefined, limit: 100_000 });
  const reload = ledger.reload;
  useEffect(() => {
    if (version > 0) void reload();
  }, [version, reload]);
  // Newest first (the API answers in log order).
  const entries = useMemo(() => [...(ledger.data?.data ?? [])].reverse(), [ledger.data]);
  const shown = pageOf(entries, page, PAGE_SIZE);
  const typeText: Record<LedgerEntry['type'], string> = { charge: t('typeCharge'), topup: t('typeTopup'), adjustment: t('typeAdjustment'), subscription_fee: t('typeSubscriptionFee') };

  return (
    <section className="usage-section card" aria-labelledby={headingId}>
      <div className="row">
        <h2 id={headingId}>{t('ledger')}</h2>
        <div className="spacer" />
        <label className="row">
          <span>{t('type')}</span>
          <select
            value={type}
            onChange={(e) => {
              setType(e.target.value);
              setPage(1);
            }}
          >
            <option value="">{t('allTypes')}</option>
            {TYPES.map((k) => (
              <option key={k} value={k}>
                {typeText[k]}
              </option>
            ))}
          </select>
        </label>
      </div>
      <ErrorNote error={ledger.error} onRetry={() => void ledger.reload()} />
      <TableState
        rows={ledger.data ? entries : undefined}
        loading={ledger.loading}
        table={() => (
          <table aria-labelledby={headingId}>
            <thead>
              <tr>
                <th scope="col">{t('when')}</th>
                <th scope="col">{t('type')}</th>
                <th scope="col">{t('details')}</th>
                <th scope="col" className="num">{t('amount')}</th>
                <th scope="col" className="num">{t('balanceAfter')}</th>
              </tr>
            </thead>
            <tbody>
              {shown.items.map((e) => (
                <tr key={e.id}>
                  <td>{format.dateTime(e.created_at)}</td>
                  <td>{typeText[e.type]}</td>
                  <td>
                    {e.model ? <span className="mono">{e.model}</span> : null}
                    {e.prompt_tokens !== null ? <span className="muted"> {t('tokensDetail', { prompt: format.number(e.prompt_tokens), completion: format.number(e.completion_tokens ?? 0) })}</span> : null}
                    {e.reason ? <span>{e.reason}</span> : null}
                  </td>
                  <td className="num">{money(e.amount_micro)}</td>
                  <td className="num">{money(e.balance_after_micro)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        footer={() =>
          shown.pages > 1 ? (
            <nav className="row pager" aria-label={t('ledger')}>
              <button type="button" className="secondary" disabled={shown.page <= 1} onClick={() => setPage(shown.page - 1)}>
                {t('previous')}
              </button>
              <span>{t('pageOf', { page: shown.page, pages: shown.pages })}</span>
              <button type="button" className="secondary" disabled={shown.page >= shown.pages} onClick={() => setPage(shown.page + 1)}>
                {t('next')}
              </button>
            </nav>
          ) : null
        }
      />
    </section>
  );
}

interface StatementTotals {
  opening_balance_micro: number;
  topups_micro: number;
  adjustments_micro: number;
  charges_micro: number;
  subscription_fees_micro: number;
  closing_balance_micro: number;
  requests: number;
  covered_requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  list_cost_micro: number;
}

export function Statements() {
  const t = useT(messages);
  const format = useFormat();
  const money = useCredits();
  const [month, setMonth] = useState(() => monthOf(Date.now()));
  const valid = /^\d{4}-(0[1-9]|1[0-2])$/.test(month);
  const statement = useApi<{ totals: StatementTotals }>(valid ? '/v1/billing/statements' : null, { period: month });
  const s = statement.data?.totals;
  return (
    <section className="usage-section card" aria-labelledby="usage-statements">
      <h2 id="usage-statements">{t('statements')}</h2>
      <Field label={t('month')}>{(id) => <input id={id} type="month" value={month} onChange={(e) => setMonth(e.target.value)} style={{ maxWidth: '14rem' }} />}</Field>
      <ErrorNote error={statement.error} onRetry={() => void statement.reload()} />
      {statement.loading && !s ? <Loading /> : null}
      {s ? (
        <Stats
          items={[
            { label: t('openingBalance'), value: money(s.opening_balance_micro) },
            { label: t('topups'), value: money(s.topups_micro) },
            { label: t('adjustments'), value: money(s.adjustments_micro) },
            { label: t('charges'), value: money(s.charges_micro) },
            { label: t('subscriptionFees'), value: money(s.subscription_fees_micro) },
            { label: t('closingBalance'), value: money(s.closing_balance_micro) },
            { label: t('billableRequests'), value: format.number(s.requests) },
            { label: t('coveredRequests'), value: format.number(s.covered_requests) },
            { label: t('promptTokens'), value: format.number(s.prompt_tokens) },
            { label: t('completionTokens'), value: format.number(s.completion_tokens) },
            { label: t('listCost'), value: money(s.list_cost_micro) },
          ]}
        />
      ) : null}
    </section>
  );
}
