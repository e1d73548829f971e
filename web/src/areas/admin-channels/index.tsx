/** Admin › Channels: the list with health and the last probe, add / edit, test, enable / disable, delete. */
import { useState } from 'react';
import { api, ApiError } from '../../api/client';
import type { ListOf } from '../../api/types';
import { common } from '../../i18n/common';
import { useFormat, useT } from '../../i18n/context';
import { ErrorNote, Modal, Page, TableState } from '../../ui/kit';
import { useApi } from '../../ui/use-api';
import { filterChannels, healthOf, type ChannelView } from './channel-form';
import { ChannelEditor } from './channel-editor';
import { messages } from './messages';
import './channels.css';

interface TestAnswer {
  ok: boolean;
  status: number | null;
  latency_ms: number;
  error: string | null;
  channel: ChannelView;
}

export default function ChannelsArea() {
  const t = useT(messages);
  const tc = useT(common);
  const fmt = useFormat();
  const list = useApi<ListOf<ChannelView>>('/v1/admin/channels');
  const [editing, setEditing] = useState<ChannelView | 'new' | null>(null);
  const [deleting, setDeleting] = useState<ChannelView | null>(null);
  const [testing, setTesting] = useState<string | null>(null);
  const [error, setError] = useState<Error | null>(null);
  const [query, setQuery] = useState('');
  const channels = list.data?.data ?? [];
  const shown = filterChannels(channels, query);

  const replace = (channel: ChannelView) => {
    const rest = channels.filter((c) => c.id !== channel.id);
    const known = channels.some((c) => c.id === channel.id);
    list.set({ object: 'list', data: known ? channels.map((c) => (c.id === channel.id ? channel : c)) : [...rest, channel] });
  };

  const act = async (work: () => Promise<void>) => {
    setError(null);
    try {
      await work();
    } catch (e) {
      setError(e as Error);
    }
  };

  const test = (channel: ChannelView) =>
    act(async () => {
      setTesting(channel.id);
      try {
        const answer = await api<TestAnswer>(`/v1/admin/channels/${channel.id}/test`, { method: 'POST' });
        replace(answer.channel);
      } finally {
        setTesting(null);
      }
    });

  const setEnabled = (channel: ChannelView, enabled: boolean) =>
    act(async () => replace(await api<ChannelView>(`/v1/admin/channels/${channel.id}`, { method: 'PATCH', body: { enabled } })));

  const remove = (channel: ChannelView) =>
    act(async () => {
      try {
        await api(`/v1/admin/channels/${channel.id}`, { method: 'DELETE' });
      } catch (e) {
        if (!(e instanceof ApiError && e.status === 404)) throw e;
      }
      setDeleting(null);
      list.set({ object: 'list', data: channels.filter((c) => c.id !== channel.id) });
    });

  const healthBadge = (channel: ChannelView) => {
    const state = healthOf(channel);
    const cls = state === 'healthy' ? 'badge ok' : state === 'disabled' ? 'badge' : state === 'cooling' ? 'badge warn' : 'badge bad';
    const label = { healthy: t('healthy'), cooling: t('cooling'), unhealthy: t('unhealthy'), disabled: t('disabledState'), broken: t('broken') }[state];
    return (
      <>
        <span className={cls}>{label}</span>
        {state === 'cooling' && channel.health.cooldown_until ? <div className="muted small">{t('cooldownUntil', { time: fmt.dateTime(channel.health.cooldown_until) })}</div> : null}
        {state === 'broken' && channel.status_reason ? <div className="muted small">{channel.status_reason}</div> : null}
        {state !== 'healthy' && state !== 'disabled' && state !== 'broken' && channel.health.reason ? <div className="muted small">{channel.health.reason}</div> : null}
      </>
    );
  };

  const lastTest = (channel: ChannelView) => {
    const last = channel.last_test;
    if (!last) return <span className="muted">{t('neverTested')}</span>;
    const result = last.ok ? t('testOk', { ms: last.latency_ms ?? 0 }) : t('testFailed', { error: last.error ?? String(last.status ?? '') });
    return (
      <div role="status" aria-label={t('testResult', { name: channel.name, result })}>
        <span className={last.ok ? 'badge ok' : 'badge bad'}>{result}</span>
        <div className="muted small">{fmt.dateTime(last.tested_at)}</div>
      </div>
    );
  };

  return (
    <Page
      title={t('title')}
      actions={
        <button type="button" onClick={() => setEditing('new')}>
          {t('add')}
        </button>
      }
    >
      <p className="muted">{t('intro')}</p>
      {channels.length > 1 ? (
        <input type="search" className="channel-search" aria-label={t('searchChannels')} placeholder={t('searchChannels')} value={query} onChange={(e) => setQuery(e.target.value)} />
      ) : null}
      <ErrorNote error={error} />
      <ErrorNote error={list.error} onRetry={() => void list.reload()} />
      {/* The rows are every channel: a search that matches none keeps the table (headers only), not the empty note. */}
      <TableState
        rows={list.data?.data}
        loading={list.loading}
        table={() => (
          <table className="channels-table">
            <thead>
              <tr>
                <th>{t('name')}</th>
                <th>{t('type')}</th>
                <th>{t('models')}</th>
                <th>{t('priorityWeight')}</th>
                <th>{t('health')}</th>
                <th>{t('lastTest')}</th>
                <th>{t('enabledToggle')}</th>
                <th>{tc('actions')}</th>
              </tr>
            </thead>
            <tbody>
              {shown
                .sort((a, b) => a.priority - b.priority || a.name.localeCompare(b.name))
                .map((channel) => (
                  <tr key={channel.id}>
                    <td>
                      <strong>{channel.name}</strong>
                      <div className="muted small">{channel.effective_base_url ?? '—'}</div>
                    </td>
                    <td>
                      <code>{channel.type}</code>
                    </td>
                    <td>
                      {channel.models.slice(0, 3).join(', ')}
                      {channel.models.length > 3 ? <span className="muted"> {t('more', { n: channel.models.length - 3 })}</span> : null}
                    </td>
                    <td>
                      {channel.priority} / {channel.weight}
                    </td>
                    <td>{healthBadge(channel)}</td>
                    <td>{lastTest(channel)}</td>
                    <td>
                      <input
                        type="checkbox"
                        role="switch"
                        aria-label={t('enableChannel', { name: channel.name })}
                        checked={channel.enabled}
                        onChange={(e) => void setEnabled(channel, e.target.checked)}
                      />
                    </td>
                    <td>
                      <div className="row nowrap">
                        <button type="button" className="secondary" aria-label={t('testChannel', { name: channel.name })} disabled={testing === channel.id} onClick={() => void test(channel)}>
                          {testing === channel.id ? t('testing') : t('test')}
                        </button>
                        <button type="button" className="secondary" aria-label={t('editChannel', { name: channel.name })} onClick={() => setEditing(channel)}>
                          {tc('edit')}
                        </button>
                        <button type="button" className="danger" aria-label={t('deleteChannel', { name: channel.name })} onClick={() => setDeleting(channel)}>
                          {tc('delete')}
                        </button>
                      </div>
                    </td>
                  </tr>
                ))}
            </tbody>
          </table>
        )}
      />

      <Modal wide title={editing === 'new' ? t('newChannel') : editing ? t('editTitle', { name: editing.name }) : ''} open={editing !== null} onClose={() => setEditing(null)}>
        {editing !== null ? (
          <ChannelEditor
            key={editing === 'new' ? 'new' : editing.id}
            channel={editing === 'new' ? null : editing}
            onCancel={() => setEditing(null)}
            onSaved={(saved) => {
              replace(saved);
              setEditing(null);
            }}
          />
        ) : null}
      </Modal>

      <Modal title={deleting ? t('deleteChannel', { name: deleting.name }) : ''} open={deleting !== null} onClose={() => setDeleting(null)}>
        {deleting ? (
          <>
            <p>{t('confirmDelete', { name: deleting.name })}</p>
            <ErrorNote error={error} />
            <div className="row">
              <button type="button" className="danger" onClick={() => void remove(deleting)}>
                {tc('delete')}
              </button>
              <button type="button" className="secondary" onClick={() => setDeleting(null)}>
                {tc('cancel')}
              </button>
            </div>
          </>
        ) : null}
      </Modal>
    </Page>
  );
}
