/** Create or edit one of your presets: about, sharing, prompt and context, parameters. */
import { useState, type ReactNode } from 'react';
import { Link, useLocation } from 'wouter';
import { api } from '../../api/client';
import { common } from '../../i18n/common';
import { useT } from '../../i18n/context';
import { ErrorNote, Field, Loading, Page } from '../../ui/kit';
import { useAction, useApi } from '../../ui/use-api';
import { CATEGORIES, EMPTY_PRESET, presetBody, presetForm, ROLES, VISIBILITIES, type Preset, type PresetForm, type PresetProblem, type Role } from './logic';
import { messages } from './messages';
import { AvatarView, useLabels } from './shared';

type Msg = keyof (typeof messages)['en'];

/** `id` null: a new preset. */
export function Editor({ id }: { id: string | null }) {
  const t = useT(messages);
  const preset = useApi<Preset>(id === null ? null : `/api/presets/${encodeURIComponent(id)}`);
  if (id !== null && !preset.data) {
    return (
      <Page title={t('editPreset')}>
        {preset.error ? <ErrorNote error={preset.error} onRetry={() => void preset.reload()} /> : <Loading />}
      </Page>
    );
  }
  return <EditorForm id={id} initial={preset.data ? presetForm(preset.data) : EMPTY_PRESET} />;
}

function EditorForm({ id, initial }: { id: string | null; initial: PresetForm }) {
  const l = useLabels();
  const { t } = l;
  const tc = useT(common);
  const [, navigate] = useLocation();
  const [form, setForm] = useState<PresetForm>(initial);
  const [problems, setProblems] = useState<PresetProblem[]>([]);
  const save = useAction(async (body: Record<string, unknown>) =>
    id === null ? api<Preset>('/api/presets', { body }) : api<Preset>(`/api/presets/${encodeURIComponent(id)}`, { method: 'PATCH', body }),
  );

  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    const result = presetBody(form);
    setProblems(result.problems);
    if (!result.body) return;
    const saved = await save.run(result.body);
    if (saved) navigate(`/${saved.id}`);
  };

  const noteOf = (field: PresetProblem['field'], hint?: ReactNode) => {
    const problem = problems.find((p) => p.field === field);
    return problem ? (
      <span className="preset-problem" role="alert">
        {t(problem.problem, { value: problem.value ?? '' })}
      </span>
    ) : (
      hint
    );
  };
  const text = (field: 'name' | 'description' | 'avatar' | 'tags' | 'lang' | 'models' | 'temperature' | 'maxTokens', label: Msg, hint?: ReactNode, inputMode?: 'decimal' | 'numeric') => (
    <Field label={t(label)} hint={field === 'name' || field === 'temperature' || field === 'maxTokens' ? noteOf(field, hint) : hint}>
      {(fid) => <input id={fid} value={form[field]} inputMode={inputMode} onChange={(e) => setForm({ ...form, [field]: e.target.value })} />}
    </Field>
  );
  const setMessage = (i: number, change: Partial<PresetForm['context'][number]>) => setForm({ ...form, context: form.context.map((m, j) => (j === i ? { ...m, ...change } : m)) });

  return (
    <Page title={id === null ? t('newPreset') : t('editPreset')}>
      <Link href={id === null ? '/' : `/${id}`}>← {id === null ? t('back') : initial.name}</Link>
      <form className="preset-form" onSubmit={(e) => void submit(e)} noValidate>
        <fieldset>
          <legend>{t('groupAbout')}</legend>
          <div className="preset-form-grid">
            {text('name', 'name')}
            <div className="preset-avatar-field">
              {text('avatar', 'avatar', t('avatarHint'))}
              <AvatarView avatar={form.avatar} size="lg" />
            </div>
            <Field label={t('categoryLabel')}>
              {(fid) => (
                <select id={fid} value={form.category} onChange={(e) => setForm({ ...form, category: e.target.value })}>
                  <option value="">{t('noCategory')}</option>
                  {/* A stored spelling the list lacks (e.g. "business") stays selectable. */}
                  {[...CATEGORIES, ...(form.category && !(CATEGORIES as readonly string[]).includes(form.category) ? [form.category] : [])].map((c) => (
                    <option key={c} value={c}>
                      {l.category(c)}
                    </option>
                  ))}
                </select>
              )}
            </Field>
            {text('tags', 'tags', t('tagsHint'))}
            {text('lang', 'language', t('langHint'))}
          </div>
          <Field label={t('description')}>{(fid) => <textarea id={fid} rows={2} value={form.description} onChange={(e) => setForm({ ...form, description: e.target.value })} />}</Field>
        </fieldset>
        <fieldset>
          <legend>{t('visibility')}</legend>
          <div className="preset-visibility">
            {VISIBILITIES.map((v) => (
              <label key={v} className="preset-radio">
                <input type="radio" name="visibility" value={v} checked={form.visibility === v} onChange={() => setForm({ ...form, visibility: v })} />
                <span>
                  <strong>{l.visibility(v)}</strong> <span className="muted">{t(v === 'private' ? 'visPrivateHint' : v === 'team' ? 'visTeamHint' : 'visPublicHint')}</span>
                </span>
              </label>
            ))}
          </div>
        </fieldset>
        <fieldset>
          <legend>{t('groupPrompt')}</legend>
          <Field label={t('systemPrompt')} hint={t('systemPromptHint')}>
            {(fid) => <textarea id={fid} rows={6} value={form.systemPrompt} onChange={(e) => setForm({ ...form, systemPrompt: e.target.value })} />}
          </Field>
          <h3 className="preset-subhead">{t('context')}</h3>
          <p className="muted">{noteOf('context', t('contextHint'))}</p>
          <ol className="preset-context-edit">
            {form.context.map((m, i) => (
              <li key={i} className="row">
                <select aria-label={t('role', { n: i + 1 })} value={m.role} onChange={(e) => setMessage(i, { role: e.target.value as Role })}>
                  {ROLES.map((r) => (
                    <option key={r} value={r}>
                      {l.role(r)}
                    </option>
                  ))}
                </select>
                <textarea aria-label={t('content', { n: i + 1 })} rows={2} value={m.content} onChange={(e) => setMessage(i, { content: e.target.value })} />
                <button type="button" className="icon" aria-label={t('removeMessage', { n: i + 1 })} onClick={() => setForm({ ...form, context: form.context.filter((_, j) => j !== i) })}>
                  ×
                </button>
              </li>
            ))}
          </ol>
          <button type="button" className="secondary" onClick={() => setForm({ ...form, context: [...form.context, { role: 'user', content: '' }] })}>
            {t('addMessage')}
          </button>
        </fieldset>
        <fieldset>
          <legend>{t('groupParameters')}</legend>
          <div className="preset-form-grid">
            {text('models', 'models', t('modelsHint'))}
            {text('temperature', 'temperature', t('temperatureHint'), 'decimal')}
            {text('maxTokens', 'maxTokens', t('maxTokensHint'), 'numeric')}
          </div>
        </fieldset>
        <ErrorNote error={save.error} />
        <div className="row">
          <button type="submit" disabled={save.busy}>
            {id === null ? t('createPreset') : t('savePreset')}
          </button>
          <Link href={id === null ? '/' : `/${id}`} className="button secondary-link">
            {tc('cancel')}
          </Link>
        </div>
      </form>
    </Page>
  );
}
