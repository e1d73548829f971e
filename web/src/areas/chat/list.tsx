/** The conversation list: newest activity first (pinned on top), search, archived, and each one's actions. */
import { useEffect, useState } from 'react';
import { Link, useLocation } from 'wouter';
import { api } from '../../api/client';
import { useT } from '../../i18n/context';
import { common } from '../../i18n/common';
import { Empty, ErrorNote, Loading, Modal, Toggle } from '../../ui/kit';
import { useAction, useApi } from '../../ui/use-api';
import { chatMessages } from './messages';
import { useChatSync } from './sync';
import type { Conversation, SearchHit } from './types';

const SEARCH_DELAY_MS = 250;

/** Pinned first, each group in the server's order (most recent activity first). */
export const pinnedFirst = <T extends { pinned: boolean }>(list: readonly T[]): T[] => [...list.filter((c) => c.pinned), ...list.filter((c) => !c.pinned)];

export function ConversationList({ activeId }: { activeId: string | null }) {
  const t = useT(chatMessages);
  const tc = useT(common);
  const sync = useChatSync();
  const [, navigate] = useLocation();
  const [archived, setArchived] = useState(false);
  const [typed, setTyped] = useState('');
  const [q, setQ] = useState('');
  useEffect(() => {
    const timer = setTimeout(() => setQ(typed.trim()), SEARCH_DELAY_MS);
    return () => clearTimeout(timer);
  }, [typed]);
  const list = useApi<{ data: Conversation[] }>(q ? null : '/v1/conversations', { archived: archived ? 'true' : undefined, limit: 100 });
  const search = useApi<{ data: SearchHit[] }>(q ? '/v1/conversations/search' : null, { q, limit: 50 });
  const shown = q ? search : list;
  useEffect(() => {
    if (sync.tick > 0) void shown.reload();
  }, [sync.tick]);

  const [renaming, setRenaming] = useState<{ id: string; title: string } | null>(null);
  const [deleting, setDeleting] = useState<Conversation | null>(null);
  const change = useAction(async (id: string, body: Record<string, unknown>) => {
    await api(`/v1/conversations/${encodeURIComponent(id)}`, { method: 'PATCH', body });
    sync.bump();
    return true;
  });
  const remove = useAction(async (c: Conversation) => {
    await api(`/v1/conversations/${encodeURIComponent(c.id)}`, { method: 'DELETE' });
    setDeleting(null);
    if (c.id === activeId) navigate('/');
    sync.bump();
    return true;
  });

  const items = q ? (search.data?.data ?? []) : pinnedFirst(list.data?.data ?? []);
  return (
    <aside className="chat-list" aria-label={t('conversations')}>
      <Link href="/" className="button new-chat">
        + {t('newChat')}
      </Link>
      <input type="search" aria-label={t('searchConversations')} placeholder={t('searchConversations')} value={typed} onChange={(e) => setTyped(e.target.value)} />
      <Toggle label={t('showArchived')} checked={archived} onChange={setArchived} />
      <ErrorNote error={shown.error ?? change.error} onRetry={shown.error ? () => void shown.reload() : undefined} />
      {shown.loading && !shown.data ? <Loading /> : null}
      {shown.data && items.length === 0 ? <Empty>{q ? t('noMatches') : t('noConversations')}</Empty> : null}
      <ul className="conv-list">
        {items.map((c) => {
          const title = c.title ?? t('untitled');
          const snippet = 'snippets' in c ? (c as SearchHit).snippets.find((s) => s.field === 'message')?.text : undefined;
          return (
            <li key={c.id} className={c.id === activeId ? 'conv active' : 'conv'}>
              {renaming?.id === c.id ? (
                <form
                  className="rename"
                  noValidate
                  onSubmit={(e) => {
                    e.preventDefault();
                    void change.run(c.id, { title: renaming.title }).then((ok) => {
                      if (ok) setRenaming(null);
                    });
                  }}
                >
                  <input aria-label={t('renameTitle')} value={renaming.title} onChange={(e) => setRenaming({ id: c.id, title: e.target.value })} autoFocus />
                  <div className="row">
                    <button type="submit" disabled={change.busy}>
                      {tc('save')}
                    </button>
                    <button type="button" className="secondary" onClick={() => setRenaming(null)}>
                      {tc('cancel')}
                    </button>
                  </div>
                </form>
              ) : (
                <Link href={`/${c.id}`} className="conv-link" aria-current={c.id === activeId ? 'page' : undefined}>
                  {c.pinned ? <span className="pin-mark" title={t('pinned')} aria-label={t('pinned')}>★ </span> : null}
                  {title}
                  {snippet ? <small className="muted conv-snippet">{snippet}</small> : null}
                </Link>
              )}
              <div className="conv-actions">
                <button type="button" className="link" onClick={() => void change.run(c.id, { pinned: !c.pinned })}>
                  {c.pinned ? t('unpin') : t('pin')}
                </button>
                <button type="button" className="link" onClick={() => setRenaming({ id: c.id, title: c.title ?? '' })}>
                  {t('rename')}
                </button>
                <button type="button" className="link" onClick={() => void change.run(c.id, { archived: !c.archived })}>
                  {c.archived ? t('unarchive') : t('archive')}
                </button>
                <button type="button" className="link" onClick={() => setDeleting(c)}>
                  {tc('delete')}
                </button>
              </div>
            </li>
          );
        })}
      </ul>
      <Modal title={t('deleteConfirmTitle')} open={deleting !== null} onClose={() => setDeleting(null)}>
        {deleting ? (
          <>
            <p>{t('deleteConfirm', { title: deleting.title ?? t('untitled') })}</p>
            <ErrorNote error={remove.error} />
            <div className="row">
              <button type="button" className="danger" disabled={remove.busy} onClick={() => void remove.run(deleting)}>
                {tc('delete')}
              </button>
              <button type="button" className="secondary" onClick={() => setDeleting(null)}>
                {tc('cancel')}
              </button>
            </div>
          </>
        ) : null}
      </Modal>
    </aside>
  );
}
