/**
 * One conversation: its messages, the reply streaming in, Stop, Regenerate, editing a message and
 * re-sending it, the settings dialog, export; reloaded when another device changes it.
 */
import { useCallback, useEffect, useRef, useState } from 'react';
import { api, ApiError, send } from '../../api/client';
import { readSse } from '../../api/sse';
import { useT } from '../../i18n/context';
import { common } from '../../i18n/common';
import { CopyButton, download, ErrorNote, Loading, Modal } from '../../ui/kit';
import { useAction, useApi } from '../../ui/use-api';
import { MessageFile } from './attachments';
import { Composer } from './composer';
import { Markdown } from './markdown-view';
import { chatMessages } from './messages';
import { takePending } from './pending';
import { ModelSelect, PresetPicker, SettingsFields, useChatModels } from './settings';
import { settingsBody, settingsOf, type SettingsValue } from './settings-logic';
import { applyEvent, EMPTY_STREAM } from './stream';
import { useChatSync } from './sync';
import type { Conversation, ConversationWithMessages, Message } from './types';

/** A turn under way: what is shown instead of the stored messages from `hideFrom` on. */
interface Turn {
  userText: string | null;
  fileIds: string[];
  hideFrom: string | null;
  text: string;
  stopping: boolean;
}

/** How long a stopped stream may take to end by itself before the request is cut. */
const STOP_GRACE_MS = 3000;

export const visibleMessages = (messages: Message[], hideFrom: string | null): Message[] => {
  if (hideFrom === null) return messages;
  const at = messages.findIndex((m) => m.id === hideFrom);
  return at < 0 ? messages : messages.slice(0, at);
};

