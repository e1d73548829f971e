/** Plans: list, create, edit, delete; quotas edited as rows (models, requests or tokens, allowance). */
import { useState, type FormEvent } from 'react';
import { api } from '../../api/client';
import type { ListOf } from '../../api/types';
import { common } from '../../i18n/common';
import { useT } from '../../i18n/context';
import { ErrorNote, Field, ListSection, Modal, Toggle } from '../../ui/kit';
import { useAction, useApi } from '../../ui/use-api';
import { emptyPlanForm, FormError, planBody, planToForm, type Period, type Plan, type PlanForm } from './logic';
import { messages, type Key } from './messages';
import { confirmed } from './tabs';

export function usePeriodLabel() {
  const t = useT(messages);
  return (p: Period) => (typeof p === 'object' ? t('daysN', { n: p.days }) : t(({ day: 'periodDay', week: 'periodWeek', month: 'periodMonth' } as const)[p]));
}

function PlanEditor({ plan, onDone }: { plan: Plan | null; onDone: () => void }) {
  const t = useT(messages);
  const c = useT(common);
  const [form, setForm] = useState<PlanForm>(() => (plan ? planToForm(plan) : emptyPlanForm()));
  const [invalid, setInvalid] = useState<FormError | null>(null);
  const save = useAction((body: ReturnType<typeof planBody>) => (plan ? api(`/v1/admin/plans/${plan.id}`, { method: 'PATCH', body }) : api('/v1/admin/plans', { method: 'POST', body })));
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    let body;
    try {
      body = planBody(form);
    } catch (error) {
      if (error instanceof FormError) return setInvalid(error);
      throw error;
    }
    setInvalid(null);
    if ((await save.run(body)) !== undefined) onDone();
  };
  const invalidText: Record<string, Key> = { days: 'invalidDays', models: 'invalidModels', amount: 'invalidAmount' };
  const quota = (i: number, change: Partial<PlanForm['quotas'][number]>) => setForm({ ...form, quotas: form.quotas.map((q, j) => (j === i ? { ...q, ...change } : q)) });
  return (
    <form onSubmit={(e) => void submit(e)}>
      <Field label={t('planName')}>{(id) => <input id={id} required maxLength={200} value={form.name} onChange={(e) => setForm({ ...form, name: e.target.value })} />}</Field>
      <Field label={t('description')}>{(id) => <textarea id={id} rows={2} value={form.description} onChange={(e) => setForm({ ...form, description: e.target.value })} />}</Field>
      <div className="form-row">
        <Field label={t('period')}>
          {(id) => (
            <select id={id} value={form.period} onChange={(e) => setForm({ ...form, period: e.target.value as PlanForm['period'] })}>
              <option value="day">{t('periodDay')}</option>
              <option value="week">{t('periodWeek')}</option>
              <option value="month">{t('periodMonth')}</option>
              <option value="days">{t('periodDays')}</option>
            </select>
          )}
        </Field>
        {form.period === 'days' ? <Field label={t('days')}>{(id) => <input id={id} inputMode="numeric" value={form.days} onChange={(e) => setForm({ ...form, days: e.target.value })} />}</Field> : null}
        <Field label={t('price')}>{(id) => <input id={id} inputMode="decimal" required value={form.price} onChange={(e) => setForm({ ...form, price: e.target.value })} />}</Field>
      </div>
      <h3>{t('quotas')}</h3>
      {form.quotas.length === 0 ? <p className="muted">{t('noQuotas')}</p> : null}
      {form.quotas.map((q, i) => (
        <fieldset key={i} className="quota-row" aria-label={t('quotaN', { n: i + 1 })}>
          <div className="form-row">
            <Field label={t('quotaModels')}>{(id) => <input id={id} value={q.models} onChange={(e) => quota(i, { models: e.target.value })} />}</Field>
            <Field label={t('quotaUnit')}>
              {(id) => (
                <select id={id} value={q.unit} onChange={(e) => quota(i, { unit: e.target.value as 'requests' | 'tokens' })}>
                  <option value="requests">{t('requests')}</option>
                  <option value="tokens">{t('tokens')}</option>
                </select>
              )}
            </Field>
            <Field label={t('quotaAmount')}>{(id) => <input id={id} inputMode="numeric" value={q.amount} onChange={(e) => quota(i, { amount: e.target.value })} />}</Field>
            <div className="field">
              <button type="button" className="danger" aria-label={t('removeQuota', { n: i + 1 })} onClick={() => setForm({ ...form, quotas: form.quotas.filter((_, j) => j !== i) })}>
                ×
              </button>
            </div>
          </div>
        </fieldset>
      ))}
      <div className="form-actions">
        <button type="button" className="secondary" onClick={() => setForm({ ...form, quotas: [...form.quotas, { models: '*', unit: 'requests', amount: '' }] })}>
          {t('addQuota')}
        </button>
      </div>
      {invalid ? (
        <p className="error-note" role="alert">
          {t(invalidText[invalid.message] ?? 'invalidAmount')}
        </p>
      ) : null}
      <ErrorNote error={save.error} />
      <div className="form-actions">
        <button type="submit" disabled={save.busy}>
          {plan ? c('save') : c('create')}
        </button>
        <button type="button" className="secondary" onClick={onDone}>
          {c('cancel')}
        </button>
      </div>
    </form>
  );
}

