/** Admin › Users & tenants: the users of a tenant, the tenants (operators), and the tenant's API keys. */
import { useEffect, useState } from 'react';
import type { ListOf } from '../../api/types';
import { useT } from '../../i18n/context';
import { useMe } from '../../session';
import { ErrorNote, Field, Page } from '../../ui/kit';
import { useApi } from '../../ui/use-api';
import { KeysSection } from './keys-section';
import { messages } from './messages';
import { TenantsSection } from './tenants-section';
import { OPERATOR_TENANT, type TenantView } from './types';
import { UsersSection } from './users-section';
import './users.css';

export default function UsersArea() {
  const t = useT(messages);
  const me = useMe();
  const operator = me.tenant_id === OPERATOR_TENANT;
  const tenants = useApi<ListOf<TenantView>>('/v1/admin/tenants');
  const [shown, setShown] = useState(me.tenant_id);
  const list = tenants.data?.data ?? [];
  // A tenant that left the list (never, today) falls back to the admin's own.
  useEffect(() => {
    if (tenants.data && !list.some((x) => x.id === shown)) setShown(me.tenant_id);
  }, [tenants.data, list, shown, me.tenant_id]);

  return (
    <Page
      title={t('title')}
      actions={
        operator && list.length > 1 ? (
          <Field label={t('showTenant')}>
            {(id) => (
              <select id={id} value={shown} onChange={(e) => setShown(e.target.value)}>
                {list.map((tenant) => (
                  <option key={tenant.id} value={tenant.id}>
                    {tenant.name} ({tenant.id})
                  </option>
                ))}
              </select>
            )}
          </Field>
        ) : null
      }
    >
      <ErrorNote error={tenants.error} onRetry={() => void tenants.reload()} />
      <UsersSection key={shown} tenantId={shown} tenants={list} operator={operator} meId={me.id} />
      <TenantsSection tenants={list} operator={operator} onChange={(data) => tenants.set({ object: 'list', data })} />
      <KeysSection />
    </Page>
  );
}
