/** The users of one tenant: create, role, disable / enable, MFA reset, delete. */
import { useState, type FormEvent } from 'react';
import { api } from '../../api/client';
import type { ListOf } from '../../api/types';
import { common } from '../../i18n/common';
import { useFormat, useT } from '../../i18n/context';
import { ErrorNote, Field, TableState } from '../../ui/kit';
import { useAction, useApi } from '../../ui/use-api';
import { Confirm } from './confirm';
import { messages } from './messages';
import type { TenantView, UserView } from './types';

export function UsersSection({ tenantId, tenants, operator, meId }: { tenantId: string; tenants: TenantView[]; operator: boolean; meId: string }) {
  const t = useT(messages);
  const tc = useT(common);
  const fmt = useFormat();
  // Operators name the tenant; everyone else works in their own (naming it would be refused).
  const query = operator ? { tenant_id: tenantId } : undefined;
  const list = useApi<ListOf<UserView>>('/v1/admin/users', query);
  const users = list.data?.data ?? [];
  const [error, setError] = useState<Error | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [deleting, setDeleting] = useState<UserView | null>(null);
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [role, setRole] = useState<'user' | 'admin'>('user');
  const [newTenant, setNewTenant] = useState(tenantId);

  const replace = (user: UserView) => list.set({ object: 'list', data: users.map((u) => (u.id === user.id ? user : u)) });
  const act = async (work: () => Promise<void>) => {
    setError(null);
    setNotice(null);
    try {
      await work();
    } catch (e) {
      setError(e as Error);
    }
  };
  const userAction = (user: UserView, path: string) => api<UserView>(`/v1/admin/users/${user.id}/${path}`, { method: 'POST', query });

  const create = useAction(async () => {
    const body = { email: email.trim(), password, role, ...(operator && { tenant_id: newTenant }) };
    const user = await api<UserView>('/v1/admin/users', { method: 'POST', body });
    if (user.tenant_id === tenantId) list.set({ object: 'list', data: [...users, user] });
    setNotice(t('userCreated', { email: user.email }));
    setEmail('');
    setPassword('');
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setNotice(null);
    void create.run();
  };

  return (
    <section className="card admin-section" aria-labelledby="users-heading">
      <h2 id="users-heading">{t('users')}</h2>
      <ErrorNote error={list.error} onRetry={() => void list.reload()} />
      <ErrorNote error={error} />
      {notice ? (
        <p className="notice" role="status">
          {notice}
        </p>
      ) : null}
      <TableState
        rows={list.data?.data}
        loading={list.loading}
        table={(rows) => (
          <table>
            <thead>
              <tr>
                <th>{t('email')}</th>
                <th>{t('role')}</th>
                <th>{t('status')}</th>
                <th>{t('mfa')}</th>
                <th>{t('created')}</th>
                <th>{tc('actions')}</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((user) => {
                const self = user.id === meId;
                return (
                  <tr key={user.id}>
                    <td>
                      {user.email}
                      {self ? <span className="muted"> ({t('you')})</span> : null}
                    </td>
                    <td>
                      <select
                        aria-label={t('roleOf', { email: user.email })}
                        value={user.role}
                        disabled={self}
                        onChange={(e) =>
                          void act(async () => replace(await api<UserView>(`/v1/admin/users/${user.id}`, { method: 'PATCH', query, body: { role: e.target.value } })))
                        }
                      >
                        <option value="user">{t('roleUser')}</option>
                        <option value="admin">{t('roleAdmin')}</option>
                      </select>
                    </td>
                    <td>{user.disabled ? <span className="badge bad">{t('disabledState')}</span> : <span className="badge ok">{t('active')}</span>}</td>
                    <td>{user.mfa_enabled ? <span className="badge ok">{t('mfaOn')}</span> : <span className="muted">{t('mfaOff')}</span>}</td>
                    <td className="muted">{fmt.dateTime(user.created_at)}</td>
                    <td>
                      <div className="row nowrap">
                        {user.disabled ? (
                          <button type="button" className="secondary" aria-label={t('enableUser', { email: user.email })} onClick={() => void act(async () => replace(await userAction(user, 'enable')))}>
                            {t('enable')}
                          </button>
                        ) : (
                          <button
                            type="button"
                            className="secondary"
                            disabled={self}
                            aria-label={t('disableUser', { email: user.email })}
                            onClick={() => void act(async () => replace(await userAction(user, 'disable')))}
                          >
                            {t('disable')}
                          </button>
                        )}
                        {user.mfa_enabled ? (
                          <button
                            type="button"
                            className="secondary"
                            aria-label={t('resetMfaOf', { email: user.email })}
                            onClick={() =>
                              void act(async () => {
                                replace(await userAction(user, 'mfa/reset'));
                                setNotice(t('mfaResetDone', { email: user.email }));
                              })
                            }
                          >
                            {t('resetMfa')}
                          </button>
                        ) : null}
                        <button type="button" className="danger" disabled={self} aria-label={t('deleteUser', { email: user.email })} onClick={() => setDeleting(user)}>
                          {tc('delete')}
                        </button>
                      </div>
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        )}
      />

      <form className="inline-form" onSubmit={submit} aria-label={t('newUser')}>
        <h3>{t('newUser')}</h3>
        <div className="form-grid">
          <Field label={t('email')}>{(id) => <input id={id} type="email" required autoComplete="off" value={email} onChange={(e) => setEmail(e.target.value)} />}</Field>
          <Field label={t('password')} hint={t('passwordHint')}>
            {(id) => <input id={id} type="password" required autoComplete="new-password" value={password} onChange={(e) => setPassword(e.target.value)} />}
          </Field>
          <Field label={t('role')}>
            {(id) => (
              <select id={id} value={role} onChange={(e) => setRole(e.target.value as 'user' | 'admin')}>
                <option value="user">{t('roleUser')}</option>
                <option value="admin">{t('roleAdmin')}</option>
              </select>
            )}
          </Field>
          {operator ? (
            <Field label={t('tenant')}>
              {(id) => (
                <select id={id} value={newTenant} onChange={(e) => setNewTenant(e.target.value)}>
                  {tenants.map((tenant) => (
                    <option key={tenant.id} value={tenant.id}>
                      {tenant.name} ({tenant.id})
                    </option>
                  ))}
                </select>
              )}
            </Field>
          ) : null}
        </div>
        <ErrorNote error={create.error} />
        <button type="submit" disabled={create.busy}>
          {t('createUser')}
        </button>
      </form>

      <Confirm
        title={deleting ? t('deleteUser', { email: deleting.email }) : ''}
        text={deleting ? t('confirmDeleteUser', { email: deleting.email }) : ''}
        action={tc('delete')}
        open={deleting !== null}
        onClose={() => setDeleting(null)}
        onConfirm={async () => {
          if (!deleting) return;
          await api(`/v1/admin/users/${deleting.id}`, { method: 'DELETE', query });
          list.set({ object: 'list', data: users.filter((u) => u.id !== deleting.id) });
        }}
      />
    </section>
  );
}
