/**
 * Webhooks read model and delivery outbox (migration 0190, decision 0210).
 *
 * - The webhook aggregate's events keep `webhooks` (one row per live webhook, secret sealed).
 * - Every event that gives a notice (src/webhooks/payloads.ts) and matches webhooks — subscribed
 *   to its type, or named by it (an alert's `notify`), enabled, of its tenant (installation-wide
 *   notices: of every tenant) — becomes one `webhook_deliveries` row per webhook, in the same
 *   transaction as the checkpoint: the dispatcher works rows, never memory, so a delivery survives
 *   any restart and is made once however many instances project.
 * - Usage events are read only when the relay refused them for quota (`accepts`: the others cost
 *   nothing, not even a checkpoint write); a key's or user's refusals give one notice per hour.
 *
 * Rebuilds must not send history again: deliveries are kept by `reset`, and `webhook_outbox`
 * remembers the highest position deliveries were made for; events at or below it (a replay)
 * change webhooks but make no delivery and queue no redelivery.
 */
import { WEBHOOK_AGGREGATE_EVENT_TYPES, WebhookEvent } from '../commands/webhooks/events.js';
import type { StoredEvent } from '../ports/event-store.js';
import { deliveryIdOf, isQuotaRefusal, NOTICE_SOURCE_TYPES, noticeOf, payloadOf, payloadVersionOf, subscribes, testNoticeOf, type FileFacts, type WebhookNotice } from '../webhooks/payloads.js';
import type { Projection, ReadModelDb } from './runtime/projection.js';

const OUTBOX = 'deliveries';
const AGGREGATE_TYPES: ReadonlySet<string> = new Set(WEBHOOK_AGGREGATE_EVENT_TYPES);

export const webhookIdOf = (stream: string) => stream.slice('webhook-'.length);

/** The events that matter: every usage event but a quota refusal is left out before any I/O. */
export const webhookEventMatters = (event: StoredEvent): boolean => event.type !== 'UsageRecorded' || isQuotaRefusal(event);

async function outboxPosition(trx: ReadModelDb): Promise<number> {
  const row = await trx.selectFrom('webhook_outbox').select('position').where('name', '=', OUTBOX).executeTakeFirst();
  return row ? Number(row.position) : 0;
}

async function storeOutboxPosition(trx: ReadModelDb, position: number, had: boolean): Promise<void> {
  if (had) await trx.updateTable('webhook_outbox').set({ position }).where('name', '=', OUTBOX).execute();
  else await trx.insertInto('webhook_outbox').values({ name: OUTBOX, position }).execute();
}

async function applyWebhookEvent(trx: ReadModelDb, stored: StoredEvent, fresh: boolean): Promise<void> {
  const event = WebhookEvent.parse({ type: stored.type, data: stored.data });
  const id = webhookIdOf(stored.stream);
  switch (event.type) {
    case 'WebhookCreated': {
      const d = event.data;
      await trx
        .insertInto('webhooks')
        .values({ id, tenant_id: stored.tenant_id, url: d.url, events: JSON.stringify(d.events), secret_sealed: d.secret_sealed, enabled: d.enabled ? 1 : 0, api_version: d.api_version ?? 'v2', created_by: d.by, created_at: stored.occurred_at, updated_at: stored.occurred_at })
        .execute();
      return;
    }
    case 'WebhookUpdated': {
      const d = event.data;
      await trx
        .updateTable('webhooks')
        .set({
          ...(d.url !== undefined && { url: d.url }),
          ...(d.events !== undefined && { events: JSON.stringify(d.events) }),
          ...(d.secret_sealed !== undefined && { secret_sealed: d.secret_sealed }),
          ...(d.enabled !== undefined && { enabled: d.enabled ? 1 : 0 }),
          ...(d.api_version !== undefined && { api_version: d.api_version }),
          updated_at: stored.occurred_at,
        })
        .where('id', '=', id)
        .execute();
      return;
    }
    case 'WebhookDeleted':
      await trx.deleteFrom('webhook_deliveries').where('webhook_id', '=', id).execute();
      await trx.deleteFrom('webhooks').where('id', '=', id).execute();
      return;
    case 'WebhookRedeliveryRequested':
      // One more attempt now, with a retry window of its own (its first attempt starts it again).
      if (!fresh) return;
      await trx
        .updateTable('webhook_deliveries')
        .set({ status: 'pending', next_attempt_at: stored.occurred_at, first_attempt_at: null })
        .where('id', '=', event.data.delivery_id)
        .where('webhook_id', '=', id)
        .execute();
      return;
    case 'WebhookTestRequested': {
      if (!fresh) return;
      const webhook = await trx.selectFrom('webhooks').select(['id', 'tenant_id', 'api_version']).where('id', '=', id).executeTakeFirst();
      if (webhook) await insertDeliveries(trx, stored, testNoticeOf(stored, id, event.data.test_id, event.data.by), [webhook]);
      return;
    }
  }
}

