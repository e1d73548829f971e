/**
 * Webhooks: list (enable switch, test, deliveries), create (the generated secret shown once with a
 * copy button), edit, delete; a webhook's deliveries with their status and a redeliver button.
 */
import { useEffect, useState, type FormEvent } from 'react';
import { Link } from 'wouter';
import { api } from '../../api/client';
import type { ListOf } from '../../api/types';
import { common } from '../../i18n/common';
import { useFormat, useT } from '../../i18n/context';
import { CopyButton, ErrorNote, Field, ListSection, Modal, TableState, Toggle } from '../../ui/kit';
import { useAction, useApi } from '../../ui/use-api';
import { confirmed } from '../admin-billing/tabs';
import { eventsBody, WEBHOOK_EVENTS } from './logic';
import { messages } from './messages';

export interface Webhook {
  id: string;
  url: string;
  events: string[];
  enabled: boolean;
  /** The payload format (docs/api-versions.md). */
  api_version: 'v1' | 'v2';
  created_at: string;
}
interface Delivery {
  id: string;
  event_type: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  response_code: number | null;
  last_error: string | null;
  created_at: string;
  payload: Record<string, unknown>;
}

function WebhookEditor({ webhook, onDone }: { webhook: Webhook | null; onDone: (created: (Webhook & { secret?: string }) | null, changed: boolean) => void }) {
  const t = useT(messages);
  const c = useT(common);
  const [url, setUrl] = useState(webhook?.url ?? '');
  const [events, setEvents] = useState<string[]>(webhook?.events ?? ['*']);
  const [secret, setSecret] = useState('');
  const [enabled, setEnabled] = useState(webhook?.enabled ?? true);
  const [apiVersion, setApiVersion] = useState<Webhook['api_version']>(webhook?.api_version ?? 'v2');
  const [noEvents, setNoEvents] = useState(false);
  const save = useAction((body: Record<string, unknown>) =>
    webhook ? api<Webhook>(`/v1/admin/webhooks/${webhook.id}`, { method: 'PATCH', body }) : api<Webhook & { secret?: string }>('/v1/admin/webhooks', { method: 'POST', body }),
  );
  const all = events.includes('*');
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (events.length === 0) return setNoEvents(true);
    setNoEvents(false);
    const body = { url: url.trim(), events: eventsBody(events), enabled, api_version: apiVersion, ...(secret && { secret }) };
    const answer = await save.run(body);
    if (answer) onDone(webhook ? null : answer, true);
  };
  return (
    <form onSubmit={(e) => void submit(e)}>
      <Field label={t('url')}>{(id) => <input id={id} type="url" required placeholder="https://" value={url} onChange={(e) => setUrl(e.target.value)} />}</Field>
      <fieldset className="checks">
        <legend>{t('events')}</legend>
        <label>
          <input type="checkbox" checked={all} onChange={(e) => setEvents(e.target.checked ? ['*'] : [])} />
          {t('allEvents')}
        </label>
        {WEBHOOK_EVENTS.map((ev) => (
          <label key={ev}>
            <input type="checkbox" disabled={all} checked={all || events.includes(ev)} onChange={(e) => setEvents(e.target.checked ? [...events, ev] : events.filter((x) => x !== ev))} />
            <code>{ev}</code>
          </label>
        ))}
      </fieldset>
      <Field label={webhook ? t('newSecret') : t('secret')} hint={t('secretHint')}>
        {(id) => <input id={id} type="password" autoComplete="new-password" minLength={16} maxLength={256} value={secret} onChange={(e) => setSecret(e.target.value)} />}
      </Field>
      <Field label={t('payloadFormat')} hint={t('payloadFormatHint')}>
        {(id) => (
          <select id={id} value={apiVersion} onChange={(e) => setApiVersion(e.target.value as Webhook['api_version'])}>
            <option value="v2">{t('payloadV2')}</option>
            <option value="v1">{t('payloadV1')}</option>
          </select>
        )}
      </Field>
      <Toggle label={t('enabled')} checked={enabled} onChange={setEnabled} />
      {noEvents ? (
        <p className="error-note" role="alert">
          {t('noEvents')}
        </p>
      ) : null}
      <ErrorNote error={save.error} />
      <div className="form-actions">
        <button type="submit" disabled={save.busy}>
          {webhook ? c('save') : c('create')}
        </button>
        <button type="button" className="secondary" onClick={() => onDone(null, false)}>
          {c('cancel')}
        </button>
      </div>
    </form>
  );
}

