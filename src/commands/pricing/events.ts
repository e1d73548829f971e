/**
 * Events of a tenant's price table (`pricing-<tenant>`). Prices are integer micro-credits: per 1M
 * prompt tokens, per 1M completion tokens, per request. A change applies from its place in the
 * log on: usage projected before it keeps the price it had.
 */
import { z } from 'zod';

const Micro = z.number().int().min(0);
export const PriceData = z.object({ input_per_1m_micro: Micro, output_per_1m_micro: Micro, per_request_micro: Micro });

export const ModelPriceSet = z.object({ type: z.literal('ModelPriceSet'), data: PriceData.extend({ model: z.string().min(1), by: z.string().nullable() }) });
export const ModelPriceRemoved = z.object({ type: z.literal('ModelPriceRemoved'), data: z.object({ model: z.string().min(1), by: z.string().nullable() }) });
/** The price of every model without one of its own. */
export const DefaultPriceSet = z.object({ type: z.literal('DefaultPriceSet'), data: PriceData.extend({ by: z.string().nullable() }) });

export const PricingEvent = z.discriminatedUnion('type', [ModelPriceSet, ModelPriceRemoved, DefaultPriceSet]);
export type PricingEvent = z.infer<typeof PricingEvent>;
export const PRICING_EVENT_TYPES = ['ModelPriceSet', 'ModelPriceRemoved', 'DefaultPriceSet'] as const;
