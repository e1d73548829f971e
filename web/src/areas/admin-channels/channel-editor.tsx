/** The add / edit form of a channel, with the fields of the chosen kind. */
import { useState, type FormEvent } from 'react';
import { api } from '../../api/client';
import { common } from '../../i18n/common';
import { useT } from '../../i18n/context';
import { ErrorNote, Field, Toggle } from '../../ui/kit';
import { useAction } from '../../ui/use-api';
import { bodyOf, CHANNEL_TYPES, configFields, defaultBaseUrl, emptyForm, formOf, type ChannelForm, type ChannelType, type ChannelView, type FormProblem } from './channel-form';
import { ListEditor } from './list-editor';
import { messages } from './messages';

type Key = keyof (typeof messages)['en'];

export function ChannelEditor({ channel, onSaved, onCancel }: { channel: ChannelView | null; onSaved: (saved: ChannelView) => void; onCancel: () => void }) {
  const t = useT(messages);
  const tc = useT(common);
  const [form, setForm] = useState<ChannelForm>(() => (channel ? formOf(channel) : emptyForm()));
  const [problem, setProblem] = useState<FormProblem | null>(null);
  const set = <K extends keyof ChannelForm>(key: K, value: ChannelForm[K]) => setForm((f) => ({ ...f, [key]: value }));
  const setConfig = (name: string, value: string) => setForm((f) => ({ ...f, config: { ...f.config, [name]: value } }));

  const save = useAction(async (body: Record<string, unknown>) =>
    channel ? api<ChannelView>(`/v1/admin/channels/${channel.id}`, { method: 'PATCH', body }) : api<ChannelView>('/v1/admin/channels', { method: 'POST', body }),
  );

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const result = bodyOf(form, channel ? 'edit' : 'create');
    if (!result.ok) {
      setProblem(result);
      return;
    }
    setProblem(null);
    const saved = await save.run(result.body);
    if (saved) onSaved(saved);
  };

  const fieldLabel = (field: FormProblem['field']): string => {
    const names: Record<string, Key> = {
      priority: 'priority',
      weight: 'weight',
      requestsPerMinute: 'rpm',
      tokensPerMinute: 'tpm',
      maxRetries: 'maxRetries',
      backoffMultiplier: 'backoff',
      extraConfig: 'extraConfig',
      mapping: 'mapping',
    };
    if (field.startsWith('config.')) return t(`cfg_${field.slice(7)}` as Key);
    return t(names[field] ?? 'name');
  };
  const problemText = problem
    ? problem.problem === 'incomplete' || problem.problem === 'duplicate'
      ? t(`problem_${problem.problem}`)
      : t(`problem_${problem.problem}`, { field: fieldLabel(problem.field) })
    : null;

  const defaultUrl = defaultBaseUrl(form.type, form.config.region ?? '');
  const bedrock = form.type === 'bedrock';
  const number = (key: 'priority' | 'weight' | 'requestsPerMinute' | 'tokensPerMinute' | 'maxRetries' | 'backoffMultiplier', label: string, hint?: string, step?: string) => (
    <Field label={label} hint={hint}>
      {(id) => <input id={id} type="number" inputMode="decimal" step={step ?? '1'} value={form[key]} onChange={(e) => set(key, e.target.value)} />}
    </Field>
  );

  return (
    <form className="channel-form" onSubmit={(e) => void submit(e)} noValidate>
      <h3>{t('sectionBasics')}</h3>
      <div className="form-grid">
        <Field label={t('name')}>{(id) => <input id={id} required maxLength={100} value={form.name} onChange={(e) => set('name', e.target.value)} />}</Field>
        <Field label={t('type')}>
          {(id) => (
            <select id={id} value={form.type} onChange={(e) => set('type', e.target.value as ChannelType)}>
              {CHANNEL_TYPES.map((type) => (
                <option key={type} value={type}>
                  {type}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label={t('baseUrl')} hint={defaultUrl ? t('baseUrlHint', { url: defaultUrl }) : t('baseUrlRequired')}>
          {(id) => <input id={id} type="url" placeholder={defaultUrl ?? 'https://'} value={form.baseUrl} onChange={(e) => set('baseUrl', e.target.value)} />}
        </Field>
        {bedrock ? (
          <>
            <Field label={t('awsAccessKeyId')} hint={channel ? t('keyStored', { masked: channel.key || '—' }) : undefined}>
              {(id) => <input id={id} autoComplete="off" value={form.awsAccessKeyId} onChange={(e) => set('awsAccessKeyId', e.target.value)} />}
            </Field>
            <Field label={t('awsSecret')}>
              {(id) => <input id={id} type="password" autoComplete="new-password" value={form.awsSecret} onChange={(e) => set('awsSecret', e.target.value)} />}
            </Field>
            <Field label={t('awsSessionToken')} hint={t('awsHint')}>
              {(id) => <input id={id} type="password" autoComplete="new-password" value={form.awsSessionToken} onChange={(e) => set('awsSessionToken', e.target.value)} />}
            </Field>
          </>
        ) : (
          <Field label={t('key')} hint={channel ? t('keyStored', { masked: channel.key || '—' }) : form.type === 'ollama' ? t('keyOptional') : undefined}>
            {(id) => (
              <input id={id} type="password" autoComplete="new-password" placeholder={channel?.key ?? ''} value={form.key} onChange={(e) => set('key', e.target.value)} />
            )}
          </Field>
        )}
      </div>

      <h3>{t('sectionModels')}</h3>
      <ListEditor
        label={t('models')}
        inputLabel={t('modelToAdd')}
        addLabel={t('addModel')}
        removeLabel={(item) => t('removeItem', { item })}
        items={form.models}
        onChange={(models) => set('models', models)}
        empty={t('noModels')}
      />
      <fieldset className="list-editor">
        <legend>{t('mapping')}</legend>
        <small className="muted">{t('mappingHint')}</small>
        {form.mapping.map((row, i) => (
          <div className="row mapping-row" key={i}>
            <input
              aria-label={t('alias', { n: i + 1 })}
              value={row.from}
              onChange={(e) => set('mapping', form.mapping.map((r, j) => (j === i ? { ...r, from: e.target.value } : r)))}
            />
            <span aria-hidden="true">→</span>
            <input
              aria-label={t('upstream', { n: i + 1 })}
              value={row.to}
              onChange={(e) => set('mapping', form.mapping.map((r, j) => (j === i ? { ...r, to: e.target.value } : r)))}
            />
            <button type="button" className="icon" aria-label={t('removeMapping', { n: i + 1 })} onClick={() => set('mapping', form.mapping.filter((_, j) => j !== i))}>
              ×
            </button>
          </div>
        ))}
        <div>
          <button type="button" className="secondary" onClick={() => set('mapping', [...form.mapping, { from: '', to: '' }])}>
            {t('addMapping')}
          </button>
        </div>
      </fieldset>

      <h3>{t('sectionRouting')}</h3>
      <div className="form-grid">
        {number('priority', t('priority'), t('priorityHint'))}
        {number('weight', t('weight'), t('weightHint'))}
        {number('requestsPerMinute', t('rpm'), t('limitsHint'))}
        {number('tokensPerMinute', t('tpm'))}
        {number('maxRetries', t('maxRetries'), t('retryHint'))}
        {number('backoffMultiplier', t('backoff'), undefined, '0.1')}
      </div>
      <ListEditor
        label={t('fallbackFor')}
        inputLabel={t('fallbackToAdd')}
        addLabel={t('addFallback')}
        removeLabel={(item) => t('removeItem', { item })}
        items={form.fallbackFor}
        onChange={(list) => set('fallbackFor', list)}
        hint={t('fallbackHint')}
      />
      <Toggle label={t('enabledField')} checked={form.enabled} onChange={(on) => set('enabled', on)} />

      <h3>{t('sectionConfig')}</h3>
      <div className="form-grid">
        {configFields(form.type).map((field) => (
          <Field key={field.name} label={t(`cfg_${field.name}`)} hint={field.name === 'deployment' ? t('cfg_deployment_hint') : field.name === 'embedding_models' ? t('cfg_embedding_models_hint') : undefined}>
            {(id) =>
              field.kind === 'list' ? (
                <textarea id={id} rows={2} value={form.config[field.name] ?? ''} onChange={(e) => setConfig(field.name, e.target.value)} />
              ) : (
                <input
                  id={id}
                  type={field.kind === 'number' ? 'number' : 'text'}
                  placeholder={field.placeholder}
                  value={form.config[field.name] ?? ''}
                  onChange={(e) => setConfig(field.name, e.target.value)}
                />
              )
            }
          </Field>
        ))}
      </div>
      <Field label={t('extraConfig')} hint={t('extraConfigHint')}>
        {(id) => <textarea id={id} rows={3} spellCheck={false} className="mono" placeholder="{}" value={form.extraConfig} onChange={(e) => set('extraConfig', e.target.value)} />}
      </Field>

      {problemText ? (
        <p className="error-note" role="alert">
          {problemText}
        </p>
      ) : null}
      <ErrorNote error={save.error} />
      <div className="row form-actions">
        <button type="submit" disabled={save.busy}>
          {channel ? t('saveChannel') : t('createChannel')}
        </button>
        <button type="button" className="secondary" onClick={onCancel}>
          {tc('cancel')}
        </button>
      </div>
    </form>
  );
}