export function PlansPage() {
  const t = useT(messages);
  const c = useT(common);
  const periodLabel = usePeriodLabel();
  const [showDeleted, setShowDeleted] = useState(false);
  const plans = useApi<ListOf<Plan>>('/v1/admin/plans', { include_deleted: showDeleted ? 'true' : undefined });
  const [editing, setEditing] = useState<Plan | 'new' | null>(null);
  const remove = useAction((id: string) => api(`/v1/admin/plans/${id}`, { method: 'DELETE' }));
  const del = async (plan: Plan) => {
    if (!confirmed(t('confirmDeletePlan', { name: plan.name }))) return;
    if ((await remove.run(plan.id)) !== undefined) await plans.reload();
  };
  return (
    <ListSection
      id="plans-h"
      title={t('plans')}
      actions={
        <>
          <Toggle label={t('showDeleted')} checked={showDeleted} onChange={setShowDeleted} />
          <button type="button" onClick={() => setEditing('new')}>
            {t('newPlan')}
          </button>
        </>
      }
      error={plans.error ?? remove.error}
      rows={plans.data?.data}
      table={(rows) => (
        <table>
          <thead>
            <tr>
              <th>{t('planName')}</th>
              <th>{t('period')}</th>
              <th className="num">{t('priceShort')}</th>
              <th>{t('quotas')}</th>
              <th>{c('actions')}</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((p) => (
              <tr key={p.id}>
                <td>
                  {p.name} {p.deleted ? <span className="badge warn">{t('deleted')}</span> : null}
                  {p.description ? <div className="muted">{p.description}</div> : null}
                </td>
                <td>{periodLabel(p.period)}</td>
                <td className="num">{p.price}</td>
                <td>
                  {p.quotas.map((q, i) => (
                    <div key={i}>
                      <code>{q.models.join(', ')}</code>: {q.requests ?? q.tokens} {q.requests !== null ? t('requests') : t('tokens')}
                    </div>
                  ))}
                </td>
                <td className="row">
                  {p.deleted ? null : (
                    <>
                      <button type="button" className="secondary" aria-label={`${c('edit')} ${p.name}`} onClick={() => setEditing(p)}>
                        {c('edit')}
                      </button>
                      <button type="button" className="danger" aria-label={`${c('delete')} ${p.name}`} onClick={() => void del(p)}>
                        {c('delete')}
                      </button>
                    </>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    >
      <Modal title={editing === 'new' ? t('newPlan') : t('editPlan')} open={editing !== null} onClose={() => setEditing(null)} wide>
        {editing !== null ? (
          <PlanEditor
            plan={editing === 'new' ? null : editing}
            onDone={() => {
              setEditing(null);
              void plans.reload();
            }}
          />
        ) : null}
      </Modal>
    </ListSection>
  );
}
