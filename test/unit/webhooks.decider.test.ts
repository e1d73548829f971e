/** Given / when / then over the webhook decider: pure, no I/O. */
import { describe, expect, it } from 'vitest';
import { webhooks } from '../../src/commands/webhooks/decider.js';
import type { WebhookEvent } from '../../src/commands/webhooks/events.js';
import { BadRequestError, NotFoundError } from '../../src/errors.js';
import { DeciderSpec } from '../support/decider-spec.js';

const spec = DeciderSpec.for(webhooks);
const create = { type: 'CreateWebhook' as const, webhookId: 'wh_1', url: 'https://hooks.example.com/in', events: ['key.created'], secretSealed: 'v1.sealed', enabled: true, by: 'admin-1' };
const created: WebhookEvent = { type: 'WebhookCreated', data: { webhook_id: 'wh_1', url: 'https://hooks.example.com/in', events: ['key.created'], secret_sealed: 'v1.sealed', enabled: true, api_version: 'v2', by: 'admin-1' } };
const deleted: WebhookEvent = { type: 'WebhookDeleted', data: { by: null } };

describe('webhook decider', () => {
  it('creates a webhook with its events sorted and de-duplicated', () => {
    spec.given([]).when({ ...create, events: ['user.created', 'key.created', 'user.created'] }).then([{ ...created, data: { ...created.data, events: ['key.created', 'user.created'] } }] as WebhookEvent[]);
  });

  it('keeps "*" alone when it is among the events', () => {
    spec.given([]).when({ ...create, events: ['key.created', '*'] }).then([{ ...created, data: { ...created.data, events: ['*'] } }] as WebhookEvent[]);
  });

  it('refuses unknown event names, no events, and URLs that are not http(s) or carry credentials', () => {
    spec.given([]).when({ ...create, events: ['key.exploded'] }).thenThrows(BadRequestError, { code: 'invalid_webhook_events', param: 'events' });
    spec.given([]).when({ ...create, events: [] }).thenThrows({ code: 'invalid_webhook_events' });
    for (const url of ['ftp://example.com/', 'file:///etc/passwd', 'not a url', 'https://user:pass@example.com/', `https://example.com/${'x'.repeat(2100)}`]) {
      spec.given([]).when({ ...create, url }).thenThrows({ code: 'invalid_webhook_url', param: 'url' });
    }
  });

  it('refuses to create the same webhook twice', () => {
    spec.given([created]).when(create).thenThrows({ code: 'webhook_exists' });
  });

  it('updates only what changed, and nothing for a change to the same values', () => {
    spec.given([created]).when({ type: 'UpdateWebhook', url: 'https://hooks.example.com/in', events: ['key.created'], enabled: true, by: 'a' }).thenNothingHappened();
    spec
      .given([created])
      .when({ type: 'UpdateWebhook', events: ['key.revoked', 'key.created'], enabled: false, by: 'a' })
      .then([{ type: 'WebhookUpdated', data: { events: ['key.created', 'key.revoked'], enabled: false, by: 'a' } }]);
    spec.given([created]).when({ type: 'UpdateWebhook', secretSealed: 'v1.other', by: null }).then([{ type: 'WebhookUpdated', data: { secret_sealed: 'v1.other', by: null } }]);
  });

  it('refuses changes, deletion and redelivery of a missing or deleted webhook with 404', () => {
    for (const history of [[], [created, deleted]]) {
      spec.given(history).when({ type: 'UpdateWebhook', enabled: false, by: null }).thenThrows(NotFoundError, { code: 'webhook_not_found' });
      spec.given(history).when({ type: 'DeleteWebhook', by: null }).thenThrows({ code: 'webhook_not_found' });
      spec.given(history).when({ type: 'RequestRedelivery', deliveryId: 'whd_1', by: null }).thenThrows({ code: 'webhook_not_found' });
    }
  });

  it('records test requests', () => {
    spec.given([created]).when({ type: 'RequestTest', testId: 't1', by: 'a' }).then([{ type: 'WebhookTestRequested', data: { test_id: 't1', by: 'a' } }]);
    spec.given([created, deleted]).when({ type: 'RequestTest', testId: 't1', by: 'a' }).thenThrows({ code: 'webhook_not_found' });
  });

  it('records redelivery requests and deletion', () => {
    spec.given([created]).when({ type: 'RequestRedelivery', deliveryId: 'whd_1', by: 'a' }).then([{ type: 'WebhookRedeliveryRequested', data: { delivery_id: 'whd_1', by: 'a' } }]);
    spec.given([created]).when({ type: 'DeleteWebhook', by: 'a' }).then([{ type: 'WebhookDeleted', data: { by: 'a' } }]);
  });

  it('folds history into state', () => {
    const { state } = spec.given([created, { type: 'WebhookUpdated', data: { url: 'https://b.example/', enabled: false, by: null } }]);
    expect(state).toEqual({ exists: true, deleted: false, url: 'https://b.example/', events: ['key.created'], enabled: false, apiVersion: 'v2' });
    // A webhook made before 2.0 (no api_version in its event) has v2 payloads; a change to v1 is kept.
    const { state: older } = spec.given([{ type: 'WebhookCreated', data: { webhook_id: 'wh_0', url: 'https://a.example/', events: ['*'], secret_sealed: 's', enabled: true, by: null } }, { type: 'WebhookUpdated', data: { api_version: 'v1', by: null } }]);
    expect(older).toMatchObject({ apiVersion: 'v1' });
  });

  it('creates with the payload format asked (v2 when none) and changes it only when it differs', () => {
    spec.given([]).when({ ...create, apiVersion: 'v1' }).then([{ ...created, data: { ...created.data, api_version: 'v1' } }] as WebhookEvent[]);
    spec.given([created]).when({ type: 'UpdateWebhook', apiVersion: 'v2', by: 'a' }).thenNothingHappened();
    spec.given([created]).when({ type: 'UpdateWebhook', apiVersion: 'v1', by: 'a' }).then([{ type: 'WebhookUpdated', data: { api_version: 'v1', by: 'a' } }]);
  });
});
