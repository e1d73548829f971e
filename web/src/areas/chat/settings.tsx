/** Model and preset pickers, and the conversation settings (temperature, max tokens, system prompt). */
import { useState } from 'react';
import { useT } from '../../i18n/context';
import type { ListOf } from '../../api/types';
import { useMe } from '../../session';
import { Empty, ErrorNote, Field, Loading, Modal } from '../../ui/kit';
import { useApi } from '../../ui/use-api';
import { chatMessages } from './messages';
import type { SettingsValue } from './settings-logic';
import type { Model, Preset } from './types';

export const PRESET_CATEGORIES = ['Business', 'Creative', 'Technical', 'Education', 'Healthcare', 'Legal'];

export function useChatModels() {
  const models = useApi<ListOf<Model>>('/v1/models');
  return { ...models, ids: (models.data?.data ?? []).filter((m) => m.capabilities.includes('chat')).map((m) => m.id) };
}

export function ModelSelect({ value, onChange, models, allowDefault = true }: { value: string; onChange: (model: string) => void; models: string[]; allowDefault?: boolean }) {
  const t = useT(chatMessages);
  const me = useMe();
  const fallback = me.chat_defaults.default_model;
  const options = value && !models.includes(value) ? [value, ...models] : models;
  return (
    <Field label={t('model')}>
      {(id) => (
        <select id={id} value={value} onChange={(e) => onChange(e.target.value)}>
          {allowDefault ? <option value="">{fallback ? t('defaultModel', { model: fallback }) : t('userDefault')}</option> : null}
          {options.map((m) => (
            <option key={m} value={m}>
              {m}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}

/** The chosen preset (its name) and a dialog to choose one: search, category, tag. */
export function PresetPicker({ value, onChange }: { value: string | null; onChange: (preset: Preset | null) => void }) {
  const t = useT(chatMessages);
  const [open, setOpen] = useState(false);
  const current = useApi<Preset>(value === null ? null : `/api/presets/${encodeURIComponent(value)}`);
  const name = value === null ? t('noPreset') : current.data ? `${current.data.avatar} ${current.data.name}` : value;
  return (
    <div className="field">
      <span className="field-label" id="preset-label">
        {t('preset')}
      </span>
      <div className="row" aria-labelledby="preset-label" role="group">
        <span className="preset-name">{name}</span>
        <button type="button" className="secondary" onClick={() => setOpen(true)}>
          {value === null ? t('choosePreset') : t('changePreset')}
        </button>
        {value !== null ? (
          <button type="button" className="secondary" onClick={() => onChange(null)}>
            {t('removePreset')}
          </button>
        ) : null}
      </div>
      <Modal title={t('choosePreset')} open={open} onClose={() => setOpen(false)} wide>
        <PresetBrowser
          onPick={(p) => {
            onChange(p);
            setOpen(false);
          }}
        />
      </Modal>
    </div>
  );
}

function PresetBrowser({ onPick }: { onPick: (preset: Preset) => void }) {
  const t = useT(chatMessages);
  const [q, setQ] = useState('');
  const [category, setCategory] = useState('');
  const [tag, setTag] = useState('');
  const query = { q: q.trim() || undefined, category: category || undefined, tags: tag || undefined, limit: 50 };
  const presets = useApi<ListOf<Preset>>(q.trim() ? '/api/presets/search' : '/api/presets', query);
  const all = useApi<ListOf<Preset>>('/api/presets', { limit: 100 });
  const tags = [...new Set((all.data?.data ?? []).flatMap((p) => p.tags))].sort();
  return (
    <div className="preset-browser">
      <div className="preset-filters">
        <Field label={t('presetSearch')}>{(id) => <input id={id} type="search" value={q} onChange={(e) => setQ(e.target.value)} />}</Field>
        <Field label={t('category')}>
          {(id) => (
            <select id={id} value={category} onChange={(e) => setCategory(e.target.value)}>
              <option value="">{t('allCategories')}</option>
              {PRESET_CATEGORIES.map((c) => (
                <option key={c} value={c}>
                  {c}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label={t('tag')}>
          {(id) => (
            <select id={id} value={tag} onChange={(e) => setTag(e.target.value)}>
              <option value="">{t('allTags')}</option>
              {tags.map((c) => (
                <option key={c} value={c}>
                  {c}
                </option>
              ))}
            </select>
          )}
        </Field>
      </div>
      <ErrorNote error={presets.error} onRetry={() => void presets.reload()} />
      {presets.loading && !presets.data ? <Loading /> : null}
      {presets.data && presets.data.data.length === 0 ? <Empty>{t('noPresets')}</Empty> : null}
      <ul className="preset-list">
        {(presets.data?.data ?? []).map((p) => (
          <li key={p.id} className="card">
            <div className="row">
              <strong>
                {p.avatar} {p.name}
              </strong>
              {p.builtin ? <span className="badge">{t('builtin')}</span> : null}
              {p.category ? <span className="badge">{p.category}</span> : null}
              <span className="spacer" />
              <button type="button" onClick={() => onPick(p)} aria-label={`${t('usePreset')}: ${p.name}`}>
                {t('usePreset')}
              </button>
            </div>
            {p.description ? <p className="muted preset-description">{p.description}</p> : null}
            {p.tags.length > 0 ? (
              <div className="row">
                {p.tags.map((tg) => (
                  <span key={tg} className="badge">
                    #{tg}
                  </span>
                ))}
              </div>
            ) : null}
          </li>
        ))}
      </ul>
    </div>
  );
}

/** Temperature, max tokens, system prompt. */
export function SettingsFields({ value, onChange }: { value: SettingsValue; onChange: (v: SettingsValue) => void }) {
  const t = useT(chatMessages);
  return (
    <>
      <div className="settings-numbers">
        <Field label={t('temperature')} hint={t('blankDefault')}>
          {(id) => <input id={id} type="number" step="0.1" min="0" max="2" value={value.temperature} onChange={(e) => onChange({ ...value, temperature: e.target.value })} />}
        </Field>
        <Field label={t('maxTokens')} hint={t('blankDefault')}>
          {(id) => <input id={id} type="number" step="1" min="1" value={value.maxTokens} onChange={(e) => onChange({ ...value, maxTokens: e.target.value })} />}
        </Field>
      </div>
      <Field label={t('systemPrompt')}>
        {(id) => <textarea id={id} rows={3} value={value.systemPrompt} onChange={(e) => onChange({ ...value, systemPrompt: e.target.value })} />}
      </Field>
    </>
  );
}
