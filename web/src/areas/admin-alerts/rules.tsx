/** Alert rules: list (state, enable switch), create and edit with the fields each kind takes, delete. */
import { useState, type FormEvent } from 'react';
import { api } from '../../api/client';
import type { ListOf } from '../../api/types';
import { common } from '../../i18n/common';
import { useT } from '../../i18n/context';
import { ErrorNote, Field, ListSection, Modal, Toggle } from '../../ui/kit';
import { useAction, useApi } from '../../ui/use-api';
import { confirmed } from '../admin-billing/tabs';
import { severityBadge } from './alerts';
import { ALERT_KINDS, durationText, emptyRuleForm, KIND_SPECS, ruleBody, RuleFormError, ruleToForm, SEVERITIES, valueText, type AlertKind, type AlertRule, type RuleForm } from './logic';
import { messages, type Key } from './messages';
import type { Webhook } from './webhooks';

const PROBLEM: Record<RuleFormError['problem'], Key> = { required: 'errRequired', notNumber: 'errNotNumber', percent: 'errPercent', whole: 'errWhole', windowRange: 'errWindowRange' };
const THRESHOLD_LABEL: Record<'share' | 'ms' | 'count', Key> = { share: 'thresholdShare', ms: 'thresholdMs', count: 'thresholdCount' };

