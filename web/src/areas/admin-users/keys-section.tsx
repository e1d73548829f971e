/** The API keys of the admin's tenant (every user's): list and revoke. */
import { useState } from 'react';
import { api } from '../../api/client';
import type { ListOf } from '../../api/types';
import { common } from '../../i18n/common';
import { useFormat, useT } from '../../i18n/context';
import { ListSection } from '../../ui/kit';
import { useApi } from '../../ui/use-api';
import { Confirm } from './confirm';
import { messages } from './messages';
import type { KeyView, UserView } from './types';

export function KeysSection() {
  const t = useT(messages);
  const tc = useT(common);
  const fmt = useFormat();
  const list = useApi<ListOf<KeyView>>('/api/admin/keys');
  // The owners' emails: keys are always of the caller's own tenant.
  const owners = useApi<ListOf<UserView>>('/v1/admin/users');
  const users = owners.data?.data ?? [];
  const [revoking, setRevoking] = useState<KeyView | null>(null);
  const emailOf = (userId: string) => users.find((u) => u.id === userId)?.email ?? userId;
  return (
    <ListSection
      id="keys-heading"
      title={t('keys')}
      className="card admin-section"
      intro={<p className="muted">{t('keysHint')}</p>}
      error={list.error}
      onRetry={() => void list.reload()}
      rows={list.data?.data}
      loading={list.loading}
      table={(keys) => (
        <table>
          <thead>
            <tr>
              <th>{t('keyName')}</th>
              <th>{t('keyOwner')}</th>
              <th>{t('keyPrefix')}</th>
              <th>{t('created')}</th>
              <th>{t('expires')}</th>
              <th>{t('status')}</th>
              <th>{tc('actions')}</th>
            </tr>
          </thead>
          <tbody>
            {keys.map((key) => (
              <tr key={key.id}>
                <td>{key.name}</td>
                <td>{emailOf(key.user_id)}</td>
                <td>
                  <code>{key.key_prefix}…</code>
                </td>
                <td className="muted">{fmt.dateTime(key.created_at)}</td>
                <td className="muted">{key.permissions.expiry_date ? fmt.dateTime(key.permissions.expiry_date) : t('never')}</td>
                <td>{key.revoked ? <span className="badge bad">{t('revoked')}</span> : <span className="badge ok">{t('active')}</span>}</td>
                <td>
                  {key.revoked ? null : (
                    <button type="button" className="danger" aria-label={t('revokeKey', { name: key.name })} onClick={() => setRevoking(key)}>
                      {t('revoke')}
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    >
      <Confirm
        title={revoking ? t('revokeKey', { name: revoking.name }) : ''}
        text={revoking ? t('confirmRevoke', { name: revoking.name }) : ''}
        action={t('revoke')}
        open={revoking !== null}
        onClose={() => setRevoking(null)}
        onConfirm={async () => {
          if (!revoking) return;
          await api(`/api/admin/keys/${revoking.id}`, { method: 'DELETE' });
          await list.reload();
        }}
      />
    </ListSection>
  );
}
