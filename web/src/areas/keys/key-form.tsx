/** The create / edit form of a key: every policy field of the API, grouped, with inline hints. */
import { useState, type ReactNode } from 'react';
import { api } from '../../api/client';
import type { ListOf } from '../../api/types';
import { useT } from '../../i18n/context';
import { common } from '../../i18n/common';
import { ErrorNote, Field } from '../../ui/kit';
import { useAction, useApi } from '../../ui/use-api';
import { keyBody, type ApiKey, type FieldProblem, type KeyForm } from './form';
import { messages } from './messages';

type Msg = keyof (typeof messages)['en'];

export function KeyEditor({ initial, editing, onSaved, onCancel }: { initial: KeyForm; editing: ApiKey | null; onSaved: (key: ApiKey & { key?: string }) => void; onCancel: () => void }) {
  const t = useT(messages);
  const tc = useT(common);
  const [form, setForm] = useState<KeyForm>(initial);
  const [problems, setProblems] = useState<FieldProblem[]>([]);
  const models = useApi<ListOf<{ id: string }>>('/v1/models');
  const save = useAction(async (body: Record<string, unknown>) =>
    editing ? api<ApiKey>(`/v1/keys/${encodeURIComponent(editing.id)}`, { method: 'PATCH', body }) : api<ApiKey & { key: string }>('/v1/keys', { body }),
  );

  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    const result = keyBody(form);
    setProblems(result.problems);
    if (!result.body) return;
    const saved = await save.run(result.body);
    if (saved) onSaved(saved);
  };

  const problemOf = (field: keyof KeyForm) => problems.find((p) => p.field === field);
  /** A labelled input (or text area for lists) bound to one form value, its hint and its problem. */
  const input = (field: keyof KeyForm, label: Msg, hint?: ReactNode, options: { area?: boolean; type?: string; inputMode?: 'numeric' | 'decimal'; placeholder?: string } = {}) => {
    const problem = problemOf(field);
    const note = problem ? (
      <span className="key-problem" role="alert">
        {t(problem.problem, { value: problem.value ?? '' })}
      </span>
    ) : (
      hint
    );
    const props = {
      value: form[field],
      'aria-invalid': problem ? true : undefined,
      placeholder: options.placeholder,
      onChange: (e: React.ChangeEvent<HTMLInputElement | HTMLTextAreaElement>) => setForm({ ...form, [field]: e.target.value }),
    };
    return (
      <Field label={t(label)} hint={note}>
        {(id) => (options.area ? <textarea id={id} rows={2} {...props} /> : <input id={id} type={options.type ?? 'text'} inputMode={options.inputMode} {...props} />)}
      </Field>
    );
  };

  const available = models.data?.data.map((m) => m.id) ?? [];
  const modelsHint = (
    <>
      {t('modelsHint')}
      {available.length > 0 ? <> {t('available', { models: available.join(', ') })}</> : null}
    </>
  );

  return (
    <form className="key-form" onSubmit={(e) => void submit(e)} noValidate>
      {problems.length > 0 ? <p className="key-problem">{t('fixFields')}</p> : null}
      <fieldset>
        <legend>{t('groupGeneral')}</legend>
        {input('name', 'name', t('nameHint'))}
      </fieldset>
      <fieldset>
        <legend>{t('groupModels')}</legend>
        <div className="key-grid">
          {input('models', 'modelsLabel', modelsHint, { area: true })}
          {input('blockedModels', 'blockedModelsLabel', t('blockedModelsHint'), { area: true })}
          {input('aliases', 'aliasesLabel', t('aliasesHint'), { area: true, placeholder: 'fast=gpt-4o-mini' })}
          {input('allowedModels', 'allowedModelsLabel', t('allowedModelsHint'), { area: true })}
        </div>
      </fieldset>
      <fieldset>
        <legend>{t('groupQuota')}</legend>
        <div className="key-grid">
          {input('quota', 'quotaLabel', t('quotaHint'), { inputMode: 'decimal' })}
          {input('expiry', 'expiryLabel', t('expiryHint'), { type: 'datetime-local' })}
        </div>
      </fieldset>
      <fieldset>
        <legend>{t('groupRates')}</legend>
        <div className="key-grid">
          {input('rpm', 'rpmLabel', t('rateHint'), { inputMode: 'numeric' })}
          {input('rph', 'rphLabel', t('rateHint'), { inputMode: 'numeric' })}
          {input('tph', 'tphLabel', t('rateHint'), { inputMode: 'numeric' })}
          {input('concurrency', 'concurrencyLabel', t('rateHint'), { inputMode: 'numeric' })}
          {input('burstMultiplier', 'burstMultiplierLabel', t('burstMultiplierHint'), { inputMode: 'decimal' })}
          {input('burstDuration', 'burstDurationLabel', t('burstDurationHint'), { placeholder: '30s' })}
        </div>
      </fieldset>
      <fieldset>
        <legend>{t('groupNetwork')}</legend>
        <div className="key-grid">
          {input('allowedIps', 'allowedIpsLabel', t('allowedIpsHint'), { area: true, placeholder: '203.0.113.0/24' })}
          {input('blockedIps', 'blockedIpsLabel', t('blockedIpsHint'), { area: true })}
          {input('allowedCountries', 'allowedCountriesLabel', t('allowedCountriesHint'))}
          {input('blockedCountries', 'blockedCountriesLabel', t('blockedCountriesHint'))}
        </div>
      </fieldset>
      <ErrorNote error={save.error} />
      <div className="row key-form-actions">
        <button type="submit" disabled={save.busy}>
          {editing ? t('saveKey') : t('createKey')}
        </button>
        <button type="button" className="secondary" onClick={onCancel}>
          {tc('cancel')}
        </button>
      </div>
    </form>
  );
}