export function ConversationView({ id }: { id: string }) {
  const t = useT(chatMessages);
  const tc = useT(common);
  const path = `/v1/conversations/${encodeURIComponent(id)}`;
  const conv = useApi<ConversationWithMessages>(path);
  const sync = useChatSync();
  const [turn, setTurn] = useState<Turn | null>(null);
  const streaming = useRef(false);
  const abort = useRef<AbortController | null>(null);
  const [error, setError] = useState<Error | null>(null);
  const [omitted, setOmitted] = useState(0);
  const [editing, setEditing] = useState<{ id: string; text: string } | null>(null);
  const [settingsOpen, setSettingsOpen] = useState(false);
  const end = useRef<HTMLDivElement>(null);

  // Another device (or tab) changed this conversation: show it, unless a reply is streaming here.
  useEffect(() => {
    if (sync.changed.has(id) && !streaming.current) void conv.reload();
  }, [sync.tick]);

  const runTurn = useCallback(
    async (url: string, method: string, body: Record<string, unknown>, init: Omit<Turn, 'text' | 'stopping'>): Promise<boolean> => {
      const controller = new AbortController();
      abort.current = controller;
      streaming.current = true;
      setError(null);
      setTurn({ ...init, text: '', stopping: false });
      let ok = true;
      try {
        const response = await send(url, { method, body: { ...body, stream: true }, signal: controller.signal });
        let state = EMPTY_STREAM;
        for await (const event of readSse(response.body!)) {
          state = applyEvent(state, event.data);
          const text = state.text;
          setTurn((now) => (now ? { ...now, text } : now));
        }
        if (state.error) setError(new Error(state.error));
        setOmitted(state.reply?.omitted_messages ?? 0);
      } catch (e) {
        if (!controller.signal.aborted) {
          setError(e as Error);
          // Refused before anything was stored (bad input, a file not ready): the composer keeps the text.
          // Other failures (upstream) may come after the message was stored: it shows, with Regenerate.
          if (e instanceof ApiError && [400, 404, 409, 413, 422].includes(e.status)) ok = false;
        }
      }
      await conv.reload();
      abort.current = null;
      streaming.current = false;
      setTurn(null);
      sync.bump();
      return ok;
    },
    [conv, sync],
  );

  const sendMessage = useCallback(
    (content: string, fileIds: string[]) => runTurn(`${path}/messages`, 'POST', fileIds.length > 0 ? { content, file_ids: fileIds } : { content }, { userText: content, fileIds, hideFrom: null }),
    [path, runTurn],
  );

  // The first message typed on the new-chat page.
  useEffect(() => {
    const first = takePending(id);
    if (first) void sendMessage(first.content, first.fileIds);
  }, [id]);

  const stop = async () => {
    const controller = abort.current;
    setTurn((now) => (now ? { ...now, stopping: true } : now));
    try {
      await api(`${path}/stop`, { method: 'POST' });
    } catch {
      // the request is cut below anyway
    }
    // The server ends the stream with what was generated; if that does not come, cut it.
    setTimeout(() => controller?.abort(), STOP_GRACE_MS);
  };

  const messages = conv.data?.messages ?? [];
  const shown = visibleMessages(messages, turn?.hideFrom ?? null);
  const last = messages.at(-1);

  useEffect(() => {
    end.current?.scrollIntoView?.({ block: 'end' });
  }, [shown.length, turn?.text]);

  const loadOlder = async () => {
    const first = messages[0];
    if (!conv.data || !first) return;
    const older = await api<ConversationWithMessages>(path, { query: { before: first.id } });
    conv.set({ ...conv.data, messages: [...older.messages, ...conv.data.messages], has_more: older.has_more });
  };

  const exportIt = async () => {
    try {
      await download(await send(`${path}/export`, { query: { format: 'markdown' } }), `${id}.md`);
    } catch (e) {
      setError(e as Error);
    }
  };

  if (conv.error && !conv.data) return <ErrorNote error={conv.error} onRetry={() => void conv.reload()} />;
  if (!conv.data) return <Loading />;
  const c = conv.data;

  return (
    <section className="conversation" aria-label={c.title ?? t('untitled')}>
      <header className="conversation-head">
        <h1>{c.title ?? t('untitled')}</h1>
        <span className="muted conversation-model">{c.model ?? ''}</span>
        <div className="page-actions">
          <button type="button" className="secondary" onClick={() => setSettingsOpen(true)}>
            {t('settings')}
          </button>
          <button type="button" className="secondary" onClick={() => void exportIt()}>
            {t('export')}
          </button>
        </div>
      </header>
      <div className="messages" aria-live="polite">
        {c.has_more ? (
          <button type="button" className="link" onClick={() => void loadOlder()}>
            {t('loadOlder')}
          </button>
        ) : null}
        {shown.length === 0 && !turn ? <p className="muted">{t('emptyConversation')}</p> : null}
        {shown.map((m) =>
          editing?.id === m.id && !turn ? (
            <form
              key={m.id}
              className="msg user editing"
              noValidate
              onSubmit={(e) => {
                e.preventDefault();
                const content = editing.text;
                if (!content.trim()) return;
                setEditing(null);
                void runTurn(`${path}/messages/${encodeURIComponent(m.id)}`, 'PUT', { content }, { userText: content, fileIds: m.file_ids, hideFrom: m.id }).then((ok) => {
                  if (!ok) setEditing({ id: m.id, text: content });
                });
              }}
            >
              <textarea aria-label={t('editMessage')} rows={3} value={editing.text} onChange={(e) => setEditing({ id: m.id, text: e.target.value })} />
              <div className="row">
                <button type="submit">{t('saveAndSend')}</button>
                <button type="button" className="secondary" onClick={() => setEditing(null)}>
                  {tc('cancel')}
                </button>
              </div>
            </form>
          ) : (
            <MessageView
              key={m.id}
              message={m}
              busy={turn !== null}
              onEdit={m.role === 'user' ? () => setEditing({ id: m.id, text: m.content }) : undefined}
              onRegenerate={
                // The last reply, or the last question left without one (its reply failed).
                m.id === last?.id && (m.role === 'assistant' || m.role === 'user')
                  ? () => void runTurn(`${path}/regenerate`, 'POST', {}, { userText: null, fileIds: [], hideFrom: m.role === 'assistant' ? m.id : null })
                  : undefined
              }
            />
          ),
        )}
        {turn?.userText != null ? (
          <article className="msg user" aria-label={t('you')}>
            <div className="msg-head">
              <strong>{t('you')}</strong>
            </div>
            <div className="user-text">{turn.userText}</div>
            {turn.fileIds.length > 0 ? (
              <div className="row">
                {turn.fileIds.map((f) => (
                  <MessageFile key={f} fileId={f} />
                ))}
              </div>
            ) : null}
          </article>
        ) : null}
        {turn ? (
          <article className="msg assistant streaming" aria-label={t('assistant')} aria-busy="true">
            <div className="msg-head">
              <strong>{t('assistant')}</strong>
            </div>
            {turn.text ? <Markdown text={turn.text} /> : <p className="muted">{t('thinking')}</p>}
          </article>
        ) : null}
        {omitted > 0 ? <p className="muted">{t('omitted', { count: omitted })}</p> : null}
        <ErrorNote error={error} />
        <div ref={end} />
      </div>
      <Composer streaming={turn !== null && !turn.stopping} onSend={sendMessage} onStop={() => void stop()} disabled={turn?.stopping} />
      <SettingsModal open={settingsOpen} conversation={c} onClose={() => setSettingsOpen(false)} onSaved={(next) => conv.set({ ...c, ...next })} />
    </section>
  );
}

