/**
 * API keys of the signed-in user (/v1/keys): the list with status and use, create and edit with
 * the whole policy, the secret shown once after creation, revoke with a confirmation.
 */
import { useMemo, useState } from 'react';
import { api } from '../../api/client';
import type { ListOf } from '../../api/types';
import { common } from '../../i18n/common';
import { useFormat, useLang, useT } from '../../i18n/context';
import { localeOf } from '../../i18n/core';
import { CopyButton, ErrorNote, Modal, Page, TableState } from '../../ui/kit';
import { useAction, useApi } from '../../ui/use-api';
import { EMPTY_FORM, formOf, keyStatus, type ApiKey, type CreatedKey } from './form';
import { KeyEditor } from './key-form';
import { messages } from './messages';
import './keys.css';

type Editing = { mode: 'create' } | { mode: 'edit'; key: ApiKey } | null;

export default function KeysArea() {
  const t = useT(messages);
  const tc = useT(common);
  const fmt = useFormat();
  const { lang } = useLang();
  // Dates in the table are short: the columns are many.
  const short = useMemo(() => {
    const f = new Intl.DateTimeFormat(localeOf(lang), { dateStyle: 'short', timeStyle: 'short' });
    return (iso: string) => f.format(new Date(iso));
  }, [lang]);
  const keys = useApi<ListOf<ApiKey>>('/v1/keys');
  const [editing, setEditing] = useState<Editing>(null);
  const [created, setCreated] = useState<CreatedKey | null>(null);
  const [revoking, setRevoking] = useState<ApiKey | null>(null);
  const revoke = useAction(async (key: ApiKey) => {
    await api(`/v1/keys/${encodeURIComponent(key.id)}`, { method: 'DELETE' });
    setRevoking(null);
    await keys.reload();
  });

  const saved = (key: ApiKey & { key?: string }) => {
    setEditing(null);
    if (key.key) setCreated(key as CreatedKey);
    void keys.reload();
  };

  const list = keys.data?.data ?? [];
  // Newest first; revoked keys after the live ones.
  const sorted = [...list].sort((a, b) => Number(a.revoked) - Number(b.revoked) || b.created_at.localeCompare(a.created_at));
  const base = `${location.origin}/v1`;

  const limitsOf = (k: ApiKey): string => {
    const r = k.rate_limits;
    const parts = [
      r.requests_per_minute ? `${fmt.number(r.requests_per_minute)} ${t('rpmLabel').toLowerCase()}` : null,
      r.requests_per_hour ? `${fmt.number(r.requests_per_hour)} ${t('rphLabel').toLowerCase()}` : null,
      r.tokens_per_hour ? `${fmt.number(r.tokens_per_hour)} ${t('tphLabel').toLowerCase()}` : null,
      r.concurrent_requests ? `${fmt.number(r.concurrent_requests)} ${t('concurrencyLabel').toLowerCase()}` : null,
      k.ip_restrictions.allowed_ips.length || k.ip_restrictions.blocked_ips.length ? t('groupNetwork') : null,
    ].filter(Boolean);
    return parts.length ? parts.join(' · ') : '—';
  };

  return (
    <Page
      title={t('title')}
      actions={
        <button type="button" onClick={() => setEditing({ mode: 'create' })}>
          {t('newKey')}
        </button>
      }
    >
      <p className="muted">{t('intro', { base })}</p>
      <ErrorNote error={keys.error} onRetry={() => void keys.reload()} />
      <TableState
        rows={keys.data ? sorted : undefined}
        loading={keys.loading}
        empty={t('noKeys')}
        table={(rows) => (
          <table className="keys-table">
            <thead>
              <tr>
                <th>{t('name')}</th>
                <th>{t('prefix')}</th>
                <th>{t('status')}</th>
                <th>{t('models')}</th>
                <th>{t('quotaUsed')}</th>
                <th>{t('limits')}</th>
                <th>{t('created')}</th>
                <th>{t('lastUsed')}</th>
                <th>{tc('actions')}</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((k) => {
                const status = keyStatus(k);
                const used = k.usage?.quota_used ?? 0;
                const limit = k.permissions.quota_limit;
                return (
                  <tr key={k.id} className={status === 'active' ? undefined : 'key-dead'}>
                    <td>{k.name}</td>
                    <td className="key-nowrap">
                      <code>{k.key_prefix}…</code>
                    </td>
                    <td className="key-nowrap">
                      <span className={`badge ${status === 'active' ? 'ok' : status === 'revoked' ? 'bad' : 'warn'}`}>{t(status)}</span>
                    </td>
                    <td className="key-models">{k.permissions.models.length ? k.permissions.models.join(', ') : <span className="muted">{t('allModels')}</span>}</td>
                    <td className="key-nowrap">
                      {fmt.number(used)} / {limit === null ? t('unlimited') : fmt.number(limit)}
                      {limit ? <progress className="key-quota" max={limit} value={Math.min(used, limit)} aria-label={t('quotaUsed')} /> : null}
                    </td>
                    <td className="key-limits">{limitsOf(k)}</td>
                    <td className="key-date">{short(k.created_at)}</td>
                    <td className="key-date">{k.usage?.last_used_at ? short(k.usage.last_used_at) : <span className="muted">{t('never')}</span>}</td>
                    <td className="key-nowrap">
                      {k.revoked ? null : (
                        <div className="row key-actions">
                          <button type="button" className="secondary" aria-label={t('editKey', { name: k.name })} onClick={() => setEditing({ mode: 'edit', key: k })}>
                            {tc('edit')}
                          </button>
                          <button type="button" className="danger" aria-label={t('revokeKey', { name: k.name })} onClick={() => setRevoking(k)}>
                            {t('revoke')}
                          </button>
                        </div>
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        )}
      />

      <Modal wide title={editing?.mode === 'edit' ? t('editTitle') : t('createTitle')} open={editing !== null} onClose={() => setEditing(null)}>
        {editing ? (
          <KeyEditor
            key={editing.mode === 'edit' ? editing.key.id : 'new'}
            initial={editing.mode === 'edit' ? formOf(editing.key) : EMPTY_FORM}
            editing={editing.mode === 'edit' ? editing.key : null}
            onSaved={saved}
            onCancel={() => setEditing(null)}
          />
        ) : null}
      </Modal>

      <Modal title={t('createdTitle')} open={created !== null} onClose={() => setCreated(null)}>
        {created ? (
          <div className="key-created">
            <p className="key-warning" role="alert">
              {t('createdWarning')}
            </p>
            <label htmlFor="new-key-secret">{t('secret')}</label>
            <div className="row key-secret-row">
              <input id="new-key-secret" className="key-secret" readOnly value={created.key} onFocus={(e) => e.target.select()} />
              <CopyButton text={created.key} label={t('copyKey')} />
            </div>
            <p className="muted">{t('usageExample')}</p>
            <pre>{`curl ${base}/chat/completions \\\n  -H "Authorization: Bearer ${created.key_prefix}…" \\\n  -H "Content-Type: application/json" \\\n  -d '{"model":"…","messages":[{"role":"user","content":"Hi"}]}'`}</pre>
            <button type="button" onClick={() => setCreated(null)}>
              {t('done')}
            </button>
          </div>
        ) : null}
      </Modal>

      <Modal title={t('revokeTitle')} open={revoking !== null} onClose={() => setRevoking(null)}>
        {revoking ? (
          <div>
            <p>{t('revokeText', { name: revoking.name, prefix: revoking.key_prefix })}</p>
            <ErrorNote error={revoke.error} />
            <div className="row">
              <button type="button" className="danger" disabled={revoke.busy} onClick={() => void revoke.run(revoking)}>
                {t('revoke')}
              </button>
              <button type="button" className="secondary" onClick={() => setRevoking(null)}>
                {tc('cancel')}
              </button>
            </div>
          </div>
        ) : null}
      </Modal>
    </Page>
  );
}
