/**
 * Subscription plans. A deleted plan takes no new subscriptions and no renewals; subscriptions
 * already running keep the terms they copied.
 */
import type { Period } from '../../billing/rating.js';
import { DomainError, NotFoundError } from '../../errors.js';
import type { Decider } from '../decider.js';
import { PlanEvent, type PlanQuota } from './events.js';

export interface PlanState {
  exists: boolean;
  deleted: boolean;
  name: string;
  description: string | null;
  period: Period;
  quotas: PlanQuota[];
  priceMicro: number;
}

export interface PlanFields {
  name: string;
  description: string | null;
  period: Period;
  quotas: PlanQuota[];
  priceMicro: number;
}

export type PlanCommand =
  | ({ type: 'CreatePlan'; planId: string; by: string | null } & PlanFields)
  | ({ type: 'UpdatePlan'; by: string | null } & Partial<PlanFields>)
  | { type: 'DeletePlan'; by: string | null };

function validateQuotas(quotas: PlanQuota[]) {
  for (const [i, q] of quotas.entries()) {
    if ((q.requests === null) === (q.tokens === null)) throw new DomainError(`quotas[${i}]: give exactly one of requests or tokens`, 'invalid_quota');
    if (q.models.length === 0) throw new DomainError(`quotas[${i}]: name at least one model (or "*")`, 'invalid_quota');
  }
}

function live(state: PlanState) {
  if (!state.exists || state.deleted) throw new NotFoundError('plan not found', 'plan_not_found');
}

const samePeriod = (a: Period, b: Period) => JSON.stringify(a) === JSON.stringify(b);

export const plans: Decider<PlanCommand, PlanState, PlanEvent> = {
  category: 'plan',
  initialState: { exists: false, deleted: false, name: '', description: null, period: 'month', quotas: [], priceMicro: 0 },
  events: PlanEvent,

  decide(command, state) {
    switch (command.type) {
      case 'CreatePlan':
        if (state.exists) throw new DomainError('plan already exists', 'plan_exists');
        validateQuotas(command.quotas);
        return [
          {
            type: 'PlanCreated',
            data: { plan_id: command.planId, name: command.name, description: command.description, period: command.period, quotas: command.quotas, price_micro: command.priceMicro, by: command.by },
          },
        ];
      case 'UpdatePlan': {
        live(state);
        const data: { name?: string; description?: string | null; period?: Period; quotas?: PlanQuota[]; price_micro?: number } = {};
        if (command.name !== undefined && command.name !== state.name) data.name = command.name;
        if (command.description !== undefined && command.description !== state.description) data.description = command.description;
        if (command.period !== undefined && !samePeriod(command.period, state.period)) data.period = command.period;
        if (command.quotas !== undefined && JSON.stringify(command.quotas) !== JSON.stringify(state.quotas)) {
          validateQuotas(command.quotas);
          data.quotas = command.quotas;
        }
        if (command.priceMicro !== undefined && command.priceMicro !== state.priceMicro) data.price_micro = command.priceMicro;
        return Object.keys(data).length === 0 ? [] : [{ type: 'PlanUpdated', data: { ...data, by: command.by } }];
      }
      case 'DeletePlan':
        live(state);
        return [{ type: 'PlanDeleted', data: { by: command.by } }];
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'PlanCreated':
        return { exists: true, deleted: false, name: event.data.name, description: event.data.description, period: event.data.period, quotas: event.data.quotas, priceMicro: event.data.price_micro };
      case 'PlanUpdated':
        return {
          ...state,
          name: event.data.name ?? state.name,
          description: event.data.description !== undefined ? event.data.description : state.description,
          period: event.data.period ?? state.period,
          quotas: event.data.quotas ?? state.quotas,
          priceMicro: event.data.price_micro ?? state.priceMicro,
        };
      case 'PlanDeleted':
        return { ...state, deleted: true };
    }
  },
};