export function RuleEditor({ rule, webhooks, onDone }: { rule: AlertRule | null; webhooks: Webhook[]; onDone: (changed: boolean) => void }) {
  const t = useT(messages);
  const c = useT(common);
  const [form, setForm] = useState<RuleForm>(() => (rule ? ruleToForm(rule) : emptyRuleForm()));
  const [invalid, setInvalid] = useState<RuleFormError | null>(null);
  const save = useAction((body: ReturnType<typeof ruleBody>) => (rule ? api(`/api/admin/alerts/rules/${rule.id}`, { method: 'PATCH', body }) : api('/api/admin/alerts/rules', { method: 'POST', body })));
  const spec = KIND_SPECS[form.kind];
  const set = (change: Partial<RuleForm>) => setForm({ ...form, ...change });
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    let body;
    try {
      body = ruleBody(form);
    } catch (error) {
      if (error instanceof RuleFormError) return setInvalid(error);
      throw error;
    }
    setInvalid(null);
    if ((await save.run(body)) !== undefined) onDone(true);
  };
  return (
    <form onSubmit={(e) => void submit(e)}>
      <Field label={t('name')}>{(id) => <input id={id} maxLength={200} value={form.name} onChange={(e) => set({ name: e.target.value })} />}</Field>
      <div className="form-row">
        <Field label={t('kind')} hint={t(`help_${form.kind}`)}>
          {(id) => (
            <select id={id} value={form.kind} onChange={(e) => set({ kind: e.target.value as AlertKind })}>
              {ALERT_KINDS.map((k) => (
                <option key={k} value={k}>
                  {t(k)}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label={t('severity')}>
          {(id) => (
            <select id={id} value={form.severity} onChange={(e) => set({ severity: e.target.value as RuleForm['severity'] })}>
              {SEVERITIES.map((s) => (
                <option key={s} value={s}>
                  {t(s)}
                </option>
              ))}
            </select>
          )}
        </Field>
      </div>
      <div className="form-row">
        <Field label={t(THRESHOLD_LABEL[spec.unit])} hint={t('firesAbove')}>
          {(id) => <input id={id} inputMode="decimal" value={form.threshold} onChange={(e) => set({ threshold: e.target.value })} />}
        </Field>
        {spec.windowUsed ? (
          <Field label={t('window')} hint={t('windowHint', { max: durationText(spec.maxWindow) })}>
            {(id) => <input id={id} inputMode="numeric" value={form.window} onChange={(e) => set({ window: e.target.value })} />}
          </Field>
        ) : (
          <p className="muted">{t('windowUnused')}</p>
        )}
      </div>
      <fieldset className="checks">
        <legend>{t('notify')}</legend>
        {webhooks.length === 0 ? <span className="muted">{t('noWebhooks')}</span> : null}
        {webhooks.map((w) => (
          <label key={w.id}>
            <input type="checkbox" checked={form.notify.includes(w.id)} onChange={(e) => set({ notify: e.target.checked ? [...form.notify, w.id] : form.notify.filter((n) => n !== w.id) })} />
            {w.url}
          </label>
        ))}
      </fieldset>
      <Toggle label={t('enabled')} checked={form.enabled} onChange={(enabled) => set({ enabled })} />
      {invalid ? (
        <p className="error-note" role="alert">
          {t(PROBLEM[invalid.problem])}
        </p>
      ) : null}
      <ErrorNote error={save.error} />
      <div className="form-actions">
        <button type="submit" disabled={save.busy}>
          {rule ? c('save') : c('create')}
        </button>
        <button type="button" className="secondary" onClick={() => onDone(false)}>
          {c('cancel')}
        </button>
      </div>
    </form>
  );
}

export function RulesPage() {
  const t = useT(messages);
  const c = useT(common);
  const rules = useApi<ListOf<AlertRule>>('/api/admin/alerts/rules');
  const webhooks = useApi<ListOf<Webhook>>('/v1/admin/webhooks');
  const [editing, setEditing] = useState<AlertRule | 'new' | null>(null);
  const act = useAction((rule: AlertRule, change: { enabled: boolean } | null) =>
    change ? api(`/api/admin/alerts/rules/${rule.id}`, { method: 'PATCH', body: change }) : api(`/api/admin/alerts/rules/${rule.id}`, { method: 'DELETE' }),
  );
  const run = async (rule: AlertRule, change: { enabled: boolean } | null) => {
    if (!change && !confirmed(t('confirmDeleteRule', { name: rule.name }))) return;
    // The switch moves at once; the reload after the write shows the rule's state (a disabled one resolves).
    if (change && rules.data) rules.set({ ...rules.data, data: rules.data.data.map((r) => (r.id === rule.id ? { ...r, ...change } : r)) });
    await act.run(rule, change);
    await rules.reload();
  };
  return (
    <ListSection
      id="rules-h"
      title={t('rules')}
      actions={
        <button type="button" onClick={() => setEditing('new')}>
          {t('newRule')}
        </button>
      }
      error={rules.error ?? act.error}
      rows={rules.data?.data}
      table={(rows) => (
        <table aria-labelledby="rules-h">
          <thead>
            <tr>
              <th>{t('name')}</th>
              <th>{t('condition')}</th>
              <th>{t('severity')}</th>
              <th>{t('state')}</th>
              <th>{t('enabled')}</th>
              <th>{c('actions')}</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={r.id}>
                <td>{r.name}</td>
                <td>
                  {t(r.condition.kind)} &gt; {valueText(r.condition.kind, r.condition.threshold)}
                  {KIND_SPECS[r.condition.kind].windowUsed ? <span className="muted"> / {durationText(r.condition.window)}</span> : null}
                </td>
                <td>
                  <span className={`badge ${severityBadge(r.severity)}`}>{t(r.severity)}</span>
                </td>
                <td>
                  <span className={`badge ${r.state === 'firing' ? 'bad' : 'ok'}`}>{r.state === 'firing' ? t('firing') : t('ok')}</span>
                </td>
                <td>
                  <input type="checkbox" role="switch" aria-label={t('enableRule', { name: r.name })} checked={r.enabled} disabled={act.busy} onChange={(e) => void run(r, { enabled: e.target.checked })} />
                </td>
                <td className="row">
                  <button type="button" className="secondary" aria-label={t('editOf', { name: r.name })} onClick={() => setEditing(r)}>
                    {c('edit')}
                  </button>
                  <button type="button" className="danger" aria-label={t('deleteOf', { name: r.name })} onClick={() => void run(r, null)}>
                    {c('delete')}
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    >
      <Modal title={editing === 'new' ? t('newRule') : t('editRule')} open={editing !== null} onClose={() => setEditing(null)} wide>
        {editing !== null ? (
          <RuleEditor
            rule={editing === 'new' ? null : editing}
            webhooks={webhooks.data?.data ?? []}
            onDone={(changed) => {
              setEditing(null);
              if (changed) void rules.reload();
            }}
          />
        ) : null}
      </Modal>
    </ListSection>
  );
}
