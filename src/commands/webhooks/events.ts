/**
 * Events of the webhook aggregate (`webhook-<id>`, in its tenant). The secret that signs
 * deliveries appears only sealed (SecretBox(SECRET, 'webhook-secrets')): never in the clear in the
 * log, the read model or a log entry.
 */
import { z } from 'zod';

/** A webhook's payload formats (src/webhooks/payloads.ts renders them). */
export const WEBHOOK_PAYLOAD_VERSIONS = ['v1', 'v2'] as const;

/** The payload types a webhook can subscribe to (payloads: src/webhooks/payloads.ts). `*`: all of them. */
export const WEBHOOK_EVENT_TYPES = [
  'alert.fired',
  'alert.resolved',
  'channel.health_changed',
  'key.created',
  'key.revoked',
  'user.created',
  'quota.exhausted',
  'file.processed',
  'file.failed',
  'maintenance.changed',
  'settings.changed',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];
export const ALL_WEBHOOK_EVENTS = '*';
/** The payload type of a test delivery an admin asks for: sent to that webhook only, not subscribable. */
export const WEBHOOK_TEST_TYPE = 'webhook.test';
export const WebhookSubscription = z.enum([...WEBHOOK_EVENT_TYPES, ALL_WEBHOOK_EVENTS]);
export type WebhookSubscription = z.infer<typeof WebhookSubscription>;

export const WebhookCreated = z.object({
  type: z.literal('WebhookCreated'),
  data: z.object({
    webhook_id: z.string(),
    url: z.string(),
    events: z.array(z.string()),
    secret_sealed: z.string(),
    enabled: z.boolean(),
    /** The payload format (docs/api-versions.md); absent in events from before 2.0: v2. */
    api_version: z.enum(WEBHOOK_PAYLOAD_VERSIONS).optional(),
    by: z.string().nullable(),
  }),
});

/** Only what changed. */
export const WebhookUpdated = z.object({
  type: z.literal('WebhookUpdated'),
  data: z.object({
    url: z.string().optional(),
    events: z.array(z.string()).optional(),
    secret_sealed: z.string().optional(),
    enabled: z.boolean().optional(),
    api_version: z.enum(WEBHOOK_PAYLOAD_VERSIONS).optional(),
    by: z.string().nullable(),
  }),
});

export const WebhookDeleted = z.object({ type: z.literal('WebhookDeleted'), data: z.object({ by: z.string().nullable() }) });

/** An admin asked for one more attempt of a delivery (of this webhook), now. */
export const WebhookRedeliveryRequested = z.object({
  type: z.literal('WebhookRedeliveryRequested'),
  data: z.object({ delivery_id: z.string(), by: z.string().nullable() }),
});

/** An admin asked for a `webhook.test` delivery to this webhook (`test_id`: the notice's key). */
export const WebhookTestRequested = z.object({
  type: z.literal('WebhookTestRequested'),
  data: z.object({ test_id: z.string(), by: z.string().nullable() }),
});

export const WebhookEvent = z.discriminatedUnion('type', [WebhookCreated, WebhookUpdated, WebhookDeleted, WebhookRedeliveryRequested, WebhookTestRequested]);
export type WebhookEvent = z.infer<typeof WebhookEvent>;
export const WEBHOOK_AGGREGATE_EVENT_TYPES = ['WebhookCreated', 'WebhookUpdated', 'WebhookDeleted', 'WebhookRedeliveryRequested', 'WebhookTestRequested'] as const satisfies ReadonlyArray<WebhookEvent['type']>;