function MessageView({ message: m, busy, onEdit, onRegenerate }: { message: Message; busy: boolean; onEdit?: () => void; onRegenerate?: () => void }) {
  const t = useT(chatMessages);
  const who = m.role === 'user' ? t('you') : m.role === 'assistant' ? t('assistant') : t('system');
  return (
    <article className={`msg ${m.role}`} aria-label={who}>
      <div className="msg-head">
        <strong>{who}</strong>
        {m.model ? <span className="muted">{m.model}</span> : null}
        {m.edited_at !== null ? <span className="badge">{t('edited')}</span> : null}
        {m.finish_reason === 'aborted' ? <span className="badge warn">{t('stopped')}</span> : null}
        {m.finish_reason === 'length' ? <span className="badge warn">{t('truncatedReply')}</span> : null}
      </div>
      {m.role === 'assistant' ? <Markdown text={m.content} /> : <div className="user-text">{m.content}</div>}
      {m.file_ids.length > 0 ? (
        <div className="row">
          {m.file_ids.map((f) => (
            <MessageFile key={f} fileId={f} />
          ))}
        </div>
      ) : null}
      <div className="row msg-foot">
        {m.usage ? <span className="muted usage">{t('tokens', { total: m.usage.total_tokens, prompt: m.usage.prompt_tokens, completion: m.usage.completion_tokens })}</span> : null}
        <span className="spacer" />
        <CopyButton text={m.content} label={t('copyMessage')} />
        {onEdit ? (
          <button type="button" className="secondary" onClick={onEdit} disabled={busy}>
            {t('editMessage')}
          </button>
        ) : null}
        {onRegenerate ? (
          <button type="button" className="secondary" onClick={onRegenerate} disabled={busy}>
            {t('regenerate')}
          </button>
        ) : null}
      </div>
    </article>
  );
}

function SettingsModal({ open, conversation, onClose, onSaved }: { open: boolean; conversation: Conversation; onClose: () => void; onSaved: (c: Conversation) => void }) {
  const t = useT(chatMessages);
  return (
    <Modal title={t('conversationSettings')} open={open} onClose={onClose}>
      <SettingsForm conversation={conversation} onClose={onClose} onSaved={onSaved} />
    </Modal>
  );
}

function SettingsForm({ conversation, onClose, onSaved }: { conversation: Conversation; onClose: () => void; onSaved: (c: Conversation) => void }) {
  const tc = useT(common);
  const models = useChatModels();
  const [value, setValue] = useState<SettingsValue>(() => settingsOf(conversation));
  const save = useAction(async (v: SettingsValue) => api<Conversation>(`/v1/conversations/${encodeURIComponent(conversation.id)}`, { method: 'PATCH', body: settingsBody(v) }));
  return (
    <form
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        void save.run(value).then((answer) => {
          if (!answer) return;
          onSaved(answer);
          onClose();
        });
      }}
    >
      <ModelSelect value={value.model} onChange={(model) => setValue({ ...value, model })} models={models.ids} />
      <PresetPicker value={value.presetId} onChange={(p) => setValue({ ...value, presetId: p?.id ?? null })} />
      <SettingsFields value={value} onChange={setValue} />
      <ErrorNote error={save.error} />
      <div className="row">
        <button type="submit" disabled={save.busy}>
          {tc('save')}
        </button>
        <button type="button" className="secondary" onClick={onClose}>
          {tc('cancel')}
        </button>
      </div>
    </form>
  );
}
