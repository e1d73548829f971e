/** One preset: its prompt, context, parameters and models; clone, start a chat, and for your own: edit, share, delete. */
import { useState } from 'react';
import { Link, useLocation, useSearch } from 'wouter';
import { api } from '../../api/client';
import { common } from '../../i18n/common';
import { useFormat, useT } from '../../i18n/context';
import { useMe } from '../../session';
import { ErrorNote, Field, Loading, Modal, Page } from '../../ui/kit';
import { useAction, useApi } from '../../ui/use-api';
import { systemPromptOf, VISIBILITIES, type Preset, type Visibility } from './logic';
import { AvatarView, PresetBadges, useLabels } from './shared';

export function Detail({ id }: { id: string }) {
  const l = useLabels();
  const { t } = l;
  const tc = useT(common);
  const fmt = useFormat();
  const me = useMe();
  const [, navigate] = useLocation();
  const search = useSearch();
  const preset = useApi<Preset>(`/api/presets/${encodeURIComponent(id)}`);
  const [deleting, setDeleting] = useState(false);
  const [notice, setNotice] = useState<string | null>(new URLSearchParams(search).has('cloned') ? t('cloned') : null);

  const clone = useAction(async (p: Preset) => {
    const copy = await api<Preset>(`/api/presets/${encodeURIComponent(p.id)}/clone`, { body: { modifications: {} } });
    navigate(`/${copy.id}?cloned=1`);
  });
  const share = useAction(async (visibility: Visibility) => {
    preset.set(await api<Preset>(`/api/presets/${encodeURIComponent(id)}`, { method: 'PATCH', body: { visibility } }));
    setNotice(t('sharedNow'));
  });
  const remove = useAction(async () => {
    await api(`/api/presets/${encodeURIComponent(id)}`, { method: 'DELETE' });
    navigate('/');
  });

  if (!preset.data) {
    return (
      <Page title={t('title')}>
        <Link href="/">← {t('back')}</Link>
        {preset.error ? <ErrorNote error={preset.error} onRetry={() => void preset.reload()} /> : <Loading />}
      </Page>
    );
  }
  const p = preset.data;
  const mine = !p.builtin && p.owner_id === me.id;
  const system = systemPromptOf(p);
  const context = p.system_prompt ? p.context : p.context.filter((m) => m.role !== 'system' && m.role !== 'developer');

  return (
    <Page
      title={p.name}
      actions={
        <>
          <Link href={`~/chat?preset=${encodeURIComponent(p.id)}`} className="button">
            {t('startChat')}
          </Link>
          <button type="button" className="secondary" disabled={clone.busy} onClick={() => void clone.run(p)}>
            {t('clone')}
          </button>
          {mine ? (
            <>
              <Link href={`/${p.id}/edit`} className="button secondary-link">
                {t('editPreset')}
              </Link>
              <button type="button" className="danger" onClick={() => setDeleting(true)}>
                {t('deletePreset')}
              </button>
            </>
          ) : null}
        </>
      }
    >
      <Link href="/">← {t('back')}</Link>
      {notice ? (
        <p className="preset-notice" role="status">
          {notice}
        </p>
      ) : null}
      <ErrorNote error={clone.error ?? share.error} />
      <div className="preset-detail">
        <div className="preset-detail-main">
          <div className="preset-card-head">
            <AvatarView avatar={p.avatar} size="lg" />
            <div>
              <PresetBadges preset={p} mine={mine} />
              <p>{p.description}</p>
            </div>
          </div>
          <section className="card">
            <h2>{t('systemPrompt')}</h2>
            {system ? <pre className="preset-prompt">{system}</pre> : <p className="muted">{t('noSystemPrompt')}</p>}
          </section>
          {context.length > 0 ? (
            <section className="card">
              <h2>{t('context')}</h2>
              <ol className="preset-context">
                {context.map((m, i) => (
                  <li key={i}>
                    <strong>{l.role(m.role)}</strong>
                    <pre className="preset-prompt">{m.content}</pre>
                  </li>
                ))}
              </ol>
            </section>
          ) : null}
        </div>
        <aside className="card preset-detail-side">
          <h2>{t('parameters')}</h2>
          <dl className="preset-facts">
            <dt>{t('models')}</dt>
            <dd>{p.model_preferences.length ? p.model_preferences.join(', ') : t('modelDefault')}</dd>
            <dt>{t('temperature')}</dt>
            <dd>{p.temperature ?? t('modelDefault')}</dd>
            <dt>{t('maxTokens')}</dt>
            <dd>{p.max_tokens === null ? t('modelDefault') : fmt.number(p.max_tokens)}</dd>
            {p.lang ? (
              <>
                <dt>{t('language')}</dt>
                <dd>{p.lang}</dd>
              </>
            ) : null}
            {p.tags.length ? (
              <>
                <dt>{t('tags')}</dt>
                <dd>{p.tags.join(', ')}</dd>
              </>
            ) : null}
            {p.version ? (
              <>
                <dt>{t('version')}</dt>
                <dd>{p.version}</dd>
              </>
            ) : null}
            {p.cloned_from ? (
              <>
                <dt>{t('clonedFrom')}</dt>
                <dd>
                  <Link href={`/${p.cloned_from}`}>{p.cloned_from}</Link>
                </dd>
              </>
            ) : null}
            <dt>{t('updated')}</dt>
            <dd>{fmt.dateTime(p.updated_at)}</dd>
          </dl>
          {mine ? (
            <Field label={t('visibility')} hint={t(p.visibility === 'private' ? 'visPrivateHint' : p.visibility === 'team' ? 'visTeamHint' : 'visPublicHint')}>
              {(fid) => (
                <select id={fid} value={p.visibility} disabled={share.busy} onChange={(e) => void share.run(e.target.value as Visibility)}>
                  {VISIBILITIES.map((v) => (
                    <option key={v} value={v}>
                      {l.visibility(v)}
                    </option>
                  ))}
                </select>
              )}
            </Field>
          ) : p.builtin ? (
            <p className="muted">{t('readOnly')}</p>
          ) : null}
        </aside>
      </div>
      <Modal title={t('deleteTitle')} open={deleting} onClose={() => setDeleting(false)}>
        <p>{t('deleteText', { name: p.name })}</p>
        <ErrorNote error={remove.error} />
        <div className="row">
          <button type="button" className="danger" disabled={remove.busy} onClick={() => void remove.run()}>
            {tc('delete')}
          </button>
          <button type="button" className="secondary" onClick={() => setDeleting(false)}>
            {tc('cancel')}
          </button>
        </div>
      </Modal>
    </Page>
  );
}
