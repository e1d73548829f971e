/**
 * The usage event the relay publishes for every request, success or failure: the raw material
 * of billing, logs and alerting (their projections consume it).
 */
import { z } from 'zod';

export const UsageData = z.object({
  request_id: z.string(),
  tenant_id: z.string(),
  user_id: z.string().nullable(),
  key_id: z.string().nullable(),
  channel_id: z.string().nullable(),
  provider: z.string().nullable(),
  model_requested: z.string(),
  model_served: z.string().nullable(),
  /** The model the request was routed (and is priced) by: after the API key's and the request's aliases, before a channel's own mapping. Absent in older events. */
  model_routed: z.string().nullable().optional(),
  prompt_tokens: z.number().int().min(0),
  completion_tokens: z.number().int().min(0),
  total_tokens: z.number().int().min(0),
  /** upstream: the provider reported it; tokenizer: counted here; none: nothing was generated. */
  usage_source: z.enum(['upstream', 'tokenizer', 'none']),
  stream: z.boolean(),
  /** HTTP status the client got. */
  status: z.number().int(),
  error_code: z.string().nullable(),
  latency_ms: z.number(),
  /** Time to the first byte of generated content sent to the client (streams). */
  ttft_ms: z.number().nullable(),
  /** Time from handing the last attempt to the upstream pool to its response headers (pool wait included); null: no upstream answered. Absent in older events. */
  upstream_ms: z.number().nullable().optional(),
  attempts: z.number().int().min(0),
  started_at: z.string(),
});
export type UsageData = z.infer<typeof UsageData>;

export const UsageRecorded = z.object({ type: z.literal('UsageRecorded'), data: UsageData });
export const USAGE_RECORDED = 'UsageRecorded';
