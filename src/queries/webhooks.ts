/** Reads of the webhooks read model and its deliveries (migration 0190), always within one tenant. */
import type { Kysely } from 'kysely';
import type { ReadModelTables, WebhookDeliveriesTable, WebhooksTable } from '../adapters/sql/schema.js';

type Db = Kysely<ReadModelTables>;

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export function listWebhooks(db: Db, tenantId: string): Promise<WebhooksTable[]> {
  return db.selectFrom('webhooks').selectAll().where('tenant_id', '=', tenantId).orderBy('created_at').orderBy('id').execute();
}

export function findWebhook(db: Db, tenantId: string, id: string): Promise<WebhooksTable | undefined> {
  return db.selectFrom('webhooks').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
}

export function findDelivery(db: Db, tenantId: string, webhookId: string, id: string): Promise<WebhookDeliveriesTable | undefined> {
  return db.selectFrom('webhook_deliveries').selectAll().where('tenant_id', '=', tenantId).where('webhook_id', '=', webhookId).where('id', '=', id).executeTakeFirst();
}

export interface DeliveryPage {
  rows: WebhookDeliveriesTable[];
  hasMore: boolean;
}

/**
 * A webhook's deliveries, newest event first; `after`: a delivery id of the previous page (its
 * last), the page continues past it. An unknown cursor gives an empty page.
 */
export async function listDeliveries(db: Db, tenantId: string, webhookId: string, query: { status?: DeliveryStatus; after?: string; limit: number }): Promise<DeliveryPage> {
  let q = db.selectFrom('webhook_deliveries').selectAll().where('tenant_id', '=', tenantId).where('webhook_id', '=', webhookId);
  if (query.status) q = q.where('status', '=', query.status);
  if (query.after !== undefined) {
    const cursor = await findDelivery(db, tenantId, webhookId, query.after);
    if (!cursor) return { rows: [], hasMore: false };
    const position = Number(cursor.event_position);
    q = q.where((eb) => eb.or([eb('event_position', '<', position), eb.and([eb('event_position', '=', position), eb('id', '<', cursor.id)])]));
  }
  const rows = await q.orderBy('event_position', 'desc').orderBy('id', 'desc').limit(query.limit + 1).execute();
  return { rows: rows.slice(0, query.limit), hasMore: rows.length > query.limit };
}
