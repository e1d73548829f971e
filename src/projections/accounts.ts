/**
 * Accounts read model: `tenants`, `users` and `user_roles` (one projection, so that one
 * checkpoint describes all three and the access live view, src/views/access.ts, can be seeded
 * from them consistently).
 */
import type { UsersTable } from '../adapters/sql/schema.js';
import { TENANT_EVENT_TYPES, TenantEvent } from '../commands/tenants/events.js';
import { USER_EVENT_TYPES, UserEvent } from '../commands/users/events.js';
import type { StoredEvent } from '../ports/event-store.js';
import type { Projection } from './runtime/projection.js';

export const tenantIdOf = (stream: string) => stream.slice('tenant-'.length);
export const userIdOf = (stream: string) => stream.slice('user-'.length);

/** TOTP steps used at login change nothing a reader sees: the decider alone keeps them. */
const PROJECTED_USER_EVENTS = USER_EVENT_TYPES.filter((t) => t !== 'MfaTotpUsed');

function isTenantEvent(stored: StoredEvent): boolean {
  return (TENANT_EVENT_TYPES as readonly string[]).includes(stored.type);
}

export const accountsProjection: Projection = {
  name: 'accounts',
  version: 1,
  eventTypes: [...TENANT_EVENT_TYPES, ...PROJECTED_USER_EVENTS],
  async apply(trx, stored) {
    const at = stored.occurred_at;
    if (isTenantEvent(stored)) {
      const event = TenantEvent.parse({ type: stored.type, data: stored.data });
      const tenantId = tenantIdOf(stored.stream);
      switch (event.type) {
        case 'TenantCreated':
          await trx.insertInto('tenants').values({ tenant_id: tenantId, name: event.data.name, disabled: 0, created_at: at, updated_at: at }).execute();
          return;
        case 'TenantDisabled':
        case 'TenantEnabled':
          await trx
            .updateTable('tenants')
            .set({ disabled: event.type === 'TenantDisabled' ? 1 : 0, updated_at: at })
            .where('tenant_id', '=', tenantId)
            .execute();
          return;
      }
    }
    const event = UserEvent.parse({ type: stored.type, data: stored.data });
    const id = userIdOf(stored.stream);
    const update = (set: Partial<UsersTable>) => trx.updateTable('users').set({ ...set, updated_at: at }).where('id', '=', id).execute();
    switch (event.type) {
      case 'UserCreated':
        await trx
          .insertInto('users')
          .values({
            id,
            tenant_id: stored.tenant_id,
            email: event.data.email,
            password_hash: event.data.password_hash,
            role: event.data.role,
            disabled: 0,
            mfa_enabled: 0,
            mfa_secret_sealed: null,
            mfa_pending_secret_sealed: null,
            mfa_recovery_codes_left: 0,
            preferences: '{}',
            role_changed_at: null,
            created_at: at,
            updated_at: at,
          })
          .execute();
        await trx.insertInto('user_roles').values({ user_id: id, tenant_id: stored.tenant_id, role: event.data.role }).execute();
        return;
      case 'UserDisabled':
        await update({ disabled: 1 });
        return;
      case 'UserEnabled':
        await update({ disabled: 0 });
        return;
      case 'UserRoleChanged':
        await update({ role: event.data.role, role_changed_at: at });
        await trx.deleteFrom('user_roles').where('user_id', '=', id).execute();
        await trx.insertInto('user_roles').values({ user_id: id, tenant_id: stored.tenant_id, role: event.data.role }).execute();
        return;
      case 'PasswordChanged':
        await update({ password_hash: event.data.password_hash });
        return;
      case 'PreferencesChanged':
        await update({ preferences: JSON.stringify(event.data.preferences) });
        return;
      case 'MfaEnrollmentStarted':
        // MFA is off while an enrollment is pending (the decider refuses one otherwise), so the
        // count can already hold the new codes' number.
        await update({ mfa_pending_secret_sealed: event.data.secret_sealed, mfa_recovery_codes_left: event.data.recovery_code_hashes.length });
        return;
      case 'MfaEnabled': {
        const row = await trx.selectFrom('users').select('mfa_pending_secret_sealed').where('id', '=', id).executeTakeFirst();
        await update({ mfa_enabled: 1, mfa_secret_sealed: row?.mfa_pending_secret_sealed ?? null, mfa_pending_secret_sealed: null });
        return;
      }
      case 'MfaDisabled':
        await update({ mfa_enabled: 0, mfa_secret_sealed: null, mfa_pending_secret_sealed: null, mfa_recovery_codes_left: 0 });
        return;
      case 'MfaRecoveryCodeUsed': {
        const row = await trx.selectFrom('users').select('mfa_recovery_codes_left').where('id', '=', id).executeTakeFirst();
        await update({ mfa_recovery_codes_left: Math.max(0, (row?.mfa_recovery_codes_left ?? 0) - 1) });
        return;
      }
      case 'MfaSecretResealed':
        await update({
          ...(event.data.secret_sealed !== undefined && { mfa_secret_sealed: event.data.secret_sealed }),
          ...(event.data.pending_secret_sealed !== undefined && { mfa_pending_secret_sealed: event.data.pending_secret_sealed }),
        });
        return;
      case 'MfaTotpUsed':
        return;
      case 'UserDeleted':
        // Gone from every list and lookup (login by email finds nothing; the address may be reused).
        await trx.deleteFrom('user_roles').where('user_id', '=', id).execute();
        await trx.deleteFrom('users').where('id', '=', id).execute();
        return;
    }
  },
  async reset(trx) {
    await trx.deleteFrom('user_roles').execute();
    await trx.deleteFrom('users').execute();
    await trx.deleteFrom('tenants').execute();
  },
};
