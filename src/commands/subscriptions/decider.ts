/**
 * A user's subscription: at most one running at a time. Subscribing starts a period now; renewing
 * starts a new period now (quotas reset, the fee is charged again, whatever was left of the old
 * period is forfeited); canceling ends coverage at once. When a period ends without a renewal
 * there is no coverage until the user renews (or subscribes again).
 */
import { periodEnd } from '../../billing/rating.js';
import { ConflictError, NotFoundError } from '../../errors.js';
import type { Decider } from '../decider.js';
import type { PlanTerms } from '../plans/events.js';
import { SubscriptionEvent } from './events.js';

export interface SubscriptionState {
  subscriptionId: string | null;
  status: 'none' | 'active' | 'canceled';
  planId: string | null;
  periodEnd: string | null;
}

export type SubscriptionCommand =
  | { type: 'Subscribe'; subscriptionId: string; userId: string; terms: PlanTerms; now: string; by: string | null }
  | { type: 'RenewSubscription'; userId: string; terms: PlanTerms; now: string; by: string | null }
  | { type: 'CancelSubscription'; userId: string; now: string; by: string | null };

const running = (state: SubscriptionState, now: string) => state.status === 'active' && state.periodEnd !== null && Date.parse(now) < Date.parse(state.periodEnd);

export const subscriptions: Decider<SubscriptionCommand, SubscriptionState, SubscriptionEvent> = {
  category: 'subscription',
  initialState: { subscriptionId: null, status: 'none', planId: null, periodEnd: null },
  events: SubscriptionEvent,

  decide(command, state) {
    switch (command.type) {
      case 'Subscribe':
        if (running(state, command.now)) throw new ConflictError(`already subscribed to plan ${state.planId} until ${state.periodEnd}; cancel first, or renew`, 'already_subscribed');
        return [
          {
            type: 'SubscriptionStarted',
            data: { subscription_id: command.subscriptionId, user_id: command.userId, terms: command.terms, period_start: command.now, period_end: periodEnd(command.now, command.terms.period), by: command.by },
          },
        ];
      case 'RenewSubscription':
        if (state.subscriptionId === null) throw new NotFoundError('no subscription to renew', 'subscription_not_found');
        return [
          {
            type: 'SubscriptionRenewed',
            data: { subscription_id: state.subscriptionId, user_id: command.userId, terms: command.terms, period_start: command.now, period_end: periodEnd(command.now, command.terms.period), by: command.by },
          },
        ];
      case 'CancelSubscription':
        if (state.subscriptionId === null) throw new NotFoundError('no subscription', 'subscription_not_found');
        if (!running(state, command.now)) throw new ConflictError('the subscription is not active (canceled or its period ended)', 'subscription_not_active');
        return [{ type: 'SubscriptionCanceled', data: { subscription_id: state.subscriptionId, user_id: command.userId, at: command.now, by: command.by } }];
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'SubscriptionStarted':
      case 'SubscriptionRenewed':
        return { subscriptionId: event.data.subscription_id, status: 'active', planId: event.data.terms.plan_id, periodEnd: event.data.period_end };
      case 'SubscriptionCanceled':
        return { ...state, status: 'canceled' };
    }
  },
};