export function WebhooksPage() {
  const t = useT(messages);
  const c = useT(common);
  const list = useApi<ListOf<Webhook>>('/v1/admin/webhooks');
  const [editing, setEditing] = useState<Webhook | 'new' | null>(null);
  const [created, setCreated] = useState<(Webhook & { secret?: string }) | null>(null);
  const [tested, setTested] = useState<string | null>(null);
  const act = useAction((w: Webhook, what: 'test' | 'delete' | { enabled: boolean }) =>
    what === 'test'
      ? api(`/v1/admin/webhooks/${w.id}/test`, { method: 'POST' })
      : what === 'delete'
        ? api(`/v1/admin/webhooks/${w.id}`, { method: 'DELETE' })
        : api(`/v1/admin/webhooks/${w.id}`, { method: 'PATCH', body: what }),
  );
  const run = async (w: Webhook, what: 'test' | 'delete' | { enabled: boolean }) => {
    if (what === 'delete' && !confirmed(t('confirmDeleteWebhook', { url: w.url }))) return;
    setTested(null);
    if (typeof what === 'object' && list.data) list.set({ ...list.data, data: list.data.data.map((x) => (x.id === w.id ? { ...x, ...what } : x)) });
    const answer = await act.run(w, what);
    if (what === 'test') {
      if (answer !== undefined) setTested(w.id);
    } else await list.reload();
  };
  return (
    <ListSection
      id="webhooks-h"
      title={t('webhooks')}
      actions={
        <button type="button" onClick={() => setEditing('new')}>
          {t('newWebhook')}
        </button>
      }
      error={list.error ?? act.error}
      rows={list.data?.data}
      table={(rows) => (
        <table aria-labelledby="webhooks-h">
          <thead>
            <tr>
              <th>{t('url')}</th>
              <th>{t('events')}</th>
              <th>{t('enabled')}</th>
              <th>{c('actions')}</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((w) => (
              <tr key={w.id}>
                <td className="log-message">
                  <code>{w.url}</code>
                  {tested === w.id ? (
                    <div className="note-ok" role="status">
                      {t('testQueued')}
                    </div>
                  ) : null}
                </td>
                <td>{w.events.includes('*') ? t('allEvents') : w.events.join(', ')}</td>
                <td>
                  <input type="checkbox" role="switch" aria-label={t('enableWebhook', { url: w.url })} checked={w.enabled} disabled={act.busy} onChange={(e) => void run(w, { enabled: e.target.checked })} />
                </td>
                <td className="row">
                  <button type="button" className="secondary" aria-label={t('testOf', { url: w.url })} disabled={act.busy} onClick={() => void run(w, 'test')}>
                    {t('test')}
                  </button>
                  <Link href={`/webhooks/${w.id}`} aria-label={t('deliveriesOf', { url: w.url })}>
                    {t('deliveries')}
                  </Link>
                  <button type="button" className="secondary" aria-label={`${c('edit')} ${w.url}`} onClick={() => setEditing(w)}>
                    {c('edit')}
                  </button>
                  <button type="button" className="danger" aria-label={`${c('delete')} ${w.url}`} onClick={() => void run(w, 'delete')}>
                    {c('delete')}
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    >
      <Modal title={editing === 'new' ? t('newWebhook') : t('editWebhook')} open={editing !== null} onClose={() => setEditing(null)} wide>
        {editing !== null ? (
          <WebhookEditor
            webhook={editing === 'new' ? null : editing}
            onDone={(made, changed) => {
              setEditing(null);
              if (made?.secret) setCreated(made);
              if (changed) void list.reload();
            }}
          />
        ) : null}
      </Modal>
      <Modal title={t('secret')} open={created !== null} onClose={() => setCreated(null)}>
        {created ? (
          <>
            <p>{t('secretOnce')}</p>
            <code className="secret" aria-label={t('secret')}>
              {created.secret}
            </code>
            <div className="form-actions">
              <CopyButton text={created.secret ?? ''} label={t('copySecret')} />
              <button type="button" onClick={() => setCreated(null)}>
                {t('done')}
              </button>
            </div>
          </>
        ) : null}
      </Modal>
    </ListSection>
  );
}

const STATUS_BADGE: Record<Delivery['status'], string> = { pending: 'warn', delivered: 'ok', failed: 'bad' };

export function DeliveriesPage({ id }: { id: string }) {
  const t = useT(messages);
  const c = useT(common);
  const { dateTime } = useFormat();
  const webhook = useApi<Webhook>(`/v1/admin/webhooks/${id}`);
  const deliveries = useApi<ListOf<Delivery>>(`/v1/admin/webhooks/${id}/deliveries`, { limit: 50 });
  const [payload, setPayload] = useState<Delivery | null>(null);
  const act = useAction((what: 'test' | Delivery) => (what === 'test' ? api(`/v1/admin/webhooks/${id}/test`, { method: 'POST' }) : api(`/v1/admin/webhooks/${id}/deliveries/${what.id}/redeliver`, { method: 'POST' })));
  const run = async (what: 'test' | Delivery) => {
    if ((await act.run(what)) !== undefined) await deliveries.reload();
  };
  // While a delivery waits for its attempt, look again shortly (the deliverer polls every second).
  const pending = deliveries.data?.data.some((d) => d.status === 'pending') ?? false;
  const { reload } = deliveries;
  useEffect(() => {
    if (!pending) return;
    const timer = setTimeout(() => void reload(), 1500);
    return () => clearTimeout(timer);
  }, [pending, deliveries.data, reload]);
  const url = webhook.data?.url ?? id;
  return (
    <section className="ops-section" aria-labelledby="deliveries-h">
      <p>
        <Link href="/webhooks">← {t('back')}</Link>
      </p>
      <div className="row">
        <h2 id="deliveries-h">{t('deliveriesOf', { url })}</h2>
        <span className="spacer" />
        <button type="button" className="secondary" disabled={act.busy} onClick={() => void run('test')}>
          {t('test')}
        </button>
        <button type="button" className="secondary" onClick={() => void deliveries.reload()}>
          {t('refresh')}
        </button>
      </div>
      <ErrorNote error={webhook.error ?? deliveries.error ?? act.error} />
      <TableState
        rows={deliveries.data?.data}
        table={(rows) => (
          <table aria-labelledby="deliveries-h">
            <thead>
              <tr>
                <th>{t('created')}</th>
                <th>{t('eventType')}</th>
                <th>{t('status')}</th>
                <th className="num">{t('attempts')}</th>
                <th>{t('responseCode')}</th>
                <th>{t('lastError')}</th>
                <th>{c('actions')}</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((d) => (
                <tr key={d.id}>
                  <td className="nowrap">{dateTime(d.created_at)}</td>
                  <td>
                    <code>{d.event_type}</code>
                  </td>
                  <td>
                    <span className={`badge ${STATUS_BADGE[d.status]}`}>{t(d.status)}</span>
                  </td>
                  <td className="num">{d.attempts}</td>
                  <td>{d.response_code ?? '—'}</td>
                  <td className="log-message">{d.last_error ?? ''}</td>
                  <td className="row">
                    <button type="button" className="secondary" onClick={() => setPayload(d)}>
                      {t('payload')}
                    </button>
                    <button type="button" className="secondary" aria-label={t('redeliverOf', { id: d.id })} disabled={act.busy} onClick={() => void run(d)}>
                      {t('redeliver')}
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      />
      <Modal title={t('payload')} open={payload !== null} onClose={() => setPayload(null)} wide>
        {payload ? <pre>{JSON.stringify(payload.payload, null, 2)}</pre> : null}
      </Modal>
    </section>
  );
}
