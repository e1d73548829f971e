/** Credits (balances, top-up / adjustment with a reason) and subscriptions (assign, renew, cancel). */
import { useState, type FormEvent } from 'react';
import { api } from '../../api/client';
import type { ListOf } from '../../api/types';
import { common } from '../../i18n/common';
import { useFormat, useT } from '../../i18n/context';
import { ErrorNote, Field, ListSection, Loading } from '../../ui/kit';
import { useAction, useApi } from '../../ui/use-api';
import { useUsers, type Balance, type Subscription, type User } from './data';
import type { Plan } from './logic';
import { messages } from './messages';
import { usePeriodLabel } from './plans';
import { confirmed } from './tabs';

function UserSelect({ users, value, onChange, label, placeholder }: { users: User[]; value: string; onChange: (id: string) => void; label: string; placeholder: string }) {
  return (
    <Field label={label}>
      {(id) => (
        <select id={id} required value={value} onChange={(e) => onChange(e.target.value)}>
          <option value="">{placeholder}</option>
          {users.map((u) => (
            <option key={u.id} value={u.id}>
              {u.email}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}

export function CreditsPage() {
  const t = useT(messages);
  const { dateTime } = useFormat();
  const { users, emailOf, error: usersError } = useUsers();
  const balances = useApi<ListOf<Balance>>('/v1/admin/credits');
  const [form, setForm] = useState({ user: '', kind: 'topup' as 'topup' | 'adjust', amount: '', reason: '' });
  const [done, setDone] = useState<string | null>(null);
  const move = useAction((f: typeof form) => api<Balance>(`/v1/admin/credits/${f.user}/${f.kind}`, { method: 'POST', body: { amount: f.amount.trim(), reason: f.reason } }));
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setDone(null);
    const answer = await move.run(form);
    if (!answer) return;
    setDone(t('applied', { email: emailOf(answer.user_id), balance: answer.balance }));
    setForm({ ...form, amount: '', reason: '' });
    await balances.reload();
  };
  const byUser = new Map((balances.data?.data ?? []).map((b) => [b.user_id, b]));
  return (
    <>
      <section className="ops-section card" aria-labelledby="credit-form">
        <h2 id="credit-form">{t('creditForm')}</h2>
        <form onSubmit={(e) => void submit(e)} aria-label={t('creditForm')}>
          <div className="form-row">
            <UserSelect users={users} value={form.user} onChange={(user) => setForm({ ...form, user })} label={t('user')} placeholder={t('chooseUser')} />
            <Field label={t('movement')}>
              {(id) => (
                <select id={id} value={form.kind} onChange={(e) => setForm({ ...form, kind: e.target.value as 'topup' | 'adjust' })}>
                  <option value="topup">{t('topup')}</option>
                  <option value="adjust">{t('adjust')}</option>
                </select>
              )}
            </Field>
            <Field label={t('amount')}>{(id) => <input id={id} inputMode="decimal" required value={form.amount} onChange={(e) => setForm({ ...form, amount: e.target.value })} />}</Field>
            <Field label={t('reason')}>{(id) => <input id={id} required maxLength={500} value={form.reason} onChange={(e) => setForm({ ...form, reason: e.target.value })} />}</Field>
          </div>
          <ErrorNote error={move.error ?? usersError} />
          <div className="form-actions">
            <button type="submit" disabled={move.busy}>
              {t('apply')}
            </button>
            {done ? (
              <span className="note-ok" role="status">
                {done}
              </span>
            ) : null}
          </div>
        </form>
      </section>
      <section className="ops-section" aria-labelledby="balances-h">
        <h2 id="balances-h">{t('credits')}</h2>
        <ErrorNote error={balances.error} onRetry={() => void balances.reload()} />
        {!balances.data ? (
          <Loading />
        ) : (
          <div className="table-wrap">
            <table aria-labelledby="balances-h">
              <thead>
                <tr>
                  <th>{t('user')}</th>
                  <th className="num">{t('balance')}</th>
                  <th>{t('updated')}</th>
                </tr>
              </thead>
              <tbody>
                {users.map((u) => {
                  const b = byUser.get(u.id);
                  return (
                    <tr key={u.id}>
                      <td>{u.email}</td>
                      <td className="num">{b?.balance ?? '0.000000'}</td>
                      <td className="nowrap">{b?.updated_at ? dateTime(b.updated_at) : '—'}</td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </>
  );
}

export function SubscriptionsPage() {
  const t = useT(messages);
  const c = useT(common);
  const { dateTime } = useFormat();
  const periodLabel = usePeriodLabel();
  const { users, emailOf } = useUsers();
  const plans = useApi<ListOf<Plan>>('/v1/admin/plans');
  const subs = useApi<ListOf<Subscription>>('/v1/admin/subscriptions');
  const [form, setForm] = useState({ user: '', plan: '' });
  const subscribe = useAction((f: typeof form) => api(`/v1/admin/subscriptions/${f.user}`, { method: 'POST', body: { plan_id: f.plan } }));
  const act = useAction((userId: string, action: 'renew' | 'cancel') => api(`/v1/admin/subscriptions/${userId}/${action}`, { method: 'POST' }));
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if ((await subscribe.run(form)) !== undefined) {
      setForm({ user: '', plan: '' });
      await subs.reload();
    }
  };
  const run = async (s: Subscription, action: 'renew' | 'cancel') => {
    const email = emailOf(s.user_id);
    if (!confirmed(t(action === 'renew' ? 'confirmRenew' : 'confirmCancel', { email }))) return;
    if ((await act.run(s.user_id, action)) !== undefined) await subs.reload();
  };
  return (
    <>
      <section className="ops-section card" aria-labelledby="assign-h">
        <h2 id="assign-h">{t('assign')}</h2>
        <p className="muted">{t('subscribeHint')}</p>
        <form onSubmit={(e) => void submit(e)} aria-label={t('assign')}>
          <div className="form-row">
            <UserSelect users={users} value={form.user} onChange={(user) => setForm({ ...form, user })} label={t('user')} placeholder={t('chooseUser')} />
            <Field label={t('plan')}>
              {(id) => (
                <select id={id} required value={form.plan} onChange={(e) => setForm({ ...form, plan: e.target.value })}>
                  <option value="">{t('choosePlan')}</option>
                  {(plans.data?.data ?? []).map((p) => (
                    <option key={p.id} value={p.id}>
                      {p.name} ({p.price})
                    </option>
                  ))}
                </select>
              )}
            </Field>
          </div>
          <ErrorNote error={subscribe.error} />
          <div className="form-actions">
            <button type="submit" disabled={subscribe.busy}>
              {t('subscribe')}
            </button>
          </div>
        </form>
      </section>
      <ListSection
        id="subs-h"
        title={t('subscriptions')}
        error={subs.error ?? act.error}
        rows={subs.data?.data}
        table={(rows) => (
          <table>
            <thead>
              <tr>
                <th>{t('user')}</th>
                <th>{t('plan')}</th>
                <th>{t('status')}</th>
                <th>{t('periodEnd')}</th>
                <th>{t('remaining')}</th>
                <th>{c('actions')}</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((s) => (
                <tr key={s.id}>
                  <td>{emailOf(s.user_id)}</td>
                  <td>
                    {s.plan_name} <span className="muted">({periodLabel(s.period)})</span>
                  </td>
                  <td>
                    <span className={`badge ${s.status === 'active' ? 'ok' : 'warn'}`}>{t(s.status)}</span>
                  </td>
                  <td className="nowrap">{dateTime(s.current_period_end)}</td>
                  <td>
                    {s.quotas.map((q, i) => (
                      <div key={i}>
                        <code>{q.models.join(', ')}</code>: {q.remaining} {q.requests !== null ? t('requests') : t('tokens')}
                      </div>
                    ))}
                  </td>
                  <td className="row">
                    <button type="button" className="secondary" aria-label={t('renewOf', { email: emailOf(s.user_id) })} onClick={() => void run(s, 'renew')}>
                      {t('renew')}
                    </button>
                    {s.status === 'canceled' ? null : (
                      <button type="button" className="danger" aria-label={t('cancelOf', { email: emailOf(s.user_id) })} onClick={() => void run(s, 'cancel')}>
                        {t('cancelSub')}
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      />
    </>
  );
}
