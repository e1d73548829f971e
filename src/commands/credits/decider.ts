/**
 * A user's credit movements decided by admins. The stream belongs to the user's tenant (the
 * handler answers 404 for another tenant's user). The balance itself is not decided here: charges
 * come from usage in the billing projection, so a balance may go below zero (elastic billing).
 */
import { DomainError } from '../../errors.js';
import type { Decider } from '../decider.js';
import { CreditsEvent } from './events.js';

export interface CreditsState {
  movements: number;
}

export type CreditsCommand =
  | { type: 'TopUpCredits'; userId: string; amountMicro: number; reason: string; by: string | null }
  | { type: 'AdjustCredits'; userId: string; amountMicro: number; reason: string; by: string | null };

export const MAX_REASON_LENGTH = 500;

function reasonOf(reason: string): string {
  const trimmed = reason.trim();
  if (!trimmed) throw new DomainError('a reason is required', 'reason_required');
  if (trimmed.length > MAX_REASON_LENGTH) throw new DomainError(`the reason is longer than ${MAX_REASON_LENGTH} characters`, 'invalid_reason');
  return trimmed;
}

export const credits: Decider<CreditsCommand, CreditsState, CreditsEvent> = {
  category: 'credits',
  initialState: { movements: 0 },
  events: CreditsEvent,

  decide(command) {
    const reason = reasonOf(command.reason);
    if (!Number.isSafeInteger(command.amountMicro)) throw new DomainError('amount is out of range', 'invalid_amount');
    switch (command.type) {
      case 'TopUpCredits':
        if (command.amountMicro <= 0) throw new DomainError('a top-up must be a positive amount', 'invalid_amount');
        return [{ type: 'CreditsToppedUp', data: { user_id: command.userId, amount_micro: command.amountMicro, reason, by: command.by } }];
      case 'AdjustCredits':
        if (command.amountMicro === 0) throw new DomainError('an adjustment must not be zero', 'invalid_amount');
        return [{ type: 'CreditsAdjusted', data: { user_id: command.userId, amount_micro: command.amountMicro, reason, by: command.by } }];
    }
  },

  evolve(state) {
    return { movements: state.movements + 1 };
  },
};