async function fileFactsOf(trx: ReadModelDb, stored: StoredEvent): Promise<FileFacts | null> {
  if (stored.type !== 'FileProcessed' && stored.type !== 'FileProcessingFailed') return null;
  // The files projection has had the upload long before processing ends; a row it lacks gives nulls.
  const row = await trx.selectFrom('files').select(['user_id', 'mime_type', 'bytes', 'purpose']).where('id', '=', stored.stream.slice('file-'.length)).executeTakeFirst();
  return row ? { user_id: row.user_id, mime_type: row.mime_type, bytes: Number(row.bytes), purpose: row.purpose } : null;
}

async function deliver(trx: ReadModelDb, stored: StoredEvent, notice: WebhookNotice): Promise<void> {
  let query = trx.selectFrom('webhooks').select(['id', 'tenant_id', 'events', 'api_version']).where('enabled', '=', 1);
  if (notice.tenantId !== null) query = query.where('tenant_id', '=', notice.tenantId);
  const targets = (await query.execute()).filter((w) => notice.notify.includes(w.id) || subscribes(JSON.parse(w.events) as string[], notice.type));
  await insertDeliveries(trx, stored, notice, targets);
}

/** One pending delivery of `notice` per target webhook, unless it is there already. */
async function insertDeliveries(trx: ReadModelDb, stored: StoredEvent, notice: WebhookNotice, targets: ReadonlyArray<{ id: string; tenant_id: string; api_version: string }>): Promise<void> {
  if (targets.length === 0) return;
  const rows = targets.map((w) => {
    const payload = payloadOf(notice, w.tenant_id, payloadVersionOf(w.api_version));
    return {
      id: deliveryIdOf(w.id, notice.key),
      webhook_id: w.id,
      tenant_id: w.tenant_id,
      event_key: notice.key,
      event_type: notice.type,
      event_position: stored.position,
      payload_id: payload.id,
      payload: JSON.stringify(payload),
      status: 'pending',
      attempts: 0,
      next_attempt_at: stored.occurred_at,
      first_attempt_at: null,
      last_attempt_at: null,
      last_status_code: null,
      last_error: null,
      delivered_at: null,
      created_at: stored.occurred_at,
    };
  });
  // Already there: the same quota notice within its hour (the rows are claimed by the checkpoint's
  // transaction, so no other instance inserts between this read and the insert).
  const existing = new Set((await trx.selectFrom('webhook_deliveries').select('id').where('id', 'in', rows.map((r) => r.id)).execute()).map((r) => r.id));
  const fresh = rows.filter((r) => !existing.has(r.id));
  if (fresh.length > 0) await trx.insertInto('webhook_deliveries').values(fresh).execute();
}

async function applyEvents(trx: ReadModelDb, events: readonly StoredEvent[]): Promise<void> {
  let mark: number | null = null;
  let hadMark = false;
  let highest = 0;
  // Notices already handled in this call: a burst of refusals of one key is one notice, read once.
  const handled = new Set<string>();
  for (const stored of events) {
    if (!webhookEventMatters(stored)) continue;
    if (mark === null) {
      mark = await outboxPosition(trx);
      hadMark = mark > 0;
    }
    const fresh = stored.position > mark;
    if (fresh) highest = Math.max(highest, stored.position);
    if (AGGREGATE_TYPES.has(stored.type)) {
      await applyWebhookEvent(trx, stored, fresh);
      continue;
    }
    if (!fresh) continue; // a replay: its deliveries were made (or not) the first time
    if (stored.type === 'UsageRecorded') {
      const notice = noticeOf(stored);
      if (notice && !handled.has(notice.key)) await deliver(trx, stored, notice);
      if (notice) handled.add(notice.key);
      continue;
    }
    const notice = noticeOf(stored, await fileFactsOf(trx, stored));
    if (notice) await deliver(trx, stored, notice);
  }
  if (mark !== null && highest > mark) await storeOutboxPosition(trx, highest, hadMark);
}

export const webhooksProjection: Projection = {
  name: 'webhooks',
  version: 1,
  eventTypes: [...WEBHOOK_AGGREGATE_EVENT_TYPES, ...NOTICE_SOURCE_TYPES],
  accepts: webhookEventMatters,
  apply: (trx, event) => applyEvents(trx, [event]),
  applyCommit: applyEvents,
  async reset(trx) {
    // Deliveries and the outbox mark stay: they record what was sent (decision 0210).
    await trx.deleteFrom('webhooks').execute();
  },
};
