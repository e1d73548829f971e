/** The chat area: the conversation list beside a conversation (/chat/:id) or a new chat (/chat). */
import { useEffect, useState } from 'react';
import { useRoute } from 'wouter';
import { useT } from '../../i18n/context';
import './chat.css';
import { ConversationView } from './conversation';
import { ConversationList } from './list';
import { chatMessages } from './messages';
import { NewChat } from './new-chat';
import { ChatSyncContext, useSyncLoop } from './sync';

export default function Area() {
  const t = useT(chatMessages);
  const sync = useSyncLoop();
  const [match, params] = useRoute<{ id: string }>('/:id');
  const activeId = match ? params.id : null;
  // On a phone the list is a panel opened on demand; it closes when a conversation is chosen.
  const [listOpen, setListOpen] = useState(false);
  useEffect(() => setListOpen(false), [activeId]);
  return (
    <ChatSyncContext.Provider value={sync}>
      <div className={listOpen ? 'chat list-open' : 'chat'}>
        <button type="button" className="secondary list-toggle" aria-expanded={listOpen} onClick={() => setListOpen(!listOpen)}>
          {listOpen ? t('hideConversations') : t('showConversations')}
        </button>
        <ConversationList activeId={activeId} />
        <div className="chat-main">{activeId ? <ConversationView key={activeId} id={activeId} /> : <NewChat />}</div>
      </div>
    </ChatSyncContext.Provider>
  );
}
