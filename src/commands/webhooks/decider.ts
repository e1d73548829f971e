/**
 * Webhooks: where a tenant's admins want to be told what happens (signed v2 payloads, issue 19).
 * The decider checks what it can without I/O (the URL's form, the event names); whether the
 * target's address may be reached is the route's check (DNS) and the dispatcher's (at connect).
 */
import { BadRequestError, NotFoundError } from '../../errors.js';
import type { Decider } from '../decider.js';
import { ALL_WEBHOOK_EVENTS, WebhookEvent, WebhookSubscription } from './events.js';
import type { WebhookPayloadVersion } from '../../webhooks/payloads.js';

export const WEBHOOK_URL_MAX = 2048;

export interface WebhookState {
  exists: boolean;
  deleted: boolean;
  url: string;
  events: string[];
  enabled: boolean;
  apiVersion: WebhookPayloadVersion;
}

export interface WebhookFields {
  url: string;
  events: readonly string[];
  /** Sealed by the caller (SecretBox 'webhook-secrets'): the decider never sees the secret. */
  secretSealed: string;
  enabled: boolean;
  /** The payload format (docs/api-versions.md); omitted at create: v2. */
  apiVersion?: WebhookPayloadVersion;
}

export type WebhookCommand =
  | ({ type: 'CreateWebhook'; webhookId: string; by: string | null } & WebhookFields)
  | ({ type: 'UpdateWebhook'; by: string | null } & Partial<WebhookFields>)
  | { type: 'DeleteWebhook'; by: string | null }
  | { type: 'RequestRedelivery'; deliveryId: string; by: string | null }
  | { type: 'RequestTest'; testId: string; by: string | null };

export const webhookNotFound = () => new NotFoundError('webhook not found', 'webhook_not_found');

/** An absolute http(s) URL without credentials (the log keeps URLs in the clear: the secret signs). */
export function checkWebhookUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new BadRequestError('url is not an absolute URL', 'invalid_webhook_url', 'url');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new BadRequestError('url must be an http or https URL', 'invalid_webhook_url', 'url');
  if (parsed.username || parsed.password) throw new BadRequestError('url must not carry credentials: receivers check the signature instead', 'invalid_webhook_url', 'url');
  if (url.length > WEBHOOK_URL_MAX) throw new BadRequestError(`url is at most ${WEBHOOK_URL_MAX} characters`, 'invalid_webhook_url', 'url');
  return parsed.href;
}

/** Known names only, each once, in a stable order; `*` alone stands for all of them. */
export function checkWebhookEvents(events: readonly string[]): string[] {
  if (events.length === 0) throw new BadRequestError('events must name at least one event type (or "*")', 'invalid_webhook_events', 'events');
  for (const name of events) {
    if (!WebhookSubscription.safeParse(name).success) throw new BadRequestError(`unknown webhook event type: ${name}`, 'invalid_webhook_events', 'events');
  }
  if (events.includes(ALL_WEBHOOK_EVENTS)) return [ALL_WEBHOOK_EVENTS];
  return [...new Set(events)].sort();
}

function live(state: WebhookState): void {
  if (!state.exists || state.deleted) throw webhookNotFound();
}

export const webhooks: Decider<WebhookCommand, WebhookState, WebhookEvent> = {
  category: 'webhook',
  initialState: { exists: false, deleted: false, url: '', events: [], enabled: false, apiVersion: 'v2' },
  events: WebhookEvent,

  decide(command, state) {
    switch (command.type) {
      case 'CreateWebhook':
        if (state.exists) throw new BadRequestError('webhook already exists', 'webhook_exists');
        return [
          {
            type: 'WebhookCreated',
            data: { webhook_id: command.webhookId, url: checkWebhookUrl(command.url), events: checkWebhookEvents(command.events), secret_sealed: command.secretSealed, enabled: command.enabled, api_version: command.apiVersion ?? 'v2', by: command.by },
          },
        ];
      case 'UpdateWebhook': {
        live(state);
        const data: { url?: string; events?: string[]; secret_sealed?: string; enabled?: boolean; api_version?: WebhookPayloadVersion; by: string | null } = { by: command.by };
        if (command.url !== undefined) {
          const url = checkWebhookUrl(command.url);
          if (url !== state.url) data.url = url;
        }
        if (command.events !== undefined) {
          const events = checkWebhookEvents(command.events);
          if (events.join(',') !== state.events.join(',')) data.events = events;
        }
        if (command.secretSealed !== undefined) data.secret_sealed = command.secretSealed;
        if (command.enabled !== undefined && command.enabled !== state.enabled) data.enabled = command.enabled;
        if (command.apiVersion !== undefined && command.apiVersion !== state.apiVersion) data.api_version = command.apiVersion;
        return Object.keys(data).length === 1 ? [] : [{ type: 'WebhookUpdated', data }];
      }
      case 'DeleteWebhook':
        live(state);
        return [{ type: 'WebhookDeleted', data: { by: command.by } }];
      case 'RequestRedelivery':
        live(state);
        return [{ type: 'WebhookRedeliveryRequested', data: { delivery_id: command.deliveryId, by: command.by } }];
      case 'RequestTest':
        live(state);
        return [{ type: 'WebhookTestRequested', data: { test_id: command.testId, by: command.by } }];
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'WebhookCreated':
        return { exists: true, deleted: false, url: event.data.url, events: event.data.events, enabled: event.data.enabled, apiVersion: event.data.api_version ?? 'v2' };
      case 'WebhookUpdated':
        return { ...state, url: event.data.url ?? state.url, events: event.data.events ?? state.events, enabled: event.data.enabled ?? state.enabled, apiVersion: event.data.api_version ?? state.apiVersion };
      case 'WebhookDeleted':
        return { ...state, deleted: true };
      case 'WebhookRedeliveryRequested':
      case 'WebhookTestRequested':
        return state;
    }
  },
};
