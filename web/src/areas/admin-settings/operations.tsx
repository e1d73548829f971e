/** Settings › Operations: the relay switch, what subscriptions cover, relay settings; applied with Save. */
import { useEffect, useState, type FormEvent } from 'react';
import { api } from '../../api/client';
import { common } from '../../i18n/common';
import { useFormat, useT } from '../../i18n/context';
import { ErrorNote, Field, Loading, Toggle } from '../../ui/kit';
import { useAction, useApi } from '../../ui/use-api';
import { messages } from './messages';
import { COVERAGE_MODES, draftOf, patchOf, QUOTA_UNITS, type QuotaUnit, type SettingsDraft, type SettingsView } from './settings-form';

export function Operations() {
  const t = useT(messages);
  const tc = useT(common);
  const fmt = useFormat();
  const settings = useApi<SettingsView>('/v1/admin/settings');
  const [draft, setDraft] = useState<SettingsDraft | null>(null);
  const [saved, setSaved] = useState(false);
  const [badQuota, setBadQuota] = useState(false);
  useEffect(() => {
    if (settings.data) setDraft(draftOf(settings.data));
  }, [settings.data]);

  const save = useAction(async (body: Record<string, unknown>) => {
    const answer = await api<SettingsView>('/v1/admin/settings', { method: 'PATCH', body });
    settings.set(answer);
    setSaved(true);
  });

  if (!settings.data || !draft) return settings.error ? <ErrorNote error={settings.error} onRetry={() => void settings.reload()} /> : <Loading />;
  const current = settings.data;
  const patch = patchOf(current, draft);
  const dirty = !patch.ok || Object.keys(patch.body).length > 0;
  const set = <K extends keyof SettingsDraft>(key: K, value: SettingsDraft[K]) => {
    setSaved(false);
    setDraft({ ...draft, [key]: value });
  };

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!patch.ok) {
      setBadQuota(true);
      return;
    }
    setBadQuota(false);
    if (Object.keys(patch.body).length) void save.run(patch.body);
  };

  return (
    <form className="settings-form" onSubmit={submit} aria-labelledby="operations-heading" noValidate>
      <section className="card settings-card">
        <h2 id="operations-heading">{t('operations')}</h2>
        <p className="muted">{t('operationsHint')}</p>

        <div className="setting">
          <Toggle label={t('relayApi')} checked={draft.relayApiEnabled} onChange={(on) => set('relayApiEnabled', on)} />
          <p className="muted setting-hint">{t('relayApiHint')}</p>
        </div>

        <fieldset className="setting coverage" aria-describedby="coverage-hint">
          <legend>{t('coverage')}</legend>
          <p className="muted setting-hint" id="coverage-hint">
            {t('coverageHint')}
          </p>
          {COVERAGE_MODES.map((mode) => (
            <label key={mode} className="radio-option">
              <input type="radio" name="coverage" value={mode} checked={draft.coverage === mode} onChange={() => set('coverage', mode)} aria-describedby={`coverage-${mode}`} />
              <span>
                <strong>{t(`cov_${mode}`)}</strong>
                <span className="muted" id={`coverage-${mode}`}>
                  {' '}
                  — {t(`cov_${mode}_text`)}
                </span>
              </span>
            </label>
          ))}
        </fieldset>

        <h3>{t('routing')}</h3>
        <div className="form-grid">
          <Field label={t('defaultProvider')} hint={t('defaultProviderHint')}>
            {(id) => <input id={id} value={draft.defaultProvider} onChange={(e) => set('defaultProvider', e.target.value)} />}
          </Field>
          <Field label={t('fallbackProviders')} hint={t('fallbackProvidersHint')}>
            {(id) => <input id={id} value={draft.fallbackProviders} onChange={(e) => set('fallbackProviders', e.target.value)} />}
          </Field>
          <Field label={t('titleModel')} hint={t('titleModelHint')}>
            {(id) => <input id={id} value={draft.titleModel} onChange={(e) => set('titleModel', e.target.value)} />}
          </Field>
          <Field label={t('storageQuota')} hint={t('storageQuotaHint')}>
            {(id) => (
              <div className="row nowrap">
                <input id={id} type="number" min="0" step="any" inputMode="decimal" value={draft.storageQuota} onChange={(e) => set('storageQuota', e.target.value)} />
                <select aria-label={t('storageUnit')} value={draft.storageUnit} onChange={(e) => set('storageUnit', e.target.value as QuotaUnit)}>
                  {QUOTA_UNITS.map((u) => (
                    <option key={u} value={u}>
                      {u}
                    </option>
                  ))}
                </select>
              </div>
            )}
          </Field>
        </div>
        {(
          [
            ['rateLimiting', 'rateLimitingHint'],
            ['usageTracking', 'usageTrackingHint'],
            ['errorLogging', 'errorLoggingHint'],
          ] as const
        ).map(([key, hint]) => (
          <div className="setting" key={key}>
            <Toggle label={t(key)} checked={draft[key]} onChange={(on) => set(key, on)} />
            <p className="muted setting-hint">{t(hint)}</p>
          </div>
        ))}

        {badQuota ? (
          <p className="error-note" role="alert">
            {t('badQuota')}
          </p>
        ) : null}
        <ErrorNote error={save.error} />
        <div className="row save-row">
          <button type="submit" disabled={save.busy || !dirty}>
            {save.busy ? t('saving') : tc('save')}
          </button>
          {dirty ? (
            <button type="button" className="secondary" onClick={() => setDraft(draftOf(current))}>
              {t('revert')}
            </button>
          ) : null}
          <span role="status" className={saved && !dirty ? 'saved-note' : 'muted'}>
            {saved && !dirty ? t('savedAt') : dirty ? t('unsaved') : ''}
          </span>
          {current.updated_at ? <span className="muted small">{t('lastChange', { time: fmt.dateTime(current.updated_at) })}</span> : null}
        </div>
      </section>
    </form>
  );
}
