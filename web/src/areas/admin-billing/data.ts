/** Shapes of the billing API the pages read, and the tenant's users (for names and pickers). */
import { useMemo } from 'react';
import type { ListOf } from '../../api/types';
import { useApi } from '../../ui/use-api';
import type { PlanQuota, Period } from './logic';

export interface Price {
  input_price: string;
  output_price: string;
  per_request_price: string;
}
export interface Pricing {
  unit: string;
  default: Price & { updated_at: string | null };
  models: Array<Price & { model: string; updated_at: string }>;
}
export interface Balance {
  user_id: string;
  balance: string;
  balance_micro: number;
  updated_at: string | null;
}
export interface Subscription {
  id: string;
  user_id: string;
  plan_id: string;
  plan_name: string;
  status: 'active' | 'expired' | 'canceled';
  period: Period;
  price: string;
  current_period_end: string;
  quotas: Array<PlanQuota & { used_requests: number; used_tokens: number; remaining: number }>;
}
export interface LedgerEntry {
  id: string;
  user_id: string;
  type: 'charge' | 'topup' | 'adjustment' | 'subscription_fee';
  amount: string;
  balance_after: string;
  model: string | null;
  reason: string | null;
  request_id: string | null;
  plan_id: string | null;
  created_at: string;
}
export interface User {
  id: string;
  email: string;
  role: string;
}

export function useUsers() {
  const users = useApi<ListOf<User>>('/v1/admin/users');
  const emailOf = useMemo(() => {
    const map = new Map((users.data?.data ?? []).map((u) => [u.id, u.email]));
    return (id: string) => map.get(id) ?? id;
  }, [users.data]);
  return { users: users.data?.data ?? [], emailOf, error: users.error };
}
