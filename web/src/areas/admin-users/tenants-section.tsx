/** Tenants: operators list, create, disable and enable them; other admins see their own. */
import { useState, type FormEvent } from 'react';
import { api } from '../../api/client';
import { common } from '../../i18n/common';
import { useFormat, useT } from '../../i18n/context';
import { ErrorNote, Field } from '../../ui/kit';
import { useAction } from '../../ui/use-api';
import { messages } from './messages';
import { OPERATOR_TENANT, type TenantView } from './types';

export function TenantsSection({ tenants, operator, onChange }: { tenants: TenantView[]; operator: boolean; onChange: (tenants: TenantView[]) => void }) {
  const t = useT(messages);
  const tc = useT(common);
  const fmt = useFormat();
  const [name, setName] = useState('');
  const [error, setError] = useState<Error | null>(null);
  const create = useAction(async () => {
    const tenant = await api<TenantView>('/v1/admin/tenants', { method: 'POST', body: { name: name.trim() } });
    onChange([...tenants, tenant]);
    setName('');
  });
  const toggle = async (tenant: TenantView) => {
    setError(null);
    try {
      const changed = await api<TenantView>(`/v1/admin/tenants/${tenant.id}/${tenant.disabled ? 'enable' : 'disable'}`, { method: 'POST' });
      onChange(tenants.map((x) => (x.id === changed.id ? changed : x)));
    } catch (e) {
      setError(e as Error);
    }
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    void create.run();
  };
  return (
    <section className="card admin-section" aria-labelledby="tenants-heading">
      <h2 id="tenants-heading">{t('tenants')}</h2>
      <p className="muted">{t('tenantsHint')}</p>
      <ErrorNote error={error} />
      <div className="table-wrap">
        <table>
          <thead>
            <tr>
              <th>{t('tenantName')}</th>
              <th>ID</th>
              <th>{t('status')}</th>
              <th>{t('created')}</th>
              {operator ? <th>{tc('actions')}</th> : null}
            </tr>
          </thead>
          <tbody>
            {tenants.map((tenant) => (
              <tr key={tenant.id}>
                <td>
                  {tenant.name}
                  {tenant.id === OPERATOR_TENANT ? <span className="muted"> ({t('operatorTenant')})</span> : null}
                </td>
                <td>
                  <code>{tenant.id}</code>
                </td>
                <td>{tenant.disabled ? <span className="badge bad">{t('disabledState')}</span> : <span className="badge ok">{t('active')}</span>}</td>
                <td className="muted">{fmt.dateTime(tenant.created_at)}</td>
                {operator ? (
                  <td>
                    {tenant.id === OPERATOR_TENANT ? null : (
                      <button
                        type="button"
                        className="secondary"
                        aria-label={tenant.disabled ? t('enableTenant', { name: tenant.name }) : t('disableTenant', { name: tenant.name })}
                        onClick={() => void toggle(tenant)}
                      >
                        {tenant.disabled ? t('enable') : t('disable')}
                      </button>
                    )}
                  </td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {operator ? (
        <form className="inline-form" onSubmit={submit} aria-label={t('newTenant')}>
          <h3>{t('newTenant')}</h3>
          <div className="row align-end">
            <Field label={t('tenantName')}>{(id) => <input id={id} required maxLength={200} value={name} onChange={(e) => setName(e.target.value)} />}</Field>
            <button type="submit" disabled={create.busy}>
              {t('createTenant')}
            </button>
          </div>
          <ErrorNote error={create.error} />
        </form>
      ) : null}
    </section>
  );
}
