/** A tenant's price table: one stream per tenant (`pricing-<tenant_id>`). */
import type { Price } from '../../billing/pricing.js';
import { NotFoundError } from '../../errors.js';
import type { Decider } from '../decider.js';
import { PricingEvent } from './events.js';
import { ownValue } from '../../own.js';

export interface PricingState {
  models: Record<string, Price>;
  default: Price | null;
}

export type PricingCommand =
  | { type: 'SetModelPrice'; model: string; price: Price; by: string | null }
  | { type: 'RemoveModelPrice'; model: string; by: string | null }
  | { type: 'SetDefaultPrice'; price: Price; by: string | null }
  /** Several at once (one commit): the default and/or model prices; models not named keep theirs. */
  | { type: 'SetPrices'; default?: Price; models: Record<string, Price>; by: string | null };

const same = (a: Price | null | undefined, b: Price) =>
  !!a && a.input_per_1m_micro === b.input_per_1m_micro && a.output_per_1m_micro === b.output_per_1m_micro && a.per_request_micro === b.per_request_micro;

const priceOf = (p: Price): Price => ({ input_per_1m_micro: p.input_per_1m_micro, output_per_1m_micro: p.output_per_1m_micro, per_request_micro: p.per_request_micro });

export const pricing: Decider<PricingCommand, PricingState, PricingEvent> = {
  category: 'pricing',
  initialState: { models: {}, default: null },
  events: PricingEvent,

  decide(command, state) {
    switch (command.type) {
      case 'SetPrices': {
        const events: PricingEvent[] = [];
        if (command.default) events.push(...pricing.decide({ type: 'SetDefaultPrice', price: command.default, by: command.by }, state));
        for (const [model, price] of Object.entries(command.models)) events.push(...pricing.decide({ type: 'SetModelPrice', model, price, by: command.by }, state));
        return events;
      }
      case 'SetModelPrice':
        if (same(ownValue(state.models, command.model), command.price)) return [];
        return [{ type: 'ModelPriceSet', data: { model: command.model, ...priceOf(command.price), by: command.by } }];
      case 'RemoveModelPrice':
        if (!Object.hasOwn(state.models, command.model)) throw new NotFoundError(`no price set for model ${command.model}`, 'price_not_found');
        return [{ type: 'ModelPriceRemoved', data: { model: command.model, by: command.by } }];
      case 'SetDefaultPrice':
        if (same(state.default, command.price)) return [];
        return [{ type: 'DefaultPriceSet', data: { ...priceOf(command.price), by: command.by } }];
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'ModelPriceSet':
        return { ...state, models: { ...state.models, [event.data.model]: priceOf(event.data) } };
      case 'ModelPriceRemoved': {
        const models = { ...state.models };
        // eslint-disable-next-line switchyard/no-string-index-lookup -- delete removes own properties only
        delete models[event.data.model];
        return { ...state, models };
      }
      case 'DefaultPriceSet':
        return { ...state, default: priceOf(event.data) };
    }
  },
};
