/** The admin API's shapes this area reads. */
export interface UserView {
  id: string;
  email: string;
  tenant_id: string;
  role: 'admin' | 'user';
  disabled: boolean;
  mfa_enabled: boolean;
  created_at: string;
  updated_at: string;
}

export interface TenantView {
  id: string;
  name: string;
  disabled: boolean;
  created_at: string;
  updated_at: string;
}

export interface KeyView {
  id: string;
  name: string;
  user_id: string;
  key_prefix: string;
  permissions: { expiry_date: string | null };
  revoked: boolean;
  created_at: string;
  revoked_at: string | null;
}

/** The tenant whose admins are operators (src/api/routes/tenants.ts). */
export const OPERATOR_TENANT = 'default';
