/**
 * Billing on the relay's hot path, from the billing live view (memory only, no database round
 * trip): whether the tenant's relay API is on for API keys (403 relay_disabled), whether the
 * caller may start a request (429 insufficient_quota when there are no credits and no coverage),
 * and what requests cost at the tenant's prices (the API key quota's cost function).
 */
import type { UsageData } from '../../commands/usage/events.js';
import { AppError, ForbiddenError } from '../../errors.js';
import { estimateMicro, chargeMicro, priceIn, type Price } from '../../billing/pricing.js';
import { admission, billedModel, DEFAULT_SETTINGS, isBillable, type Settings, type TrafficKind } from '../../billing/rating.js';
import type { BillingState } from '../../views/billing.js';
import type { ChatCompletionRequest } from '../schema.js';
import type { QuotaCost } from './quota-cost.js';
import { ownValue } from '../../own.js';

export interface BillingCaller {
  tenantId: string;
  userId: string | null;
  keyId: string | null;
}

/** The model a request will be routed and priced by: the key's alias resolved, then the request's own model_mapping. */
export function routedModel(model: string, body: { readonly model_mapping?: ChatCompletionRequest['model_mapping'] }): string {
  return ownValue(body.model_mapping, model)?.actual_model ?? model;
}

export const relayDisabledError = () =>
  new ForbiddenError('the relay API is disabled for this tenant by its administrator: requests with API keys are refused (signed-in chat still works)', 'relay_disabled');

export class BillingGate implements QuotaCost {
  constructor(private readonly state: () => BillingState) {}

  settings(tenantId: string): Settings {
    return this.state().settings.get(tenantId) ?? DEFAULT_SETTINGS;
  }

  priceOf(tenantId: string, model: string): Price {
    return priceIn(this.state().prices.get(tenantId), model);
  }

  balanceOf(userId: string): number {
    return this.state().balances.get(userId) ?? 0;
  }

  /** 403 relay_disabled for API-key traffic when the tenant switched the relay API off. */
  assertRelayEnabled(tenantId: string): void {
    if (!this.settings(tenantId).relay_api_enabled) throw relayDisabledError();
  }

  /** 429 insufficient_quota unless the request is free, covered by the subscription, or the user has credits. */
  admit(caller: BillingCaller, model: string, now = Date.now()): void {
    if (caller.userId === null) return;
    const state = this.state();
    const kind: TrafficKind = caller.keyId === null ? 'ui' : 'key';
    const found = state.subscriptions.get(caller.userId);
    const sub = found && found.tenant_id === caller.tenantId ? found : undefined;
    const decision = admission({ kind, model, now }, this.priceOf(caller.tenantId, model), this.settings(caller.tenantId).subscription_covers_relay, sub, state.balances.get(caller.userId) ?? 0);
    if (!decision.ok) throw new AppError(429, 'insufficient_quota', 'insufficient_quota', decision.message);
  }

  estimate(tenantId: string, model: string, promptTokens: number, completionTokens: number): number {
    return estimateMicro(this.priceOf(tenantId, model), promptTokens, completionTokens);
  }

  actual(usage: UsageData): number {
    if (!isBillable(usage)) return 0;
    return chargeMicro(this.priceOf(usage.tenant_id, billedModel(usage)), usage.prompt_tokens, usage.completion_tokens);
  }
}
